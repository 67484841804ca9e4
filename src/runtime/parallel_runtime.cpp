#include "runtime/parallel_runtime.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "runtime/worker_pool.hpp"
#include "util/errors.hpp"

namespace coiter {
namespace {

// Function-local so that it is initialized on first use, whatever the static init order.
std::atomic<int>& threadCount() {
  static std::atomic<int> count{std::max(1, omp_get_max_threads())};
  return count;
}

// Whether setNumThreads chose the count (then kernels use it whatever their size).
std::atomic<bool> threadCountChosen{false};

// A division of [0, n) into `count` chunks; chunk k is [start(k), start(k + 1)).
struct Chunks {
  int64_t n;
  int64_t count;
  int64_t size;  // > 0: every chunk has `size` iterations but the last; 0: n split evenly
  int64_t start(int64_t k) const {
    if (size > 0) return std::min(n, k * size);
    // Even split without overflowing k * n: the first n % count chunks get one more.
    int64_t q = n / count, r = n % count;
    return k * q + std::min(k, r);
  }
};

Chunks chunksOf(int64_t n, int64_t chunk, bool dynamic, int threads) {
  if (chunk <= 0 && !dynamic) return Chunks{n, std::min<int64_t>(n, threads), 0};
  if (chunk <= 0) chunk = (n - 1) / (int64_t{threads} * 16) + 1;  // ceil(n / (16 threads))
  return Chunks{n, (n - 1) / chunk + 1, chunk};
}

// The count fixed for the kernel call running on this thread (0: none running), so that a
// kernel sizes its per-thread buffers and runs its loops with one count even if another
// Python thread changes the setting meanwhile.
thread_local int kernelThreads = 0;

int threadsNow() { return kernelThreads > 0 ? kernelThreads : getNumThreads(); }

}  // namespace

KernelThreadsScope::KernelThreadsScope(int64_t entriesRead) : previous_(kernelThreads) {
  const int most = getNumThreads();
  kernelThreads = threadCountChosen.load(std::memory_order_relaxed)
                      ? most
                      : static_cast<int>(std::clamp<int64_t>(entriesRead / kEntriesPerThread, 1, most));
}
KernelThreadsScope::~KernelThreadsScope() { kernelThreads = previous_; }

void setNumThreads(int n) {
  if (n < 1) throw ArgumentError("the number of threads must be at least 1, not " + std::to_string(n));
  threadCount().store(n, std::memory_order_relaxed);
  threadCountChosen.store(true, std::memory_order_relaxed);
}

int getNumThreads() { return threadCount().load(std::memory_order_relaxed); }

}  // namespace coiter

extern "C" int64_t coiter_rt_num_threads() { return coiter::threadsNow(); }

extern "C" void coiter_rt_parallel_for(CoiterParallelBody body, void* closure, int64_t begin, int64_t end,
                                       int64_t chunk, int32_t dynamic) {
  if (end <= begin) return;
  int64_t n = end - begin;
  int threads = coiter::threadsNow();
  if (threads == 1 || n == 1) {
    body(closure, begin, end, 0);
    return;
  }
  const coiter::Chunks chunks = coiter::chunksOf(n, chunk, dynamic != 0, threads);
  struct Loop {
    CoiterParallelBody body;
    void* closure;
    int64_t begin;
    const coiter::Chunks* chunks;
    int threads;
  } loop{body, closure, begin, &chunks, threads};
  // Chunk k runs as one call; static chunks go round robin (one block each when size == 0).
  // On a worker the body sees its kernel's thread count (coiter_rt_num_threads), which may be
  // below the setting (KernelThreadsScope), not the setting.
  auto runChunk = [](void* state, int64_t k, int64_t thread) {
    const Loop& l = *static_cast<const Loop*>(state);
    const int outside = coiter::kernelThreads;
    coiter::kernelThreads = l.threads;
    l.body(l.closure, l.begin + l.chunks->start(k), l.begin + l.chunks->start(k + 1), thread);
    coiter::kernelThreads = outside;
  };
  coiter::runOnWorkerPool(runChunk, &loop, chunks.count, threads, dynamic != 0);
}
