// A vector of int64 indices whose resize() leaves new elements uninitialised: packing fills
// every element it allocates, so zeroing hundreds of megabytes first would only cost time.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace coiter {

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialisation: no zeroing for integers
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using IndexVector = std::vector<int64_t, DefaultInitAllocator<int64_t>>;

}  // namespace coiter
