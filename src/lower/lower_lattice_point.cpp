// The loop of one lattice point of a forall (lower_forall.cpp builds the lattice and calls
// this once per point, in order): bind the coordinate of the loop's variable from the point's
// iterators, enter and locate the operands' levels there, lower the body once per region
// (which of the point's operands are present), then advance the iterators.
#include <algorithm>

#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace lt = coiter::lattice;

void Lowerer::lowerLatticePoint(LatticeLoop& loop, size_t pi, bool lockstep, const LoopSchedule& schedule) {
  const auto& points = loop.points();
  PointLoop p{points[pi]};
  p.lockstep = lockstep;
  p.single = p.point.iterators.size() == 1;
  p.forForm = !lockstep && p.single && pi + 1 == points.size() && !iteratesRuns(loop, p.point);
  if (p.forForm) {
    int s = p.point.iterators[0];
    p.loopRange = iteratorRange(loop, s);
    p.loopVar = makeVar(freshName(iteratorName(loop, s)), kIndex);
    if (loop.shared) p.loopRange = {ir::ref(loop.state[s]), ir::ref(loop.stateEnd[s])};
  }
  if (carriesCoordinates(loop, p)) carryCoordinates(loop, p);
  bindPointCoordinates(loop, p);
  enterPointLevels(loop, p);
  p.body.push_back(lowerPointRegions(loop, p));
  if (!p.entries.empty()) {
    // Nothing after the coordinate read may run for an empty bucket (its coordinate is -1).
    std::vector<Stmt> rest(p.body.begin() + p.coordinatesEnd, p.body.end());
    p.body.resize(p.coordinatesEnd);
    p.body.push_back(ifThen(andAll(p.entries), block(std::move(rest))));
  }

  // Restore the iteration state for the next point.
  for (auto& [acc, st] : accesses_) st.entered = p.enteredBefore[acc];
  result_.entered = p.resultEnteredBefore;
  coords_.erase(loop.v);
  coords_.erase(loop.f.var);

  if (!p.forForm) {
    advanceIterators(loop, p);
    return;
  }
  if (p.loopRange.single) {
    loop.out.push_back(declare(p.loopVar, p.loopRange.begin));
    loop.out.push_back(block(std::move(p.body)));
  } else {
    LoopSchedule own = schedule;
    own.segment = !loop.segs()[p.point.iterators[0]].dimension;  // a sparse level's stored segment
    loop.out.push_back(forLoop(p.loopVar, p.loopRange.begin, p.loopRange.end, block(std::move(p.body)), own));
  }
}

// A merge step's positions are selects on the step's compare of coordinates loaded from
// those positions: load, compare, select and load again is a chain of about eight cycles per
// step, which merges of patterns that differ (half-overlapping, disjoint, a transpose) ran
// at. Carried from step to step, each iterator's coordinate is already in a register, and
// the next one is loaded at the top of the step, beside the compare rather than after it:
// the chain is compare and select (A + B on those patterns, a C model of the loop: 1.4-2.1x
// faster; the elementwise product 1.1-1.3x). For merges of stored, ordered, unique
// coordinates without empty slots to skip (walksStoredCoordinates).
bool Lowerer::carriesCoordinates(const LatticeLoop& loop, const PointLoop& p) const {
  if (p.single || p.lockstep || loop.interval.restricted) return false;
  return std::all_of(p.point.iterators.begin(), p.point.iterators.end(),
                     [&](int s) { return walksStoredCoordinates(loop, s); });
}

// The carried coordinates, loaded before the merge's loop where their iterators hold entries
// (the loop runs only where all do).
void Lowerer::carryCoordinates(LatticeLoop& loop, PointLoop& p) {
  for (int s : p.point.iterators) {
    std::string name = "c" + loop.segs()[s].name;
    p.carried[s] = makeVar(freshName(name), kIndex);
    p.next[s] = makeVar(freshName(name + "_next"), kIndex);
    loop.out.push_back(declare(p.carried[s], intLit(0)));
  }
  loop.out.push_back(reloadCarried(loop, p));
}

// The carried coordinates read again at their iterators' positions (a leap moved them), where
// every iterator holds an entry: the merge's own condition, the only place they are read.
Stmt Lowerer::reloadCarried(const LatticeLoop& loop, const PointLoop& p) const {
  std::vector<Expr> inRange;
  std::vector<Stmt> loads;
  for (const auto& [s, carried] : p.carried) {
    inRange.push_back(loop.holdsEntry(s));
    loads.push_back(assign(carried, storedCoordinateAt(loop, s, ir::ref(loop.state.at(s)))));
  }
  return ifThen(andAll(inRange), block(std::move(loads)));
}

