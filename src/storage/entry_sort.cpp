#include "storage/entry_sort.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace coiter {
namespace {

using Keys = std::vector<IndexVector>;

// Compares entries a and b by keys[first..].
int compareFrom(const Keys& keys, size_t first, int64_t a, int64_t b) {
  for (size_t l = first; l < keys.size(); ++l) {
    int64_t x = keys[l][a], y = keys[l][b];
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

bool sortedRange(const Keys& keys, size_t first, int64_t lo, int64_t hi) {
  for (int64_t e = lo + 1; e < hi; ++e)
    if (compareFrom(keys, first, e - 1, e) > 0) return false;
  return true;
}

// Copies element perm[e] of src to element e of dst (elements of sizeof(Word) bytes).
template <typename Word>
void gatherWords(const void* src, void* dst, const std::vector<int64_t>& perm) {
  const Word* s = static_cast<const Word*>(src);
  Word* d = static_cast<Word*>(dst);
  for (size_t e = 0; e < perm.size(); ++e) d[e] = s[perm[e]];
}

struct Bytes16 {
  char b[16];
};

// Calls f(static_cast<Word*>(nullptr)) with Word an unsigned type of `width` bytes: moving
// values only needs their size, not their type.
template <typename F>
void dispatchWidth(size_t width, F&& f) {
  switch (width) {
    case 1: return f(static_cast<uint8_t*>(nullptr));
    case 2: return f(static_cast<uint16_t*>(nullptr));
    case 4: return f(static_cast<uint32_t*>(nullptr));
    case 8: return f(static_cast<uint64_t*>(nullptr));
    default: return f(static_cast<Bytes16*>(nullptr));
  }
}

void gatherValues(const void* src, void* dst, const std::vector<int64_t>& perm, size_t width) {
  dispatchWidth(width, [&](auto* word) {
    gatherWords<std::remove_pointer_t<decltype(word)>>(src, dst, perm);
  });
}

// Moves every entry to the next free slot of its key-0 bucket (start[c] is where bucket c
// begins), in one pass over the input; key 0 itself is then written bucket by bucket.
template <typename Word>
void scatterToBucketsTyped(Keys& keys, Buffer& values, const std::vector<int64_t>& start) {
  const int64_t n = values.length();
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  std::vector<IndexVector> sortedKeys(keys.size());
  for (size_t l = 1; l < keys.size(); ++l) sortedKeys[l].resize(n);
  Buffer sortedValues = Buffer::allocate(values.dtype(), n);
  const Word* v = values.as<Word>();
  Word* sv = sortedValues.as<Word>();
  const IndexVector& key0 = keys[0];
  for (int64_t e = 0; e < n; ++e) {
    const int64_t d = next[key0[e]]++;
    for (size_t l = 1; l < keys.size(); ++l) sortedKeys[l][d] = keys[l][e];
    sv[d] = v[e];
  }
  sortedKeys[0].resize(n);
  for (size_t c = 0; c + 1 < start.size(); ++c)
    std::fill(sortedKeys[0].begin() + start[c], sortedKeys[0].begin() + start[c + 1],
              static_cast<int64_t>(c));
  keys.swap(sortedKeys);
  values = sortedValues;
}

void scatterToBuckets(Keys& keys, Buffer& values, const std::vector<int64_t>& start) {
  dispatchWidth(dtypeSize(values.dtype()), [&](auto* word) {
    scatterToBucketsTyped<std::remove_pointer_t<decltype(word)>>(keys, values, start);
  });
}

// Reorders all keys and the values by perm (entry e takes entry perm[e]).
void applyPermutation(Keys& keys, Buffer& values, const std::vector<int64_t>& perm) {
  const int64_t n = static_cast<int64_t>(perm.size());
  for (auto& key : keys) {
    IndexVector sorted(n);
    for (int64_t e = 0; e < n; ++e) sorted[e] = key[perm[e]];
    key.swap(sorted);
  }
  Buffer sorted = Buffer::allocate(values.dtype(), n);
  gatherValues(values.data(), sorted.data(), perm, dtypeSize(values.dtype()));
  values = sorted;
}

// Sorts entries [lo, hi), already equal in key 0, by the other keys; the arrays are
// contiguous here, so this stays in cache (groups are rows: short). Sorting (key 1, index)
// pairs keeps it stable and avoids indirect comparisons in the common two-key case.
void sortGroup(Keys& keys, Buffer& values, int64_t lo, int64_t hi,
               std::vector<std::pair<int64_t, int64_t>>& pairs, std::vector<int64_t>& local,
               std::vector<int64_t>& scratch, std::vector<char>& valueScratch) {
  const int64_t len = hi - lo;
  pairs.resize(len);
  for (int64_t e = 0; e < len; ++e) pairs[e] = {keys[1][lo + e], lo + e};
  if (keys.size() == 2) {
    std::sort(pairs.begin(), pairs.end());
  } else {
    std::sort(pairs.begin(), pairs.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      int c = compareFrom(keys, 2, a.second, b.second);
      return c != 0 ? c < 0 : a.second < b.second;
    });
  }
  local.resize(len);
  for (int64_t e = 0; e < len; ++e) local[e] = pairs[e].second;
  scratch.resize(len);
  for (size_t l = 1; l < keys.size(); ++l) {
    for (int64_t e = 0; e < len; ++e) scratch[e] = keys[l][local[e]];
    std::copy(scratch.begin(), scratch.end(), keys[l].begin() + lo);
  }
  const size_t width = dtypeSize(values.dtype());
  valueScratch.resize(len * width);
  gatherValues(values.data(), valueScratch.data(), local, width);
  std::memcpy(static_cast<char*>(values.data()) + lo * width, valueScratch.data(), len * width);
}

// Sorts keys and values lexicographically (stable).
void sortInPlace(Keys& keys, const std::vector<int64_t>& extents, Buffer& values) {
  const int64_t n = values.length();
  if (keys.empty() || sortedRange(keys, 0, 0, n)) return;
  const int64_t extent0 = extents.empty() ? -1 : extents[0];
  if (extent0 < 0 || extent0 > 2 * n + 4096) {  // first key too sparse to count
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](int64_t a, int64_t b) { return compareFrom(keys, 0, a, b) < 0; });
    applyPermutation(keys, values, perm);
    return;
  }
  // Counting sort by the first key (stable), then each bucket (a row, usually short) by
  // the other keys.
  std::vector<int64_t> start(extent0 + 1, 0);
  for (int64_t x : keys[0]) ++start[x + 1];
  for (int64_t c = 0; c < extent0; ++c) start[c + 1] += start[c];
  scatterToBuckets(keys, values, start);
  if (keys.size() == 1) return;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<int64_t> local, scratch;
  std::vector<char> valueScratch;
  for (int64_t c = 0; c < extent0; ++c) {
    if (start[c + 1] - start[c] > 1 && !sortedRange(keys, 1, start[c], start[c + 1]))
      sortGroup(keys, values, start[c], start[c + 1], pairs, local, scratch, valueScratch);
  }
}

}  // namespace

