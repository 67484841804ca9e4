#include "runtime/small_sort.hpp"

#include <algorithm>
#include <limits>

namespace coiter {

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// One build of the counting loop per vector width; the loader picks the widest the CPU has.
#define COITER_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define COITER_VECTOR_CLONES
#endif

// Values of `values[0, padded)` below `x` (padded is a multiple of 8), counted in 8 lanes
// over blocks of 8, with no exit or remainder inside a block, so that the loop vectorizes
// without -O3.
inline __attribute__((always_inline)) int64_t countBelow(const int64_t* values, int64_t padded, int64_t x) {
  int64_t lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t k = 0; k < padded; k += 8) {
    for (int q = 0; q < 8; ++q) lanes[q] += values[k + q] < x;
  }
  int64_t below = 0;
  for (int q = 0; q < 8; ++q) below += lanes[q];
  return below;
}

}  // namespace

COITER_VECTOR_CLONES
void rankSort(int64_t* list, int64_t count) {
  static_assert(kRankSortMax % 8 == 0, "the values are counted in blocks of 8");
  int64_t values[kRankSortMax];
  int64_t padded = (count + 7) / 8 * 8;
  std::copy(list, list + count, values);
  std::fill(values + count, values + padded, std::numeric_limits<int64_t>::max());  // never below
  for (int64_t n = 0; n < count; ++n) list[countBelow(values, padded, values[n])] = values[n];
}

}  // namespace coiter
