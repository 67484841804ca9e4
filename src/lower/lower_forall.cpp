// Forall lowering (Kjolstad's thesis, ch. 5, Fig. 5-2): build the iteration lattice of the forall's
// domain, then emit one loop per lattice point. In each loop the iterators' coordinates are
// read, the loop's coordinate is resolved (their minimum), locators are located, and an
// if-chain selects the region: one branch per set of present segments whose body is not
// zero, largest sets first. The body is lowered recursively per branch with the absent
// operands set to zero.
#include <algorithm>
#include <functional>
#include <set>

#include "lower/index_exprs.hpp"
#include "lower/lattice_printer.hpp"
#include "lower/lowerer.hpp"
#include "schedule/loop_iteration.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace lt = coiter::lattice;
namespace nt = coiter::notation;

bool Lowerer::accumulatesIntoResult(const cin::Stmt& s) const {
  bool any = false;
  cin::forEachAssignment(
      s, [&](const cin::AssignNode& a) { any = any || (a.lhs->tensor == resultTensor_ && a.accumulate != nullptr); });
  return any;
}

bool Lowerer::onlyAccumulates(const cin::Stmt& s) const {
  bool all = true;
  cin::forEachAssignment(
      s, [&](const cin::AssignNode& a) { all = all && (a.lhs->tensor != resultTensor_ || a.accumulate != nullptr); });
  return all;
}

bool Lowerer::writesResult(const cin::Stmt& s) const {
  auto written = cin::resultsOf(s);
  return std::find(written.begin(), written.end(), resultTensor_) != written.end();
}

int Lowerer::segmentFor(const AccessNode* access, int level) {
  for (size_t s = 0; s < segmentInfo_.size(); ++s) {
    if (segmentInfo_[s].access == access && segmentInfo_[s].level == level) return static_cast<int>(s);
  }
  if (access->tensor->temporary) {
    // A workspace is consumed through its sorted list of touched coordinates.
    lt::Segment seg;
    seg.name = access->tensor->name;
    seg.iterable = true;
    segments_.push_back(seg);
    segmentInfo_.push_back(SegmentInfo{access, level});
    return static_cast<int>(segments_.size()) - 1;
  }
  const auto& type = *access->tensor->format.levels()[level];
  LevelProperties props = type.properties();
  LevelCapabilities caps = type.capabilities();
  lt::Segment seg;
  seg.name = access->tensor->name + std::to_string(level + 1);
  seg.iterable = !type.locatesEveryCoordinate() && (caps.positionIterate || caps.coordinateIterate);
  seg.ordered = props.ordered;
  seg.locatable = caps.locate;
  seg.full = props.full;
  segments_.push_back(seg);
  segmentInfo_.push_back(SegmentInfo{access, level});
  return static_cast<int>(segments_.size()) - 1;
}

