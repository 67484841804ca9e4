#include "schedule/loop_iteration.hpp"

#include <algorithm>
#include <map>

#include "util/errors.hpp"

namespace coiter::schedule {

namespace nt = coiter::notation;

namespace {

// A level the loop may iterate, with the properties the lattice's rules read.
struct Segment {
  IteratedLevel level;
  bool ordered = true;
  bool locatable = false;
};

// One side of the domain, as far as its lattice's shape goes: nothing (a zero operand), the
// dimension (dense operands, located), or iterated segments in one point or several.
struct Part {
  bool zero = true;
  bool dimension = false;  // the dimension is iterated (somewhere)
  std::vector<Segment> iterators;
  bool several = false;  // more than one lattice point, or a point with several iterators

  bool dimensionOnly() const { return !zero && !several && iterators.empty(); }
  bool singleSegment() const { return !zero && !several && !dimension && iterators.size() == 1; }
};

Part dimensionPart() {
  Part p;
  p.zero = false;
  p.dimension = true;
  return p;
}

void addIterator(std::vector<Segment>& out, const Segment& s) {
  bool seen = std::any_of(out.begin(), out.end(), [&](const Segment& t) {
    return t.level.access == s.level.access && t.level.level == s.level.level;
  });
  if (!seen) out.push_back(s);
}

Part merged(const Part& x, const Part& y, bool locateDriven) {
  Part p;
  p.zero = false;
  p.several = true;
  p.dimension = x.dimension || y.dimension;
  for (const Part* side : {&x, &y}) {
    // Beside a single ordered segment that drives an intersection, the other side's
    // segments that can be located are located.
    const Part& other = side == &x ? y : x;
    bool driven = locateDriven && other.singleSegment() && other.iterators[0].ordered;
    for (const Segment& s : side->iterators) {
      if (!(driven && s.locatable)) addIterator(p.iterators, s);
    }
  }
  return p;
}

// The intersection rule with the lattice's optimizations: the dimension adds nothing beside
// a segment; of two single segments the ordered one is iterated and the other located, when
// it can be.
Part intersect(const Part& x, const Part& y) {
  if (x.zero || y.zero) return Part{};
  if (x.dimensionOnly()) return y;
  if (y.dimensionOnly()) return x;
  if (x.singleSegment() && y.singleSegment()) {
    const Segment &a = x.iterators[0], &b = y.iterators[0];
    if (a.ordered && b.locatable) return x;
    if (!a.ordered && a.locatable && b.ordered) return y;
  }
  return merged(x, y, true);
}

// The union rule: every region is visited, so anything but two dense sides is a merge.
// Unordered segments cannot be merged: they are located while the dimension is iterated.
Part unite(Part x, Part y) {
  if (x.zero) return y;
  if (y.zero) return x;
  auto hasUnordered = [](const Part& p) {
    return std::any_of(p.iterators.begin(), p.iterators.end(), [](const Segment& s) { return !s.ordered; });
  };
  if (hasUnordered(x) || hasUnordered(y)) {
    for (Part* p : {&x, &y}) {
      auto unordered = [](const Segment& s) { return !s.ordered; };
      if (std::any_of(p->iterators.begin(), p->iterators.end(), unordered)) {
        p->iterators.erase(std::remove_if(p->iterators.begin(), p->iterators.end(), unordered), p->iterators.end());
        p->dimension = true;
      }
    }
  }
  if (x.dimensionOnly() && y.dimensionOnly()) return x;
  return merged(x, y, false);
}

class Summary {
 public:
  Summary(const ScheduledStatement& s, const std::string& var, const std::function<int(const nt::AccessNode&)>& entered,
          bool inOrder)
      : s_(s), var_(var), entered_(entered), inOrder_(inOrder) {}

  Part of(const cin::Stmt& s) {
    switch (s->kind) {
      case cin::StmtKind::Assign: {
        const auto& a = cin::as<cin::AssignNode>(s);
        Part d = of(a.rhs);
        // max and min see the unstored zeros: they range over the whole dimension.
        if (a.accumulate && !a.accumulate->zeroIsIdentity) d = unite(d, dimensionPart());
        return d;
      }
      case cin::StmtKind::Forall: return of(cin::as<cin::ForallNode>(s).body);
      case cin::StmtKind::Where: {
        const auto& w = cin::as<cin::WhereNode>(s);
        Part produced = of(w.producer);
        for (const auto& t : cin::resultsOf(w.producer)) {
          if (t->temporary) temporaries_[t.get()] = produced;
        }
        return of(w.consumer);
      }
      case cin::StmtKind::Sequence: {
        const auto& q = cin::as<cin::SequenceNode>(s);
        return unite(of(q.define), of(q.mutate));
      }
    }
    return Part{};
  }

