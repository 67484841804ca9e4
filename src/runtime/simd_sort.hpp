// Sorting a workspace row's coordinates with vector instructions: Intel's x86-simd-sort
// (third_party/, the library NumPy's np.sort uses), compiled for AVX-512 and for AVX2 and
// chosen at load time from what the CPU has. Its sorting networks sort tens to hundreds of
// values without a branch to mispredict: measured on Zen 4, 36 random coordinates in 82 ns
// (AVX-512) or 116 ns (AVX2), where std::sort takes 530 ns and a vectorized rank sort took 143.
#pragma once
#include <cstdint>

namespace coiter {

// Up to this many entries the vector sort is used (above, its partitioning loses to radix
// sort: 2.4 us against 1.3 us for 400 random coordinates).
constexpr int64_t kSimdSortMax = 256;

// Whether this CPU runs the vector sort (x86-64 with AVX2 or AVX-512).
bool hasSimdSort();
// Sorts list[0, count) ascending; hasSimdSort() must be true.
void simdSort(int64_t* list, int64_t count);

// The builds for each instruction set (simd_sort_avx512.cpp, simd_sort_avx2.cpp).
void simdSortAvx512(int64_t* list, int64_t count);
void simdSortAvx2(int64_t* list, int64_t count);

}  // namespace coiter