lt::DomainExprPtr Lowerer::domainOf(const nt::Expr& e, const std::string& var) {
  auto dimension = [&] { return lt::segmentDomain(dimensionSegment_); };
  switch (e->kind) {
    case nt::ExprKind::Access: {
      const auto& a = static_cast<const AccessNode&>(*e);
      // (By `var` itself, or by a loop derived from it: a workspace over a split's inner loop.)
      bool indexedHere = std::any_of(a.indices.begin(), a.indices.end(),
                                     [&](const std::string& v) { return scheduled_.rootOf(v) == var; });
      if (a.tensor->temporary && schedule::listWorkspace(scheduled_, a) && indexedHere) {
        return lt::segmentDomain(segmentFor(&a, 0));  // a workspace's coordinate list
      }
      if (a.tensor->temporary && indexedHere) return dimension();  // a dense array, located
      if (a.tensor->temporary) {
        auto it = tempDomains_.find(a.tensor.get());
        return it != tempDomains_.end() ? it->second : dimension();
      }
      if (zeroed_.count(&a)) return nullptr;
      const AccessState& state = accesses_.at(&a);
      int order = static_cast<int>(state.levelVars.size());
      for (int k = state.entered; k < order; ++k) {
        if (state.levelVars[k] != var) continue;
        if (k == state.entered) return lt::segmentDomain(segmentFor(&a, k));
        // Indexed deeper: the level is reached later, by locate, once its parents are known.
        if (!a.tensor->format.levels()[k]->locatesEveryCoordinate()) {
          throw CompileError("loop order: " + nt::toString(e) + " would be traversed out of order (its level " +
                             std::to_string(k + 1) + ", indexed by '" + var +
                             "', has no random access and sits below levels iterated later); convert " +
                             a.tensor->name + " to a format whose mode order matches, e.g. with asformat()");
        }
      }
      return dimension();
    }
    case nt::ExprKind::Literal: return static_cast<const nt::LiteralNode&>(*e).isZero() ? nullptr : dimension();
    case nt::ExprKind::Negate: return domainOf(static_cast<const nt::NegateNode&>(*e).a, var);
    case nt::ExprKind::Binary: {
      // A null domain is a zero operand (absent in the region being lowered).
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      lt::DomainExprPtr x = domainOf(b.a, var), y = domainOf(b.b, var);
      auto meet = [](lt::DomainExprPtr p, lt::DomainExprPtr q) -> lt::DomainExprPtr {
        return p && q ? lt::intersection(p, q) : nullptr;
      };
      auto join = [](lt::DomainExprPtr p, lt::DomainExprPtr q) -> lt::DomainExprPtr {
        return p && q ? lt::unionOf(p, q) : (p ? p : q);
      };
      const nt::Operator& op = *b.op;
      if (op.leftZeroAnnihilates && op.rightZeroAnnihilates) return meet(x, y);
      if (op.leftZeroAnnihilates) return meet(x, join(y, dimension()));
      if (op.rightZeroAnnihilates) return meet(join(x, dimension()), y);
      if (op.zeroPreserving) return join(x, y);
      return join(join(x, y), dimension());
    }
    case nt::ExprKind::Reduce: break;
  }
  throw CompileError("lowering: unexpected reduction in a concrete statement");
}

lt::DomainExprPtr Lowerer::domainOf(const cin::Stmt& s, const std::string& var) {
  switch (s->kind) {
    case cin::StmtKind::Assign: {
      const auto& a = cin::as<cin::AssignNode>(s);
      lt::DomainExprPtr d = domainOf(a.rhs, var);
      // max/min see the unstored zeros, so they range over the whole dimension.
      if (a.accumulate && !a.accumulate->zeroIsIdentity) {
        lt::DomainExprPtr all = lt::segmentDomain(dimensionSegment_);
        d = d ? lt::unionOf(d, all) : all;
      }
      return d;
    }
    case cin::StmtKind::Forall: return domainOf(cin::as<cin::ForallNode>(s).body, var);
    case cin::StmtKind::Where: {
      const auto& w = cin::as<cin::WhereNode>(s);
      lt::DomainExprPtr produced = domainOf(w.producer, var);
      for (const auto& t : cin::resultsOf(w.producer)) {
        if (t->temporary) tempDomains_[t.get()] = produced;
      }
      return domainOf(w.consumer, var);
    }
    case cin::StmtKind::Sequence: {
      const auto& q = cin::as<cin::SequenceNode>(s);
      lt::DomainExprPtr d = domainOf(q.define, var), m = domainOf(q.mutate, var);
      return d && m ? lt::unionOf(d, m) : (d ? d : m);
    }
  }
  return nullptr;
}

LevelKernelVars Lowerer::levelVarsOf(const TensorVars& vars, int level) const {
  LevelKernelVars out = static_cast<size_t>(level) < vars.levels.size() ? vars.levels[level] : LevelKernelVars{};
  out.extent = levelExtentOf(vars, level);
  return out;
}

