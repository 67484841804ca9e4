#include "runtime/interrupts.hpp"

#include <signal.h>

#include <mutex>

namespace coiter {

extern "C" volatile int32_t coiter_rt_interrupt_flag = 0;

namespace {

struct sigaction previousHandler;

// Async-signal-safe: a store, then the handler that was installed before coiter's.
void onInterrupt(int signal, siginfo_t* info, void* context) {
  if (previousHandler.sa_handler == SIG_IGN) return;  // interrupts were being ignored
  coiter_rt_interrupt_flag = 1;
  if (previousHandler.sa_flags & SA_SIGINFO) {
    previousHandler.sa_sigaction(signal, info, context);
  } else if (previousHandler.sa_handler == SIG_DFL) {
    // The default action ends the process: restore it and deliver the signal again.
    sigaction(signal, &previousHandler, nullptr);
    raise(signal);
  } else {
    previousHandler.sa_handler(signal);
  }
}

void installOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction ours{};
    ours.sa_sigaction = &onInterrupt;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&ours.sa_mask);
    sigaction(SIGINT, &ours, &previousHandler);
  });
}

}  // namespace

InterruptWatch::InterruptWatch() {
  installOnce();
  coiter_rt_interrupt_flag = 0;
}

}  // namespace coiter
