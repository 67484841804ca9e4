#include "runtime/simd_sort.hpp"

namespace coiter {

namespace {

using SortFunction = void (*)(int64_t*, int64_t);

// The widest build this CPU runs; null when it has neither (or is not x86-64).
SortFunction pickSimdSort() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw"))
    return &simdSortAvx512;
  if (__builtin_cpu_supports("avx2")) return &simdSortAvx2;
#endif
  return nullptr;
}

SortFunction simdSortFunction() {
  static const SortFunction chosen = pickSimdSort();
  return chosen;
}

}  // namespace

bool hasSimdSort() { return simdSortFunction() != nullptr; }

void simdSort(int64_t* list, int64_t count) { simdSortFunction()(list, count); }

}  // namespace coiter
