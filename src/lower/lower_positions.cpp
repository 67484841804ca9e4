// Loops over stored positions and fused loops (Kjolstad's thesis, ch. 3 collapse and coordinate-tree
// split, §5 pos/fuse).
//
// pos(j, jp, A(i,j)) iterates the positions of A's level for j inside the current segment;
// after fuse(i, j, f), pos(f, fp, A(i,j)) iterates the positions of A's level for j across
// all rows, so that a split of fp gives blocks of equal numbers of nonzeros, and i is
// tracked: found by binary search at the start of the block, then advanced whenever the
// position crosses the end of its row (a while loop, as rows may be empty). That is for a
// CSR-like access; for DCSR the search runs over the stored rows and the row's coordinate is
// read from the top level's crd, and for COO every position has its own row coordinate (the
// singleton level shares the top level's positions), so nothing is searched. More fused loops
// (fuse(j, k, jk); fuse(i, jk, f) over a CSF tensor) track the position of every level above
// the iterated one the same way, each searched within the level below it and advanced when
// the position below crosses the end of its segment. The loop visits
// only A's stored entries, so the statement must be zero wherever A is; the other operands
// are located by the bound coordinates.
//
// When the body adds into an entry of a dense result that depends only on i (SpMV), the
// products of one row are summed in a register and added to the result when the row ends
// or the block does: a block that shares its first or last row with a neighbour then
// updates that entry once, which is what makes atomics cheap for load-balanced SpMV.
//
// A fused loop without pos iterates the dense product space i × j.
#include <algorithm>
#include <cctype>
#include <functional>

#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace coiter::lower {

using namespace ir;
namespace nt = coiter::notation;

Lowerer::PositionLevel Lowerer::positionLevel(const schedule::IndexRelation& r) const {
  // (What pos() needs of the access and its levels is the schedule's legality, checked before
  // lowering: schedule/legality.hpp.)
  PositionLevel out;
  for (const AccessNode* acc : accessOrder_) {
    // A non-owning handle (aliasing constructor) lets the access print like any expression.
    nt::Expr expr(std::shared_ptr<const nt::ExprNode>{}, acc);
    if (!acc->tensor->temporary && withoutSpaces(nt::toString(expr)) == r.access) {
      out.access = acc;
      break;
    }
  }
  if (!out.access) throw CompileError("lowering: pos(" + r.parent + ") iterates " + r.access + ", which is not read");
  const AccessState& state = accesses_.at(out.access);
  std::vector<std::string> bound = scheduled_.boundVariables(r.parent);
  auto at = std::find(state.levelVars.begin(), state.levelVars.end(), bound.back());
  out.level = static_cast<int>(at - state.levelVars.begin());
  out.fused = bound.size() >= 2;
  return out;
}

Lowerer::Interval Lowerer::positionInterval(const schedule::IndexRelation& r) const {
  PositionLevel p = positionLevel(r);
  const AccessState& state = accesses_.at(p.access);
  const Var& pos = state.vars->pos(p.level);
  if (p.fused) {
    const Var& rowPos = state.vars->pos(0);
    if (p.rowPerPosition())
      return {cast(kIndex, load(rowPos, intLit(0))), cast(kIndex, load(rowPos, intLit(1))), false};
    return {cast(kIndex, load(pos, intLit(0))), cast(kIndex, load(pos, positionsOfLevel(p, p.level - 1))), false};
  }
  Expr parent = p.level == 0 ? intLit(0) : state.pos[p.level - 1];
  return {cast(kIndex, load(pos, parent)), cast(kIndex, load(pos, plusOne(parent))), false};
}

Expr Lowerer::storedRows(const PositionLevel& p) const {
  const TensorVars& vars = *accesses_.at(p.access).vars;
  if (p.denseRows()) return ir::ref(vars.extents[p.access->tensor->format.modeOrder()[0]]);
  return cast(kIndex, load(vars.pos(0), intLit(1)));  // DCSR: the rows stored in the top level
}

Expr Lowerer::positionsOfLevel(const PositionLevel& p, int k) const {
  if (k == 0) return storedRows(p);
  return cast(kIndex, load(accesses_.at(p.access).vars->pos(k), positionsOfLevel(p, k - 1)));
}

Expr Lowerer::denseResultPosition() const {
  Expr position = intLit(0);
  for (int k = 0; k < resultTensor_->order(); ++k) {
    int mode = resultTensor_->format.modeOrder()[k];
    position = binary(BinaryOp::Add, binary(BinaryOp::Mul, position, ir::ref(result_.vars->extents[mode])),
                      coords_.at(result_.levelVars[k]));
  }
  return position;
}