// The coordinates of the point's iterators, and the resolved coordinate of v: the one
// iterator's, the first's in lockstep, else the least.
void Lowerer::bindPointCoordinates(LatticeLoop& loop, PointLoop& p) {
  const std::string& v = loop.v;
  for (const auto& [s, next] : p.next) {
    // The next coordinate, where there is one (the loads stay inside the level's segment).
    Expr after = plusOne(ir::ref(loop.state.at(s)));
    p.body.push_back(declare(next, ir::ref(p.carried.at(s))));
    p.body.push_back(ifThen(binary(BinaryOp::Lt, after, ir::ref(loop.stateEnd.at(s))),
                            assign(next, storedCoordinateAt(loop, s, after))));
  }
  for (int s : p.point.iterators) {
    if (loop.segs()[s].dimension) {
      p.coordOf[s] = p.positionOf(loop, s);
      p.resolved = p.coordOf[s];
      continue;
    }
    AccessState& st = accesses_.at(loop.info[s].access);
    Expr c =
        p.carried.count(s) ? ir::ref(p.carried.at(s)) : storedCoordinate(st, loop.info[s].level, p.positionOf(loop, s));
    Var cv = makeVar(freshName(p.single ? v : v + st.vars->tensor->name), kIndex);
    p.body.push_back(declare(cv, c));
    p.coordOf[s] = ir::ref(cv);
    if (p.single) p.resolved = ir::ref(cv);
  }
  if (p.lockstep) p.resolved = p.coordOf[p.point.iterators.front()];
  if (!p.resolved) {
    Expr m;
    for (int s : p.point.iterators) m = m ? binary(BinaryOp::Min, m, p.coordOf[s]) : p.coordOf[s];
    Var rv = makeVar(freshName(v), kIndex);
    p.body.push_back(declare(rv, m));
    p.resolved = ir::ref(rv);
  }
  coords_[v] = p.resolved;
  // A derived loop's own coordinate counts from its block's start (a workspace over a
  // split's inner loop is indexed by it).
  if (loop.f.var != v) coords_[loop.f.var] = binary(BinaryOp::Sub, p.resolved, loop.interval.lo);
  p.coordinatesEnd = p.body.size();
}

// Enter the iterated levels at their positions, then locate the others at the coordinate.
void Lowerer::enterPointLevels(LatticeLoop& loop, PointLoop& p) {
  for (auto& [acc, st] : accesses_) p.enteredBefore[acc] = st.entered;
  p.resultEnteredBefore = result_.entered;
  for (int s : p.point.iterators) {
    if (loop.segs()[s].dimension) continue;
    const SegmentInfo& info = loop.info[s];
    AccessState& st = accesses_.at(info.access);
    int k = info.level;
    const auto& type = *st.vars->tensor->format.levels()[k];
    // A workspace's values are indexed by coordinate, other levels' by position.
    st.pos[k] = info.access->tensor->temporary ? workspaceValueIndex(workspaces_.at(info.access->tensor.get()),
                                                                     p.positionOf(loop, s), p.coordOf[s], p.body)
                                               : p.positionOf(loop, s);
    st.runEnd[k] = nullptr;
    st.entered = k + 1;
    p.advanceTo[s] = plusOne(p.positionOf(loop, s));
    if (!type.properties().unique && (!p.single || loop.byRuns)) {
      // Coiterating a non-unique level, or appending a result entry per coordinate: take
      // the whole run of equal coordinates at once. The run is found with the coordinates,
      // ahead of the entry conditions below (it only compares coordinates, and loads inside
      // the level's range): the iterators advance past it whether or not the body runs
      // (R = max(l, A * B(k,i,l) * C(l,k)) with B in COO and C in DIA read the run's end
      // where a DIA diagonal's row outside the matrix had skipped its declaration).
      Var run = makeVar(freshName("p" + loop.segs()[s].name + "_run_end"), kIndex);
      Expr end = p.forForm ? p.loopRange.end : ir::ref(loop.stateEnd.at(s));
      Expr more = binary(BinaryOp::And, binary(BinaryOp::Lt, ir::ref(run), end),
                         binary(BinaryOp::Eq, cast(kIndex, load(st.vars->crd(k), ir::ref(run))), p.coordOf[s]));
      Stmt findRun[] = {declare(run, plusOne(p.positionOf(loop, s))),
                        whileLoop(more, assign(run, plusOne(ir::ref(run))), /*step=*/true)};
      p.body.insert(p.body.begin() + p.coordinatesEnd, std::begin(findRun), std::end(findRun));
      p.coordinatesEnd += std::size(findRun);
      st.runEnd[k] = ir::ref(run);
      p.advanceTo[s] = ir::ref(run);
    }
    if (info.access->tensor->temporary) continue;
    // A hashed level's empty buckets and ELL's and DIA's padding are visited and skipped.
    if (Expr entry = entryCondition(st, k, p.coordOf[s])) p.entries.push_back(entry);
  }
  for (int s : p.point.locators) {
    AccessState& st = accesses_.at(loop.info[s].access);
    int k = loop.info[s].level;
    st.pos[k] = locatePosition(st, k, p.resolved, p.body);
    st.entered = k + 1;
    if (st.vars->tensor->format.levels()[k]->locateMayMiss()) p.failing.push_back(s);
  }
  resolveLocates(p.body);
  enterResultLevels(p.body);
}

