#include "runtime/parallel_runtime.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "util/errors.hpp"

namespace coiter {
namespace {

// Function-local so that it is initialized on first use, whatever the static init order.
std::atomic<int>& threadCount() {
  static std::atomic<int> count{std::max(1, omp_get_max_threads())};
  return count;
}

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

KernelThreadsScope::KernelThreadsScope() : previous_(kernelThreads) { kernelThreads = getNumThreads(); }
KernelThreadsScope::~KernelThreadsScope() { kernelThreads = previous_; }

void setNumThreads(int n) {
  if (n < 1) throw ArgumentError("the number of threads must be at least 1, not " + std::to_string(n));
  threadCount().store(n, std::memory_order_relaxed);
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
  // num_threads, not omp_set_num_threads: the latter only sets the calling thread's default.
  // OpenMP may start fewer threads than asked (nested regions, thread limits); the thread
  // numbers then stay below the count, which is all kernels assume.
  auto runChunk = [&](int64_t k) {
    body(closure, begin + chunks.start(k), begin + chunks.start(k + 1), omp_get_thread_num());
  };
  if (dynamic) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t k = 0; k < chunks.count; ++k) runChunk(k);
  } else {
    // Chunk k goes to thread k mod team size: round robin, or one block each when size == 0.
#pragma omp parallel for schedule(static, 1) num_threads(threads)
    for (int64_t k = 0; k < chunks.count; ++k) runChunk(k);
  }
}