Stmt Lowerer::lowerPositionLoop(const cin::ForallNode& f, const schedule::IndexRelation& r) {
  // Only A's stored entries are visited: the statement vanishes where A is zero, and the
  // other operands are located at the bound coordinates (the schedule's legality).
  PositionLevel level = positionLevel(r);
  AccessState& state = accesses_.at(level.access);
  TensorVars& vars = *state.vars;
  std::vector<std::string> bound = scheduled_.boundVariables(r.parent);
  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, r.bounded, true);
  Interval interval = intervalOf(r.bounded, f.var);
  std::vector<Stmt> out;
  Var p = makeVar(freshName("p" + vars.tensor->name + std::to_string(level.level + 1)), kIndex);
  // The rows: CSR, DCSR and CSF track the position of each level above the iterated one (for
  // a dense top level the row itself); COO reads each position's row coordinate.
  int tracked = level.fused && !level.rowPerPosition() ? level.level : 0;  // levels 0 .. tracked - 1
  std::vector<Var> row(tracked);
  std::vector<Expr> trackedCoordinate(tracked);
  {
    // The position of level k holding the one below: the first q in [1, positions of level k]
    // with pos_{k+1}[q] >= below + 1, less one (below: the block's first position, then the
    // tracked position of the level under k).
    Expr below = interval.lo;
    for (int k = tracked - 1; k >= 0; --k) {
      Expr q = searchPosition(vars.pos(k + 1), intLit(1), plusOne(positionsOfLevel(level, k)), plusOne(below),
                              bound[k] + "_search", out);
      bool dense = k == 0 && level.denseRows();
      row[k] = makeVar(freshName(dense ? bound[0] : "p" + vars.tensor->name + std::to_string(k + 1)), kIndex);
      out.push_back(declare(row[k], binary(BinaryOp::Sub, q, intLit(1))));
      trackedCoordinate[k] = dense ? ir::ref(row[k]) : cast(kIndex, load(vars.crd(k), ir::ref(row[k])));
      below = ir::ref(row[k]);
    }
  }
  auto bindTracked = [&] {
    for (int k = 0; k < tracked; ++k) coords_[bound[k]] = trackedCoordinate[k];
  };
  // Sum a row's products in a register when the body adds into a dense result entry that
  // depends on the row only.
  const cin::AssignNode* sum = nullptr;
  if (level.fused && f.body->kind == cin::StmtKind::Assign) {
    const auto& a = cin::as<cin::AssignNode>(f.body);
    const auto& lhs = a.lhs->indices;
    bool rowOnly = std::find(lhs.begin(), lhs.end(), bound.back()) == lhs.end();
    if (a.lhs->tensor == resultTensor_ && a.accumulate == &nt::addOp() && groups_.empty() && insertedLevel_ < 0 &&
        trailingDense_ < 0 && rowOnly) {
      sum = &a;
    }
  }
  Var acc;
  std::vector<Stmt> body;
  auto flush = [&]() -> Stmt {  // adds the row's sum into the result (coords_ has the row)
    return ifThen(binary(BinaryOp::Ne, ir::ref(acc), zeroOf(resultTensor_->dtype)),
                  block({updateResult(sum->accumulate, denseResultPosition(), ir::ref(acc)),
                         assign(acc, zeroOf(resultTensor_->dtype))}));
  };
  Var current;  // COO: the row whose sum acc holds (-1 before the first; acc is zero then)
  if (sum) {
    acc = makeVar(freshName(resultTensor_->name + "_row_sum"), scalar(resultTensor_->dtype));
    out.push_back(declare(acc, zeroOf(resultTensor_->dtype)));
    if (level.rowPerPosition()) {
      current = makeVar(freshName(bound[0] + "_summed"), kIndex);
      out.push_back(declare(current, intLit(-1)));
    }
  }
  if (tracked > 0) {
    // Level k's position advances while the position below it is past the end of its segment;
    // the levels above follow. A row's sum is added when the innermost tracked row ends.
    if (sum) bindTracked();
    std::function<Stmt(int)> advance = [&](int k) -> Stmt {
      Expr below = k == tracked - 1 ? ir::ref(p) : ir::ref(row[k + 1]);
      Expr ended = binary(BinaryOp::Le, cast(kIndex, load(vars.pos(k + 1), plusOne(ir::ref(row[k])))), below);
      return whileLoop(ended, block({k == tracked - 1 && sum ? flush() : nullptr,
                                     assign(row[k], plusOne(ir::ref(row[k]))), k > 0 ? advance(k - 1) : nullptr}));
    };
    body.push_back(advance(tracked - 1));
  }
  Var i;
  if (level.rowPerPosition()) {
    i = makeVar(freshName(bound[0]), kIndex);
    body.push_back(declare(i, cast(kIndex, load(vars.crd(0), ir::ref(p)))));
    if (sum) {
      coords_[bound[0]] = ir::ref(current);
      body.push_back(
          ifThen(binary(BinaryOp::Ne, ir::ref(i), ir::ref(current)), block({flush(), assign(current, ir::ref(i))})));
    }
  }
  Var j = makeVar(freshName(bound.back()), kIndex);
  body.push_back(declare(j, cast(kIndex, load(vars.crd(level.level), ir::ref(p)))));

  std::map<const AccessNode*, int> othersBefore;  // every access's entered levels, this one's too
  for (auto& [a, st] : accesses_) othersBefore[a] = st.entered;
  int resultBefore = result_.entered;
  if (tracked > 0) {
    bindTracked();
    for (int k = 0; k < tracked; ++k) state.pos[k] = ir::ref(row[k]);
  } else if (level.fused) {
    coords_[bound[0]] = ir::ref(i);
    state.pos[0] = ir::ref(p);
  }
  coords_[bound.back()] = ir::ref(j);
  // A loop derived from the positions (a split's inner loop) counts them from its block's
  // start (a workspace over it is indexed so).
  if (f.var != r.bounded) coords_[f.var] = binary(BinaryOp::Sub, ir::ref(p), interval.lo);
  state.pos[level.level] = ir::ref(p);
  state.runEnd[level.level] = nullptr;
  state.entered = level.level + 1;
  resolveLocates(body);
  if (sum) {
    for (const auto& v : bound) openLoops_.push_back(v);
    Expr value = lowerExpr(sum->rhs);
    if (value)
      body.push_back(assign(acc, binary(BinaryOp::Add, ir::ref(acc), cast(scalar(resultTensor_->dtype), value))));
    for (size_t n = 0; n < bound.size(); ++n) openLoops_.pop_back();
  } else {
    enterResultLevels(body);
    // Where the loop's variable indexes a sparse result's appended level, each position
    // appends one entry: the level's coordinates are ordered and unique, so the entries come
    // in order (fused loops do not append: the schedule's legality).
    Var start;
    bool writes = writesResult(f.body);
    const std::string& v = bound.back();
    Stmt begin = level.fused ? nullptr : beginResultEntry(v, writes, accumulatesIntoResult(f.body), start);
    for (const auto& b : bound) openLoops_.push_back(b);
    Stmt inner = lowerStmt(f.body);
    for (size_t n = 0; n < bound.size(); ++n) openLoops_.pop_back();
    Stmt commit = level.fused ? nullptr : commitResultEntry(v, writes, start);
    body.push_back(level.fused ? inner : countEntries(v, {begin, inner, commit}, writes));
  }
  for (auto& [a, st] : accesses_) st.entered = othersBefore[a];
  result_.entered = resultBefore;
  coords_.erase(bound.back());
  coords_.erase(f.var);

  out.push_back(forLoop(p, interval.lo, interval.hi, block(std::move(body)), plan.schedule));
  if (sum) {
    if (tracked > 0)
      bindTracked();
    else
      coords_[bound[0]] = ir::ref(current);
    out.push_back(flush());  // the block's last row
  }
  for (size_t k = 0; k + 1 < bound.size(); ++k) coords_.erase(bound[k]);
  return plan.around(block(std::move(out)));
}

