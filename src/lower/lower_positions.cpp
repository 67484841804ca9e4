// Loops over stored positions and fused loops (taco-core.md §2.4 collapse and coordinate-tree
// split, §5 pos/fuse).
//
// pos(j, jp, A(i,j)) iterates the positions of A's level for j inside the current segment;
// after fuse(i, j, f), pos(f, fp, A(i,j)) iterates the positions of A's level for j across
// all rows, so that a split of fp gives blocks of equal numbers of nonzeros, and i is
// tracked: found by binary search at the start of the block, then advanced whenever the
// position crosses the end of its row (a while loop, as rows may be empty). That is for a
// CSR-like access; for DCSR the search runs over the stored rows and the row's coordinate is
// read from the top level's crd, and for COO every position has its own row coordinate (the
// singleton level shares the top level's positions), so nothing is searched. The loop visits
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
#include <optional>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace coiter::lower {

using namespace ir;
namespace nt = coiter::notation;

namespace {

const Type kIndex = scalar(DType::Int64);

Expr plusOne(const Expr& e) { return binary(BinaryOp::Add, e, intLit(1)); }

}  // namespace

Lowerer::PositionLevel Lowerer::positionLevel(const schedule::IndexRelation& r) const {
  std::string command = "pos(" + r.parent + "," + r.bounded + "," + r.access + ")";
  PositionLevel out;
  for (const AccessNode* acc : accessOrder_) {
    // A non-owning handle (aliasing constructor) lets the access print like any expression.
    nt::Expr expr(std::shared_ptr<const nt::ExprNode>{}, acc);
    if (!acc->tensor->temporary && withoutSpaces(nt::toString(expr)) == r.access) {
      out.access = acc;
      break;
    }
  }
  if (!out.access) throw ScheduleError(command + ": the access is not read where the loop runs");
  const AccessState& state = accesses_.at(out.access);
  std::vector<std::string> bound = scheduled_.boundVariables(r.parent);
  auto at = std::find(state.levelVars.begin(), state.levelVars.end(), bound.back());
  out.level = static_cast<int>(at - state.levelVars.begin());
  out.fused = bound.size() == 2;
  const auto& levels = out.access->tensor->format.levels();
  if (bound.size() > 2) throw ScheduleError(command + ": positions of more than two fused loops are not supported");
  const LevelType& level = *levels[out.level];
  if (out.fused) {
    // Rows located (CSR) or stored in segments (DCSR, COO); the fused level's positions in
    // segments (CSR, DCSR) or one per row position (COO).
    bool rowsLocated = levels[0]->locatesEveryCoordinate(), rowsStored = levels[0]->storesSegments();
    bool fusable = out.level == 1 && (((rowsLocated || rowsStored) && level.storesSegments()) ||
                                      (rowsStored && level.properties().branchless));
    if (!fusable) {
      throw ScheduleError(command + ": positions of fused loops need " + out.access->tensor->name +
                          "'s first two levels stored like CSR (dense, compressed), DCSR (compressed, "
                          "compressed) or COO (compressed, singleton)");
    }
  } else if (!level.storesSegments()) {
    throw ScheduleError(command + ": level " + std::to_string(out.level + 1) + " of " + out.access->tensor->name +
                        " is not compressed, so it has no positions to iterate");
  }
  if (!out.fused && state.entered != out.level) {
    throw ScheduleError(command + ": the levels of " + out.access->tensor->name + " above the loop's are not iterated "
                        "by the loops around it");
  }
  return out;
}

std::optional<std::pair<const AccessNode*, std::string>> Lowerer::sparseOver(const std::vector<std::string>& vars,
                                                                             const AccessNode* except) const {
  for (const AccessNode* acc : accessOrder_) {
    if (acc == except || acc->tensor->temporary) continue;
    const AccessState& st = accesses_.at(acc);
    for (size_t k = 0; k < st.levelVars.size(); ++k) {
      bool indexed = std::find(vars.begin(), vars.end(), st.levelVars[k]) != vars.end();
      if (indexed && !acc->tensor->format.levels()[k]->locatesEveryCoordinate()) return std::make_pair(acc, st.levelVars[k]);
    }
  }
  return std::nullopt;
}

