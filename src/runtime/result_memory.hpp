// Memory for result arrays: malloc'd (kernels grow them through growResultArray), handed to
// NumPy-owned Buffers once a kernel returns.
//
// Large arrays are recycled. Fresh memory from the system costs a page fault and the zeroing
// of a page on first touch; for kernels that stream their result (a sparse sum writes ~12
// bytes per entry) that cost rivals the kernel itself, and glibc returns large blocks to the
// system or keeps them depending on its own heuristics (call order, thread, size). So blocks of
// at least kRecycledMinBytes are kept, up to kRecycledPoolBytes in all, when a result is freed
// or a scratch array is done, and handed out again to the next request they fit.
#pragma once
#include <cstddef>
#include <cstdlib>

namespace coiter {

constexpr size_t kRecycledMinBytes = size_t{1} << 20;
constexpr size_t kRecycledPoolBytes = size_t{256} << 20;

struct MallocDeleter {
  void operator()(void* p) const { std::free(p); }
};

// An array of at least `bytes` bytes (zeroed when `zero`): a recycled block when one fits
// (between `bytes` and twice that), else fresh memory, advised to use transparent huge pages
// when large. Freed with std::free or releaseResultArray. Throws std::bad_alloc.
void* allocateResultArray(size_t bytes, bool zero);

// The array `array` of `bytes` bytes grown to `newBytes` (its contents kept), like realloc:
// null when memory runs out, the old array then untouched. A large array moves to a recycled
// block when one fits, and is otherwise reallocated, its new part on huge pages.
void* growResultArray(void* array, size_t bytes, size_t newBytes);

// Gives back an array of at least `bytes` bytes from allocateResultArray or realloc: kept
// for reuse when large and the pool has room, else freed.
void releaseResultArray(void* p, size_t bytes);

// Copies `bytes` bytes from `src` into the result array at `dst` (not overlapping). Large
// copies use non-temporal stores: the destination is not read again soon, and streaming it
// skips reading each cache line before it is overwritten, a third of a copy's memory traffic.
void copyIntoResultArray(void* dst, const void* src, size_t bytes);

// Bytes of arrays kept for reuse now.
size_t recycledResultBytes();

}  // namespace coiter