// The body once per region (a subset of the segments that may be absent at v, richest first),
// as an if-chain, or one body for all regions where selects can stand in for the branches.
Stmt Lowerer::lowerPointRegions(LatticeLoop& loop, PointLoop& p) {
  const cin::ForallNode& f = loop.f;
  const std::vector<SegmentInfo>& info = loop.info;
  std::vector<int> testable = p.failing;
  if (!p.single && !p.lockstep) {
    for (int s : p.point.iterators) {
      if (!loop.segs()[s].dimension) testable.push_back(s);
    }
  }
  auto savedZeroed = zeroed_;
  for (size_t s = 1; s < info.size(); ++s) {
    const auto& its = p.point.iterators;
    const auto& locs = p.point.locators;
    bool inPoint = std::find(its.begin(), its.end(), static_cast<int>(s)) != its.end() ||
                   std::find(locs.begin(), locs.end(), static_cast<int>(s)) != locs.end();
    if (!inPoint) zeroed_.insert(info[s].access);
  }
  auto pointZeroed = zeroed_;
  std::vector<unsigned> masks;
  unsigned all = (1u << testable.size()) - 1;
  for (unsigned m = 0; m <= all; ++m) masks.push_back(m);
  std::stable_sort(masks.begin(), masks.end(),
                   [](unsigned a, unsigned b) { return __builtin_popcount(a) > __builtin_popcount(b); });
  std::vector<std::pair<Expr, Stmt>> branches;
  // The body of one region (the accesses in zeroed_ absent), with its result entry.
  auto regionBody = [&] {
    Var start;
    Stmt begin = beginResultEntry(loop.v, loop.writes, loop.accumulates, start);
    openLoops_.push_back(loop.v);
    Stmt inner = lowerStmt(f.body);
    openLoops_.pop_back();
    Stmt commit = commitResultEntry(loop.v, loop.writes, start);
    return countEntries(loop.v, {begin, inner, commit}, loop.writes);
  };
  const bool skipsEmptyBuckets = !p.entries.empty();
  if (p.failing.empty() && !skipsEmptyBuckets && mergesWithSelects(f, testable, info)) {
    // One body for every region: each operand's value is selected by whether its iterator
    // is at v, so the merge has no branch to mispredict (coordinates of two random
    // operands interleave unpredictably).
    zeroed_ = pointZeroed;
    for (int s : testable) presentIf_[info[s].access] = binary(BinaryOp::Eq, p.coordOf[s], p.resolved);
    masks.clear();
    branches.emplace_back(boolLit(true), regionBody());
    for (int s : testable) presentIf_.erase(info[s].access);
  }
  for (unsigned m : masks) {
    zeroed_ = pointZeroed;
    std::vector<Expr> tests;
    for (size_t t = 0; t < testable.size(); ++t) {
      int s = testable[t];
      bool failingLocator = std::find(p.failing.begin(), p.failing.end(), s) != p.failing.end();
      if (m & (1u << t)) {
        tests.push_back(failingLocator
                            ? binary(BinaryOp::Ge, accesses_.at(info[s].access).pos[info[s].level], intLit(0))
                            : binary(BinaryOp::Eq, p.coordOf[s], p.resolved));
      } else {
        zeroed_.insert(info[s].access);
      }
    }
    if (isZero(f.body)) continue;
    branches.emplace_back(andAll(tests), regionBody());
    if (tests.empty()) break;  // unconditional: later branches are unreachable
  }
  if (branches.size() == 1 && branches.front().first->kind != ExprKind::Literal && p.failing.empty() &&
      !skipsEmptyBuckets && !iteratesNonUnique(loop, p.point) && appendsSpeculatively(f, loop.v)) {
    // An intersection (the only region with a nonzero body is "all present"): whether the
    // iterators meet is as unpredictable as a coin flip on random patterns, so the body
    // runs at every step (its loads are in range: every iterator is) and the entry is kept
    // only when they do, instead of a branch that mispredicts half the time.
    zeroed_ = pointZeroed;
    appendIf_ = branches.front().first;
    branches.front() = {boolLit(true), regionBody()};
    appendIf_ = nullptr;
  }
  zeroed_ = savedZeroed;
  // (A result keeping an operand's pattern has an entry at each of the operand's: a loop over
  // the operand's own segment, alone, stores at every one of them.)
  const int only = p.point.iterators[0];
  loop.storesEveryCoordinate =
      loop.points().size() == 1 && p.forForm && (loop.segs()[only].dimension || iteratesPatternOperand(loop, only)) &&
      !loop.interval.restricted && branches.size() == 1 && branches.front().first->kind == ExprKind::Literal;
  Stmt chain;
  for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
    bool always = it->first->kind == ExprKind::Literal;
    chain = always ? it->second : ifThen(it->first, it->second, chain);
  }
  return chain;
}

