#include "lattice/iteration_lattice.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include "util/errors.hpp"

namespace coiter::lattice {

DomainExprPtr segmentDomain(int segment) {
  return std::make_shared<const DomainExpr>(DomainExpr{DomainExpr::Segment, segment, nullptr, nullptr});
}
DomainExprPtr intersection(DomainExprPtr a, DomainExprPtr b) {
  return std::make_shared<const DomainExpr>(DomainExpr{DomainExpr::Intersection, -1, std::move(a), std::move(b)});
}
DomainExprPtr unionOf(DomainExprPtr a, DomainExprPtr b) {
  return std::make_shared<const DomainExpr>(DomainExpr{DomainExpr::Union, -1, std::move(a), std::move(b)});
}

std::vector<int> LatticePoint::segments() const {
  std::vector<int> all = iterators;
  all.insert(all.end(), locators.begin(), locators.end());
  std::sort(all.begin(), all.end());
  return all;
}

namespace {

using Points = std::vector<LatticePoint>;

void normalize(LatticePoint& p) {
  std::sort(p.iterators.begin(), p.iterators.end());
  p.iterators.erase(std::unique(p.iterators.begin(), p.iterators.end()), p.iterators.end());
  std::sort(p.locators.begin(), p.locators.end());
  p.locators.erase(std::unique(p.locators.begin(), p.locators.end()), p.locators.end());
}

void addUnique(Points& points, LatticePoint p) {
  normalize(p);
  if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(std::move(p));
}

// More points than any kernel can use: each point becomes a loop of its own in the code. A
// union of n sparse operands has up to 2^n - 1 points; beyond this limit the compiler refuses
// instead of running (nearly) forever.
constexpr size_t kMaxLatticePoints = 1024;

// Adds `p` unless a point with the same iterators is already there. Such a later point is
// never reached (IterationLattice::build drops it at the end), and every point merged from it
// has the iterators of a point merged earlier from the first one, so dropping it as soon as
// it appears changes nothing but the work: a sum of n dense operands used to build 2^n points
// with the same single iterator, and to take minutes for n = 16.
void addFirst(Points& points, std::set<std::vector<int>>& seen, LatticePoint p) {
  normalize(p);
  if (!seen.insert(p.iterators).second) return;
  if (points.size() >= kMaxLatticePoints) {
    throw CompileError(
        "the expression merges too many sparse operands in one loop: its "
        "iteration lattice would have more than " +
        std::to_string(kMaxLatticePoints) + " points");
  }
  points.push_back(std::move(p));
}

struct Builder {
  const std::vector<Segment>& segments;
  int dimension;
  bool unorderedLocated;  // build()'s locateUnordered
  std::set<int> located;  // unordered segments located wherever they appear (see build())

  // Segment rule and dimension rule.
  Points leaf(int s) const {
    const Segment& seg = segments[s];
    bool locateIt = unorderedLocated || located.count(s) > 0;
    bool iterate = seg.iterable && (seg.ordered || !locateIt || !seg.locatable);
    if (seg.dimension || iterate) return {LatticePoint{{s}, {}}};
    if (seg.locatable) return {LatticePoint{{dimension}, {s}}};
    throw CoiterError("lattice: segment " + seg.name + " can neither be iterated nor located");
  }

  // A point whose only iterator is one segment: every region of it needs that segment.
  bool isSingleSegment(const LatticePoint& p) const {
    return p.iterators.size() == 1 && !segments[p.iterators[0]].dimension;
  }
  bool isDimensionOnly(const LatticePoint& p) const {
    return p.iterators.size() == 1 && segments[p.iterators[0]].dimension;
  }

  // Intersection optimization: when one side is a single segment that every region needs,
  // it drives the loop: the other side's dimension adds nothing, and its segments that can be
  // located are located. A side that is only the dimension (dense operands) adds its
  // locators. Points from a union keep their dimension otherwise: it is what visits the
  // coordinates where only some operands are present.
  LatticePoint optimizedMerge(const LatticePoint& driver, const LatticePoint& other) const {
    LatticePoint p = driver;
    p.locators.insert(p.locators.end(), other.locators.begin(), other.locators.end());
    for (int s : other.iterators) {
      if (segments[s].dimension) continue;
      (segments[s].locatable ? p.locators : p.iterators).push_back(s);
    }
    return p;
  }

