// Rank sort (runtime/small_sort.hpp): every count it takes, values of any sign and size,
// against std::sort.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/small_sort.hpp"
#include "ir_test_support.hpp"

using namespace coiter;
using namespace coiter_test;

namespace {

std::vector<int64_t> distinctValues(std::mt19937_64& rng, int64_t count, int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  std::uniform_int_distribution<int64_t> pick(lo, hi);
  while (static_cast<int64_t>(values.size()) < count) {
    int64_t v = pick(rng);
    if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return values;
}

void testAgainstStdSort() {
  std::mt19937_64 rng(7);
  const int64_t big = std::numeric_limits<int64_t>::max() - 1;  // the largest coordinate there can be
  for (int64_t count = 0; count <= kRankSortMax; ++count) {
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 200}, {-1000, 1000}, {0, big}, {-big, big}}) {
      if (hi - lo + 1 < count) continue;
      std::vector<int64_t> values = distinctValues(rng, count, lo, hi);
      std::vector<int64_t> expected = values;
      std::sort(expected.begin(), expected.end());
      rankSort(values.data(), count);
      check(values == expected, "rank sort of " + std::to_string(count) + " values in [" + std::to_string(lo) +
                                    ", " + std::to_string(hi) + "]");
    }
  }
  std::vector<int64_t> sorted{1, 2, 3}, reversed{3, 2, 1};
  rankSort(reversed.data(), 3);
  check(reversed == sorted, "reversed input");
}

}  // namespace

int main() {
  testAgainstStdSort();
  std::printf("%s\n", failures ? "FAILED" : "all small sort tests passed");
  return failures ? 1 : 0;
}
