// A typed, contiguous array that either owns its memory or borrows another owner's
// (a NumPy array, kept alive through `owner`). Tensors keep values and level arrays in
// Buffers so kernels can read NumPy/SciPy memory without copying it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memory/dtype.hpp"

namespace coiter {

class Buffer {
 public:
  Buffer() = default;
  // Allocates `length` zero-initialised elements owned by the buffer. A length beyond the
  // machine's memory raises ShapeError naming `what` (see allocation_limit.hpp).
  static Buffer allocate(DType type, int64_t length, const std::string& what = "an array");
  // Wraps memory owned by `owner` (which must keep `data` alive).
  static Buffer borrow(DType type, int64_t length, void* data, std::shared_ptr<void> owner);
  // Copies an index vector into a new buffer of the given index width.
  static Buffer fromIndices(const std::vector<int64_t>& values, DType indexType);

  DType dtype() const { return type_; }
  int64_t length() const { return length_; }
  void* data() const { return data_; }
  size_t bytes() const { return static_cast<size_t>(length_) * dtypeSize(type_); }
  const std::shared_ptr<void>& owner() const { return owner_; }
  bool valid() const { return owner_ != nullptr || length_ == 0; }

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

  // Reads element k of an int32 or int64 buffer.
  int64_t index(int64_t k) const {
    return type_ == DType::Int32 ? static_cast<int64_t>(as<int32_t>()[k]) : as<int64_t>()[k];
  }
  Buffer copy() const;

 private:
  DType type_ = DType::Int64;
  int64_t length_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

// Calls f(ptr) with ptr typed int32_t* or int64_t* according to the buffer's width.
template <typename F>
decltype(auto) visitIndices(const Buffer& b, F&& f) {
  if (b.dtype() == DType::Int32) return f(b.as<int32_t>());
  return f(b.as<int64_t>());
}

// Copies elements [begin, end) of an index buffer into `out`, widened to int64.
inline void copyIndices(const Buffer& b, int64_t begin, int64_t end, int64_t* out) {
  visitIndices(b, [&](const auto* p) {
    for (int64_t k = begin; k < end; ++k) out[k - begin] = static_cast<int64_t>(p[k]);
  });
}

}  // namespace coiter
