// Shared helpers of the level types: grouping sorted entries under one parent and making
// index arrays while packing, and the checks applied to index arrays that arrive from
// outside coiter.
#pragma once
#include <string>

#include "format/level_type.hpp"
#include "util/errors.hpp"

namespace coiter {

// Calls visit(lo, hi, coord) for each group of entries under `node` that gets one position
// of this level: entries with equal coordinates for a unique level; for a non-unique level,
// entries with equal keys along the branchless chain below it, or each entry on its own when
// that chain reaches the leaves (so duplicates stay separate).
template <typename Visit>
void forEachGroup(const PackInput& in, const PackNode& node, bool unique, Visit&& visit) {
  visitIndices(*in.coords, [&](const auto* c) {
    int64_t lo = node.lo;
    while (lo < node.hi) {
      int64_t hi = lo + 1;
      if (unique) {
        while (hi < node.hi && c[hi] == c[lo]) ++hi;
      } else if (!in.chainReachesLeaf) {
        auto sameKey = [&](int64_t a, int64_t b) {
          for (const Buffer* chainCoords : in.chain)
            if (chainCoords->index(a) != chainCoords->index(b)) return false;
          return true;
        };
        while (hi < node.hi && sameKey(hi, lo)) ++hi;
      }
      visit(lo, hi, static_cast<int64_t>(c[lo]));
      lo = hi;
    }
  });
}

// Calls f(p) with p typed int32_t* or int64_t* for a new, zeroed index array `name` of
// `length` elements at the width of the level's coordinates (which packing chose so that
// every value a level writes fits), and returns that array. A length that follows from huge
// extents raises ShapeError naming the level and the array before anything is allocated.
template <typename F>
Buffer makeIndexArray(const PackInput& in, const char* name, int64_t length, F&& f) {
  Buffer array = Buffer::allocate(in.coords->dtype(), length, in.where + ": array '" + name + "'");
  visitIndices(array, f);
  return array;
}

// The named index array, which must exist and have the given length (-1: any).
const Buffer& checkedArray(const LevelStorage& s, const std::string& name, int64_t length,
                           const LevelDescription& where);
// The named parameter, which must exist.
int64_t checkedScalar(const LevelStorage& s, const std::string& name, const LevelDescription& where);
// Checks that every element of `b` lies in [lo, hi).
void checkRange(const Buffer& b, int64_t lo, int64_t hi, const std::string& what, const LevelDescription& where);
// Checks that `b` never decreases.
void checkNonDecreasing(const Buffer& b, const std::string& what, const LevelDescription& where);
// The first entry crd[entry] of a segment crd[pos[segment]:pos[segment+1]] (segment <
// parentCount) that is smaller than the entry before it (or equal, when `strict`); segment -1
// when every segment is sorted. `pos` must be non-decreasing and within crd.
struct UnsortedEntry {
  int64_t segment = -1, entry = -1;
};
UnsortedEntry findUnsortedSegmentEntry(const Buffer& pos, const Buffer& crd, int64_t parentCount, bool strict);
// Multiplies position counts; ShapeError on overflow (the extents are too large for the
// level types: a dense level has a position for every coordinate under every parent).
int64_t checkedProduct(int64_t a, int64_t b, const LevelDescription& where);

}  // namespace coiter
