// Statements other than forall: assignments (stores into the result or a scalar
// temporary), where (temporaries initialized, producer, then consumer) and sequence.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace nt = notation;

namespace {

// The value a temporary starts at: the identity of the operator that accumulates into it.
Expr identityOf(const nt::Operator* op, DType t) {
  if (op == &nt::maxOp() || op == &nt::minOp()) {
    bool max = op == &nt::maxOp();
    double beyond = max ? -INFINITY : INFINITY;
    // Complex values order lexicographically (NumPy): (-inf, -inf) is below every other.
    if (isComplex(t)) return litReal(scalar(t), beyond, beyond);
    if (isFloat(t)) return litReal(scalar(t), beyond);
    if (t == DType::Bool) return boolLit(!max);
    int64_t lo = 0, hi = 0;
    dispatchDType(t, [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      if constexpr (std::is_integral_v<T>) {
        lo = static_cast<int64_t>(std::numeric_limits<T>::min());
        hi = static_cast<int64_t>(std::numeric_limits<T>::max());
      }
    });
    return lit(scalar(t), max ? lo : hi);
  }
  return zeroOf(t);
}

// The first compound operator that writes `temp` in `s`.
const nt::Operator* accumulatorOf(const cin::Stmt& s, const TensorVar* temp) {
  const nt::Operator* op = nullptr;
  cin::forEachAssignment(s, [&](const cin::AssignNode& a) {
    if (!op && a.lhs->tensor.get() == temp) op = a.accumulate;
  });
  return op;
}

// The index variables of the workspace `temp` where the producer writes it.
std::vector<std::string> workspaceIndices(const cin::Stmt& s, const TensorVar* temp) {
  std::vector<std::string> vars;
  cin::forEachAssignment(s, [&](const cin::AssignNode& a) {
    if (vars.empty() && a.lhs->tensor.get() == temp) vars = a.lhs->indices;
  });
  return vars;
}

}  // namespace

bool Lowerer::resultLevelOrdered(const std::string& indexVar) const {
  for (size_t k = 0; k < result_.levelVars.size(); ++k) {
    if (result_.levelVars[k] == indexVar) return resultTensor_->format.levels()[k]->properties().ordered;
  }
  return true;
}

bool Lowerer::isZero(const cin::Stmt& s) const {
  switch (s->kind) {
    case cin::StmtKind::Assign: {
      const auto& a = cin::as<cin::AssignNode>(s);
      // Accumulating a zero changes nothing only when zero is the operator's identity.
      bool identity = !a.accumulate || a.accumulate->zeroIsIdentity;
      return identity && isZero(a.rhs);
    }
    case cin::StmtKind::Forall: return isZero(cin::as<cin::ForallNode>(s).body);
    case cin::StmtKind::Where: return isZero(cin::as<cin::WhereNode>(s).consumer);
    case cin::StmtKind::Sequence:
      return isZero(cin::as<cin::SequenceNode>(s).define) && isZero(cin::as<cin::SequenceNode>(s).mutate);
  }
  return false;
}

Stmt Lowerer::lowerStmt(const cin::Stmt& s) {
  switch (s->kind) {
    case cin::StmtKind::Assign: return lowerAssign(cin::as<cin::AssignNode>(s));
    case cin::StmtKind::Forall: return lowerForall(cin::as<cin::ForallNode>(s));
    case cin::StmtKind::Where: return lowerWhere(cin::as<cin::WhereNode>(s));
    case cin::StmtKind::Sequence: {
      const auto& q = cin::as<cin::SequenceNode>(s);
      return block({lowerStmt(q.define), lowerStmt(q.mutate)});
    }
  }
  return nullptr;
}

Stmt Lowerer::lowerAssign(const cin::AssignNode& a) {
  const TensorVar& target = *a.lhs->tensor;
  Type t = scalar(target.dtype);
  Expr value = lowerExpr(a.rhs);
  if (&a == resultStore_ && overwriteResult_) {
    // The result is not zeroed: its one store writes every entry, zero ones included.
    return updateResult(nullptr, resultPosition(), cast(t, value ? value : identityOf(nullptr, target.dtype)));
  }
  bool identity = !a.accumulate || a.accumulate->zeroIsIdentity;
  if (!value) {
    if (identity && (a.accumulate || !target.temporary)) return nullptr;  // results start at zero
    value = identityOf(nullptr, target.dtype);
  }
  value = cast(t, value);
  if (target.temporary && target.order() > 0) return storeToWorkspace(*a.lhs, a.accumulate, value);
  if (target.temporary) {
    Var temp = scalarTemps_.at(&target);
    if (a.accumulate) value = binary(irOpOf(*a.accumulate), ir::ref(temp), value);
    return assign(temp, value);
  }
  return updateResultEntry(a.accumulate, value);
}

Stmt Lowerer::updateResult(const nt::Operator* op, Expr p, Expr value) {
  Var vals = result_.vars->vals;
  if (privateResult_) {  // race strategy temporary: this thread's copy of the result
    vals = privateResult_;
    p = binary(BinaryOp::Add, privateOffset_, p);
  }
  if (atomicResult_ && op) return inFillPass(atomicUpdate(irOpOf(*op), vals, p, value));
  if (op) value = binary(irOpOf(*op), load(vals, p), value);
  return inFillPass(store(vals, p, value));  // (a counting pass computes no values)
}

Stmt Lowerer::lowerWhere(const cin::WhereNode& w) {
  std::vector<Stmt> out;
  std::vector<const WorkspaceVars*> workspaces;
  // Temporaries the producer writes: scalars held in local variables (footnote 30), set to
  // the identity of the operator that accumulates into them; vectors in workspaces, which
  // the consumer iterates by their touched coordinates, emptied after it (emptyWorkspace).
  // A where nested in the producer declares its own (max(j, A * B) with B in DIA:
  // t0 max= w(j) where w(j) += A * B), so they are skipped here.
  std::vector<const nt::TensorVar*> nested = cin::temporariesDeclaredIn(w.producer);
  for (const auto& t : cin::resultsOf(w.producer)) {
    if (!t->temporary || std::find(nested.begin(), nested.end(), t.get()) != nested.end()) continue;
    const nt::Operator* op = accumulatorOf(w.producer, t.get());
    if (t->order() == 0) {
      Var v = makeVar(freshName(t->name), scalar(t->dtype));
      scalarTemps_[t.get()] = v;
      out.push_back(declare(v, identityOf(op, t->dtype)));
      continue;
    }
    if (op && op != &nt::addOp()) throw CompileError("lowering: only workspaces accumulated with + are supported");
    WorkspaceVars& ws = declareWorkspace(t, workspaceIndices(w.producer, t.get()));
    out.push_back(declare(ws.count, intLit(0)));
    out.push_back(startWorkspace(ws));
    workspaces.push_back(&ws);
  }
  producerDepth_.push_back(openLoops_.size());
  out.push_back(lowerStmt(w.producer));
  producerDepth_.pop_back();
  for (const WorkspaceVars* ws : workspaces) out.push_back(orderWorkspace(*ws, w.consumer));
  out.push_back(lowerStmt(w.consumer));
  for (const WorkspaceVars* ws : workspaces) out.push_back(emptyWorkspace(*ws));
  return block(std::move(out));
}

}  // namespace coiter::lower
