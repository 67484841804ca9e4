// The size check that arrays whose length follows from a tensor's shape pass before they are
// allocated. A shape can declare any extents (a Matrix Market header, a FROSTT coordinate, a
// call to asformat), and a dense level has one position per coordinate of its mode, the pos
// array below it one more: a length times an element size that overflows 64 bits would wrap
// to a small allocation that is then written past its end, and an array larger than the
// machine's memory either fails deep inside or, under overcommit, is granted and gets the
// process killed once its pages are touched. Both are refused up front, as a ShapeError that
// names the array.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memory/dtype.hpp"

namespace coiter {

// This machine's physical memory in bytes: no single array may be larger.
uint64_t physicalMemoryBytes();

// Throws the ShapeError for an array of `length` elements of `type` that does not fit.
[[noreturn]] void refuseArray(int64_t length, DType type, const std::string& what);

// Bytes of `length` elements of `type`. ShapeError when they overflow or exceed physical
// memory, its message starting with what() ("level 1 (compressed) of a csr tensor of shape
// (...): array 'pos'"), which is called only then: kernel calls check every result array.
template <typename Describe>
size_t checkedArrayBytes(int64_t length, DType type, Describe&& what) {
  size_t bytes = 0;
  if (length < 0 || __builtin_mul_overflow(static_cast<uint64_t>(length), dtypeSize(type), &bytes) ||
      bytes > physicalMemoryBytes()) {
    refuseArray(length, type, what());
  }
  return bytes;
}

// Bytes of a dense array of `shape` holding `type`, checked as checkedArrayBytes checks them
// (the element count is a product of extents, checked for overflow first).
size_t checkedDenseArrayBytes(const std::vector<int64_t>& shape, DType type, const std::string& what);

}  // namespace coiter
