// Iteration lattices (Kjolstad's thesis, ch. 3). A forall's domain is a set expression over the
// segments its variable ranges over (one per tensor level indexed by the variable, plus the
// variable's dimension for broadcast operands). The lattice lists the points the coiteration
// passes through: the top point coiterates every segment; going down a lattice edge means a
// segment ran out. Each point splits its segments into iterators (merged) and locators
// (accessed by locate).
//
// Construction uses the four rules (segment, dimension, intersection, union) and the two
// optimizations (intersection: iterate one side and locate the other; subset: points that
// lack a full iterator of a higher point are unreachable). Unordered segments (hashed) are
// never merged: when a point would merge one with another iterator, it becomes a locator and
// the dimension is iterated instead.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace coiter::lattice {

struct Segment {
  std::string name;        // "B2" (level 2 of B), "c1", or "U_j" for the dimension
  bool dimension = false;  // the whole range of the variable
  bool iterable = false;   // has coordinate or position iteration
  bool ordered = true;     // iteration yields increasing coordinates
  bool locatable = false;  // has locate
  bool full = false;       // holds every coordinate of the dimension (dense, the dimension)
};

// The domain as a set expression over segment indices.
struct DomainExpr;
using DomainExprPtr = std::shared_ptr<const DomainExpr>;
struct DomainExpr {
  enum Kind { Segment, Intersection, Union } kind;
  int segment = -1;    // Segment
  DomainExprPtr a, b;  // Intersection, Union
};
DomainExprPtr segmentDomain(int segment);
DomainExprPtr intersection(DomainExprPtr a, DomainExprPtr b);
DomainExprPtr unionOf(DomainExprPtr a, DomainExprPtr b);

struct LatticePoint {
  std::vector<int> iterators;  // sorted segment indices
  std::vector<int> locators;   // sorted segment indices
  bool operator==(const LatticePoint& o) const { return iterators == o.iterators && locators == o.locators; }
  // Every segment of the point, iterators and locators.
  std::vector<int> segments() const;
};

class IterationLattice {
 public:
  // `dimension` is the index of the variable's dimension segment in `segments`. With
  // `locateUnordered` (the loop appends to a result, or covers a block of coordinates),
  // unordered segments that can be located are never iterated: they are located while the
  // dimension is iterated.
  static IterationLattice build(const DomainExprPtr& domain, const std::vector<Segment>& segments, int dimension,
                                bool locateUnordered = false);

  const std::vector<LatticePoint>& points() const { return points_; }
  const std::vector<Segment>& segments() const { return segments_; }
  // "[B2, c1] > [B2] > [c1]"; locators after a bar: "[B1 | c1]".
  std::string toString() const;

 private:
  std::vector<LatticePoint> points_;  // top point first, in lattice order
  std::vector<Segment> segments_;
};

}  // namespace coiter::lattice