Expr Lowerer::locatePosition(AccessState& state, int level, const Expr& coord, std::vector<Stmt>& out) {
  TensorVars& vars = *state.vars;
  Expr parent = level > 0 ? state.pos[level - 1] : vars.root ? vars.root : intLit(0);
  const LevelType& type = *vars.tensor->format.levels()[level];
  Expr at = type.locatesEveryCoordinate() ? levelCoordinate(state, level, coord) : coord;
  LevelCode code{"p" + vars.tensor->name + std::to_string(level + 1),
                 [this](const std::string& base) { return freshName(base); }, out};
  Expr position = type.locate(levelVarsOf(vars, level), parent, at, code);
  if (!position) {
    throw CompileError("lowering: level " + std::to_string(level + 1) + " of " + vars.tensor->name + " (" +
                       type.name() + ") cannot be located");
  }
  return position;
}

void Lowerer::resolveLocates(std::vector<Stmt>& out) {
  for (const AccessNode* acc : accessOrder_) {
    // Vector workspaces are iterated, never located; dense arrays are located once their
    // where statement has declared them.
    if (acc->tensor->temporary && (schedule::listWorkspace(scheduled_, *acc) || !accesses_.at(acc).vars)) continue;
    AccessState& state = accesses_.at(acc);
    int order = static_cast<int>(state.levelVars.size());
    while (state.entered < order) {
      int k = state.entered;
      auto bound = coords_.find(state.levelVars[k]);
      if (bound == coords_.end() || !acc->tensor->format.levels()[k]->locatesEveryCoordinate()) break;
      state.pos[k] = locatePosition(state, k, bound->second, out);
      state.entered++;
    }
  }
}

// `restricted`: the loop covers one block of the coordinates, where an unordered level's
// positions cannot be narrowed to the block, so such levels are located as the block's
// coordinates are iterated. The schedule's legality refuses a split whose loop iterates an
// unordered level by itself; it may still do so in a region of an outer loop where the
// operands beside it are absent (A + B*C where B's row is empty): that is the case this serves.
lt::IterationLattice Lowerer::latticeOf(const std::string& var, const cin::Stmt& body, std::vector<SegmentInfo>& info,
                                        bool restricted) {
  // Segments of this forall (nested foralls build their own).
  auto savedSegments = std::move(segments_);
  auto savedInfo = std::move(segmentInfo_);
  int savedDimension = dimensionSegment_;
  segments_.clear();
  segmentInfo_.clear();
  lt::Segment dim;
  dim.name = "U_" + var;
  dim.dimension = dim.iterable = dim.full = dim.ordered = true;
  segments_.push_back(dim);
  segmentInfo_.push_back(SegmentInfo{});
  dimensionSegment_ = 0;
  lt::DomainExprPtr domain = domainOf(body, var);
  bool appends = appendsInOrderOf(var) && writesResult(body);
  // A zero body (every operand absent) iterates nothing.
  lt::IterationLattice lattice =
      domain ? lt::IterationLattice::build(domain, segments_, 0, appends || restricted) : lt::IterationLattice();
  if (appends) checkAppendOrder(var, lattice);
  info = segmentInfo_;
  segments_ = std::move(savedSegments);
  segmentInfo_ = std::move(savedInfo);
  dimensionSegment_ = savedDimension;
  return lattice;
}

std::string Lowerer::outerLattice() {
  declareTensors();
  if (root_->kind != cin::StmtKind::Forall) return "";
  std::vector<SegmentInfo> info;
  const auto& f = cin::as<cin::ForallNode>(root_);
  return latticeOf(f.var, f.body, info, false).toString();
}

std::string outerLattice(const cin::Stmt& stmt) {
  return Lowerer(schedule::ScheduledStatement{stmt, {}, {}, {}}, "lattice").outerLattice();
}

