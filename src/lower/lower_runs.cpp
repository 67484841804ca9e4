// Runs of one operand's entries inside an intersection. Where two operands' patterns lie side
// by side (a band and its disjoint neighbours, blocks in different columns, a long row met by a
// short one), an intersection meets long runs of one operand's entries below every other
// operand's coordinate. Nothing there meets, so the iterator leaps past every entry below the
// largest coordinate the others are at: a gallop, O(log n) for n entries (a long row met by a
// short one costs no more than a short one).
// Looking for a run after every step costs random patterns about a fifth of their time, so
// each merge (each row) first probes whether it starts with a run of more than
// kRunLookahead entries; only then do its steps look for runs. Coordinates that only decide
// where a run ends are compared as loaded, as the merge's advance compares them.
// Unions take no runs: their runs hold entries to store one by one, and a merge step that
// carries its coordinates (lower_lattice_point.cpp) costs about what a run's loop did; the
// probe and the tests cost more than the runs saved (A + B, one thread, 2026-11-27: 5-13 %
// faster without, on block, banded, uniform and power-law patterns of every overlap).
#include <algorithm>

#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"

namespace coiter::lower {

using namespace ir;

namespace {

// How far ahead a merge looks for a run. On random patterns a run this long is rare (about
// one in 2^kRunLookahead steps), so the test that finds none is predicted.
constexpr int64_t kRunLookahead = 4;

}  // namespace

// Where runs apply: an intersection (the loop's one point) whose iterators all walk stored,
// ordered, unique coordinates (runsInLockstep says so).
bool Lowerer::mergesByRuns(const LatticeLoop& loop) const { return loop.points().size() == 1; }

// The largest coordinate the iterators other than s are at: where s's run ends. `inRange`
// gets the tests that those positions hold entries.
Expr Lowerer::runTarget(const LatticeLoop& loop, int s, std::vector<Expr>& inRange) {
  Expr target;
  for (int t : loop.points().front().iterators) {
    if (t == s) continue;
    inRange.push_back(loop.holdsEntry(t));
    Expr c = storedCoordinateAt(loop, t, ir::ref(loop.state.at(t)));
    target = target ? binary(BinaryOp::Max, target, c) : c;
  }
  return target;
}

Expr Lowerer::storedCoordinateAt(const LatticeLoop& loop, int s, const Expr& position) const {
  const AccessState& st = accesses_.at(loop.info[s].access);
  return cast(kIndex, load(st.vars->crd(loop.info[s].level), position));
}

// `onRun` where iterator s has a run of more than kRunLookahead entries before `target` (from
// runTarget, with its `inRange` tests). Nested ifs: the coordinates are read (and checked,
// ir/guard_coordinates.hpp) only where the positions are in range.
Stmt Lowerer::ifRunAhead(const LatticeLoop& loop, int s, const Expr& target, std::vector<Expr> inRange,
                         const Stmt& onRun) {
  Expr ahead = binary(BinaryOp::Add, ir::ref(loop.state.at(s)), intLit(kRunLookahead));
  inRange.insert(inRange.begin(), binary(BinaryOp::Lt, ahead, ir::ref(loop.stateEnd.at(s))));
  return ifThen(andAll(inRange), ifThen(binary(BinaryOp::Lt, storedCoordinateAt(loop, s, ahead), target), onRun));
}

// An intersection's leap over iterator s's run, whose entry kRunLookahead ahead lies below
// `target`: a gallop (steps doubling while they stay below the target), then a binary search
// between the last two steps, so a run of n entries costs O(log n) loads. A long row met by a
// short one (skewed rows: one thread of a GPU walks the whole row) costs no more than a short
// one. Loads sit in nested ifs, inside their bounds (ir/guard_coordinates.hpp).
Stmt Lowerer::gallopPastRun(const LatticeLoop& loop, int s, const Expr& target) {
  const Var& at = loop.state.at(s);
  const Expr end = ir::ref(loop.stateEnd.at(s));
  Var step = makeVar(freshName("gallop"), kIndex);
  Expr probe = binary(BinaryOp::Add, ir::ref(at), ir::ref(step));
  auto below = [&](const Expr& position) {
    return binary(BinaryOp::Lt, storedCoordinateAt(loop, s, position), target);
  };
  // (at stays below the target throughout; at + step ends at or past it, or past the end.)
  Stmt gallop = whileLoop(binary(BinaryOp::And, binary(BinaryOp::Lt, probe, end), below(probe)),
                          block({assign(at, probe), assign(step, binary(BinaryOp::Mul, ir::ref(step), intLit(2)))}),
                          /*step=*/true);
  Stmt search = whileLoop(binary(BinaryOp::Gt, ir::ref(step), intLit(1)),
                          block({assign(step, binary(BinaryOp::Div, ir::ref(step), intLit(2))),
                                 ifThen(binary(BinaryOp::Lt, probe, end), ifThen(below(probe), assign(at, probe)))}),
                          /*step=*/true);
  return block({assign(at, binary(BinaryOp::Add, ir::ref(at), intLit(kRunLookahead))), declare(step, intLit(1)), gallop,
                search, assign(at, plusOne(ir::ref(at)))});
}

void Lowerer::probeRuns(LatticeLoop& loop) {
  if (!mergesByRuns(loop)) return;
  loop.leaps = makeVar(freshName("leaps"), scalar(DType::Bool));
  loop.out.push_back(declare(loop.leaps, boolLit(false)));
  for (int s : loop.points().front().iterators) {
    std::vector<Expr> inRange;
    Expr target = runTarget(loop, s, inRange);
    loop.out.push_back(ifRunAhead(loop, s, target, inRange, assign(loop.leaps, boolLit(true))));
  }
}

void Lowerer::takeRuns(LatticeLoop& loop, std::vector<Stmt>& out, Stmt after) {
  std::vector<Stmt> runs;
  for (int s : loop.points().front().iterators) {
    std::vector<Expr> inRange;
    Expr target = runTarget(loop, s, inRange);
    runs.push_back(ifRunAhead(loop, s, target, inRange, gallopPastRun(loop, s, target)));
  }
  runs.push_back(std::move(after));
  out.push_back(ifThen(ir::ref(loop.leaps), block(std::move(runs))));
}

}  // namespace coiter::lower
