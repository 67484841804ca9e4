// Memory for result arrays: what kernels append to (growing it through growResultArray), handed
// to NumPy-owned Buffers once a kernel returns.
//
// Small arrays come from malloc. Large ones (kMappedMinBytes and up) are mappings of their own:
//   - grown by mremap, which moves their pages to a larger range without copying a byte
//     (realloc would do the same for its own large blocks, but refuses once part of a block is
//     advised differently, and then copies);
//   - aligned to 2 MiB and, from 64 MiB on, advised as a whole to use transparent huge pages:
//     they are written once, front to back, and 4 KiB pages would cost a fault and a release
//     each (smaller ones are not: a first write could wait for the system to compact memory
//     into a huge page, result_memory.cpp);
//   - recycled. Fresh pages cost a fault and a zeroing on first touch; for kernels that stream
//     their result (a sparse sum writes ~12 bytes per entry) that rivals the kernel itself. So
//     released mappings are kept and handed to the next request they fit: up to
//     kRecycledPoolBytes in all as they are, and beyond that, up to lazyPoolBytes(), lazily
//     freed (MADV_FREE): the system takes their pages whenever it needs memory, and until it
//     does a reuse costs no fault (SpGEMM's 680 MB result on cop20k_A spent a third of each
//     call faulting fresh pages in).
// A registry of the mappings tells releaseResultArray how to free any array, whatever size its
// holder believes it has.
#pragma once
#include <cstddef>

#include "memory/buffer.hpp"

namespace coiter {

constexpr size_t kMappedMinBytes = size_t{1} << 20;
constexpr size_t kRecycledPoolBytes = size_t{256} << 20;
// The most bytes of mappings kept in all, lazily freed past kRecycledPoolBytes: an eighth of
// the machine's memory, at most 4 GiB and at least kRecycledPoolBytes.
size_t lazyPoolBytes();

// An array of at least `bytes` bytes (zeroed when `zero`): the smallest kept mapping that fits
// (growing into the rest of it costs nothing), else fresh memory. Freed with
// releaseResultArray. Throws std::bad_alloc.
void* allocateResultArray(size_t bytes, bool zero);

// The array `array` (null, or from allocateResultArray or growResultArray) grown to `newBytes`,
// its first `bytes` bytes kept, like realloc: null when memory runs out, the old array then
// untouched.
void* growResultArray(void* array, size_t bytes, size_t newBytes);

// Lets the system take back the pages of a mapped array past its first `bytes` bytes whenever it
// needs memory (their contents are lost then); until it does, they are kept for the array's
// reuse once released. A malloc'd array is left as it is.
void trimResultArray(void* array, size_t bytes);

// Frees an array from allocateResultArray or growResultArray (null is ignored): a mapping is
// kept for reuse when the pool has room, else unmapped.
void releaseResultArray(void* array);

struct ResultArrayDeleter {
  void operator()(void* array) const { releaseResultArray(array); }
};

// A Buffer of `length` elements owning `array` (from allocateResultArray or growResultArray),
// which it releases.
inline Buffer resultBuffer(DType type, int64_t length, void* array) {
  return Buffer::borrow(type, length, array, std::shared_ptr<void>(array, ResultArrayDeleter{}));
}

// Copies `bytes` bytes from `src` into the result array at `dst` (not overlapping). Large
// copies use non-temporal stores: the destination is not read again soon, and streaming it
// skips reading each cache line before it is overwritten, a third of a copy's memory traffic.
void copyIntoResultArray(void* dst, const void* src, size_t bytes);

// Bytes of mappings kept for reuse now.
size_t recycledResultBytes();

// Bytes of fresh mappings made since the process started (for new arrays and for growing
// ones): what kernels paid page faults for. A kernel called again on the same data should
// add nothing (tests, and the benchmarks' warm-up checks).
size_t freshResultBytes();

// Whether `array` is a mapping of its own (for tests).
bool isMappedResultArray(const void* array);

}  // namespace coiter
