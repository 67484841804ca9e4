// The threads that run coiter's parallel loops (coiter_rt_parallel_for): a pool of its own
// rather than OpenMP's, so that an idle worker stops using its core within microseconds.
//
// Why not OpenMP: libgomp's idle threads keep spinning on their core for a long while after
// each parallel region (GOMP_SPINCOUNT, 300,000 rounds by default) and its wait policy can
// only be set through the environment before the library loads. Between coiter's kernels a
// program runs NumPy, whose OpenBLAS threads want the same cores: a CG solve with coiter's
// matvec alternates one SpMV with a few BLAS vector operations, and each of those waited for
// coiter's spinning threads to be descheduled (30-60 times slower than SciPy's own CG on two
// cores). Here a worker spins only kSpinRounds rounds (a few microseconds: enough to catch
// the next loop of the same kernel) and then sleeps on a condition variable.
//
// One job runs at a time. A parallel loop started while the pool is busy (another Python
// thread's kernel) or from inside a job (a nested loop) runs serially on the calling thread,
// with that thread's number, so per-thread buffers are still never shared. A job never waits
// for a worker that has not woken up yet: the caller runs the shares nobody has claimed.
#pragma once
#include <cstdint>

namespace coiter {

// task(closure, k, thread) for every k in [0, count), with thread numbers in [0, threads): the
// caller runs number 0's share, and each number's share runs on one thread. A share is either
// the chunks handed out first come, first served (dynamic) or k = thread, thread + threads, ...
// (round robin).
using PoolTask = void (*)(void* closure, int64_t k, int64_t thread);
void runOnWorkerPool(PoolTask task, void* closure, int64_t count, int threads, bool dynamic);

}  // namespace coiter
