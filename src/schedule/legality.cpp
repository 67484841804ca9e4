#include "schedule/legality.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "cin/result_pattern.hpp"
#include "memory/dtype.hpp"
#include "schedule/loop_iteration.hpp"
#include "util/errors.hpp"
#include "util/text.hpp"

namespace coiter::schedule {

namespace {

namespace nt = coiter::notation;
using nt::AccessNode;
using nt::TensorVar;

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string textOf(const AccessNode& a) {
  // A non-owning handle (aliasing constructor) lets the access print like any expression.
  return nt::toString(nt::Expr(std::shared_ptr<const nt::ExprNode>{}, &a));
}

// Where statements' producers, by the temporaries they compute.
void noteProducers(const cin::Stmt& s, std::map<const TensorVar*, cin::Stmt>& out) {
  switch (s->kind) {
    case cin::StmtKind::Assign: return;
    case cin::StmtKind::Forall: return noteProducers(cin::as<cin::ForallNode>(s).body, out);
    case cin::StmtKind::Where: {
      const auto& w = cin::as<cin::WhereNode>(s);
      for (const auto& t : cin::resultsOf(w.producer)) {
        if (t->temporary) out[t.get()] = w.producer;
      }
      noteProducers(w.consumer, out);
      return noteProducers(w.producer, out);
    }
    case cin::StmtKind::Sequence:
      noteProducers(cin::as<cin::SequenceNode>(s).define, out);
      return noteProducers(cin::as<cin::SequenceNode>(s).mutate, out);
  }
}

// Whether a statement computes nothing where one access is zero: its assignments' values
// vanish (a product with it, a sum of vanishing terms), and so do temporaries whose producer
// vanishes (a reduction's scalar, a workspace filled from it).
class Vanishing {
 public:
  Vanishing(const AccessNode* zero, std::map<const TensorVar*, cin::Stmt> producers)
      : zero_(zero), producers_(std::move(producers)) {}

  bool stmt(const cin::Stmt& s) {
    switch (s->kind) {
      case cin::StmtKind::Assign: {
        const auto& a = cin::as<cin::AssignNode>(s);
        // Accumulating a zero changes nothing only when zero is the operator's identity.
        return (!a.accumulate || a.accumulate->zeroIsIdentity) && expr(a.rhs);
      }
      case cin::StmtKind::Forall: return stmt(cin::as<cin::ForallNode>(s).body);
      case cin::StmtKind::Where: return stmt(cin::as<cin::WhereNode>(s).consumer);
      case cin::StmtKind::Sequence:
        return stmt(cin::as<cin::SequenceNode>(s).define) && stmt(cin::as<cin::SequenceNode>(s).mutate);
    }
    return false;
  }

 private:
  bool expr(const nt::Expr& e) {
    switch (e->kind) {
      case nt::ExprKind::Access: {
        const auto& a = static_cast<const AccessNode&>(*e);
        if (&a == zero_) return true;
        auto producer = producers_.find(a.tensor.get());
        if (!a.tensor->temporary || producer == producers_.end()) return false;
        cin::Stmt p = producer->second;
        producers_.erase(producer);  // (a producer never reads its own temporary)
        return stmt(p);
      }
      case nt::ExprKind::Literal: return static_cast<const nt::LiteralNode&>(*e).isZero();
      case nt::ExprKind::Negate: return expr(static_cast<const nt::NegateNode&>(*e).a);
      case nt::ExprKind::Binary: {
        const auto& b = static_cast<const nt::BinaryNode&>(*e);
        bool za = expr(b.a), zb = expr(b.b);
        return (za && b.op->leftZeroAnnihilates) || (zb && b.op->rightZeroAnnihilates) ||
               (za && zb && b.op->zeroPreserving);
      }
      case nt::ExprKind::Reduce: return expr(static_cast<const nt::ReduceNode&>(*e).body);
    }
    return false;
  }

  const AccessNode* zero_;
  std::map<const TensorVar*, cin::Stmt> producers_;
};

// A compressed result level with the singleton levels below it, appended together when the
// loop of the deepest one's variable has produced an entry (lower/lower_assembly.cpp).
struct AppendGroup {
  int first = 0, last = 0;
};

// "parallelize(var,unit,races)": the command that tagged `var`, as error messages name it.
std::string parallelizeCommand(const std::string& var, const LoopTags& tags) {
  return "parallelize(" + var + "," + parallelUnitName(tags.unit) + "," + raceStrategyName(tags.races) + ")";
}

class Checker {
 public:
  Checker(const ScheduledStatement& s, bool assemble, bool resultKeepsPattern)
      : s_(s), assemble_(assemble), resultKeepsPattern_(resultKeepsPattern) {
    cin::forEachAssignment(s.stmt, [&](const cin::AssignNode& a) {
      nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
        if (e->kind != nt::ExprKind::Access) return;
        const auto& acc = static_cast<const AccessNode&>(*e);
        if (acc.tensor->temporary && acc.tensor->order() == 0) return;  // scalars live in registers
        if (entered_.emplace(&acc, 0).second) accesses_.push_back(&acc);
      });
      if (!a.lhs->tensor->temporary && !result_) {
        result_ = a.lhs->tensor;
        resultVars_ = nt::levelIndices(*a.lhs);
      }
    });
    if (result_) planResultGroups();
  }

  void run() {
    planTwoPassAssembly();
    planChunkedAssembly();
    stmt(s_.stmt);
  }

 private:
  // --- the walk --------------------------------------------------------------------------

