#include "format/levels/level_checks.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace coiter {

const Buffer& checkedArray(const LevelStorage& s, const std::string& name, int64_t length,
                           const LevelDescription& where) {
  auto it = s.arrays.find(name);
  if (it == s.arrays.end()) throw FormatError(where + ": missing array '" + name + "'");
  const Buffer& b = it->second;
  if (!isIndexDType(b.dtype()))
    throw FormatError(where + ": array '" + name + "' must be int32 or int64, not " + dtypeName(b.dtype()));
  if (length >= 0 && b.length() != length)
    throw FormatError(where + ": array '" + name + "' has length " + std::to_string(b.length()) + ", expected " +
                      std::to_string(length));
  return b;
}

int64_t checkedScalar(const LevelStorage& s, const std::string& name, const LevelDescription& where) {
  auto it = s.scalars.find(name);
  if (it == s.scalars.end()) throw FormatError(where + ": missing parameter '" + name + "'");
  return it->second;
}

namespace {

// Index arrays are scanned in blocks of this many elements, each with branch-free (vector)
// reductions; only a block that holds a violation is searched element by element for the
// message. Validation runs on every call that passes SciPy or NumPy arrays, so it must cost
// a memory pass, not a branch per element.
constexpr int64_t kScanBlock = 256;

// Whether v[0 .. kScanBlock) all lie in [lo, last], compared at the elements' own width so
// that the loop vectorizes.
template <typename I>
bool blockInRange(const I* v, I lo, I last) {
  unsigned bad = 0;
  for (int64_t k = 0; k < kScanBlock; ++k) bad |= static_cast<unsigned>(v[k] < lo) | static_cast<unsigned>(v[k] > last);
  return bad == 0;
}

template <typename I>
I clampTo(int64_t x) {
  return static_cast<I>(std::clamp<int64_t>(x, std::numeric_limits<I>::min(), std::numeric_limits<I>::max()));
}

// Elements k in [1, n) with v[k] < v[k - 1] (or <= when strict).
template <typename I>
int64_t countDescents(const I* v, int64_t n, bool strict) {
  int64_t count = 0;
  int64_t k = 1;
  for (; k + kScanBlock <= n; k += kScanBlock) {
    int32_t block = 0;
    if (strict) {
      for (int64_t q = 0; q < kScanBlock; ++q) block += v[k + q] <= v[k + q - 1];
    } else {
      for (int64_t q = 0; q < kScanBlock; ++q) block += v[k + q] < v[k + q - 1];
    }
    count += block;
  }
  for (; k < n; ++k) count += strict ? v[k] <= v[k - 1] : v[k] < v[k - 1];
  return count;
}

// Whether v[0 .. n) may descend somewhere or hold a negative value: false proves it
// non-decreasing and non-negative. The test ORs the elements and their differences (taken
// unsigned, so never undefined) and reads one sign bit: with every element non-negative no
// difference overflows, so a descent shows as a negative difference. The core's baseline
// (x86-64 without SSE4.2) has no vector compare of 64-bit elements, but has these
// subtractions and ORs: an int64 pos array took 0.54 ns an element with the compares and
// 0.1 ns with this (SciPy matrices' indptr is checked on every kernel call). Fixed-length
// blocks, so that the loop vectorizes at -O2 (GCC's very cheap cost model).
template <typename I>
bool mayDescend(const I* v, int64_t n) {
  using U = std::make_unsigned_t<I>;
  auto step = [v](int64_t k) { return static_cast<U>(v[k]) | (static_cast<U>(v[k]) - static_cast<U>(v[k - 1])); };
  U bits = n > 0 ? static_cast<U>(v[0]) : 0;
  int64_t k = 1;
  for (; k + kScanBlock <= n; k += kScanBlock) {
    U block = 0;
    for (int64_t q = 0; q < kScanBlock; ++q) block |= step(k + q);
    bits |= block;
  }
  for (; k < n; ++k) bits |= step(k);
  return static_cast<I>(bits) < 0;
}

}  // namespace

void checkRange(const Buffer& b, int64_t lo, int64_t hi, const std::string& what, const LevelDescription& where) {
  visitIndices(b, [&](auto* v) {
    const int64_t n = b.length();
    int64_t k = 0;
    using I = std::remove_const_t<std::remove_pointer_t<decltype(v)>>;
    // (When no value of I lies in [lo, hi), the loop below reports the first element.)
    if (lo < hi && lo <= std::numeric_limits<I>::max() && hi - 1 >= std::numeric_limits<I>::min()) {
      I first = clampTo<I>(lo), last = clampTo<I>(hi - 1);
      while (k + kScanBlock <= n && blockInRange(v + k, first, last)) k += kScanBlock;
    }
    for (; k < n; ++k) {
      int64_t x = v[k];
      if (x < lo || x >= hi)
        throw FormatError(where + ": " + what + "[" + std::to_string(k) + "] = " + std::to_string(x) + " is outside [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + ")");
    }
  });
}

void checkNonDecreasing(const Buffer& b, const std::string& what, const LevelDescription& where) {
  visitIndices(b, [&](auto* v) {
    // (Where the quick test fails, the exact loop finds the descent, or passes an array that
    // only holds a negative value: other checks refuse those.)
    if (!mayDescend(v, b.length())) return;
    for (int64_t k = 1; k < b.length(); ++k)
      if (v[k] < v[k - 1])
        throw FormatError(where + ": " + what + " is not non-decreasing at index " + std::to_string(k));
  });
}

UnsortedEntry findUnsortedSegmentEntry(const Buffer& pos, const Buffer& crd, int64_t parentCount, bool strict) {
  return visitIndices(crd, [&](auto* c) -> UnsortedEntry {
    auto descends = [&](int64_t k) { return strict ? c[k] <= c[k - 1] : c[k] < c[k - 1]; };
    // A descent is allowed only where a non-empty segment starts: count both kinds.
    int64_t descents = countDescents(c, crd.length(), strict);
    int64_t atStarts = 0;
    for (int64_t q = 0; q < parentCount; ++q) {
      int64_t start = pos.index(q);
      if (start > 0 && start < pos.index(q + 1)) atStarts += descends(start);
    }
    if (descents == atStarts) return {};
    for (int64_t q = 0; q < parentCount; ++q) {
      for (int64_t k = pos.index(q) + 1; k < pos.index(q + 1); ++k) {
        if (descends(k)) return {q, k};
      }
    }
    return {};  // not reached: the counts differ only when some segment descends inside
  });
}

int64_t checkedProduct(int64_t a, int64_t b, const LevelDescription& where) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    throw ShapeError(where + ": the number of positions, " + std::to_string(a) + " x " + std::to_string(b) +
                     ", overflows 64 bits");
  return a * b;
}

}  // namespace coiter
