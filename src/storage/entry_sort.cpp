#include "storage/entry_sort.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace coiter {
namespace {

bool lexLess(const std::vector<std::vector<int64_t>>& keys, size_t first, int64_t a, int64_t b) {
  for (size_t l = first; l < keys.size(); ++l) {
    if (keys[l][a] != keys[l][b]) return keys[l][a] < keys[l][b];
  }
  return false;
}

bool lexEqual(const std::vector<std::vector<int64_t>>& keys, int64_t a, int64_t b) {
  for (const auto& k : keys)
    if (k[a] != k[b]) return false;
  return true;
}

// A stable permutation that sorts the entries; empty when they are sorted already.
std::vector<int64_t> sortingPermutation(const std::vector<std::vector<int64_t>>& keys,
                                        const std::vector<int64_t>& extents, int64_t n) {
  bool sorted = true;
  for (int64_t e = 1; e < n && sorted; ++e) sorted = !lexLess(keys, 0, e, e - 1);
  if (sorted || keys.empty()) return {};

  std::vector<int64_t> perm(n);
  const int64_t extent0 = extents.empty() ? -1 : extents[0];
  if (extent0 >= 0 && extent0 <= 2 * n + 4096) {
    // Counting sort by the first key (stable), then fix up each group by the other keys.
    std::vector<int64_t> start(extent0 + 1, 0);
    for (int64_t e = 0; e < n; ++e) ++start[keys[0][e] + 1];
    for (int64_t c = 0; c < extent0; ++c) start[c + 1] += start[c];
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t e = 0; e < n; ++e) perm[next[keys[0][e]]++] = e;
    if (keys.size() > 1) {
      auto less = [&](int64_t a, int64_t b) { return lexLess(keys, 1, a, b); };
      for (int64_t c = 0; c < extent0; ++c) {
        auto lo = perm.begin() + start[c], hi = perm.begin() + start[c + 1];
        if (hi - lo > 1 && !std::is_sorted(lo, hi, less)) std::stable_sort(lo, hi, less);
      }
    }
  } else {
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return lexLess(keys, 0, a, b); });
  }
  return perm;
}

}  // namespace

SortedEntries sortEntries(std::vector<std::vector<int64_t>> keys,
                          const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates) {
  const int64_t n = values.length();
  std::vector<int64_t> perm = sortingPermutation(keys, extents, n);
  SortedEntries out;
  const size_t width = dtypeSize(values.dtype());
  out.values = Buffer::allocate(values.dtype(), n);
  if (perm.empty()) {
    out.keys = std::move(keys);
    if (n) std::memcpy(out.values.data(), values.data(), values.bytes());
  } else {
    out.keys.resize(keys.size());
    for (size_t l = 0; l < keys.size(); ++l) {
      out.keys[l].resize(n);
      for (int64_t e = 0; e < n; ++e) out.keys[l][e] = keys[l][perm[e]];
      std::vector<int64_t>().swap(keys[l]);  // release as we go
    }
    const char* src = static_cast<const char*>(values.data());
    char* dst = static_cast<char*>(out.values.data());
    for (int64_t e = 0; e < n; ++e) std::memcpy(dst + e * width, src + perm[e] * width, width);
  }

  // Combine runs of equal keys.
  for (int64_t e = 1; e < n && !out.hadDuplicates; ++e)
    out.hadDuplicates = lexEqual(out.keys, e, e - 1);
  if (!out.hadDuplicates || !sumDuplicates) return out;
  int64_t kept = 0;
  dispatchDType(values.dtype(), [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    T* v = out.values.as<T>();
    for (int64_t e = 0; e < n; ++e) {
      if (kept > 0 && lexEqual(out.keys, e, kept - 1)) {
        v[kept - 1] = addValues(v[kept - 1], v[e]);
        continue;
      }
      for (auto& k : out.keys) k[kept] = k[e];
      v[kept++] = v[e];
    }
  });
  for (auto& k : out.keys) k.resize(kept);
  Buffer shrunk = Buffer::allocate(values.dtype(), kept);
  if (kept) std::memcpy(shrunk.data(), out.values.data(), kept * width);
  out.values = shrunk;
  return out;
}

}  // namespace coiter