  void stmt(const cin::Stmt& s) {
    switch (s->kind) {
      case cin::StmtKind::Assign: return assign(cin::as<cin::AssignNode>(s));
      case cin::StmtKind::Forall: return forall(cin::as<cin::ForallNode>(s));
      case cin::StmtKind::Where: return where(cin::as<cin::WhereNode>(s));
      case cin::StmtKind::Sequence:
        stmt(cin::as<cin::SequenceNode>(s).define);
        return stmt(cin::as<cin::SequenceNode>(s).mutate);
    }
  }

  void where(const cin::WhereNode& w) {
    for (const auto& t : cin::resultsOf(w.producer)) {
      if (!t->temporary) continue;
      producers_[t.get()] = w.producer;
      if (t->order() != 1) continue;
      // Workspaces whose arrays grow (hashed, compressed) are allocated once per kernel.
      LevelAssembly assembly = t->format.levels()[0]->assembly();
      if ((assembly == LevelAssembly::Inserted || assembly == LevelAssembly::Appended) && parallelDepth_ > 0) {
        fail(std::string("precompute and parallelize: a ") +
             (assembly == LevelAssembly::Inserted ? "hashed" : "compressed") +
             " workspace cannot be inside a parallel loop yet (its arrays grow); use a dense one");
      }
      if (assembly == LevelAssembly::Appended) {
        cin::forEachAssignment(w.producer, [&](const cin::AssignNode& a) {
          if (a.lhs->tensor == t) appendedWorkspaces_.emplace(t.get(), a.lhs->indices.front());
        });
      }
    }
    producerDepth_.push_back(open_.size());
    stmt(w.producer);
    producerDepth_.pop_back();
    stmt(w.consumer);
  }

  void assign(const cin::AssignNode& a) {
    auto ws = appendedWorkspaces_.find(a.lhs->tensor.get());
    if (ws == appendedWorkspaces_.end()) return;
    // A compressed workspace is appended in coordinate order: its variable's loop must be the
    // outermost loop of its producer.
    size_t depth = producerDepth_.empty() ? 0 : producerDepth_.back();
    if (open_.size() <= depth || s_.rootOf(open_[depth]) != ws->second) {
      fail("precompute: a compressed workspace is appended in coordinate order, so the loop over '" + ws->second +
           "' must be the outermost loop that computes it" +
           (open_.size() > depth ? " (it is inside '" + open_[depth] + "')" : "") +
           "; use a dense or hashed workspace");
    }
  }

  void forall(const cin::ForallNode& f) {
    const IndexRelation* split = s_.relationOf(s_.loopOf(f.var));
    if (split && (split->kind == RelationKind::Split || split->kind == RelationKind::Divide) &&
        split->inner == s_.loopOf(f.var) && !openBlocks_.count(split)) {
      return stridedLoop(f, *split);
    }
    if (const IndexRelation* blocks = s_.blocksOf(f.var)) return blockLoop(f, *blocks);
    // A derived inner loop iterates its root variable, restricted to the current block.
    std::string v = s_.rootOf(f.var);
    if (const IndexRelation* own = s_.relationOf(v); own && own->bounded == v) {
      if (own->kind == RelationKind::Pos) return positionLoop(f, *own);
      if (own->kind == RelationKind::Fuse) return fusedLoop(f, *own);
    }
    plainLoop(f, v);
  }

  // A split's inner loop outside its outer loop (TACO's GPU schedules put a thread's offset
  // outside the blocks it visits) walks the offsets within a block, and the outer loop inside
  // it visits the coordinate, or the stored position, at that offset in every block: a strided
  // walk. Over coordinates it reaches every operand by locate; over positions it is the loop
  // over those positions restricted to one of them (positionLoop's conditions).
  void stridedLoop(const cin::ForallNode& f, const IndexRelation& r) {
    std::string command = "schedule: loop '" + f.var + "' iterates inside one block of '" + r.outer + "' (" +
                          r.toString() + ") but is outside that loop";
    std::string root = s_.rootOf(r.parent);
    if (r.kind != RelationKind::Split) fail(command + "; a divide's blocks are sized only inside its outer loop");
    const IndexRelation* positions = positionsBounding(root);
    if (s_.isDerived(root) && !positions) {
      fail(command + "; a strided walk visits coordinates or stored positions, not the fused loop '" + root + "'");
    }
    std::vector<std::string> visited = positions ? s_.boundVariables(positions->parent) : std::vector{root};
    if (!positions) {
      if (auto sparse = sparseOver({root}, nullptr)) {
        fail(command + "; a strided walk locates every operand, but " + sparse->first->tensor->name +
             " is sparse over '" + root + "'");
      }
      for (const AccessNode* acc : accesses_) {
        // (Levels of blocks or diagonals would need the coordinate mapped to them, in order.)
        if (contains(acc->indices, root) && acc->tensor->format.hasDerivedLevels()) {
          fail(command + "; a strided walk locates every operand, but " + acc->tensor->name +
               " stores blocks or diagonals of '" + root + "'");
        }
      }
    }
    bool appends =
        std::any_of(visited.begin(), visited.end(), [&](const std::string& v) { return groupEndingAt(v) >= 0; });
    if (writesResult(f.body) && appends) {
      fail(command + "; a strided walk cannot append to the sparse result " + result_->name);
    }
    // Nothing between the two reads what the walk visits: the outer loop binds it.
    bool outerInside = false, readsBetween = false;
    for (const std::string& v : visited) readsBetween = readsOutside(f.body, r, v, outerInside) || readsBetween;
    if (readsBetween || !outerInside) {
      fail(command + "; its outer loop must be nested inside it, and nothing outside that loop may use '" + root + "'");
    }
    ParallelGuard guard(*this);
    tagged(f, root, true, false);
    strided_.insert(&r);
    stmt(f.body);
    strided_.erase(&r);
  }

