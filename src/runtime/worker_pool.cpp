#include "runtime/worker_pool.hpp"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

namespace coiter {
namespace {

// Rounds a waiting thread polls before it sleeps: with a pause each, a few microseconds, about
// what libgomp does with GOMP_SPINCOUNT=1000 (benchmarks/cg_solve.py: libgomp's default of
// 300,000 made a CG solve 30 times slower than SciPy's; 1000 cured it).
constexpr int kSpinRounds = 1000;

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` up to kSpinRounds times; true as soon as it holds.
template <typename Ready>
bool spinUntil(Ready ready) {
  for (int round = 0; round < kSpinRounds; ++round) {
    if (ready()) return true;
    relax();
  }
  return ready();
}

// Set on a thread while it runs a job's tasks: a loop started there runs serially.
thread_local bool insideJob = false;
thread_local int64_t poolThread = 0;

// The pool hands out *thread numbers* (slots), not threads: whoever is free claims the next
// number and runs that number's share. The caller claims number 0 and then whatever numbers
// no worker has claimed yet, so a job never waits for a worker that has not woken up (on a
// machine with more runnable threads than cores that wait was a whole time slice); and each
// number still runs on one thread at a time, so per-thread buffers are never shared.
class WorkerPool {
 public:
  // Runs the job; false (nothing run) when another thread's job holds the pool.
  bool run(PoolTask task, void* closure, int64_t count, int threads, bool dynamic) {
    std::unique_lock<std::mutex> dispatch(dispatch_, std::try_to_lock);
    if (!dispatch.owns_lock()) return false;
    while (workers_ < threads - 1 && start()) {
    }
    task_ = task;
    closure_ = closure;
    count_ = count;
    threads_ = threads;
    dynamic_ = dynamic;
    nextChunk_.store(0, std::memory_order_relaxed);
    nextThread_.store(1, std::memory_order_relaxed);  // 0 is the caller's
    const uint64_t job = generation_.load(std::memory_order_relaxed) + 1;
    open_.store(job, std::memory_order_seq_cst);
    generation_.store(job, std::memory_order_seq_cst);
    if (sleepingWorkers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(wake_);
      wakeWorkers_.notify_all();
    }
    runShare(0);
    runShares();
    // Closed: a worker that wakes from now on leaves without touching the job. Wait for those
    // inside it (each side writes before it reads the other's variable: one of them sees it).
    open_.store(kClosed, std::memory_order_seq_cst);
    if (!spinUntil([&] { return active_.load(std::memory_order_seq_cst) == 0; })) {
      std::unique_lock<std::mutex> lock(wake_);
      callerSleeping_.store(true, std::memory_order_seq_cst);
      jobDone_.wait(lock, [&] { return active_.load(std::memory_order_seq_cst) == 0; });
      callerSleeping_.store(false, std::memory_order_relaxed);
    }
    return true;
  }

  // In a child process after fork() only the forking thread exists: the pool starts over,
  // without workers (the parent's, and their state, are not in the child).
  void forgetWorkersAfterFork() {
    new (&dispatch_) std::mutex();
    new (&wake_) std::mutex();
    new (&wakeWorkers_) std::condition_variable();
    new (&jobDone_) std::condition_variable();
    workers_ = 0;
    active_.store(0);
    sleepingWorkers_.store(0);
    callerSleeping_.store(false);
    open_.store(kClosed);
  }

 private:
  static constexpr uint64_t kClosed = 0;  // open_ while no job runs; jobs are numbered from 1

  // Workers are detached: they live as long as the process, asleep when idle. False when no
  // more threads can be started (the job then runs on fewer threads; its numbers are the same).
  bool start() {
    const uint64_t seen = generation_.load(std::memory_order_seq_cst);
    try {
      std::thread([this, seen] { work(seen); }).detach();
    } catch (const std::system_error&) {
      return false;
    }
    ++workers_;
    return true;
  }

  // Runs the share of thread number `thread`: every chunk handed out first come, first served
  // (dynamic), or chunks thread, thread + threads, ... (round robin).
  void runShare(int64_t thread) {
    insideJob = true;
    poolThread = thread;
    if (dynamic_) {
      for (int64_t k = nextChunk_.fetch_add(1, std::memory_order_relaxed); k < count_;
           k = nextChunk_.fetch_add(1, std::memory_order_relaxed)) {
        task_(closure_, k, thread);
      }
    } else {
      for (int64_t k = thread; k < count_; k += threads_) task_(closure_, k, thread);
    }
    insideJob = false;
    poolThread = 0;
  }

  // Claims and runs thread numbers until none is left.
  void runShares() {
    for (int64_t t = nextThread_.fetch_add(1, std::memory_order_relaxed); t < threads_;
         t = nextThread_.fetch_add(1, std::memory_order_relaxed)) {
      runShare(t);
    }
  }

  void work(uint64_t seen) {
    for (;;) {
      if (!spinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
        std::unique_lock<std::mutex> lock(wake_);
        sleepingWorkers_.fetch_add(1, std::memory_order_seq_cst);
        wakeWorkers_.wait(lock, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
        sleepingWorkers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = generation_.load(std::memory_order_acquire);
      active_.fetch_add(1, std::memory_order_seq_cst);
      if (open_.load(std::memory_order_seq_cst) == seen) runShares();
      if (active_.fetch_sub(1, std::memory_order_seq_cst) == 1 && callerSleeping_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> lock(wake_);
        jobDone_.notify_one();
      }
    }
  }

  std::mutex dispatch_;  // held by the thread whose job runs
  int workers_ = 0;
  // The job: written by its caller before it opens it, read by workers only while it is open.
  PoolTask task_ = nullptr;
  void* closure_ = nullptr;
  int64_t count_ = 0;
  int64_t threads_ = 0;
  bool dynamic_ = false;
  std::atomic<int64_t> nextChunk_{0};    // dynamic: the next chunk to hand out
  std::atomic<int64_t> nextThread_{0};   // the next thread number to claim
  std::atomic<uint64_t> generation_{0};  // the last job started: wakes the workers
  std::atomic<uint64_t> open_{kClosed};  // the job that may still be joined
  std::atomic<int> active_{0};           // workers inside a job
  // Sleepers on either condition variable: a wake-up is sent only when one is asleep. Each
  // side writes its flag before it reads the other's condition (sequentially consistent), so
  // a sleeper and a waker never both miss each other.
  std::mutex wake_;
  std::condition_variable wakeWorkers_, jobDone_;
  std::atomic<int> sleepingWorkers_{0};
  std::atomic<bool> callerSleeping_{false};
};

WorkerPool& pool() {
  static WorkerPool* instance = [] {
    auto* created = new WorkerPool();  // never destroyed: detached workers use it until exit
    pthread_atfork(nullptr, nullptr, [] { pool().forgetWorkersAfterFork(); });
    return created;
  }();
  return *instance;
}

}  // namespace

void runOnWorkerPool(PoolTask task, void* closure, int64_t count, int threads, bool dynamic) {
  if (threads > 1 && count > 1 && !insideJob && pool().run(task, closure, count, threads, dynamic)) return;
  // Serial: nested, busy pool, or nothing to share; the calling thread keeps its number.
  for (int64_t k = 0; k < count; ++k) task(closure, k, poolThread);
}

}  // namespace coiter
