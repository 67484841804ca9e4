#include "runtime/result_memory.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace coiter {

void* allocateResultArray(size_t bytes, bool zero) {
  void* p = zero ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // Large result arrays are written once, front to back: transparent huge pages cut the page
  // faults that otherwise dominate assembling them (NumPy does the same for its arrays).
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes >= 2 * kHugePage) {
    auto begin = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
    auto end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHugePage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
  return p;
}

}  // namespace coiter
