#include "runtime/result_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

namespace coiter {

namespace {

// `bytes` (at least 1) rounded up to a multiple of `unit`.
size_t roundUp(size_t bytes, size_t unit) { return (std::max<size_t>(bytes, 1) + unit - 1) / unit * unit; }

size_t roundToPages(size_t bytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return roundUp(bytes, page);
}

constexpr size_t kHugePage = size_t{2} << 20;
// Fresh mappings from this size on are advised to use transparent huge pages; smaller ones get
// 4 KiB pages. Where the system compacts memory to find a huge page at the fault (THP defrag
// "madvise", a common default), a first write into an advised mapping could stall for
// milliseconds: in a fresh process, two threads' first SpAdd of 0.68 M entries (a 2 ms kernel
// whose result and chunk arrays, 1-10 MiB each, are mostly small mappings) took 10-18 ms with
// every mapping advised and 4.6-5.8 ms with none, one thread's 6.7-14.6 ms against 6.1-6.8 ms
// (2026-11-27, load 0.2, thread pools idle); later calls reuse their mappings either way. A
// result this large pays a fault per 4 KiB page otherwise, thousands more than its stalls.
// Measured again (2026-11-27, a fresh process's first SpAdd of 1 M + 1 M entries, 28 MB of
// result; steady state 19-21 ms): with NumPy's threshold (4 MiB) the faults fell from 9,800 to
// 40, but the first call took 21-80 ms (system time 4-52 ms: compaction) against 41-50 ms;
// pre-faulting each fresh mapping (MADV_POPULATE_WRITE, or MAP_POPULATE) left the system time
// as it was (the zeroing and the page tables are the cost, not the faults' entries) and made
// two threads' first call slower (their chunk arrays are sized for the worst case). SciPy's
// own first A + B in a fresh process takes 29-49 ms against 21-23.
constexpr size_t kHugeAdviceMinBytes = size_t{64} << 20;

// Mappings span whole huge pages: the pages of a partial last 2 MiB cannot be one huge page, and
// each growth would leave such a tail of 4 KiB pages behind (SpGEMM on cop20k_A, whose 680 MB
// result grows four times, took 4,500 faults a call instead of 1,600, and up to 0.3 s more
// system time).
size_t roundToHugePages(size_t bytes) { return roundUp(bytes, kHugePage); }
// Larger requests fail at once (no system has the memory, and rounding them up would overflow).
constexpr size_t kMaxMappingBytes = size_t{1} << 62;

// `bytes` bytes of fresh zero pages starting at a multiple of the huge page size (so that every
// 2 MiB of the range can be one huge page), advised to use transparent huge pages when large
// (kHugeAdviceMinBytes): result arrays
// are written once, front to back, and 4 KiB pages would cost a fault (and later a release)
// each. Null when the system has no memory to give.
std::atomic<size_t> freshBytes{0};

void* mapPages(size_t bytes) {
  size_t reserved = bytes + kHugePage;
  void* p = mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(p);
  uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(p, aligned - start);
  if (start + reserved > aligned + bytes)
    munmap(reinterpret_cast<void*>(aligned + bytes), start + reserved - aligned - bytes);
#ifdef MADV_HUGEPAGE
  // The whole mapping, so that it stays one area of the address space (mremap moves only one).
  if (bytes >= kHugeAdviceMinBytes) madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(aligned);
}

// The mapping p of `bytes` bytes grown to `newBytes` (page multiples): its pages moved, not
// copied, to a range aligned like mapPages's; null on failure, p then untouched.
void* remapPages(void* p, size_t bytes, size_t newBytes) {
  void* target = mapPages(newBytes);  // holds the aligned range the pages move to
  if (!target) return nullptr;
#if defined(__linux__)
  void* q = mremap(p, bytes, newBytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (q != MAP_FAILED) return q;
  munmap(target, newBytes);
  return nullptr;
#else
  std::memcpy(target, p, bytes);
  munmap(p, bytes);
  return target;
#endif
}

// Every mapping handed out and not yet unmapped (its size), and those of them released and kept
// for reuse, oldest first: evicted oldest first when a new one needs room.
class Mappings {
 public:
  static Mappings& instance() {
    static Mappings* mappings = new Mappings();  // never destroyed: used until exit
    return *mappings;
  }

  // A mapping of at least `bytes` bytes: the smallest kept one that fits, else fresh (*fresh
  // says which); null when out of memory. A kept mapping larger than asked is handed out whole:
  // the kernel filling it usually grows it (a result's first size is a guess), and a result gives
  // back what it did not use when the kernel returns.
  void* take(size_t bytes, bool* fresh) {
    if (bytes > kMaxMappingBytes) return nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = kept_.end();
      for (auto it = kept_.begin(); it != kept_.end(); ++it) {
        if (it->second >= bytes && (best == kept_.end() || it->second < best->second)) {
          best = it;
        }
      }
      if (best != kept_.end()) {
        void* p = best->first;
        keptBytes_ -= best->second;
        kept_.erase(best);
        *fresh = false;
        return p;
      }
    }
    size_t mapped = roundToHugePages(bytes);
    void* p = mapPages(mapped);
    if (!p) return nullptr;
    freshBytes.fetch_add(mapped, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[p] = mapped;
    *fresh = true;
    return p;
  }

  // The mapped size of p, or 0 when p is not a mapping.
  size_t size(const void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sizes_.find(const_cast<void*>(p));
    return it == sizes_.end() ? 0 : it->second;
  }

  // The mapping p of `mapped` bytes grown to at least `bytes` bytes: p itself when it has room;
  // null on failure.
  void* grow(void* p, size_t mapped, size_t bytes) {
    if (bytes <= mapped) return p;
    if (bytes > kMaxMappingBytes) return nullptr;
    size_t newMapped = roundToHugePages(bytes);
    void* q = remapPages(p, mapped, newMapped);
    if (!q) return nullptr;
    freshBytes.fetch_add(newMapped - mapped, std::memory_order_relaxed);  // (p's pages moved)
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_.erase(p);
    sizes_[q] = newMapped;
    return q;
  }

  // Lets the system take back the pages of mapping p past its first `bytes` bytes (whole pages
  // only) when it needs them (MADV_FREE): until then they stay mapped, so the mapping keeps its
  // size and, recycled, is written again without faults.
  void trim(void* p, size_t bytes) {
#ifdef MADV_FREE
    size_t mapped = size(p), keep = roundToPages(bytes);
    if (keep < mapped) madvise(static_cast<char*>(p) + keep, mapped - keep, MADV_FREE);
#else
    (void)p;
    (void)bytes;
#endif
  }

  // Takes back mapping p (false when p is not one): kept when the pool has room (lazily freed
  // past kRecycledPoolBytes), else unmapped.
  bool release(void* p) {
    size_t bytes = size(p);
    if (bytes == 0) return false;
    const size_t limit = lazyPoolBytes();
#ifdef MADV_FREE
    // Before p is in the pool, where another thread may take it and write it at once.
    if (bytes <= limit && keptBytes() + bytes > kRecycledPoolBytes) madvise(p, bytes, MADV_FREE);
#endif
    std::vector<std::pair<void*, size_t>> unmapped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes > limit) {
        unmapped.emplace_back(p, bytes);
        sizes_.erase(p);
      } else {
        while (keptBytes_ + bytes > limit) {
          unmapped.push_back(kept_.front());
          sizes_.erase(kept_.front().first);
          keptBytes_ -= kept_.front().second;
          kept_.pop_front();
        }
        kept_.emplace_back(p, bytes);
        keptBytes_ += bytes;
      }
    }
    for (auto [block, bytes] : unmapped) munmap(block, bytes);  // outside the lock
    return true;
  }

