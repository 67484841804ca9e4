#include "runtime/runtime_functions.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/interrupts.hpp"
#include "runtime/parallel_runtime.hpp"
#include "runtime/result_memory.hpp"
#include "runtime/simd_sort.hpp"

namespace coiter {

namespace {

// Sorts list[0, count) of coordinates >= lo, < lo + 2^(8 * digits), by LSD radix with 8-bit
// digits: above a hundred or so entries it beats std::sort's comparisons, whose branches
// mispredict on random coordinates (measured: 3.3 against 24 ns per entry at 400 entries),
// and the vector sort, whose partitioning loses to it above a few hundred.
void radixSort(int64_t* list, int64_t count, int64_t lo, int digits) {
  thread_local std::vector<int64_t> scratch;
  if (static_cast<int64_t>(scratch.size()) < count) scratch.resize(static_cast<size_t>(count));
  int64_t* from = list;
  int64_t* to = scratch.data();
  for (int digit = 0; digit < digits; ++digit) {
    int shift = 8 * digit;
    int64_t start[257] = {0};
    for (int64_t n = 0; n < count; ++n) ++start[((from[n] - lo) >> shift & 255) + 1];
    for (int b = 0; b < 256; ++b) start[b + 1] += start[b];
    for (int64_t n = 0; n < count; ++n) to[start[(from[n] - lo) >> shift & 255]++] = from[n];
    std::swap(from, to);
  }
  if (from != list) std::copy(from, from + count, list);
}

// Below this many entries std::sort beats radix sort (on CPUs without the vector sort).
constexpr int64_t kRadixSortMin = 128;

// Sorts list[0, count) of distinct values in [lo, lo + 64 * words) by setting a bit for each
// and reading the bits back in order: linear in count + words, the way to sort coordinates
// that lie close together (rows of banded and blocked products).
void bitmapSort(int64_t* list, int64_t count, int64_t lo, int64_t words) {
  thread_local std::vector<uint64_t> bits;  // all zero between calls
  if (static_cast<int64_t>(bits.size()) < words) bits.resize(static_cast<size_t>(words));
  for (int64_t n = 0; n < count; ++n) {
    uint64_t offset = static_cast<uint64_t>(list[n] - lo);
    bits[offset >> 6] |= uint64_t{1} << (offset & 63);
  }
  int64_t n = 0;
  for (int64_t w = 0; w < words; ++w) {
    uint64_t word = bits[w];
    bits[w] = 0;
    for (; word != 0; word &= word - 1) list[n++] = lo + 64 * w + __builtin_ctzll(word);
  }
}

// Digits (bytes) of radix sort for values lo .. hi.
int radixDigits(int64_t lo, int64_t hi) {
  int digits = 0;
  for (uint64_t span = static_cast<uint64_t>(hi - lo); span > 0; span >>= 8) ++digits;
  return digits;
}

// Above the vector sort's networks and up to this many entries, rows are sorted by splitting.
constexpr int64_t kSplitSortMax = 1024;

// Sorts data[0, count) of distinct values in [lo, hi] by splitting them at the middle of that
// range (a branchless pass into `other`, the same positions of a second buffer) until each part
// fits the vector sort's networks. The sorted values end in the list's buffer: data when
// `inList`, else other. Random rows split evenly (300-500 entries take one split: 3.2 ns per
// entry against radix sort's 6, whose passes over a row this short are bound by the chain of
// increments of a few counters); a skewed part still too large after `depth` splits is sorted by
// radix.
void splitSort(int64_t* data, int64_t* other, bool inList, int64_t count, int64_t lo, int64_t hi, int depth) {
  if (count <= kSimdSortMax || depth == 0) {
    if (count <= kSimdSortMax) {
      simdSort(data, count);
    } else {
      radixSort(data, count, lo, radixDigits(lo, hi));
    }
    if (!inList) std::copy(data, data + count, other);
    return;
  }
  int64_t mid = lo + (hi - lo) / 2;  // values up to mid go first
  int64_t front = 0, back = count - 1;
  for (int64_t n = 0; n < count; ++n) {
    // Written at both ends; only the end whose cursor moves keeps it (the other is overwritten).
    int64_t x = data[n];
    other[front] = x;
    other[back] = x;
    bool low = x <= mid;
    front += low;
    back -= !low;
  }
  splitSort(other, data, !inList, front, lo, mid, depth - 1);
  splitSort(other + front, data + front, !inList, count - front, mid + 1, hi, depth - 1);
}

// Sorts list[0, count) of distinct values (count >= 2): by bitmap when they span at most 64
// times their count, else by vector sorting networks (or std::sort) when up to a few
// hundred, by splitting into parts the networks sort up to a thousand, else by radix.
void sortDistinct(int64_t* list, int64_t count) {
  auto [low, high] = std::minmax_element(list, list + count);
  int64_t lo = *low, hi = *high;
  uint64_t words = static_cast<uint64_t>(hi - lo) / 64 + 1;
  bool simd = hasSimdSort();
  if (words <= static_cast<uint64_t>(count)) {
    bitmapSort(list, count, lo, static_cast<int64_t>(words));
  } else if (count <= kSimdSortMax && simd) {
    simdSort(list, count);
  } else if (count <= kSplitSortMax && simd) {
    thread_local std::vector<int64_t> scratch;
    if (static_cast<int64_t>(scratch.size()) < count) scratch.resize(static_cast<size_t>(count));
    splitSort(list, scratch.data(), true, count, lo, hi, 4);
  } else if (count < kRadixSortMin) {
    std::sort(list, list + count);
  } else {
    radixSort(list, count, lo, radixDigits(lo, hi));
  }
}

// The coordinates list[base, base + count) a workspace touched (a dense workspace's marked
// columns, a hashed workspace's keys: distinct either way), sorted before they are appended
// to an ordered level.
extern "C" void coiter_rt_sort_coordinates(int64_t* list, int64_t base, int64_t count) {
  if (count >= 2) sortDistinct(list + base, count);
}

extern "C" void* coiter_rt_grow_array(void* array, int64_t bytes, int64_t newBytes) {
  return growResultArray(array, static_cast<size_t>(bytes), static_cast<size_t>(newBytes));
}

}  // namespace

const std::vector<RuntimeFunctionInfo>& runtimeFunctions() {
  static const std::vector<RuntimeFunctionInfo> table = {
      {RuntimeFunction::SortCoordinates, runtimeSymbol(RuntimeFunction::SortCoordinates),
       "void (*%s)(int64_t*, int64_t, int64_t)", reinterpret_cast<void*>(&coiter_rt_sort_coordinates)},
      {RuntimeFunction::ParallelFor, runtimeSymbol(RuntimeFunction::ParallelFor),
       "void (*%s)(void (*)(void*, int64_t, int64_t, int64_t), void*, int64_t, int64_t, int64_t, "
       "int32_t)",
       reinterpret_cast<void*>(&coiter_rt_parallel_for)},
      {RuntimeFunction::NumThreads, runtimeSymbol(RuntimeFunction::NumThreads), "int64_t (*%s)(void)",
       reinterpret_cast<void*>(&coiter_rt_num_threads)},
      {RuntimeFunction::GrowArray, runtimeSymbol(RuntimeFunction::GrowArray), "void* (*%s)(void*, int64_t, int64_t)",
       reinterpret_cast<void*>(&coiter_rt_grow_array)},
      // A variable: the C engine points the library's `volatile int32_t*` at it; the LLVM
      // engine defines the symbol at its address (the kernel reads it as a global).
      {RuntimeFunction::InterruptFlag, runtimeSymbol(RuntimeFunction::InterruptFlag), "volatile int32_t* %s",
       const_cast<int32_t*>(&coiter_rt_interrupt_flag)},
  };
  return table;
}

const RuntimeFunctionInfo& runtimeFunction(RuntimeFunction id) {
  for (const auto& f : runtimeFunctions()) {
    if (f.id == id) return f;
  }
  return runtimeFunctions().front();
}

}  // namespace coiter
