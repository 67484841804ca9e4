// The vector sort (runtime/simd_sort.hpp): the build chosen for this CPU and the AVX2 build,
// every count up to past kSimdSortMax, coordinates of any size, against std::sort.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir_test_support.hpp"
#include "runtime/simd_sort.hpp"

using namespace coiter;
using namespace coiter_test;

namespace {

std::vector<int64_t> distinctValues(std::mt19937_64& rng, int64_t count, int64_t hi) {
  std::vector<int64_t> values;
  std::unordered_set<int64_t> seen;
  std::uniform_int_distribution<int64_t> pick(0, hi);
  while (static_cast<int64_t>(values.size()) < count) {
    int64_t v = pick(rng);
    if (seen.insert(v).second) values.push_back(v);
  }
  return values;
}

void testAgainstStdSort(const std::string& isa, void (*sort)(int64_t*, int64_t)) {
  std::mt19937_64 rng(7);
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;  // the largest coordinate there can be
  for (int64_t count = 0; count <= kSimdSortMax + 40; ++count) {
    for (int64_t hi : {int64_t{600}, int64_t{1} << 31, big}) {
      std::vector<int64_t> values = distinctValues(rng, count, hi);
      std::vector<int64_t> expected = values;
      std::sort(expected.begin(), expected.end());
      sort(values.data(), count);
      check(values == expected,
            isa + " sort of " + std::to_string(count) + " values in [0, " + std::to_string(hi) + "]");
      std::sort(values.begin(), values.end(), std::greater<int64_t>());  // reversed input
      sort(values.data(), count);
      check(values == expected, isa + " sort of " + std::to_string(count) + " reversed values");
    }
  }
}

}  // namespace

int main() {
  // The build this CPU was given (AVX-512 where it has it), and the AVX2 build as well, which
  // an AVX-512 CPU runs too.
  if (hasSimdSort()) testAgainstStdSort("dispatched", &simdSort);
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) testAgainstStdSort("AVX2", &simdSortAvx2);
#endif
  std::printf("%s\n", failures ? "FAILED" : "all vector sort tests passed");
  return failures ? 1 : 0;
}
