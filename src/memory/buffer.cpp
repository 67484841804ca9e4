#include "memory/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "memory/allocation_limit.hpp"

namespace coiter {

Buffer Buffer::allocate(DType type, int64_t length, const std::string& what) {
  const size_t bytes = checkedArrayBytes(length, type, [&] { return what; });
  // calloc: the OS hands out zero pages lazily, so large zeroed arrays cost nothing until touched.
  void* p = std::calloc(bytes == 0 ? 1 : bytes, 1);
  if (!p) throw std::bad_alloc();
  Buffer b;
  b.type_ = type;
  b.length_ = length;
  b.data_ = p;
  b.owner_ = std::shared_ptr<void>(p, std::free);
  return b;
}

Buffer Buffer::borrow(DType type, int64_t length, void* data, std::shared_ptr<void> owner) {
  Buffer b;
  b.type_ = type;
  b.length_ = length;
  b.data_ = data;
  b.owner_ = std::move(owner);
  return b;
}

Buffer Buffer::fromIndices(const std::vector<int64_t>& values, DType indexType) {
  Buffer b = allocate(indexType, static_cast<int64_t>(values.size()));
  if (indexType == DType::Int64) {
    if (!values.empty()) std::memcpy(b.data(), values.data(), values.size() * sizeof(int64_t));
  } else {
    int32_t* out = b.as<int32_t>();
    for (size_t k = 0; k < values.size(); ++k) out[k] = static_cast<int32_t>(values[k]);
  }
  return b;
}

Buffer Buffer::copy() const {
  Buffer b = allocate(type_, length_);
  if (bytes()) std::memcpy(b.data(), data_, bytes());
  return b;
}

}  // namespace coiter