Lowerer::Interval Lowerer::positionInterval(const schedule::IndexRelation& r) const {
  PositionLevel p = positionLevel(r);
  const AccessState& state = accesses_.at(p.access);
  const Var& pos = state.vars->pos(p.level);
  if (p.fused) {
    const Var& rowPos = state.vars->pos(0);
    if (p.rowPerPosition()) return {cast(kIndex, load(rowPos, intLit(0))), cast(kIndex, load(rowPos, intLit(1))), false};
    return {cast(kIndex, load(pos, intLit(0))), cast(kIndex, load(pos, storedRows(p))), false};
  }
  Expr parent = p.level == 0 ? intLit(0) : state.pos[p.level - 1];
  return {cast(kIndex, load(pos, parent)), cast(kIndex, load(pos, plusOne(parent))), false};
}

Expr Lowerer::storedRows(const PositionLevel& p) const {
  const TensorVars& vars = *accesses_.at(p.access).vars;
  if (p.denseRows()) return ir::ref(vars.extents[p.access->tensor->format.modeOrder()[0]]);
  return cast(kIndex, load(vars.pos(0), intLit(1)));  // DCSR: the rows stored in the top level
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
  std::string command = "pos(" + r.parent + "," + r.bounded + "," + r.access + ")";
  PositionLevel level = positionLevel(r);
  AccessState& state = accesses_.at(level.access);
  TensorVars& vars = *state.vars;
  std::vector<std::string> bound = scheduled_.boundVariables(r.parent);
  // Only A's stored entries are visited: the body must vanish where A is zero.
  auto savedZeroed = zeroed_;
  zeroed_.insert(level.access);
  bool vanishes = isZero(f.body);
  zeroed_ = savedZeroed;
  if (!vanishes) {
    throw ScheduleError(command + ": the loop visits only " + level.access->tensor->name +
                        "'s stored entries, but the statement is not zero where it is");
  }
  if (auto sparse = sparseOver(bound, level.access)) {
    throw ScheduleError(command + ": " + sparse->first->tensor->name + " is sparse over '" + sparse->second +
                        "' and cannot be located at " + level.access->tensor->name + "'s positions");
  }
  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, r.bounded, true);
  Interval interval = intervalOf(r.bounded, f.var);
  std::vector<Stmt> out;
  const Var& pos = vars.pos(level.level);
  Var p = makeVar(freshName("p" + vars.tensor->name + std::to_string(level.level + 1)), kIndex);
  // The row: CSR and DCSR track the position of the row in the level above (for CSR the
  // row itself) across the block; COO reads each position's row coordinate.
  Var row;
  Expr trackedRow;  // the tracked row's coordinate
  bool tracksRow = level.fused && !level.rowPerPosition();
  if (tracksRow) {
    // The row of the block's first position: the first r with pos[r + 1] > lo, i.e. one
    // less than the first q in [1, rows] with pos[q] >= lo + 1.
    Expr q = searchPosition(pos, intLit(1), plusOne(storedRows(level)), plusOne(interval.lo), bound[0] + "_search", out);
    row = makeVar(freshName(level.denseRows() ? bound[0] : "p" + vars.tensor->name + "1"), kIndex);
    out.push_back(declare(row, binary(BinaryOp::Sub, q, intLit(1))));
    trackedRow = level.denseRows() ? ir::ref(row) : cast(kIndex, load(vars.crd(0), ir::ref(row)));
  }
  // Sum a row's products in a register when the body adds into a dense result entry that
  // depends on the row only.
  const cin::AssignNode* sum = nullptr;
  if (level.fused && f.body->kind == cin::StmtKind::Assign) {
    const auto& a = cin::as<cin::AssignNode>(f.body);
    const auto& lhs = a.lhs->indices;
    bool rowOnly = std::find(lhs.begin(), lhs.end(), bound[1]) == lhs.end();
    if (a.lhs->tensor == resultTensor_ && a.accumulate == &nt::addOp() && groups_.empty() && trailingDense_ < 0 &&
        rowOnly) {
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
  if (tracksRow) {
    Expr ended = binary(BinaryOp::Le, cast(kIndex, load(pos, plusOne(ir::ref(row)))), ir::ref(p));
    if (sum) coords_[bound[0]] = trackedRow;
    body.push_back(whileLoop(ended, block({sum ? flush() : nullptr, assign(row, plusOne(ir::ref(row)))})));
  }
  Var i;
  if (level.rowPerPosition()) {
    i = makeVar(freshName(bound[0]), kIndex);
    body.push_back(declare(i, cast(kIndex, load(vars.crd(0), ir::ref(p)))));
    if (sum) {
      coords_[bound[0]] = ir::ref(current);
      body.push_back(ifThen(binary(BinaryOp::Ne, ir::ref(i), ir::ref(current)),
                            block({flush(), assign(current, ir::ref(i))})));
    }
  }
  Var j = makeVar(freshName(bound.back()), kIndex);
  body.push_back(declare(j, cast(kIndex, load(vars.crd(level.level), ir::ref(p)))));

  std::map<const AccessNode*, int> othersBefore;  // every access's entered levels, this one's too
  for (auto& [a, st] : accesses_) othersBefore[a] = st.entered;
  int resultBefore = result_.entered;
  if (level.fused) {
    coords_[bound[0]] = tracksRow ? trackedRow : ir::ref(i);
    state.pos[0] = tracksRow ? ir::ref(row) : ir::ref(p);
  }
  coords_[bound.back()] = ir::ref(j);
  state.pos[level.level] = ir::ref(p);
  state.runEnd[level.level] = nullptr;
  state.entered = level.level + 1;
  resolveLocates(body);
  for (const auto& v : bound) openLoops_.push_back(v);
  if (sum) {
    Expr value = lowerExpr(sum->rhs);
    if (value) body.push_back(assign(acc, binary(BinaryOp::Add, ir::ref(acc), cast(scalar(resultTensor_->dtype), value))));
  } else {
    enterResultLevels(body);
    body.push_back(lowerStmt(f.body));
  }
  for (size_t n = 0; n < bound.size(); ++n) openLoops_.pop_back();
  for (auto& [a, st] : accesses_) st.entered = othersBefore[a];
  result_.entered = resultBefore;
  coords_.erase(bound.back());

  out.push_back(forLoop(p, interval.lo, interval.hi, block(std::move(body)), plan.schedule));
  if (sum) {
    coords_[bound[0]] = tracksRow ? trackedRow : ir::ref(current);
    out.push_back(flush());  // the block's last row
  }
  if (level.fused) coords_.erase(bound[0]);
  return plan.around(block(std::move(out)));
}

Stmt Lowerer::lowerFusedLoop(const cin::ForallNode& f, const schedule::IndexRelation& r) {
  std::string command = "fuse(" + r.parent + "," + r.second + "," + r.bounded + ")";
  std::vector<std::string> bound = scheduled_.boundVariables(r.bounded);
  if (auto sparse = sparseOver(bound, nullptr)) {
    throw ScheduleError(command + ": " + sparse->first->tensor->name + " is sparse over '" + sparse->second +
                        "'; iterate its positions with pos(" + r.bounded + ", ...) instead");
  }
  if (bound.size() != 2) throw ScheduleError(command + ": only two plain loops can be fused without pos");
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
  resolveLocates(body);
  enterResultLevels(body);
  for (const auto& v : bound) openLoops_.push_back(v);
  body.push_back(lowerStmt(f.body));
  for (size_t n = 0; n < bound.size(); ++n) openLoops_.pop_back();
  for (auto& [a, st] : accesses_) st.entered = before[a];
  result_.entered = resultBefore;
  coords_.erase(bound[0]);
  coords_.erase(bound[1]);
  return plan.around(forLoop(fv, interval.lo, interval.hi, block(std::move(body)), plan.schedule));
}

}  // namespace coiter::lower
