#include "runtime/result_memory.hpp"

#include <sys/mman.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

namespace coiter {

namespace {

// Blocks kept for reuse, oldest first; evicted oldest first when a new one needs room.
class RecycledBlocks {
 public:
  static RecycledBlocks& instance() {
    static RecycledBlocks* blocks = new RecycledBlocks();  // never destroyed: used until exit
    return *blocks;
  }
  // The smallest kept block of `bytes` to 2 * `bytes` bytes, or null.
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->second >= bytes && it->second / 2 <= bytes && (best == blocks_.end() || it->second < best->second)) {
        best = it;
      }
    }
    if (best == blocks_.end()) return nullptr;
    void* p = best->first;
    held_ -= best->second;
    blocks_.erase(best);
    return p;
  }
  void give(void* p, size_t bytes) {
    std::deque<void*> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes > kRecycledPoolBytes) {
        evicted.push_back(p);
      } else {
        while (held_ + bytes > kRecycledPoolBytes) {
          evicted.push_back(blocks_.front().first);
          held_ -= blocks_.front().second;
          blocks_.pop_front();
        }
        blocks_.emplace_back(p, bytes);
        held_ += bytes;
      }
    }
    for (void* block : evicted) std::free(block);  // outside the lock
  }

  size_t held() {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_;
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<void*, size_t>> blocks_;
  size_t held_ = 0;
};

void adviseHugePages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  // Large result arrays are written once, front to back: transparent huge pages cut the page
  // faults that otherwise dominate assembling them (NumPy does the same for its arrays).
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes >= 2 * kHugePage) {
    auto begin = (reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
    auto end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHugePage - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace

void* allocateResultArray(size_t bytes, bool zero) {
  if (bytes >= kRecycledMinBytes) {
    if (void* p = RecycledBlocks::instance().take(bytes)) {
      if (zero) std::memset(p, 0, bytes);
      return p;
    }
  }
  void* p = zero ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  adviseHugePages(p, bytes);
  return p;
}

void* growResultArray(void* array, size_t bytes, size_t newBytes) {
  if (newBytes >= kRecycledMinBytes) {
    // A recycled block is already mapped: copying into it costs less than the new pages a
    // remap would fault in and zero.
    if (void* recycled = RecycledBlocks::instance().take(newBytes)) {
      if (array) std::memcpy(recycled, array, std::min(bytes, newBytes));
      releaseResultArray(array, bytes);
      return recycled;
    }
  }
  // Otherwise realloc, which moves a large block by remapping its pages (no copy); the new
  // part is advised to use huge pages like a fresh array.
  void* grown = std::realloc(array, newBytes ? newBytes : 1);
  if (grown) adviseHugePages(grown, newBytes);
  return grown;
}

void releaseResultArray(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < kRecycledMinBytes) {
    std::free(p);
    return;
  }
  RecycledBlocks::instance().give(p, bytes);
}

void copyIntoResultArray(void* dst, const void* src, size_t bytes) {
#if defined(__SSE2__)
  constexpr size_t kStreamMinBytes = size_t{256} << 10;  // smaller copies stay in cache
  if (bytes >= kStreamMinBytes) {
    auto* out = static_cast<char*>(dst);
    const auto* in = static_cast<const char*>(src);
    size_t head = (16 - (reinterpret_cast<uintptr_t>(out) & 15)) & 15;
    std::memcpy(out, in, head);
    size_t k = head;
    for (; k + 64 <= bytes; k += 64) {
      for (size_t q = 0; q < 64; q += 16) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + k + q));
        _mm_stream_si128(reinterpret_cast<__m128i*>(out + k + q), v);
      }
    }
    std::memcpy(out + k, in + k, bytes - k);
    _mm_sfence();  // the streamed stores are visible before the result is handed out
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

size_t recycledResultBytes() { return RecycledBlocks::instance().held(); }

}  // namespace coiter
