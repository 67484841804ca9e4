// Ctrl-C stops a running kernel. A kernel reads the runtime's interrupt flag at the top of
// every loop that holds another loop (ir/interrupt_points.hpp) and returns kInterrupted
// once it is set; Python then raises KeyboardInterrupt.
//
// The flag is set by a SIGINT handler that coiter installs the first time a kernel runs
// (InterruptWatch), chained in front of the handler that was there: Python's own, which
// then trips Python's signal so the interpreter raises KeyboardInterrupt as usual. While no
// kernel runs the flag is ignored: each kernel call clears it as it starts. If a program
// later installs its own SIGINT handler through the OS (Python's signal.signal does), that
// handler replaces coiter's and kernels run to their end again, as before.
#pragma once
#include <cstdint>

namespace coiter {

// The flag kernels read (volatile): nonzero once a SIGINT arrived during the current call.
extern "C" volatile int32_t coiter_rt_interrupt_flag;

// Installs the handler (once per process) and clears the flag, for one kernel call.
class InterruptWatch {
 public:
  InterruptWatch();
  // Whether a SIGINT arrived since the watch began.
  static bool requested() { return coiter_rt_interrupt_flag != 0; }
};

}  // namespace coiter
