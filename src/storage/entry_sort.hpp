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

// The coarse buckets of the sort's first pass over key 0 (extent: key 0's bound, at least 1):
// bucket c holds the key-0 values [c << shift, (c + 1) << shift), and there are at most 256 of
// them, so that scattering into them stays within the caches. A text parser that lays entries
// out in these buckets itself (storage/text_entries.hpp) spares the sort its scatter.
int coarseBucketShift(int64_t extent);
int64_t coarseBucketCount(int64_t extent);

// keys[l] has one entry per value, all keys of one width; extents[l] bounds key l (or -1
// when unknown). The input buffers are never written (but grouped ones, below): columns that
// the sort has to change are new buffers, and those it leaves alone are returned as they came (so they may still
// be the caller's memory). sumDuplicates: entries with equal keys become one whose value is
// their sum, added in input order. threads: the most threads the sort may use; the result is
// the same at any count. grouped (optional): the entries are already laid out in key 0's coarse
// buckets, stably (grouped[c] is where bucket c starts, grouped[coarseBucketCount] == the
// entry count), and the columns are the sort's to write: it then sorts them in place.
SortedEntries sortEntries(std::vector<Buffer> keys, const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates, int threads = 1, const std::vector<int64_t>* grouped = nullptr);

}  // namespace coiter
