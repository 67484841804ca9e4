// Forall lowering (taco-core.md §4.1, Fig. 5-2): build the iteration lattice of the forall's
// domain, then emit one loop per lattice point. In each loop the iterators' coordinates are
// read, the loop's coordinate is resolved (their minimum), locators are located, and an
// if-chain selects the region: one branch per set of present segments whose body is not
// zero, largest sets first. The body is lowered recursively per branch with the absent
// operands set to zero.
#include <algorithm>
#include <functional>
#include <set>

#include "lower/lattice_printer.hpp"
#include "lower/lowerer.hpp"
#include "schedule/loop_iteration.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace lt = coiter::lattice;
namespace nt = coiter::notation;

namespace {

const Type kIndex = scalar(DType::Int64);

Expr andAll(const std::vector<Expr>& terms) {
  Expr out;
  for (const auto& t : terms) out = out ? binary(BinaryOp::And, out, t) : t;
  return out ? out : boolLit(true);
}

Expr plusOne(const Expr& e) { return binary(BinaryOp::Add, e, intLit(1)); }

}  // namespace

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

lt::IterationLattice Lowerer::latticeOf(const std::string& var, const cin::Stmt& body, std::vector<SegmentInfo>& info) {
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
  bool appends = appendsResultAt(var) && writesResult(body);
  // A zero body (every operand absent) iterates nothing.
  lt::IterationLattice lattice =
      domain ? lt::IterationLattice::build(domain, segments_, 0, appends) : lt::IterationLattice();
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
  return latticeOf(f.var, f.body, info).toString();
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
  lt::IterationLattice lattice = latticeOf(v, f.body, info);
  const auto& points = lattice.points();
  const auto& segs = lattice.segments();
  if (points.empty()) return nullptr;
  Interval interval = intervalOf(v, f.var);
  std::vector<Stmt> out;
  auto paddingExcludedBefore = paddingExcluded_;
  restrictToLevels(v, interval, out);
  bool writes = writesResult(f.body);
  // A non-unique level (COO) may be iterated entry by entry only when every write to the
  // result accumulates (+=) into random-access (dense) levels: a plain assignment, or an
  // appended result (whose entries would repeat), needs the whole run of equal coordinates.
  bool byRuns = writes && (!groups_.empty() || !onlyAccumulates(f.body));
  bool accumulates = accumulatesIntoResult(f.body);

  // Where each iterator starts and ends: [begin, end) of positions, or of coordinates for the
  // dimension.
  struct Range {
    Expr begin, end;
    bool single = false;
  };
  auto rangeOf = [&](int s) -> Range {
    if (segs[s].dimension) return {interval.lo, interval.hi};
    if (info[s].access->tensor->temporary) {
      // (A split of a loop over a workspace's list is refused by the schedule's legality.)
      if (interval.restricted) throw CompileError("lowering: loop '" + f.var + "' restricts a workspace to a block");
      const WorkspaceVars& ws = workspaces_.at(info[s].access->tensor.get());
      return {ws.at(intLit(0)), ws.at(ir::ref(ws.count))};
    }
    AccessState& state = accesses_.at(info[s].access);
    int k = info[s].level;
    Expr parent = k == 0 ? intLit(0) : state.pos[k - 1];
    // Within a block, an ordered level's positions for coordinates [lo, hi) are found by
    // binary search.
    auto restrict = [&](Range r) -> Range {
      if (!interval.restricted) return r;
      // (The schedule's legality refuses to split loops over unordered levels, or over levels
      // whose coordinates are computed, not stored.)
      const Var& crd = state.vars->crd(k);
      if (!segs[s].ordered || !crd) {
        throw CompileError("lowering: " + segs[s].name + " cannot be restricted to a block");
      }
      std::string name = "p" + segs[s].name;
      Expr lo = searchPosition(crd, r.begin, r.end, interval.lo, name + "_lo", out);
      return {lo, searchPosition(crd, lo, r.end, interval.hi, name + "_hi", out)};
    };
    const LevelType& type = *state.vars->tensor->format.levels()[k];
    LevelParent above{parent, k == 0 ? nullptr : state.runEnd[k - 1], k == 0};
    std::optional<PositionRange> positions = type.positionRange(state.vars->levels[k], above);
    if (!positions) throw CompileError("lowering: segment " + segs[s].name + " cannot be iterated");
    Range r{positions->begin, positions->end, positions->single};
    return interval.restricted ? restrict(r) : r;
  };
  auto segmentName = [&](int s) { return segs[s].dimension ? v : "p" + segs[s].name; };

  // Iterators shared by several lattice points keep their state in variables.
  // Iterating a non-unique level run by run (to append one result entry per coordinate)
  // advances by runs, so it cannot be a plain for loop.
  auto iteratesNonUnique = [&](const lt::LatticePoint& p) {
    return std::any_of(p.iterators.begin(), p.iterators.end(), [&](int s) {
      return !segs[s].dimension && !info[s].access->tensor->temporary &&
             !info[s].access->tensor->format.levels()[info[s].level]->properties().unique;
    });
  };
  auto iteratesRuns = [&](const lt::LatticePoint& p) { return byRuns && iteratesNonUnique(p); };
  bool shared = points.size() > 1 || points.front().iterators.size() > 1 || iteratesRuns(points.front());
  // A tagged loop (parallel, vectorized, unrolled) must be a single for loop.
  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, v, !shared && points.size() == 1, iteratesNonUnique(points.front()));
  std::map<int, Var> state, stateEnd;
  if (shared) {
    for (const auto& p : points) {
      for (int s : p.iterators) {
        if (state.count(s)) continue;
        Range r = rangeOf(s);
        state[s] = makeVar(freshName(segmentName(s)), kIndex);
        stateEnd[s] = makeVar(freshName(segmentName(s) + "_end"), kIndex);
        out.push_back(declare(state[s], r.begin));
        out.push_back(declare(stateEnd[s], r.end));
      }
    }
  }

  // Each step of the loops below appends at most one result entry at v, and every step
  // advances an iterator: their lengths bound the entries, so room for them is made once.
  int reservedBefore = reservedGroup_;
  if (writes && !interval.restricted && v == f.var) {
    Expr steps;
    std::set<int> counted;
    for (const auto& p : points) {
      for (int s : p.iterators) {
        if (!counted.insert(s).second) continue;
        Expr length;
        if (shared) {
          length = binary(BinaryOp::Sub, ir::ref(stateEnd.at(s)), ir::ref(state.at(s)));
        } else {
          Range r = rangeOf(s);
          length = r.single ? intLit(1) : binary(BinaryOp::Sub, r.end, r.begin);
        }
        steps = steps ? binary(BinaryOp::Add, steps, length) : length;
      }
    }
    if (Stmt reserve = reserveResultRoom(v, steps, writes)) out.push_back(reserve);
  }

  bool storesEveryCoordinate = false;  // one loop over the whole extent, one unconditional body
  // Lowers lattice point `pi` into `out`: a loop while its iterators last. A `lockstep` loop
  // runs only while every iterator is at the same coordinate, so its body is the region where
  // all are present and every step advances all of them.
  auto lowerPoint = [&](size_t pi, bool lockstep) {
    const lt::LatticePoint& point = points[pi];
    bool forForm = !lockstep && point.iterators.size() == 1 && pi + 1 == points.size() && !iteratesRuns(point);
    std::vector<Stmt> body;
    Var loopVar;
    Range loopRange;
    if (forForm) {
      int s = point.iterators[0];
      loopRange = rangeOf(s);
      loopVar = makeVar(freshName(segmentName(s)), kIndex);
      if (shared) loopRange = {ir::ref(state[s]), ir::ref(stateEnd[s])};
    }
    auto positionOf = [&](int s) { return forForm ? ir::ref(loopVar) : ir::ref(state.at(s)); };

    // Coordinates of the iterators and the resolved coordinate of v.
    std::map<int, Expr> coordOf;
    // Conditions under which the iterators' positions hold entries: a hashed level's empty
    // buckets and ELL's and DIA's padding are visited and skipped.
    std::vector<Expr> entries;
    Expr resolved;
    bool single = point.iterators.size() == 1;
    for (int s : point.iterators) {
      if (segs[s].dimension) {
        coordOf[s] = positionOf(s);
        resolved = coordOf[s];
        continue;
      }
      AccessState& st = accesses_.at(info[s].access);
      Expr c = storedCoordinate(st, info[s].level, positionOf(s));
      Var cv = makeVar(freshName(single ? v : v + st.vars->tensor->name), kIndex);
      body.push_back(declare(cv, c));
      coordOf[s] = ir::ref(cv);
      if (single) resolved = ir::ref(cv);
    }
    if (lockstep) resolved = coordOf[point.iterators.front()];
    if (!resolved) {
      Expr m;
      for (int s : point.iterators) m = m ? binary(BinaryOp::Min, m, coordOf[s]) : coordOf[s];
      Var rv = makeVar(freshName(v), kIndex);
      body.push_back(declare(rv, m));
      resolved = ir::ref(rv);
    }
    coords_[v] = resolved;
    // A derived loop's own coordinate counts from its block's start (a workspace over a
    // split's inner loop is indexed by it).
    if (f.var != v) coords_[f.var] = binary(BinaryOp::Sub, resolved, interval.lo);
    size_t coordinatesEnd = body.size();

    // Enter the iterated levels, then locate.
    std::map<const AccessNode*, int> enteredBefore;
    for (auto& [acc, st] : accesses_) enteredBefore[acc] = st.entered;
    int resultEnteredBefore = result_.entered;
    std::map<int, Expr> advanceTo;  // next position of each iterator when it is at v
    for (int s : point.iterators) {
      if (segs[s].dimension) continue;
      AccessState& st = accesses_.at(info[s].access);
      int k = info[s].level;
      const auto& type = *st.vars->tensor->format.levels()[k];
      // A workspace's values are indexed by coordinate, other levels' by position.
      st.pos[k] = info[s].access->tensor->temporary ? workspaceValueIndex(workspaces_.at(info[s].access->tensor.get()),
                                                                          positionOf(s), coordOf[s], body)
                                                    : positionOf(s);
      st.runEnd[k] = nullptr;
      st.entered = k + 1;
      advanceTo[s] = plusOne(positionOf(s));
      if (!type.properties().unique && (!single || byRuns)) {
        // Coiterating a non-unique level, or appending a result entry per coordinate: take
        // the whole run of equal coordinates at once.
        Var run = makeVar(freshName("p" + segs[s].name + "_run_end"), kIndex);
        Expr end = forForm ? loopRange.end : ir::ref(stateEnd.at(s));
        body.push_back(declare(run, plusOne(positionOf(s))));
        Expr more = binary(BinaryOp::And, binary(BinaryOp::Lt, ir::ref(run), end),
                           binary(BinaryOp::Eq, cast(kIndex, load(st.vars->crd(k), ir::ref(run))), coordOf[s]));
        body.push_back(whileLoop(more, assign(run, plusOne(ir::ref(run)))));
        st.runEnd[k] = ir::ref(run);
        advanceTo[s] = ir::ref(run);
      }
      if (info[s].access->tensor->temporary) continue;
      if (Expr entry = entryCondition(st, k, coordOf[s])) entries.push_back(entry);
    }
    std::vector<int> failing;  // locators that may find nothing
    for (int s : point.locators) {
      AccessState& st = accesses_.at(info[s].access);
      int k = info[s].level;
      st.pos[k] = locatePosition(st, k, resolved, body);
      st.entered = k + 1;
      if (st.vars->tensor->format.levels()[k]->locateMayMiss()) failing.push_back(s);
    }
    resolveLocates(body);
    enterResultLevels(body);

    // Regions: subsets of the segments that may be absent at v.
    std::vector<int> testable = failing;
    if (!single && !lockstep) {
      for (int s : point.iterators) {
        if (!segs[s].dimension) testable.push_back(s);
      }
    }
    auto savedZeroed = zeroed_;
    for (size_t s = 1; s < info.size(); ++s) {
      bool inPoint =
          std::find(point.iterators.begin(), point.iterators.end(), static_cast<int>(s)) != point.iterators.end() ||
          std::find(point.locators.begin(), point.locators.end(), static_cast<int>(s)) != point.locators.end();
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
      Stmt begin = beginResultEntry(v, writes, accumulates, start);
      openLoops_.push_back(v);
      Stmt inner = lowerStmt(f.body);
      openLoops_.pop_back();
      Stmt commit = commitResultEntry(v, writes, start);
      return countEntries(v, {begin, inner, commit}, writes);
    };
    const bool skipsEmptyBuckets = !entries.empty();
    if (failing.empty() && !skipsEmptyBuckets && mergesWithSelects(f, testable, info)) {
      // One body for every region: each operand's value is selected by whether its iterator
      // is at v, so the merge has no branch to mispredict (coordinates of two random
      // operands interleave unpredictably).
      zeroed_ = pointZeroed;
      for (int s : testable) presentIf_[info[s].access] = binary(BinaryOp::Eq, coordOf[s], resolved);
      masks.clear();
      branches.emplace_back(boolLit(true), regionBody());
      for (int s : testable) presentIf_.erase(info[s].access);
    }
    for (unsigned m : masks) {
      zeroed_ = pointZeroed;
      std::vector<Expr> tests;
      for (size_t t = 0; t < testable.size(); ++t) {
        int s = testable[t];
        bool failingLocator = std::find(failing.begin(), failing.end(), s) != failing.end();
        if (m & (1u << t)) {
          tests.push_back(failingLocator
                              ? binary(BinaryOp::Ge, accesses_.at(info[s].access).pos[info[s].level], intLit(0))
                              : binary(BinaryOp::Eq, coordOf[s], resolved));
        } else {
          zeroed_.insert(info[s].access);
        }
      }
      if (isZero(f.body)) continue;
      branches.emplace_back(andAll(tests), regionBody());
      if (tests.empty()) break;  // unconditional: later branches are unreachable
    }
    if (branches.size() == 1 && branches.front().first->kind != ExprKind::Literal && failing.empty() &&
        !skipsEmptyBuckets && !iteratesNonUnique(point) && appendsSpeculatively(f, v)) {
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
    storesEveryCoordinate = points.size() == 1 && forForm && segs[point.iterators[0]].dimension &&
                            !interval.restricted && branches.size() == 1 &&
                            branches.front().first->kind == ExprKind::Literal;
    Stmt chain;
    for (auto it = branches.rbegin(); it != branches.rend(); ++it) {
      bool always = it->first->kind == ExprKind::Literal;
      chain = always ? it->second : ifThen(it->first, it->second, chain);
    }
    body.push_back(chain);
    // A dense workspace is cleared entry by entry as it is consumed (it is consumed whole: its
    // consumer iterates exactly its list), ready for the next iteration of the loops around.
    for (int s : point.iterators) {
      if (segs[s].dimension || !info[s].access->tensor->temporary) continue;
      const WorkspaceVars& ws = workspaces_.at(info[s].access->tensor.get());
      Stmt clear = clearWorkspaceEntry(ws, info[s].access->tensor->dtype, coordOf[s]);
      if (!clear) continue;  // compressed and hashed workspaces are emptied whole after the consumer
      // In a merge, only the entry the loop is at has been consumed.
      body.push_back(single || lockstep ? clear : ifThen(binary(BinaryOp::Eq, coordOf[s], resolved), clear));
    }
    if (skipsEmptyBuckets) {
      // Nothing after the coordinate read may run for an empty bucket (its coordinate is -1).
      std::vector<Stmt> rest(body.begin() + coordinatesEnd, body.end());
      body.resize(coordinatesEnd);
      body.push_back(ifThen(andAll(entries), block(std::move(rest))));
    }

    // Restore the iteration state for the next point.
    for (auto& [acc, st] : accesses_) st.entered = enteredBefore[acc];
    result_.entered = resultEnteredBefore;
    coords_.erase(v);
    coords_.erase(f.var);

    if (forForm) {
      if (loopRange.single) {
        out.push_back(declare(loopVar, loopRange.begin));
        out.push_back(block(std::move(body)));
      } else {
        out.push_back(forLoop(loopVar, loopRange.begin, loopRange.end, block(std::move(body)), plan.schedule));
      }
      return;
    }
    std::vector<Expr> ranges;
    for (int s : point.iterators) ranges.push_back(binary(BinaryOp::Lt, ir::ref(state.at(s)), ir::ref(stateEnd.at(s))));
    if (lockstep) {
      // (The coordinates are only compared here; the body loads them again, checked.)
      auto stored = [&](int s) {
        const AccessState& st = accesses_.at(info[s].access);
        return cast(kIndex, load(st.vars->crd(info[s].level), ir::ref(state.at(s))));
      };
      for (size_t n = 1; n < point.iterators.size(); ++n)
        ranges.push_back(binary(BinaryOp::Eq, stored(point.iterators[n]), stored(point.iterators.front())));
    }
    // Advance: positions first (they compare their coordinate with v), the dimension last.
    // A merge advances the iterators at the smallest coordinate, compared as loaded: the
    // checked coordinates (ir/guard_coordinates.hpp) would put a clamp on the chain from each
    // step's loads to the next step's positions. (With a dimension iterator v is the least.)
    Expr least = resolved;
    std::map<int, Expr> loaded;
    bool dimension = false;
    for (int s : point.iterators) dimension = dimension || segs[s].dimension;
    if (!single && !lockstep && !dimension) {
      least = nullptr;
      for (int s : point.iterators) {
        const AccessState& st = accesses_.at(info[s].access);
        loaded[s] = info[s].access->tensor->temporary ? coordOf[s] : storedCoordinate(st, info[s].level, positionOf(s));
        least = least ? binary(BinaryOp::Min, least, loaded[s]) : loaded[s];
      }
    }
    // (Whether each advances is decided before any moves.)
    std::map<int, Var> advances;
    for (int s : point.iterators) {
      if (segs[s].dimension || single || lockstep) continue;
      advances[s] = makeVar(freshName(segmentName(s) + "_advances"), scalar(DType::Bool));
      Expr at = loaded.count(s) ? loaded[s] : coordOf[s];
      body.push_back(declare(advances[s], binary(BinaryOp::Eq, at, least)));
    }
    for (int s : point.iterators) {
      if (segs[s].dimension) {
        continue;
      } else if (single || lockstep) {
        body.push_back(assign(state.at(s), advanceTo[s]));
      } else {
        body.push_back(assign(state.at(s), select(ir::ref(advances[s]), advanceTo[s], ir::ref(state.at(s)))));
      }
    }
    for (int s : point.iterators) {
      if (segs[s].dimension) body.push_back(assign(state.at(s), plusOne(ir::ref(state.at(s)))));
    }
    out.push_back(whileLoop(andAll(ranges), block(std::move(body))));
  };
  // Operands stored with the same pattern (A + A', a matrix and its update, FEM matrices
  // assembled alike) meet at every coordinate: a merge step, whose selects chain each step's
  // positions to the last step's loads, costs several times a lockstep step, whose positions
  // only count up. So a merge of ordered, unique levels first runs in lockstep for as long as
  // its iterators' coordinates agree; the merge takes over from the first that differ (at
  // once for different patterns: one compare).
  const lt::LatticePoint& top = points.front();
  bool lockstep = shared && top.iterators.size() > 1 && !interval.restricted &&
                  std::all_of(top.iterators.begin(), top.iterators.end(), [&](int s) {
                    return !segs[s].dimension && !info[s].access->tensor->temporary && segs[s].ordered &&
                           accesses_.at(info[s].access).vars->crd(info[s].level) &&
                           info[s].access->tensor->format.levels()[info[s].level]->smallestStoredCoordinate() == 0 &&
                           info[s].access->tensor->format.levels()[info[s].level]->properties().unique &&
                           info[s].access->tensor->format.levels()[info[s].level]->capabilities().positionIterate;
                  });
  if (lockstep && points.size() == 1) {
    // An intersection (the loops end when any iterator does): where the iterators' ranges of
    // coordinates do not meet (a band and its shifted copy, blocks of different rows) it is
    // empty, which the first and last coordinates tell at once, instead of a merge that
    // steps through one of them.
    const int first = top.iterators.front();
    auto stored = [&](int s, const Expr& position) {
      const AccessState& st = accesses_.at(info[s].access);
      return cast(kIndex, load(st.vars->crd(info[s].level), position));
    };
    std::vector<Expr> nonempty, apart;
    for (int s : top.iterators) {
      nonempty.push_back(binary(BinaryOp::Lt, ir::ref(state.at(s)), ir::ref(stateEnd.at(s))));
      for (int t : top.iterators) {
        if (t == s) continue;
        Expr last = stored(t, binary(BinaryOp::Sub, ir::ref(stateEnd.at(t)), intLit(1)));
        apart.push_back(binary(BinaryOp::Gt, stored(s, ir::ref(state.at(s))), last));
      }
    }
    Expr disjoint = apart.front();
    for (size_t n = 1; n < apart.size(); ++n) disjoint = binary(BinaryOp::Or, disjoint, apart[n]);
    // Nested ifs: the coordinates are read only where the ranges are not empty.
    out.push_back(ifThen(andAll(nonempty), ifThen(disjoint, assign(state.at(first), ir::ref(stateEnd.at(first))))));
  }
  if (lockstep) lowerPoint(0, true);
  for (size_t pi = 0; pi < points.size(); ++pi) lowerPoint(pi, false);
  reservedGroup_ = reservedBefore;
  paddingExcluded_ = paddingExcludedBefore;
  for (const auto* access : accessOrder_) {
    if (!paddingExcluded_.count(access)) diagonalOffset_.erase(access);
  }
  checkResultLoop(f, storesEveryCoordinate);
  return plan.around(block(std::move(out)));
}

}  // namespace coiter::lower