Stmt Lowerer::lowerForall(const cin::ForallNode& f) {
  const schedule::IndexRelation* split = scheduled_.relationOf(scheduled_.loopOf(f.var));
  if (split && split->kind == schedule::RelationKind::Split && split->inner == scheduled_.loopOf(f.var) &&
      !openBlocks_.count(split)) {
    return lowerStridedLoop(f, *split);
  }
  if (const schedule::IndexRelation* blocks = scheduled_.blocksOf(f.var)) return lowerBlockLoop(f, *blocks);
  // A derived inner loop iterates its root variable, restricted to the current block.
  const std::string v = scheduled_.rootOf(f.var);
  if (const schedule::IndexRelation* own = scheduled_.relationOf(v); own && own->bounded == v) {
    if (own->kind == schedule::RelationKind::Pos) return lowerPositionLoop(f, *own);
    if (own->kind == schedule::RelationKind::Fuse) return lowerFusedLoop(f, *own);
  }
  std::vector<SegmentInfo> info;
  Interval interval = intervalOf(v, f.var);
  lt::IterationLattice lattice = latticeOf(v, f.body, info, interval.restricted);
  if (lattice.points().empty()) return nullptr;
  LatticeLoop loop{f, v, std::move(lattice), std::move(info), interval};
  auto paddingExcludedBefore = paddingExcluded_;
  restrictToLevels(v, loop.interval, loop.out);
  loop.writes = writesResult(f.body);
  // A non-unique level (COO) may be iterated entry by entry only when every write to the
  // result accumulates (+=) into random-access (dense) levels: a plain assignment, or an
  // appended result (whose entries would repeat), needs the whole run of equal coordinates.
  loop.byRuns = loop.writes && (!groups_.empty() || !onlyAccumulates(f.body));
  loop.accumulates = accumulatesIntoResult(f.body);
  const auto& points = loop.points();
  loop.shared = points.size() > 1 || points.front().iterators.size() > 1 || iteratesRuns(loop, points.front());
  // A tagged loop (parallel, vectorized, unrolled) must be a single for loop.
  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, v, !loop.shared && points.size() == 1, iteratesNonUnique(loop, points.front()));
  if (loop.shared) declareSharedIterators(loop);
  const size_t declared = loop.out.size();
  int reservedBefore = reservedGroup_;
  reserveLoopAppends(loop);
  bool lockstep = runsInLockstep(loop);
  if (lockstep && points.size() == 1) skipDisjointIntersection(loop);
  if (lockstep) lowerLatticePoint(loop, 0, true, plan.schedule);
  if (lockstep) probeRuns(loop);
  for (size_t pi = 0; pi < points.size(); ++pi) lowerLatticePoint(loop, pi, false, plan.schedule);
  // (A lockstep loop is over stored segments only: this test encloses skipDisjointIntersection's.)
  if (Expr some = anyPointIterates(loop)) {
    std::vector<Stmt> merge(std::make_move_iterator(loop.out.begin() + static_cast<std::ptrdiff_t>(declared)),
                            std::make_move_iterator(loop.out.end()));
    loop.out.resize(declared);
    loop.out.push_back(ifThen(some, block(std::move(merge))));
  }
  reservedGroup_ = reservedBefore;
  paddingExcluded_ = paddingExcludedBefore;
  for (const auto* access : accessOrder_) {
    if (!paddingExcluded_.count(access)) diagonalOffset_.erase(access);
  }
  checkResultLoop(f, loop.storesEveryCoordinate);
  return plan.around(block(std::move(loop.out)));
}

Expr Lowerer::LatticeLoop::holdsEntry(int s) const {
  return binary(BinaryOp::Lt, ir::ref(state.at(s)), ir::ref(stateEnd.at(s)));
}