Stmt Lowerer::lowerFusedLoop(const cin::ForallNode& f, const schedule::IndexRelation& r) {
  // Every operand is dense over the two loops (the schedule's legality): each is located.
  std::vector<std::string> bound = scheduled_.boundVariables(r.bounded);
  if (bound.size() != 2) throw CompileError("lowering: the fused loop '" + r.bounded + "' binds more than two loops");
  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, r.bounded, true);
  Interval interval = intervalOf(r.bounded, f.var);
  Var fv = makeVar(freshName(r.bounded), kIndex);
  Expr inner = extentOf(bound[1]);
  Var i = makeVar(freshName(bound[0]), kIndex), j = makeVar(freshName(bound[1]), kIndex);
  std::vector<Stmt> body{declare(i, binary(BinaryOp::Div, ir::ref(fv), inner)),
                         declare(j, binary(BinaryOp::Rem, ir::ref(fv), inner))};
  std::map<const AccessNode*, int> before;
  for (auto& [a, st] : accesses_) before[a] = st.entered;
  int resultBefore = result_.entered;
  coords_[bound[0]] = ir::ref(i);
  coords_[bound[1]] = ir::ref(j);
  if (f.var != r.bounded) coords_[f.var] = binary(BinaryOp::Sub, ir::ref(fv), interval.lo);
  resolveLocates(body);
  enterResultLevels(body);
  for (const auto& v : bound) openLoops_.push_back(v);
  body.push_back(lowerStmt(f.body));
  for (size_t n = 0; n < bound.size(); ++n) openLoops_.pop_back();
  for (auto& [a, st] : accesses_) st.entered = before[a];
  result_.entered = resultBefore;
  coords_.erase(bound[0]);
  coords_.erase(bound[1]);
  coords_.erase(f.var);
  return plan.around(forLoop(fv, interval.lo, interval.hi, block(std::move(body)), plan.schedule));
}

}  // namespace coiter::lower