  // The pos() relation whose position loop `root` is, if any.
  const IndexRelation* positionsBounding(const std::string& root) const {
    const IndexRelation* own = s_.relationOf(root);
    return own && own->kind == RelationKind::Pos && own->bounded == root ? own : nullptr;
  }

  // Whether `s` reads or writes a tensor at `root` outside the outer loop of `r`, which it
  // reports meeting in `found`.
  bool readsOutside(const cin::Stmt& s, const IndexRelation& r, const std::string& root, bool& found) const {
    switch (s->kind) {
      case cin::StmtKind::Forall: {
        const auto& f = cin::as<cin::ForallNode>(s);
        if (s_.blocksOf(f.var) == &r) {
          found = true;
          return false;
        }
        return readsOutside(f.body, r, root, found);
      }
      case cin::StmtKind::Where: {
        const auto& w = cin::as<cin::WhereNode>(s);
        return readsOutside(w.consumer, r, root, found) || readsOutside(w.producer, r, root, found);
      }
      case cin::StmtKind::Sequence: {
        const auto& q = cin::as<cin::SequenceNode>(s);
        return readsOutside(q.define, r, root, found) || readsOutside(q.mutate, r, root, found);
      }
      case cin::StmtKind::Assign: {
        const auto& a = cin::as<cin::AssignNode>(s);
        bool reads = contains(nt::levelIndices(*a.lhs), root);
        nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
          if (e->kind != nt::ExprKind::Access) return;
          reads = reads || contains(nt::levelIndices(static_cast<const AccessNode&>(*e)), root);
        });
        return reads;
      }
    }
    return false;
  }

  // The outer loop of a split or divide enumerates blocks of its root's coordinates (or
  // positions); loops of the root inside it are restricted to the block. Inside a strided
  // walk, it binds the root itself.
  void blockLoop(const cin::ForallNode& f, const IndexRelation& r) {
    std::string root = s_.rootOf(r.parent);
    if (strided_.count(&r)) {
      ParallelGuard guard(*this);
      tagged(f, root, true, false);
      if (const IndexRelation* positions = positionsBounding(root)) {
        const cin::ForallNode visit(root, f.body);  // the position loop, over one position
        positionLoop(visit, *positions);
        return;
      }
      State saved = state();
      bound_.insert(root);
      resolveLocates();
      enterResultLevels();
      open_.push_back(root);
      stmt(f.body);
      open_.pop_back();
      restore(saved);
      return;
    }
    const IndexRelation* own = positionsBounding(root);
    if (!restricted_.count(root) && own) positionLevel(*own);
    ParallelGuard guard(*this);
    tagged(f, root, true, false);
    bool wasRestricted = !restricted_.insert(root).second;
    openBlocks_.insert(&r);
    // The blocks enumerate the root's coordinates in order: in the nest, the block loop is a
    // loop over the root (where it sits decides the order of appends, see requireAppendOrder).
    blockDepths_.push_back(open_.size());
    open_.push_back(root);
    stmt(f.body);
    open_.pop_back();
    blockDepths_.pop_back();
    openBlocks_.erase(&r);
    if (!wasRestricted) restricted_.erase(root);
  }

  void plainLoop(const cin::ForallNode& f, const std::string& v) {
    bool writes = writesResult(f.body);
    bool appends = groupEndingAt(v) >= 0 && writes;
    // (As lowering's lattice: where the result's layout follows v's order, an unordered level
    // that can be located is located rather than iterated.)
    LoopIteration it = loopIteration(
        s_, f.body, v, [&](const AccessNode& a) { return entered_.at(&a); }, appendsInOrderOf(v) && writes);
    if (it.empty) return;  // a zero body: the loop is not lowered
    if (restricted_.count(v)) {
      for (const IteratedLevel& level : it.levels) requireRestrictable(f.var, level);
    } else if (std::set<const AccessNode*> restricting = restrictingLevels(v); !restricting.empty()) {
      std::string by = "restricted to the coordinates that " + (*restricting.begin())->tensor->name +
                       "'s diagonal or block holds (iterate that operand in another loop order, or convert it)";
      for (const IteratedLevel& level : it.levels) {
        if (!restricting.count(level.access)) requireRestrictable(f.var, level, by);
      }
    }
    // A non-unique level (COO's rows) is iterated run by run where the result needs each
    // coordinate whole: an appended result, or one that is assigned, not accumulated.
    bool byRuns = writes && (!groups_.empty() || !onlyAccumulates(f.body));
    bool repeats = std::any_of(it.levels.begin(), it.levels.end(), [](const IteratedLevel& l) {
      return !l.workspace && !l.access->tensor->format.levels()[l.level]->properties().unique;
    });
    ParallelGuard guard(*this);
    tagged(f, v, !it.merges && !(byRuns && repeats), repeats);
    State saved = state();
    bound_.insert(v);
    bound_.insert(f.var);  // a derived loop's own coordinate indexes workspaces over it
    for (const AccessNode* acc : accesses_) {
      std::vector<std::string> levelVars = nt::levelIndices(*acc);
      int& entered = entered_.at(acc);
      if (entered < static_cast<int>(levelVars.size()) && levelVars[entered] == v) entered++;
    }
    resolveLocates();
    enterResultLevels();
    open_.push_back(v);
    stmt(f.body);
    open_.pop_back();
    if (appends) requireAppendOrder(v);
    restore(saved);
  }

  // pos(v, p, A(...)): the loop iterates the stored positions of A's level for v (or, after
  // fuse, for the fused variables), binding them from each position.
  void positionLoop(const cin::ForallNode& f, const IndexRelation& r) {
    std::string command = "pos(" + r.parent + "," + r.bounded + "," + r.access + ")";
    PositionLevel p = positionLevel(r);
    std::vector<std::string> bound = s_.boundVariables(r.parent);
    std::map<const TensorVar*, cin::Stmt> producers = producers_;
    noteProducers(f.body, producers);
    if (!Vanishing(p.access, std::move(producers)).stmt(f.body)) {
      fail(command + ": the loop visits only " + p.access->tensor->name +
           "'s stored entries, but the statement is not zero where it is");
    }
    if (auto sparse = sparseOver(bound, p.access)) {
      fail(command + ": " + sparse->first->tensor->name + " is sparse over '" + sparse->second +
           "' and cannot be located at " + p.access->tensor->name + "'s positions");
    }
    bool writes = writesResult(f.body);
    bool appendsFused =
        std::any_of(bound.begin(), bound.end(), [&](const std::string& v) { return groupEndingAt(v) >= 0; });
    if (writes && p.fused && appendsFused) {
      fail(command + ": a loop over the positions of fused loops cannot append to the sparse result " + result_->name +
           " (format " + result_->format.str() + "); choose a dense result");
    }
    if (writes && !p.fused && groupEndingAt(bound[0]) >= 0) {
      // Each position appends a result entry, in the order of the positions.
      LevelProperties props = p.access->tensor->format.levels()[p.level]->properties();
      if (!props.ordered || !props.unique) {
        fail(command + ": the loop appends an entry of the sparse result " + result_->name + " per position of " +
             p.access->tensor->name + ", whose level " + std::to_string(p.level + 1) + " is " +
             (props.ordered ? "not unique" : "unordered") + "; choose a dense result");
      }
    }
    if (const LoopTags* tags = s_.tagsOf(f.var); p.fused && tags && tags->unit != ParallelUnit::None) {
      fail(parallelizeCommand(f.var, *tags) +
           ": a loop over the positions of fused loops carries their coordinates from one position to the next; "
           "split it and parallelize the outer loop (each block finds its first coordinates)");
    }
    ParallelGuard guard(*this);
    tagged(f, r.bounded, true, false);
    State saved = state();
    for (const auto& v : bound) bound_.insert(v);
    bound_.insert(f.var);
    entered_.at(p.access) = p.level + 1;
    resolveLocates();
    enterResultLevels();
    for (const auto& v : bound) open_.push_back(v);
    stmt(f.body);
    for (size_t n = 0; n < bound.size(); ++n) open_.pop_back();
    if (writes && !p.fused && groupEndingAt(bound[0]) >= 0) requireAppendOrder(bound[0]);
    restore(saved);
  }

  // fuse(i, j, f) without pos: one loop over the dense product space i × j.
  void fusedLoop(const cin::ForallNode& f, const IndexRelation& r) {
    std::string command = "fuse(" + r.parent + "," + r.second + "," + r.bounded + ")";
    std::vector<std::string> bound = s_.boundVariables(r.bounded);
    if (auto sparse = sparseOver(bound, nullptr)) {
      fail(command + ": " + sparse->first->tensor->name + " is sparse over '" + sparse->second +
           "'; iterate its positions with pos(" + r.bounded + ", ...) instead");
    }
    if (bound.size() != 2) fail(command + ": only two plain loops can be fused without pos");
    if (writesResult(f.body) && (groupEndingAt(bound[0]) >= 0 || groupEndingAt(bound[1]) >= 0)) {
      fail(command + ": a fused loop cannot append to the sparse result " + result_->name + " (format " +
           result_->format.str() + "); choose a dense result");
    }
    ParallelGuard guard(*this);
    tagged(f, r.bounded, true, false);
    State saved = state();
    for (const auto& v : bound) bound_.insert(v);
    bound_.insert(f.var);
    resolveLocates();
    enterResultLevels();
    for (const auto& v : bound) open_.push_back(v);
    stmt(f.body);
    restore(saved);
  }

  // --- loop restrictions and positions -----------------------------------------------------

  // The accesses whose derived levels restrict loop v to a range of its coordinates, as
  // lowering does (Lowerer::restrictToLevels): the rows a DIA diagonal holds, once the
  // diagonal is entered; a BCSR block's rows or columns, once the other half of the
  // coordinate is bound. The other levels the loop iterates are then restricted to that range.
  std::set<const AccessNode*> restrictingLevels(const std::string& v) const {
    std::set<const AccessNode*> restricting;
    for (const AccessNode* acc : accesses_) {
      const Format& format = acc->tensor->format;
      if (!format.hasDerivedLevels()) continue;
      std::vector<std::string> levelVars = nt::levelIndices(*acc);
      for (size_t k = 0; k < format.levelMap().size() && k < levelVars.size(); ++k) {
        if (levelVars[k] != v) continue;
        Format::Restriction r = format.restrictionAt(static_cast<int>(k), entered_.at(acc));
        if (r.kind == Format::Restriction::Kind::ToDiagonalRows ||
            (r.partner >= 0 && bound_.count(levelVars[r.partner]))) {
          restricting.insert(acc);
        }
      }
    }
    return restricting;
  }

  // A loop restricted to a block of its coordinates finds the block's positions in each level
  // it iterates by binary search: over stored, ordered coordinates.
  // `restriction` says what restricts the loop: a split's block, or another operand's derived
  // level (restrictingLevels).
  void requireRestrictable(const std::string& loop, const IteratedLevel& level,
                           const std::string& restriction = "split into blocks of coordinates") const {
    const std::string& name = level.access->tensor->name;
    if (level.workspace) {
      fail("schedule: loop '" + loop + "' iterates the workspace " + name +
           " (its list of coordinates), which cannot be restricted to a block of a split; split the "
           "loop that computes it");
    }
    const LevelType& type = *level.access->tensor->format.levels()[level.level];
    std::string segment = name + std::to_string(level.level + 1);
    if (!type.properties().ordered) {
      fail("schedule: loop '" + loop + "' iterates " + segment + ", an unordered level, which cannot be " +
           restriction);
    }
    if (!level.access->tensor->format.levelHasArray(level.level, "crd")) {
      fail("schedule: loop '" + loop + "' iterates " + segment +
           ", whose coordinates are computed, not stored, so it cannot be " + restriction);
    }
  }

  struct PositionLevel {
    const AccessNode* access = nullptr;
    int level = -1;
    bool fused = false;
  };

  // The level whose positions pos() iterates, checked where its loop starts.
  PositionLevel positionLevel(const IndexRelation& r) const {
    std::string command = "pos(" + r.parent + "," + r.bounded + "," + r.access + ")";
    PositionLevel out;
    for (const AccessNode* acc : accesses_) {
      if (!acc->tensor->temporary && withoutSpaces(textOf(*acc)) == r.access) {
        out.access = acc;
        break;
      }
    }
    if (!out.access) fail(command + ": the access is not read where the loop runs");
    std::vector<std::string> bound = s_.boundVariables(r.parent);
    std::vector<std::string> levelVars = nt::levelIndices(*out.access);
    auto at = std::find(levelVars.begin(), levelVars.end(), bound.back());
    if (at == levelVars.end()) {
      fail(command + ": no level of " + out.access->tensor->name + " is indexed by '" + bound.back() + "'");
    }
    out.level = static_cast<int>(at - levelVars.begin());
    out.fused = bound.size() >= 2;
    const auto& levels = out.access->tensor->format.levels();
    const LevelType& level = *levels[out.level];
    if (out.fused) {
      // The fused loops are the access's first levels, in order. Rows located (CSR, CSF) or
      // stored in segments (DCSR, COO); every level below them in segments (CSR, CSF, DCSR), or,
      // for two loops, the fused level's positions one per row position (COO).
      bool inOrder =
          out.level + 1 == static_cast<int>(bound.size()) && std::equal(bound.begin(), bound.end(), levelVars.begin());
      bool rowsLocated = levels[0]->locatesEveryCoordinate(), rowsStored = levels[0]->storesSegments();
      bool segmentsBelow = true;
      for (int k = 1; k <= out.level; ++k) segmentsBelow = segmentsBelow && levels[k]->storesSegments();
      bool coo = bound.size() == 2 && rowsStored && level.properties().branchless;
      if (!inOrder || !(((rowsLocated || rowsStored) && segmentsBelow) || coo)) {
        fail(command + ": positions of fused loops need " + out.access->tensor->name +
             "'s first levels, in the fused order, stored like CSR or CSF (dense, then compressed), DCSR "
             "(compressed, then compressed) or, for two loops, COO (compressed, singleton)");
      }
    } else if (!level.storesSegments()) {
      fail(command + ": level " + std::to_string(out.level + 1) + " of " + out.access->tensor->name +
           " is not compressed, so it has no positions to iterate");
    }
    if (!out.fused && entered_.at(out.access) != out.level) {
      fail(command + ": the levels of " + out.access->tensor->name +
           " above the loop's are not iterated by the loops around it");
    }
    return out;
  }

  // The first operand (not `except`) with a level that has no random access indexed by one of
  // `vars`: a loop binding `vars` from another operand's positions cannot locate it.
  std::optional<std::pair<const AccessNode*, std::string>> sparseOver(const std::vector<std::string>& vars,
                                                                      const AccessNode* except) const {
    for (const AccessNode* acc : accesses_) {
      if (acc == except || acc->tensor->temporary) continue;
      std::vector<std::string> levelVars = nt::levelIndices(*acc);
      for (size_t k = 0; k < levelVars.size(); ++k) {
        if (contains(vars, levelVars[k]) && !acc->tensor->format.levels()[k]->locatesEveryCoordinate()) {
          return std::make_pair(acc, levelVars[k]);
        }
      }
    }
    return std::nullopt;
  }

  // --- parallel loops -------------------------------------------------------------------------

  // A parallel outermost loop over the rows of a sparse result: the kernel computes a range of
  // rows per call, and the calls assemble their chunks (call/chunked_assembly.cpp).
  void planChunkedAssembly() {
    if (groups_.empty() || !assemble_ || twoPass_ || s_.stmt->kind != cin::StmtKind::Forall) return;
    const auto& f = cin::as<cin::ForallNode>(s_.stmt);
    const LoopTags* tags = s_.tagsOf(f.var);
    if (!tags || tags->unit != ParallelUnit::CpuThread) return;
    std::string root = s_.rootOf(f.var);
    if (groups_.size() != 1 || groups_[0].first == 0 || resultVars_[0] != root) {
      fail(parallelizeCommand(f.var, *tags) + ": the sparse result " + result_->name + " (format " +
           result_->format.str() +
           ") is assembled in parallel only by the loop "
           "over its first, dense level, with one compressed level below (e.g. a CSR result by rows)");
    }
    chunkedLoop_ = f.var;
    restricted_.insert(root);
  }

  // A sparse result assembled in two passes, counted then filled by rows (lower/lower_two_pass.cpp):
  // asked for by assemble(A, two_pass), and the GPU's way to assemble.
  void planTwoPassAssembly() {
    if (groups_.empty() || !assemble_ || !s_.assemblesInTwoPasses(result_->name)) return;
    if (!result_->format.fillsRowsInTwoPasses()) {
      auto asked = s_.assembly.find(result_->name);
      fail(std::string(asked != s_.assembly.end() ? "assemble(" + result_->name + ",two_pass)" : "target='cuda'") +
           ": the sparse result " + result_->name + " (format " + result_->format.str() +
           ") is assembled in two passes (count, then fill by rows), which needs its one compressed level "
           "last and under dense levels only (e.g. CSR, or a dense result)");
    }
    twoPass_ = true;
  }

  // Whether each iteration of the loop over `root` fills whole rows of a result assembled in
  // two passes (its one variable indexes a dense level above the compressed one), so that
  // its iterations append to different rows, each from its own offset.
  bool fillsOwnRows(const std::string& root) const {
    if (!twoPass_) return false;
    const std::vector<std::string> bound = s_.boundVariables(root);
    const std::vector<std::string> above(resultVars_.begin(), resultVars_.begin() + groups_[0].first);
    return bound.size() == 1 && contains(above, bound[0]);
  }

  // What a loop tagged by parallelize must satisfy (lower/lower_parallel.cpp lowers it).
  // `single`: the loop is one for loop over one iterator; `repeats`: it iterates a non-unique
  // level, whose coordinates repeat.
  void tagged(const cin::ForallNode& f, const std::string& root, bool single, bool repeats) {
    const LoopTags* tags = s_.tagsOf(f.var);
    if (!tags || tags->unit == ParallelUnit::None || f.var == chunkedLoop_) return;
    // A compute-only kernel checks the given structure entry by entry, in order: its loops
    // over the result's entries run serially.
    if (!assemble_ && (!groups_.empty() || insertedLevel_ >= 0) && writesResult(f.body)) return;
    bool threads = tags->unit == ParallelUnit::CpuThread;
    bool gpu = isGpuUnit(tags->unit);
    std::string command = parallelizeCommand(f.var, *tags);
    auto require = [&](bool ok, const std::string& why) {
      if (!ok) fail(command + ": " + why);
    };
    require(!(gpu && gpuUnit_ != ParallelUnit::None && tags->unit <= gpuUnit_),
            std::string("the loop is nested inside a ") + parallelUnitName(gpuUnit_) +
                " loop; GPU loops nest as gpu_block, then gpu_warp, then gpu_thread");
    require(single,
            "the loop coiterates several operands (a merge); split it and parallelize the outer loop, "
            "which iterates blocks densely");
    require(!(threads && (parallelDepth_ > 0 || !chunkedLoop_.empty())),
            "the loop is nested inside another parallel loop");
    if (writesResult(f.body) && !groups_.empty() && !fillsOwnRows(root)) {
      if (twoPass_) {
        fail(command + ": the loop appends entries to rows of the sparse result " + result_->name +
             " that other iterations also append to; a result assembled in two passes is filled in parallel "
             "only by a loop over its rows (or the dense levels above them)");
      }
      require(!gpu, "the loop appends entries to the sparse result " + result_->name +
                        "; GPU threads assemble a sparse result only in two passes (assemble(" + result_->name +
                        ",two_pass), the default with target='cuda')");
      fail(command + ": the loop appends entries to the sparse result " + result_->name +
           "; sparse results are assembled in parallel only by the outermost loop over their rows");
    }
    if (writesResult(f.body) && insertedLevel_ >= 0) requireOwnTables(root, gpu, repeats, command);
    if (threads || gpu) requirePrivateTemporaries(f, *tags, command);
    if (racesOnResult(f.body, root) || repeats) requireRaceStrategy(f, root, *tags, repeats, command);
    if (gpu)
      gpuUnit_ = tags->unit;
    else if (threads)
      ++parallelDepth_;
  }

  // A parallel loop around inserts into the result's hashed level: each iteration must insert
  // into tables no other iteration touches, those of the parents its one variable determines
  // (the index of a dense result level above the hashed one), each coordinate met once. A
  // loop over positions of fused loops binds two variables: a row may span two iterations.
  void requireOwnTables(const std::string& root, bool gpu, bool repeats, const std::string& command) const {
    if (gpu) {
      fail(command + ": the loop inserts entries into the sparse result " + result_->name +
           "; target='cuda' does not assemble hashed results yet (compute into a given structure with out=, or "
           "choose a CSR or dense result)");
    }
    const std::vector<std::string> bound = s_.boundVariables(root);
    const std::vector<std::string> above(resultVars_.begin(), resultVars_.begin() + insertedLevel_);
    if (bound.size() != 1 || !contains(above, bound[0]) || repeats) {
      fail(command + ": iterations would insert into the same hash tables of the result " + result_->name +
           " (format " + result_->format.str() + "; " +
           (repeats ? "the loop visits the positions of a non-unique level, whose coordinates repeat"
                    : "the loop's iterations are not the indices of a dense level above its hashed level") +
           "); parallelize a loop over the result's dense levels");
    }
  }

  // Temporaries a parallel loop writes must be declared inside it: declared outside, they are
  // shared by its iterations. (On a GPU, a scalar may be reduced across a unit's threads.)
  void requirePrivateTemporaries(const cin::ForallNode& f, const LoopTags& tags, const std::string& command) const {
    std::vector<const TensorVar*> local = cin::temporariesDeclaredIn(f.body);
    for (const auto& t : cin::resultsOf(f.body)) {
      if (!t->temporary || std::find(local.begin(), local.end(), t.get()) != local.end()) continue;
      bool nestedInGpuUnit = gpuUnit_ != ParallelUnit::None;
      if (isGpuUnit(tags.unit) && nestedInGpuUnit) {
        if (tags.races == RaceStrategy::ParallelReduction && t->order() == 0) continue;
        fail(command + ": the loop updates the temporary " + t->name + ", which is shared by its iterations; " +
             (t->order() == 0 ? "choose parallel_reduction to combine it across the threads"
                              : "only scalar temporaries can be reduced across threads"));
      }
      fail(command + ": the loop updates the temporary " + t->name +
           ", which is shared by its iterations; "
           "parallelize a loop outside the temporary's where statement");
    }
  }

  // Iterations that update the same result entries need a race strategy that makes them safe.
  void requireRaceStrategy(const cin::ForallNode& f, const std::string& root, const LoopTags& tags, bool repeats,
                           const std::string& command) const {
    bool threads = tags.unit == ParallelUnit::CpuThread, gpu = isGpuUnit(tags.unit);
    const nt::Operator* op = nullptr;
    bool plain = false, mixed = false;
    cin::forEachAssignment(f.body, [&](const cin::AssignNode& a) {
      if (a.lhs->tensor != result_) return;
      if (!a.accumulate)
        plain = true;
      else if (!op)
        op = a.accumulate;
      else if (op != a.accumulate)
        mixed = true;
    });
    const std::string& result = result_->name;
    RaceStrategy races = tags.races;
    if (gpu && races != RaceStrategy::Atomics && s_.hasGpuAtomicsInside(f.body)) races = RaceStrategy::Atomics;
    if (races == RaceStrategy::NoRaces) {
      std::string vars;
      for (const auto& v : s_.boundVariables(root)) vars += (vars.empty() ? "" : " and ") + v;
      std::string why = repeats ? "the loop visits the positions of a non-unique level, whose coordinates repeat"
                                : "it is not indexed by " + vars;
      fail(command + ": iterations update the same entries of " + result + " (" + why +
           "); choose atomics, temporary or parallel_reduction");
    }
    if (gpu && (races == RaceStrategy::Temporary || races == RaceStrategy::ParallelReduction)) {
      fail(command + ": iterations update the same entries of " + result + "; on a GPU, choose atomics");
    }
    if (!threads && !gpu && races != RaceStrategy::IgnoreRaces) {
      fail(command + ": iterations update the same entries of " + result + "; a vectorized loop cannot reduce into it");
    }
    if (races == RaceStrategy::IgnoreRaces) return;
    // (A sparse result is never raced on here: a parallel loop does not append to it.)
    if (plain || mixed || !op) {
      fail(command + ": the result " + result + " is assigned, not only accumulated with one operator");
    }
    if (op != &nt::addOp() && op != &nt::minOp() && op != &nt::maxOp()) {
      fail(command + ": updates with " + op->name + " cannot be made race free");
    }
    DType t = result_->dtype;
    if (t == DType::Bool || (isComplex(t) && op != &nt::addOp())) {
      fail(command + ": atomic " + op->name + " on " + dtypeName(t) + " values is not supported");
    }
  }

  // Whether iterations of a loop binding `root`'s variables write the same result entries.
  bool racesOnResult(const cin::Stmt& body, const std::string& root) const {
    std::vector<std::string> bound = s_.boundVariables(root);
    bool races = false;
    cin::forEachAssignment(body, [&](const cin::AssignNode& a) {
      if (a.lhs->tensor != result_) return;
      for (const auto& v : bound) races = races || !contains(a.lhs->indices, v);
    });
    return races;
  }

  // --- the result ---------------------------------------------------------------------------

  void planResultGroups() {
    // A result keeping an operand's pattern is not appended: its entries are the operand's,
    // which any loop over them fills in parallel (cin/result_pattern.hpp).
    if (resultKeepsPattern_ && assemble_ && cin::resultPatternOperand(s_.stmt)) return;
    const auto& levels = result_->format.levels();
    for (size_t k = 0; k < levels.size(); ++k) {
      LevelAssembly assembly = levels[k]->assembly();
      if (assembly == LevelAssembly::Located) continue;
      if (assembly == LevelAssembly::Inserted) {  // in one pass (Format::insertsResultLevel)
        insertedLevel_ = static_cast<int>(k);
        continue;
      }
      if (assembly == LevelAssembly::AppendedBelow && !groups_.empty()) {
        groups_.back().last = static_cast<int>(k);
        continue;
      }
      groups_.push_back(AppendGroup{static_cast<int>(k), static_cast<int>(k)});
    }
  }

  int groupEndingAt(const std::string& var) const {
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (resultVars_[groups_[g].last] == var) return static_cast<int>(g);
    }
    return -1;
  }

  // Whether var indexes a result level at or above the last level of an append group
  // (Lowerer::appendsInOrderOf).
  bool appendsInOrderOf(const std::string& var) const {
    return std::any_of(groups_.begin(), groups_.end(), [&](const AppendGroup& group) {
      return std::find(resultVars_.begin(), resultVars_.begin() + group.last + 1, var) !=
             resultVars_.begin() + group.last + 1;
    });
  }

  // Entries are appended in loop order, once each: the loops of the result's levels nest in
  // level order, and no other loop (a reduction) surrounds the append.
  void requireAppendOrder(const std::string& var) const {
    const AppendGroup& group = groups_[groupEndingAt(var)];
    const std::string& name = result_->name;
    if (resultEntered_ <= group.last) {
      fail("schedule: the result " + name +
           " would be appended out of order (its levels are iterated in a "
           "different order than they are stored); a workspace is needed");
    }
    std::vector<std::string> nest = open_;
    nest.push_back(var);
    int previous = -1;
    for (int k = 0; k <= group.last; ++k) {
      auto at = std::find(nest.begin(), nest.end(), resultVars_[k]);
      if (at == nest.end()) continue;
      int position = static_cast<int>(at - nest.begin());
      if (position < previous) {
        fail("schedule: the result " + name +
             " would be appended out of order (its levels are iterated in a "
             "different order than they are stored)");
      }
      previous = position;
    }
    auto above = resultVars_.begin() + group.last;
    for (size_t depth = 0; depth < open_.size(); ++depth) {
      const std::string& loop = open_[depth];
      // (A block loop counts in the order above, not here: each block appends its part of
      // the coordinates the loop inside it iterates.)
      bool block = std::find(blockDepths_.begin(), blockDepths_.end(), depth) != blockDepths_.end();
      if (!block && std::find(resultVars_.begin(), above, loop) == above) {
        fail("schedule: level " + std::to_string(group.first + 1) + " of the result " + name +
             " would be appended to once per value of the index '" + loop +
             "'; this loop order needs a workspace or a result format with random insert");
      }
    }
  }

  bool writesResult(const cin::Stmt& s) const {
    auto written = cin::resultsOf(s);
    return std::find(written.begin(), written.end(), result_) != written.end();
  }

  bool onlyAccumulates(const cin::Stmt& s) const {
    bool all = true;
    cin::forEachAssignment(
        s, [&](const cin::AssignNode& a) { all = all && (a.lhs->tensor != result_ || a.accumulate != nullptr); });
    return all;
  }

  // --- iteration state ------------------------------------------------------------------------

  // Levels below entered ones whose variables are bound and that locate every coordinate are
  // entered by locate. (Workspace lists are iterated, never located.)
  void resolveLocates() {
    for (const AccessNode* acc : accesses_) {
      if (listWorkspace(s_, *acc)) continue;
      std::vector<std::string> levelVars = nt::levelIndices(*acc);
      int& entered = entered_.at(acc);
      while (entered < static_cast<int>(levelVars.size()) && bound_.count(levelVars[entered]) &&
             acc->tensor->format.levels()[entered]->locatesEveryCoordinate()) {
        entered++;
      }
    }
  }

  void enterResultLevels() {
    while (resultEntered_ < static_cast<int>(resultVars_.size()) && bound_.count(resultVars_[resultEntered_])) {
      resultEntered_++;
    }
  }

  struct State {
    std::map<const AccessNode*, int> entered;
    int result;
    std::set<std::string> bound;
  };
  State state() const { return State{entered_, resultEntered_, bound_}; }
  void restore(const State& s) {
    entered_ = s.entered;
    resultEntered_ = s.result;
    bound_ = s.bound;
  }

  // Restores what a parallel loop changes once its body has been walked.
  struct ParallelGuard {
    Checker& checker;
    int depth;
    ParallelUnit gpuUnit;
    explicit ParallelGuard(Checker& c) : checker(c), depth(c.parallelDepth_), gpuUnit(c.gpuUnit_) {}
    ~ParallelGuard() {
      checker.parallelDepth_ = depth;
      checker.gpuUnit_ = gpuUnit;
    }
  };

  [[noreturn]] static void fail(const std::string& why) { throw ScheduleError(why); }

  const ScheduledStatement& s_;
  bool assemble_;
  std::vector<const AccessNode*> accesses_;   // operands and workspaces, in order of appearance
  std::map<const AccessNode*, int> entered_;  // levels [0, entered) have positions
  notation::TensorVarPtr result_;
  std::vector<std::string> resultVars_;  // the index variable of each result level
  int resultEntered_ = 0;
  std::vector<AppendGroup> groups_;
  int insertedLevel_ = -1;                     // the result's inserted (hashed) level, or -1
  bool twoPass_ = false;                       // the result is assembled in two passes
  std::set<std::string> bound_;                // index variables bound by the loops around
  std::vector<std::string> open_;              // original variables of the loops around
  std::vector<size_t> blockDepths_;            // the places in open_ of block loops (their roots)
  std::set<std::string> restricted_;           // variables restricted to a block
  std::set<const IndexRelation*> openBlocks_;  // splits whose outer loop is around
  std::set<const IndexRelation*> strided_;     // splits whose inner loop is around, not the outer
  std::vector<size_t> producerDepth_;          // open_ size where each where's producer starts
  std::map<const TensorVar*, cin::Stmt> producers_;
  std::map<const TensorVar*, std::string> appendedWorkspaces_;  // compressed: its variable
  int parallelDepth_ = 0;                                       // cpu_thread loops around
  ParallelUnit gpuUnit_ = ParallelUnit::None;                   // the innermost GPU loop's unit around
  std::string chunkedLoop_;
  bool resultKeepsPattern_;
};

}  // namespace

std::string legalityProblem(const ScheduledStatement& s, bool assemble, bool resultKeepsPattern) {
  try {
    Checker(s, assemble, resultKeepsPattern).run();
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}

}  // namespace coiter::schedule