Lowerer::IteratorRange Lowerer::iteratorRange(LatticeLoop& loop, int s) {
  const auto& segs = loop.segs();
  const Interval& interval = loop.interval;
  if (segs[s].dimension) return {interval.lo, interval.hi};
  const SegmentInfo& info = loop.info[s];
  if (info.access->tensor->temporary) {
    // (A split of a loop over a workspace's list is refused by the schedule's legality.)
    if (interval.restricted) throw CompileError("lowering: loop '" + loop.f.var + "' restricts a workspace to a block");
    const WorkspaceVars& ws = workspaces_.at(info.access->tensor.get());
    return {ws.at(intLit(0)), ws.at(ir::ref(ws.count))};
  }
  AccessState& state = accesses_.at(info.access);
  int k = info.level;
  Expr parent = k == 0 ? intLit(0) : state.pos[k - 1];
  const LevelType& type = *state.vars->tensor->format.levels()[k];
  LevelParent above{parent, k == 0 ? nullptr : state.runEnd[k - 1], k == 0};
  std::optional<PositionRange> positions = type.positionRange(state.vars->levels[k], above);
  if (!positions) throw CompileError("lowering: segment " + segs[s].name + " cannot be iterated");
  if (!interval.restricted) return {positions->begin, positions->end, positions->single};
  // Within a block, an ordered level's positions for coordinates [lo, hi) are found by
  // binary search. (The schedule's legality refuses to split loops over unordered levels, or
  // over levels whose coordinates are computed, not stored.)
  const Var& crd = state.vars->crd(k);
  if (!segs[s].ordered || !crd) throw CompileError("lowering: " + segs[s].name + " cannot be restricted to a block");
  std::string name = "p" + segs[s].name;
  Expr lo = searchPosition(crd, positions->begin, positions->end, interval.lo, name + "_lo", loop.out);
  return {lo, searchPosition(crd, lo, positions->end, interval.hi, name + "_hi", loop.out)};
}

std::string Lowerer::iteratorName(const LatticeLoop& loop, int s) const {
  return loop.segs()[s].dimension ? loop.v : "p" + loop.segs()[s].name;
}

bool Lowerer::iteratesNonUnique(const LatticeLoop& loop, const lt::LatticePoint& p) const {
  return std::any_of(p.iterators.begin(), p.iterators.end(), [&](int s) {
    const SegmentInfo& info = loop.info[s];
    return !loop.segs()[s].dimension && !info.access->tensor->temporary &&
           !info.access->tensor->format.levels()[info.level]->properties().unique;
  });
}

// Iterating a non-unique level run by run (to append one result entry per coordinate)
// advances by runs, so it cannot be a plain for loop.
bool Lowerer::iteratesRuns(const LatticeLoop& loop, const lt::LatticePoint& p) const {
  return loop.byRuns && iteratesNonUnique(loop, p);
}

// Iterators shared by several lattice points keep their state in variables.
void Lowerer::declareSharedIterators(LatticeLoop& loop) {
  for (const auto& p : loop.points()) {
    for (int s : p.iterators) {
      if (loop.state.count(s)) continue;
      IteratorRange r = iteratorRange(loop, s);
      loop.state[s] = makeVar(freshName(iteratorName(loop, s)), kIndex);
      loop.stateEnd[s] = makeVar(freshName(iteratorName(loop, s) + "_end"), kIndex);
      loop.out.push_back(declare(loop.state[s], r.begin));
      loop.out.push_back(declare(loop.stateEnd[s], r.end));
    }
  }
}

// Each step of the points' loops appends at most one result entry at v, and every step
// advances an iterator: their lengths bound the entries, so room for them is made once.
void Lowerer::reserveLoopAppends(LatticeLoop& loop) {
  if (!loop.writes || loop.interval.restricted || loop.v != loop.f.var) return;
  Expr steps;
  std::set<int> counted;
  for (const auto& p : loop.points()) {
    for (int s : p.iterators) {
      if (!counted.insert(s).second) continue;
      Expr length;
      if (loop.shared) {
        length = binary(BinaryOp::Sub, ir::ref(loop.stateEnd.at(s)), ir::ref(loop.state.at(s)));
      } else {
        IteratorRange r = iteratorRange(loop, s);
        length = r.single ? intLit(1) : binary(BinaryOp::Sub, r.end, r.begin);
      }
      steps = steps ? binary(BinaryOp::Add, steps, length) : length;
    }
  }
  if (Stmt reserve = reserveResultRoom(loop.v, steps, loop.writes)) loop.out.push_back(reserve);
}

