// Sorting coordinate entries lexicographically by a list of keys and combining duplicates:
// the first step of packing. Counting sort on the first key when its range is small
// (the common case: rows), then a sort of each group only where it is out of order.
#pragma once
#include <cstdint>
#include <vector>

#include "storage/buffer.hpp"
#include "util/index_vector.hpp"

namespace coiter {

struct SortedEntries {
  std::vector<IndexVector> keys;  // sorted; one vector per key
  Buffer values;                  // in the same order
  bool hadDuplicates = false;     // equal keys were present (summed if asked)
  int64_t size() const { return values.length(); }
};

// keys[l] has one entry per value; extents[l] bounds key l (or -1 when unknown).
// sumDuplicates: entries with equal keys become one whose value is their sum.
SortedEntries sortEntries(std::vector<IndexVector> keys,
                          const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates);

}  // namespace coiter