SortedEntries sortEntries(std::vector<IndexVector> keys,
                          const std::vector<int64_t>& extents, const Buffer& values,
                          bool sumDuplicates) {
  const int64_t n = values.length();
  SortedEntries out;
  out.values = values;  // borrowed until the first change makes an owned copy
  out.keys = std::move(keys);
  sortInPlace(out.keys, extents, out.values);

  for (int64_t e = 1; e < n && !out.hadDuplicates; ++e)
    out.hadDuplicates = compareFrom(out.keys, 0, e - 1, e) == 0;
  if (!out.hadDuplicates || !sumDuplicates) return out;
  if (out.values.data() == values.data()) out.values = values.copy();
  int64_t kept = 0;
  dispatchDType(values.dtype(), [&](auto* typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    T* v = out.values.as<T>();
    for (int64_t e = 0; e < n; ++e) {
      if (kept > 0 && compareFrom(out.keys, 0, kept - 1, e) == 0) {
        v[kept - 1] = addValues(v[kept - 1], v[e]);
        continue;
      }
      for (auto& k : out.keys) k[kept] = k[e];
      v[kept++] = v[e];
    }
  });
  for (auto& k : out.keys) k.resize(kept);
  Buffer shrunk = Buffer::allocate(values.dtype(), kept);
  if (kept) std::memcpy(shrunk.data(), out.values.data(), kept * dtypeSize(values.dtype()));
  out.values = shrunk;
  return out;
}

}  // namespace coiter