  size_t keptBytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return keptBytes_;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, size_t> sizes_;
  std::deque<std::pair<void*, size_t>> kept_;
  size_t keptBytes_ = 0;
};

}  // namespace

void* allocateResultArray(size_t bytes, bool zero) {
  if (bytes >= kMappedMinBytes) {
    bool fresh = false;
    void* p = Mappings::instance().take(bytes, &fresh);
    if (!p) throw std::bad_alloc();
    if (zero && !fresh) std::memset(p, 0, bytes);  // fresh pages are zero already
    return p;
  }
  void* p = zero ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void* growResultArray(void* array, size_t bytes, size_t newBytes) {
  Mappings& mappings = Mappings::instance();
  if (size_t mapped = array ? mappings.size(array) : 0) return mappings.grow(array, mapped, newBytes);
  if (newBytes < kMappedMinBytes) return std::realloc(array, newBytes ? newBytes : 1);
  // A malloc'd array becomes a mapping: its (small) contents are copied once.
  bool fresh = false;
  void* grown = mappings.take(newBytes, &fresh);
  if (!grown) return nullptr;
  if (array) std::memcpy(grown, array, std::min(bytes, newBytes));
  std::free(array);
  return grown;
}

void trimResultArray(void* array, size_t bytes) {
  if (array) Mappings::instance().trim(array, bytes);
}

void releaseResultArray(void* array) {
  if (array && !Mappings::instance().release(array)) std::free(array);
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

size_t recycledResultBytes() { return Mappings::instance().keptBytes(); }

size_t freshResultBytes() { return freshBytes.load(std::memory_order_relaxed); }

size_t lazyPoolBytes() {
  static const size_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t memory = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
    return std::clamp(memory / 8, kRecycledPoolBytes, size_t{4} << 30);
  }();
  return bytes;
}

bool isMappedResultArray(const void* array) { return Mappings::instance().size(array) > 0; }

}  // namespace coiter
