// coiter's CPU parallel runtime: the loop driver that parallel kernels call, and the
// process-wide thread count (ct.set_num_threads). coiter's own worker pool runs the threads
// underneath (runtime/worker_pool.hpp: idle workers sleep instead of spinning against NumPy's
// BLAS threads); the C engine's `omp parallel for` loops run on OpenMP's threads.
//
// The LLVM engine outlines the body of a parallel loop into a function that runs the loop over
// a sub-range of its iterations and calls coiter_rt_parallel_for with it; the C engine prints
// `#pragma omp parallel for ... num_threads(coiter_rt_num_threads())` instead. Both read the
// thread count through coiter_rt_num_threads, so one setting governs every kernel.
#pragma once
#include <cstdint>

namespace coiter {

// The number of threads parallel loops use from now on, in every thread of the process.
// Throws ArgumentError when n < 1.
void setNumThreads(int n);
// The current setting; initially the number of CPUs the process may run on (OpenMP's default,
// which honours OMP_NUM_THREADS).
int getNumThreads();

// Until setNumThreads is called, a kernel runs on one thread per kEntriesPerThread stored
// entries it reads (at least one, at most getNumThreads()): below that, waking a worker costs
// more than it saves (benchmarks/cg_solve.py: an SpMV of 50,000 nonzeros, about 0.05 ms, ran
// slower on two threads than on one). A count set with setNumThreads is used as it is.
constexpr int64_t kEntriesPerThread = int64_t{1} << 16;

// While it lives, the kernels called on this thread see the thread count of its creation
// (coiter_rt_num_threads, coiter_rt_parallel_for), for a kernel reading `entriesRead` stored
// entries: the dispatcher holds one per kernel call.
class KernelThreadsScope {
 public:
  explicit KernelThreadsScope(int64_t entriesRead);
  ~KernelThreadsScope();
  KernelThreadsScope(const KernelThreadsScope&) = delete;
  KernelThreadsScope& operator=(const KernelThreadsScope&) = delete;

 private:
  int previous_;
};

}  // namespace coiter

extern "C" {

// Runs iterations [begin, end) in chunks: body(closure, chunk_begin, chunk_end, thread) once per
// chunk, `thread` being the worker's number in [0, coiter_rt_num_threads()).
//   static  (dynamic == 0): chunk == 0: one contiguous block of (nearly) equal size per thread;
//                           chunk > 0: chunks of `chunk` iterations dealt out round robin.
//   dynamic (dynamic != 0): chunks handed out first come, first served; chunk == 0 picks a size
//                           that gives each thread about 16 chunks.
// With one thread, or at most one iteration, the whole range is one call on the calling thread
// (thread 0); an empty range makes no call. A loop started inside another (or while another
// Python thread's kernel holds the pool) runs its chunks serially on the calling thread, with
// that thread's number.
using CoiterParallelBody = void (*)(void* closure, int64_t begin, int64_t end, int64_t thread);
void coiter_rt_parallel_for(CoiterParallelBody body, void* closure, int64_t begin, int64_t end, int64_t chunk,
                            int32_t dynamic);

// getNumThreads(), for kernels.
int64_t coiter_rt_num_threads();
}