  // Merges two points (intersection rule), then keeps the merge well-formed: unordered
  // iterators cannot be merged with others, so they become locators.
  LatticePoint merge(const LatticePoint& x, const LatticePoint& y, bool optimize) const {
    LatticePoint p;
    if (optimize && isDimensionOnly(y)) {
      p = x;
      p.locators.insert(p.locators.end(), y.locators.begin(), y.locators.end());
    } else if (optimize && isDimensionOnly(x)) {
      p = y;
      p.locators.insert(p.locators.end(), x.locators.begin(), x.locators.end());
    } else if (optimize && isSingleSegment(x) && (!isSingleSegment(y) || segments[x.iterators[0]].ordered)) {
      p = optimizedMerge(x, y);
    } else if (optimize && isSingleSegment(y)) {
      p = optimizedMerge(y, x);
    } else {
      p.iterators = x.iterators;
      p.iterators.insert(p.iterators.end(), y.iterators.begin(), y.iterators.end());
      p.locators = x.locators;
      p.locators.insert(p.locators.end(), y.locators.begin(), y.locators.end());
    }
    normalize(p);
    bool unorderedMerge = p.iterators.size() > 1 && std::any_of(p.iterators.begin(), p.iterators.end(),
                                                                [&](int s) { return !segments[s].ordered; });
    if (unorderedMerge) {
      // The ordered iterators drive the intersection and the unordered segments are located
      // at their coordinates; only when none is left does the dimension drive it. (Adding
      // the dimension beside ordered iterators would tie it to them: in a union above, the
      // points where they have run out but the other side has not would be lost.)
      std::vector<int> iterators;
      for (int s : p.iterators) {
        if (segments[s].ordered)
          iterators.push_back(s);
        else
          p.locators.push_back(unorderedLocator(s));
      }
      if (iterators.empty()) iterators.push_back(dimension);
      p.iterators = iterators;
    }
    normalize(p);
    return p;
  }

  Points intersect(const Points& a, const Points& b, bool optimize) const {
    Points out;
    std::set<std::vector<int>> seen;
    for (const auto& x : a) {
      for (const auto& y : b) addFirst(out, seen, merge(x, y, optimize));
    }
    return out;
  }

  bool isFull(int s) const { return segments[s].full || segments[s].dimension; }

  // An unordered segment made a locator because it cannot be merged: refused when it cannot be
  // located either (compressed(ordered=False) beside another operand), a limit of the
  // operand's format, not of the compiler.
  int unorderedLocator(int s) const {
    if (segments[s].locatable) return s;
    throw FormatError("operand level " + segments[s].name +
                      " is unordered and cannot be looked up, so it cannot be iterated together with the other "
                      "operands of this loop; store that operand in an ordered format (asformat)");
  }

  // An unordered segment cannot be merged, and in a union it must still be visited where the
  // other side has run out: it is located while the dimension is iterated, in every point.
  Points locateUnordered(const Points& points) const {
    Points out;
    for (LatticePoint p : points) {
      std::vector<int> iterators;
      for (int s : p.iterators) {
        if (segments[s].ordered) {
          iterators.push_back(s);
        } else {
          p.locators.push_back(unorderedLocator(s));
          iterators.push_back(dimension);
        }
      }
      p.iterators = iterators;
      addUnique(out, p);
    }
    return out;
  }

  bool hasUnordered(const Points& points) const {
    return std::any_of(points.begin(), points.end(), [&](const LatticePoint& p) {
      return std::any_of(p.iterators.begin(), p.iterators.end(), [&](int s) { return !segments[s].ordered; });
    });
  }