// The while loop of a point that is not one for loop: it runs while every iterator lasts
// (and, in lockstep, agrees), and advances the iterators at the least coordinate.
void Lowerer::advanceIterators(LatticeLoop& loop, PointLoop& p) {
  const auto& iterators = p.point.iterators;
  const auto& segs = loop.segs();
  auto& state = loop.state;
  std::vector<Expr> ranges;
  for (int s : iterators) ranges.push_back(loop.holdsEntry(s));
  if (p.lockstep) {
    // (The coordinates are only compared here; the body loads them again, checked.)
    auto stored = [&](int s) {
      const AccessState& st = accesses_.at(loop.info[s].access);
      return cast(kIndex, load(st.vars->crd(loop.info[s].level), ir::ref(state.at(s))));
    };
    for (size_t n = 1; n < iterators.size(); ++n)
      ranges.push_back(binary(BinaryOp::Eq, stored(iterators[n]), stored(iterators.front())));
  }
  // Advance: positions first (they compare their coordinate with v), the dimension last.
  // A merge advances the iterators at the smallest coordinate, compared as loaded: the
  // checked coordinates (ir/guard_coordinates.hpp) would put a clamp on the chain from each
  // step's loads to the next step's positions. (With a dimension iterator v is the least.)
  Expr least = p.resolved;
  std::map<int, Expr> loaded;
  bool dimension = false;
  for (int s : iterators) dimension = dimension || segs[s].dimension;
  if (!p.single && !p.lockstep && !dimension) {
    least = nullptr;
    for (int s : iterators) {
      const SegmentInfo& info = loop.info[s];
      const AccessState& st = accesses_.at(info.access);
      if (p.carried.count(s))
        loaded[s] = ir::ref(p.carried.at(s));
      else
        loaded[s] =
            info.access->tensor->temporary ? p.coordOf[s] : storedCoordinate(st, info.level, p.positionOf(loop, s));
      least = least ? binary(BinaryOp::Min, least, loaded[s]) : loaded[s];
    }
  }
  // (Whether each advances is decided before any moves.)
  std::map<int, Var> advances;
  for (int s : iterators) {
    if (segs[s].dimension || p.single || p.lockstep) continue;
    advances[s] = makeVar(freshName(iteratorName(loop, s) + "_advances"), scalar(DType::Bool));
    Expr at = loaded.count(s) ? loaded[s] : p.coordOf[s];
    p.body.push_back(declare(advances[s], binary(BinaryOp::Eq, at, least)));
  }
  for (int s : iterators) {
    if (segs[s].dimension) {
      continue;
    } else if (p.single || p.lockstep) {
      p.body.push_back(assign(state.at(s), p.advanceTo[s]));
    } else {
      p.body.push_back(assign(state.at(s), select(ir::ref(advances[s]), p.advanceTo[s], ir::ref(state.at(s)))));
      if (p.carried.count(s))
        p.body.push_back(
            assign(p.carried.at(s), select(ir::ref(advances[s]), ir::ref(p.next.at(s)), ir::ref(p.carried.at(s)))));
    }
  }
  for (int s : iterators) {
    if (segs[s].dimension) p.body.push_back(assign(state.at(s), plusOne(ir::ref(state.at(s)))));
  }
  if (loop.leaps && !p.lockstep && &p.point == &loop.points().front()) takeRuns(loop, p.body, reloadCarried(loop, p));
  loop.out.push_back(whileLoop(andAll(ranges), block(std::move(p.body))));
}

}  // namespace coiter::lower
