// Dense results stored once per entry (overwrite instead of accumulate).
//
// A dense result starts at zero because in general the kernel adds into its entries, or
// skips those whose value is zero. When the kernel instead stores every entry exactly once
// (CSR SpMV: one row loop over the whole extent, the sum over j in a scalar), zeroing the
// result first is a wasted pass over it, and `y(i) += acc` reads back each entry only to
// add acc to zero. Then the result is allocated without zeroing and the store overwrites:
// for SpMV on a matrix of three entries per row that is a fifth of the bytes moved.
//
// Whether every entry is stored exactly once depends on how each loop lowers (a loop over a
// sparse operand's coordinates skips the others), so the lowerer plans it from the
// statement's shape, assumes it, and checks each loop over the result's indices as it
// lowers it; lowerKernel lowers again without it when a check fails.
#include "lower/lowerer.hpp"
#include "schedule/legality.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

void Lowerer::planResultOverwrite() {
  const TensorVar& result = *resultTensor_;
  if (result.order() == 0) return;
  // A dense result, or one keeping an operand's pattern (its every entry is one of the
  // operand's: checkResultLoop then asks that each loop store at every one of them).
  for (const auto& level : result.format.levels()) {
    if (level->assembly() != LevelAssembly::Located && !patternAccess_) return;
  }
  // Derived loops (split, pos, fuse, ...) cover the result in ways not checked here, and a
  // race strategy other than no_races adds into per-thread copies or atomically.
  if (!scheduled_.relations.empty()) return;
  for (const auto& [var, tags] : scheduled_.tags) {
    if (tags.races != schedule::RaceStrategy::NoRaces) return;
  }
  int stores = 0;
  cin::forEachAssignment(root_, [&](const cin::AssignNode& a) { stores += a.lhs->tensor == resultTensor_; });
  if (stores != 1) return;
  // The chain from the root to the store: foralls, and wheres entered by their consumer.
  std::set<const cin::ForallNode*> loops;
  std::set<std::string> loopVars;
  cin::Stmt s = root_;
  while (s->kind != cin::StmtKind::Assign) {
    if (s->kind == cin::StmtKind::Forall) {
      const auto& f = cin::as<cin::ForallNode>(s);
      loops.insert(&f);
      loopVars.insert(f.var);
      s = f.body;
    } else if (s->kind == cin::StmtKind::Where) {
      s = cin::as<cin::WhereNode>(s).consumer;
    } else {
      return;  // a sequence
    }
  }
  const auto& store = cin::as<cin::AssignNode>(s);
  if (store.lhs->tensor != resultTensor_) return;  // the one store is in a producer
  // `y(i) op= v` on a zero y is `y(i) = v` only when zero is op's identity (not for max=).
  if (store.accumulate && !store.accumulate->zeroIsIdentity) return;
  // The loops around the store bind exactly the result's indices (no reduction loop).
  std::set<std::string> indices(store.lhs->indices.begin(), store.lhs->indices.end());
  if (indices.size() != store.lhs->indices.size() || indices != loopVars || loops.size() != loopVars.size()) return;
  overwriteResult_ = true;
  resultLoops_ = std::move(loops);
  resultStore_ = &store;
}

void Lowerer::checkResultLoop(const cin::ForallNode& f, bool storesEveryCoordinate) {
  if (overwriteResult_ && resultLoops_.count(&f) && !storesEveryCoordinate) overwriteBroken_ = true;
}

namespace {

bool storesInto(const ir::Stmt& s, const ir::VarNode* buffer) {
  if (!s) return false;
  if (s->kind == ir::StmtKind::Store) return ir::as<ir::StoreNode>(s).buffer.get() == buffer;
  if (s->kind == ir::StmtKind::AtomicUpdate) return ir::as<ir::AtomicUpdateNode>(s).buffer.get() == buffer;
  bool found = false;
  ir::forEachChildStmt(s, [&](const ir::Stmt& child) { found = found || storesInto(child, buffer); });
  return found;
}

// Whether the kernel's IR stores into its result's values at all: a body that simplified to
// zero (`A(i,j) * 0`) lowers no loop, so no loop check could find that the overwrite is missing.
bool storesResultValues(const LoweredKernel& k) {
  for (const auto& a : k.abi.arrays) {
    if (a.tensor != k.abi.result() || a.level >= 0) continue;
    for (const ir::Param& p : k.function.params) {
      if (p.var->type.pointer && p.slot == a.slot) return storesInto(k.function.body, p.var.get());
    }
  }
  return false;
}

// One plan for the result: keeping an operand's pattern or not (`pattern`; `patternBroken`
// says whether that failed), and overwriting a dense result's entries where lowering finds
// that every entry is stored once.
LoweredKernel lowerWithPlan(const schedule::ScheduledStatement& stmt, const std::string& functionName, bool assemble,
                            bool pattern, bool& patternBroken) {
  Lowerer overwriting(stmt, functionName, assemble, /*tryOverwrite=*/true, pattern);
  LoweredKernel kernel = overwriting.run();
  patternBroken = overwriting.patternBroken();
  if (!patternBroken &&
      (overwriting.overwriteBroken() || (kernel.abi.resultOverwritten && !storesResultValues(kernel)))) {
    kernel = Lowerer(stmt, functionName, assemble, /*tryOverwrite=*/false, pattern).run();
  }
  return kernel;
}

}  // namespace

LoweredKernel lowerKernel(const schedule::ScheduledStatement& stmt, const std::string& functionName, bool assemble) {
  // A result keeping an operand's pattern (lower_result_pattern.cpp) where lowering finds the
  // operand's positions at every store; else the result's own assembly.
  bool patternBroken = false;
  LoweredKernel kernel = lowerWithPlan(stmt, functionName, assemble, /*pattern=*/true, patternBroken);
  if (patternBroken) {
    // The schedule was checked with the pattern kept (appends excluded); appending instead
    // needs it legal without.
    if (std::string problem = schedule::legalityProblem(stmt, assemble, /*resultKeepsPattern=*/false);
        !problem.empty()) {
      throw ScheduleError(problem + " (the result cannot keep its operand's pattern in this schedule)");
    }
    kernel = lowerWithPlan(stmt, functionName, assemble, /*pattern=*/false, patternBroken);
  }
  kernel.target = stmt.target;
  return kernel;
}

}  // namespace coiter::lower
