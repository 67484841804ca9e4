// x86-simd-sort compiled for AVX2 (x86-64-v3): CMakeLists.txt gives this file alone
// the instruction set flags, and simd_sort.cpp calls it only on CPUs that have them. The
// library's functions are static, so nothing compiled here is shared with other files but
// its fallback's std::sort over int64_t* with a function-pointer comparator: no other file
// may instantiate that same specialization, or the linker could keep this file's copy for both.
// Built on x86-64 only (elsewhere std::sort sorts).
#include "runtime/simd_sort.hpp"

#include "x86simdsort-static-incl.h"

namespace coiter {

void simdSortAvx2(int64_t* list, int64_t count) { x86simdsortStatic::qsort(list, static_cast<size_t>(count)); }

}  // namespace coiter