  Points unite(const Points& first, const Points& second) const {
    bool unordered = hasUnordered(first) || hasUnordered(second);
    Points a = unordered ? locateUnordered(first) : first;
    Points b = unordered ? locateUnordered(second) : second;
    Points out = intersect(a, b, false);
    std::set<std::vector<int>> seen;
    for (const auto& p : out) seen.insert(p.iterators);
    for (const auto& p : a) addFirst(out, seen, p);
    for (const auto& p : b) addFirst(out, seen, p);
    // Subset optimization: a full iterator never runs out before the loop ends, so points
    // without a full iterator of the top point are unreachable.
    std::vector<int> fullTop;
    for (int s : out.front().iterators) {
      if (isFull(s)) fullTop.push_back(s);
    }
    Points kept;
    for (const auto& p : out) {
      bool hasAll = std::all_of(fullTop.begin(), fullTop.end(), [&](int s) {
        return std::find(p.iterators.begin(), p.iterators.end(), s) != p.iterators.end();
      });
      if (hasAll) kept.push_back(p);
    }
    return kept;
  }

  Points build(const DomainExprPtr& d) const {
    switch (d->kind) {
      case DomainExpr::Segment: return leaf(d->segment);
      case DomainExpr::Intersection: return intersect(build(d->a), build(d->b), true);
      case DomainExpr::Union: return unite(build(d->a), build(d->b));
    }
    return {};
  }
};

// Unordered segments that are iterated in one point and located in another. Such a segment
// drives a point alone (it was intersected with a union whose other points it could not be
// merged into), so it is walked from its first entry after the points that located it, and
// visits their coordinates a second time: in (C(i,j) - T(i,j)) * B(j,k) with C compressed, T
// and B hashed, the points C|T,B and B|T subtracted T(i,j) * B(j,k) twice wherever C(i,j) was
// stored too. Such segments are located everywhere instead, while the dimension is walked.
std::set<int> iteratedAndLocated(const Points& points, const std::vector<Segment>& segments) {
  std::set<int> iterated, located, both;
  for (const LatticePoint& p : points) {
    for (int s : p.iterators)
      if (!segments[s].dimension && !segments[s].ordered) iterated.insert(s);
    for (int s : p.locators)
      if (!segments[s].ordered) located.insert(s);
  }
  std::set_intersection(iterated.begin(), iterated.end(), located.begin(), located.end(),
                        std::inserter(both, both.begin()));
  return both;
}

}  // namespace

IterationLattice IterationLattice::build(const DomainExprPtr& domain, const std::vector<Segment>& segments,
                                         int dimension, bool locateUnordered) {
  IterationLattice lattice;
  lattice.segments_ = segments;
  Builder builder{lattice.segments_, dimension, locateUnordered, {}};
  Points points = builder.build(domain);
  // (Each round locates at least one more segment, so this ends.)
  for (std::set<int> both = iteratedAndLocated(points, lattice.segments_); !both.empty();
       both = iteratedAndLocated(points, lattice.segments_)) {
    builder.located.insert(both.begin(), both.end());
    points = builder.build(domain);
  }
  // Lattice order: more iterators first (a stable sort keeps construction order otherwise).
  std::stable_sort(points.begin(), points.end(), [](const LatticePoint& x, const LatticePoint& y) {
    return x.iterators.size() > y.iterators.size();
  });
  // A point with the iterators of a higher point is never reached: that point's loop only
  // ends when one of these iterators runs out. (Its locators are in the higher point too.)
  Points reachable;
  for (auto& p : points) {
    bool seen = std::any_of(reachable.begin(), reachable.end(),
                            [&](const LatticePoint& q) { return q.iterators == p.iterators; });
    if (!seen) reachable.push_back(std::move(p));
  }
  lattice.points_ = std::move(reachable);
  return lattice;
}

std::string IterationLattice::toString() const {
  std::string s;
  for (size_t k = 0; k < points_.size(); ++k) {
    if (k) s += " > ";
    s += "[";
    for (size_t n = 0; n < points_[k].iterators.size(); ++n) {
      s += (n ? ", " : "") + segments_[points_[k].iterators[n]].name;
    }
    if (!points_[k].locators.empty()) {
      s += " |";
      for (int loc : points_[k].locators) s += " " + segments_[loc].name;
    }
    s += "]";
  }
  return s;
}

}  // namespace coiter::lattice
