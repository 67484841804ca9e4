// Sorting coordinate entries lexicographically by a list of keys and combining duplicates:
// the first step of packing. Counting sort on the first key when its range is small
// (the common case: rows), in two passes that each stay within the caches, then a sort of
// each group only where it is out of order (a matrix's short rows by rank, without
// branches). Both passes, and the check for entries already in order, run on several
// threads; the result is the same, bit for bit, at any thread count.
//
// Keys are index columns of one width, int32 or int64, and stay at that width throughout:
// sorting moves half the bytes at int32, and the sorted columns can become level arrays as
// they are.
#pragma once
#include <cstdint>
#include <vector>

#include "memory/buffer.hpp"

namespace coiter {

struct SortedEntries {
  std::vector<Buffer> keys;    // sorted; one column per key, of the keys' width
  Buffer values;               // in the same order
  bool hadDuplicates = false;  // equal keys were present (summed if asked)
  int64_t size() const { return values.length(); }
};

// keys[l] has one entry per value, all keys of one width; extents[l] bounds key l (or -1
// when unknown). The input buffers are never written: columns that the sort has to change
// are new buffers, and those it leaves alone are returned as they came (so they may still
// be the caller's memory). sumDuplicates: entries with equal keys become one whose value is
// their sum, added in input order. threads: the most threads the sort may use; the result is
// the same at any count.
SortedEntries sortEntries(std::vector<Buffer> keys, const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates, int threads = 1);

}  // namespace coiter