 private:
  Part of(const nt::Expr& e) {
    switch (e->kind) {
      case nt::ExprKind::Access: return access(static_cast<const nt::AccessNode&>(*e));
      case nt::ExprKind::Literal: return static_cast<const nt::LiteralNode&>(*e).isZero() ? Part{} : dimensionPart();
      case nt::ExprKind::Negate: return of(static_cast<const nt::NegateNode&>(*e).a);
      case nt::ExprKind::Binary: {
        const auto& b = static_cast<const nt::BinaryNode&>(*e);
        Part x = of(b.a), y = of(b.b);
        const nt::Operator& op = *b.op;
        if (op.leftZeroAnnihilates && op.rightZeroAnnihilates) return intersect(x, y);
        if (op.leftZeroAnnihilates) return intersect(x, unite(y, dimensionPart()));
        if (op.rightZeroAnnihilates) return intersect(unite(x, dimensionPart()), y);
        if (op.zeroPreserving) return unite(x, y);
        return unite(unite(x, y), dimensionPart());
      }
      case nt::ExprKind::Reduce: break;
    }
    return dimensionPart();
  }

  Part access(const nt::AccessNode& a) {
    // (By the loop's variable, or by a loop derived from it.)
    bool indexedHere =
        std::any_of(a.indices.begin(), a.indices.end(), [&](const std::string& v) { return s_.rootOf(v) == var_; });
    if (a.tensor->temporary) {
      // A vector workspace is iterated through its list of coordinates; a dense array (over
      // several variables, or a block) is located; a temporary not indexed here ranges over
      // what its producer iterated.
      if (indexedHere && listWorkspace(s_, a)) {
        Part p;
        p.zero = false;
        p.iterators.push_back(Segment{IteratedLevel{&a, 0, true}, true, false});
        return p;
      }
      if (indexedHere) return dimensionPart();
      auto it = temporaries_.find(a.tensor.get());
      return it != temporaries_.end() ? it->second : dimensionPart();
    }
    std::vector<std::string> levelVars = nt::levelIndices(a);
    const auto& levels = a.tensor->format.levels();
    int entered = entered_(a);
    for (int k = entered; k < static_cast<int>(levelVars.size()); ++k) {
      if (levelVars[k] != var_) continue;
      const LevelType& type = *levels[k];
      if (k == entered) {
        return leaf(Segment{IteratedLevel{&a, k, false}, type.properties().ordered, type.capabilities().locate}, type);
      }
      // Indexed deeper: reached later by locate, once the levels above have positions.
      if (!type.locatesEveryCoordinate()) {
        // (A non-owning handle, the aliasing constructor, prints the access like any expression.)
        std::string access = nt::toString(nt::Expr(std::shared_ptr<const nt::ExprNode>{}, &a));
        throw ScheduleError("schedule: loop order: " + access + " would be traversed out of order (its level " +
                            std::to_string(k + 1) + ", indexed by '" + var_ +
                            "', has no random access and sits below levels iterated "
                            "later); reorder the loops, or convert " +
                            a.tensor->name + " to a format whose mode order matches, e.g. with asformat()");
      }
    }
    return dimensionPart();
  }

  // The segment rule: a level is iterated, or located while the dimension is iterated.
  Part leaf(const Segment& s, const LevelType& type) const {
    LevelCapabilities caps = type.capabilities();
    bool iterable = !type.locatesEveryCoordinate() && (caps.positionIterate || caps.coordinateIterate);
    if (iterable && (s.ordered || !inOrder_ || !s.locatable)) {
      Part p;
      p.zero = false;
      p.iterators.push_back(s);
      return p;
    }
    return dimensionPart();
  }

  const ScheduledStatement& s_;
  const std::string& var_;
  const std::function<int(const nt::AccessNode&)>& entered_;
  bool inOrder_;
  std::map<const nt::TensorVar*, Part> temporaries_;
};

}  // namespace

bool listWorkspace(const ScheduledStatement& s, const nt::AccessNode& a) {
  return a.tensor->temporary && a.tensor->order() == 1 && !s.isDerived(a.indices.front());
}

LoopIteration loopIteration(const ScheduledStatement& s, const cin::Stmt& body, const std::string& var,
                            const std::function<int(const nt::AccessNode&)>& entered, bool inOrder) {
  Part p = Summary(s, var, entered, inOrder).of(body);
  LoopIteration out;
  out.empty = p.zero;
  out.merges = p.several;
  for (const Segment& s : p.iterators) out.levels.push_back(s.level);
  return out;
}

}  // namespace coiter::schedule
