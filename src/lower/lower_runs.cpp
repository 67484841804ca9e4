// Runs of one operand's entries inside a merge. Where two operands' patterns lie side by side
// (a band and its disjoint neighbours, blocks in different columns, a matrix and its
// transpose away from the diagonal), a merge meets long runs of one operand's entries below
// every other operand's coordinate. Stepped one entry at a time, each step's positions hang
// on the last step's loads and selects; a run has simpler work:
//   - an intersection leaps over it: nothing there meets, so the iterator moves past every
//     entry below the largest coordinate the others are at (a gallop: O(log n) for n
//     entries);
//   - a union stores it through the lattice point of that operand alone, in a loop whose only
//     branch is the run's end (predicted), as a row's last entries are drained after a merge.
// Looking for a run after every step costs random patterns about a fifth of their time, so
// each merge (each row) first probes whether it starts with a run of more than
// kRunLookahead entries; only then do its steps look for runs. Coordinates that only decide
// where a run ends are compared as loaded, as the merge's advance compares them.
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

// The lattice point where iterator s is the only one (a union's), or -1.
int Lowerer::pointOfAlone(const LatticeLoop& loop, int s) const {
  const auto& points = loop.points();
  for (size_t pi = 1; pi < points.size(); ++pi) {
    if (points[pi].iterators == std::vector<int>{s} && points[pi].locators.empty()) return static_cast<int>(pi);
  }
  return -1;
}

// Where runs apply: a merge of the loop's top point whose iterators all walk stored,
// ordered, unique coordinates (runsInLockstep says so), and that is an intersection (the top
// point alone) or a union with a point of each operand alone.
bool Lowerer::mergesByRuns(const LatticeLoop& loop) const {
  if (loop.points().size() == 1) return true;
  const auto& top = loop.points().front().iterators;
  return std::all_of(top.begin(), top.end(), [&](int s) { return pointOfAlone(loop, s) >= 0; });
}

// The largest (an intersection) or least (a union) coordinate the iterators other than s are
// at: where s's run ends. `inRange` gets the tests that those positions hold entries.
Expr Lowerer::runTarget(const LatticeLoop& loop, int s, std::vector<Expr>& inRange) {
  BinaryOp meet = loop.points().size() == 1 ? BinaryOp::Max : BinaryOp::Min;
  Expr target;
  for (int t : loop.points().front().iterators) {
    if (t == s) continue;
    inRange.push_back(binary(BinaryOp::Lt, ir::ref(loop.state.at(t)), ir::ref(loop.stateEnd.at(t))));
    Expr c = storedCoordinateAt(loop, t, ir::ref(loop.state.at(t)));
    target = target ? binary(meet, target, c) : c;
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

void Lowerer::takeRuns(LatticeLoop& loop, std::vector<Stmt>& out, std::vector<Stmt> after) {
  std::vector<Stmt> runs;
  for (int s : loop.points().front().iterators) {
    const Var& at = loop.state.at(s);
    std::vector<Expr> inRange;
    Expr target = runTarget(loop, s, inRange);
    if (loop.points().size() == 1) {
      runs.push_back(ifRunAhead(loop, s, target, inRange, gallopPastRun(loop, s, target)));
      continue;
    }
    // Store: the loop of s's point alone, while s's coordinates stay below the target.
    std::vector<Stmt> outside = std::move(loop.out);
    loop.out.clear();
    lowerLatticePoint(loop, static_cast<size_t>(pointOfAlone(loop, s)), false, LoopSchedule{}, target);
    Stmt run = block(std::move(loop.out));
    loop.out = std::move(outside);
    runs.push_back(ifRunAhead(loop, s, target, inRange, run));
  }
  for (Stmt& s : after) runs.push_back(std::move(s));
  out.push_back(ifThen(ir::ref(loop.leaps), block(std::move(runs))));
}

}  // namespace coiter::lower
