// coiter's CPU parallel runtime: the loop driver that parallel kernels call, and the
// process-wide thread count (ct.set_num_threads). OpenMP runs the threads underneath.
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

// While it lives, the kernels called on this thread see the thread count of its creation
// (coiter_rt_num_threads, coiter_rt_parallel_for): the dispatcher holds one per kernel call.
class KernelThreadsScope {
 public:
  KernelThreadsScope();
  ~KernelThreadsScope();
  KernelThreadsScope(const KernelThreadsScope&) = delete;
  KernelThreadsScope& operator=(const KernelThreadsScope&) = delete;

 private:
  int previous_;
};

}  // namespace coiter

extern "C" {

// Runs iterations [begin, end) in chunks: body(closure, chunk_begin, chunk_end, thread) once per
// chunk, `thread` being the OpenMP thread number in [0, coiter_rt_num_threads()).
//   static  (dynamic == 0): chunk == 0: one contiguous block of (nearly) equal size per thread;
//                           chunk > 0: chunks of `chunk` iterations dealt out round robin.
//   dynamic (dynamic != 0): chunks handed out first come, first served; chunk == 0 picks a size
//                           that gives each thread about 16 chunks.
// With one thread, or at most one iteration, the whole range is one call on the calling thread
// (thread 0); an empty range makes no call.
using CoiterParallelBody = void (*)(void* closure, int64_t begin, int64_t end, int64_t thread);
void coiter_rt_parallel_for(CoiterParallelBody body, void* closure, int64_t begin, int64_t end, int64_t chunk,
                            int32_t dynamic);

// getNumThreads(), for kernels.
int64_t coiter_rt_num_threads();
}