// Where some lattice point of a loop over stored segments only (a row of a sparse sum or
// product) has all its iterators' segments non-empty; otherwise none of the loop's loops runs,
// and a row empty in every operand (most rows of a hypersparse matrix) skips the room check,
// the lockstep and merge loops' tests and the drains at one predicted branch. Null where some
// point walks the dimension (it iterates whatever the segments hold).
Expr Lowerer::anyPointIterates(const LatticeLoop& loop) const {
  if (!loop.shared) return nullptr;
  std::vector<std::vector<int>> needed;
  for (const auto& p : loop.points()) {
    for (int s : p.iterators) {
      if (loop.segs()[s].dimension) return nullptr;
    }
    std::vector<int> its = p.iterators;
    std::sort(its.begin(), its.end());
    needed.push_back(std::move(its));
  }
  // A point whose iterators include another point's runs only where that one may: its test
  // is left out (a union of A and B: A's range or B's, not also both).
  Expr any;
  for (size_t a = 0; a < needed.size(); ++a) {
    bool implied = false;
    for (size_t b = 0; b < needed.size() && !implied; ++b) {
      implied = b != a && std::includes(needed[a].begin(), needed[a].end(), needed[b].begin(), needed[b].end()) &&
                (needed[a] != needed[b] || b < a);
    }
    if (implied) continue;
    std::vector<Expr> nonEmpty;
    for (int s : needed[a]) nonEmpty.push_back(loop.holdsEntry(s));
    Expr all = andAll(nonEmpty);
    any = any ? binary(BinaryOp::Or, any, all) : all;
  }
  return any;
}

// Operands stored with the same pattern (A + A', a matrix and its update, FEM matrices
// assembled alike) meet at every coordinate: a merge step, whose selects chain each step's
// positions to the last step's loads, costs several times a lockstep step, whose positions
// only count up. So a merge of ordered, unique levels first runs in lockstep for as long as
// its iterators' coordinates agree; the merge takes over from the first that differ (at
// once for different patterns: one compare).
bool Lowerer::runsInLockstep(const LatticeLoop& loop) const {
  const lt::LatticePoint& top = loop.points().front();
  if (!loop.shared || top.iterators.size() < 2 || loop.interval.restricted) return false;
  return std::all_of(top.iterators.begin(), top.iterators.end(),
                     [&](int s) { return walksStoredCoordinates(loop, s); });
}

// Iterator s walks a level's stored coordinates (a crd array, no empty slots), ordered and
// unique, by position.
bool Lowerer::walksStoredCoordinates(const LatticeLoop& loop, int s) const {
  const SegmentInfo& info = loop.info[s];
  if (loop.segs()[s].dimension || info.access->tensor->temporary || !loop.segs()[s].ordered) return false;
  const LevelType& type = *info.access->tensor->format.levels()[info.level];
  return accesses_.at(info.access).vars->crd(info.level) && type.smallestStoredCoordinate() == 0 &&
         type.properties().unique && type.capabilities().positionIterate;
}

// An intersection (the loops end when any iterator does): where the iterators' ranges of
// coordinates do not meet (a band and its shifted copy, blocks of different rows) it is
// empty, which the first and last coordinates tell at once, instead of a merge that steps
// through one of them. (The loop's code runs under anyPointIterates's test, here that every
// segment holds an entry, so its first and last coordinates are read inside their segments.)
void Lowerer::skipDisjointIntersection(LatticeLoop& loop) {
  const lt::LatticePoint& top = loop.points().front();
  const int first = top.iterators.front();
  std::vector<Expr> apart;
  for (int s : top.iterators) {
    for (int t : top.iterators) {
      if (t == s) continue;
      Expr last = storedCoordinateAt(loop, t, binary(BinaryOp::Sub, ir::ref(loop.stateEnd.at(t)), intLit(1)));
      apart.push_back(binary(BinaryOp::Gt, storedCoordinateAt(loop, s, ir::ref(loop.state.at(s))), last));
    }
  }
  Expr disjoint = apart.front();
  for (size_t n = 1; n < apart.size(); ++n) disjoint = binary(BinaryOp::Or, disjoint, apart[n]);
  loop.out.push_back(ifThen(disjoint, assign(loop.state.at(first), ir::ref(loop.stateEnd.at(first)))));
}

}  // namespace coiter::lower
