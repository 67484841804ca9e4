// The portable wheel's own definitions of the glibc functions that glibc 2.27 does not have, or
// has as other code, for the calls to them in LLVM's static libraries, libstdc++'s static
// library and the core (docs/installation.md, "The tag"). Built only with COITER_STATIC_LLVM,
// into _core itself (not the coiter_core archive, whose members the linker would take only on
// demand) and hidden, so the link binds those calls here instead of to the build machine's
// glibc, and no other library can see these names. The other too-new references of a build on
// a newer glibc, to functions glibc only moved (pthread_*, dl*: the same code under an older
// version), scripts/retarget_glibc.py rewrites after the link.

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include <malloc.h>
#include <sys/random.h>

#define COITER_GLIBC_COMPAT extern "C" __attribute__((visibility("hidden")))

// libstdc++'s headers (GCC 11 and later, on glibc 2.32 and later) read this to skip the atomic
// reference counts of shared_ptr and the like in a process with one thread. 0 says "more
// than one thread" always: the atomic operations, correct in every process.
extern "C" {
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;
}

// glibc 2.36. LLVM draws temporary file names from it (sys::Process::GetRandomNumber). As
// glibc's, it never fails: without entropy from the kernel the process stops.
COITER_GLIBC_COMPAT std::uint32_t arc4random() {
  std::uint32_t value;
  for (;;) {
    ssize_t got = getrandom(&value, sizeof value, 0);  // glibc 2.25, Linux 3.17
    if (got == static_cast<ssize_t>(sizeof value)) return value;
    if (got < 0 && errno != EINTR) std::abort();
  }
}

// glibc 2.33. Before it, <sys/stat.h> defined stat, fstat, lstat and fstat64 inline as calls of
// __xstat, __fxstat, __lxstat and __fxstat64 with the layout version of struct stat
// (_STAT_VER_LINUX, 1 on x86-64); glibc still exports those, and these are those inline
// definitions. (LLVM calls the first three, libstdc++ fstat64.)
struct stat;
struct stat64;
extern "C" int __xstat(int layout, const char* path, struct stat* result);
extern "C" int __fxstat(int layout, int fd, struct stat* result);
extern "C" int __lxstat(int layout, const char* path, struct stat* result);
extern "C" int __fxstat64(int layout, int fd, struct stat64* result);
constexpr int stat_layout = 1;
COITER_GLIBC_COMPAT int stat(const char* path, struct stat* result) { return __xstat(stat_layout, path, result); }
COITER_GLIBC_COMPAT int fstat(int fd, struct stat* result) { return __fxstat(stat_layout, fd, result); }
COITER_GLIBC_COMPAT int lstat(const char* path, struct stat* result) { return __lxstat(stat_layout, path, result); }
COITER_GLIBC_COMPAT int fstat64(int fd, struct stat64* result) { return __fxstat64(stat_layout, fd, result); }

// glibc 2.33. LLVM reads the heap's size in use from it (sys::Process::GetMallocUsage, for its
// pass timing reports). mallinfo's fields are int: they wrap past 2 GiB, as they did in LLVM on
// every glibc before 2.33.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
COITER_GLIBC_COMPAT struct mallinfo2 mallinfo2() {
  struct mallinfo old = mallinfo();
  struct mallinfo2 result = {};
  result.arena = static_cast<unsigned>(old.arena);
  result.ordblks = static_cast<unsigned>(old.ordblks);
  result.smblks = static_cast<unsigned>(old.smblks);
  result.hblks = static_cast<unsigned>(old.hblks);
  result.hblkhd = static_cast<unsigned>(old.hblkhd);
  result.usmblks = static_cast<unsigned>(old.usmblks);
  result.fsmblks = static_cast<unsigned>(old.fsmblks);
  result.uordblks = static_cast<unsigned>(old.uordblks);
  result.fordblks = static_cast<unsigned>(old.fordblks);
  result.keepcost = static_cast<unsigned>(old.keepcost);
  return result;
}
#pragma GCC diagnostic pop

// glibc 2.29 gave exp, log, log2 and pow new versions that leave out the wrapper of the old
// ones (the SVID error handling, which since glibc 2.27 only sets errno, as the new ones do):
// on one glibc both compute the same results. LLVM's constant folding, its block layout and
// the row sort call them. These call the old versions, which every glibc has. (Named by asm
// labels: GCC's built-in declarations of exp and the rest would override the visibility.)
extern "C" double exp_glibc_2_2_5(double);
extern "C" double log_glibc_2_2_5(double);
extern "C" double log2_glibc_2_2_5(double);
extern "C" double pow_glibc_2_2_5(double, double);
__asm__(".symver exp_glibc_2_2_5, exp@GLIBC_2.2.5");
__asm__(".symver log_glibc_2_2_5, log@GLIBC_2.2.5");
__asm__(".symver log2_glibc_2_2_5, log2@GLIBC_2.2.5");
__asm__(".symver pow_glibc_2_2_5, pow@GLIBC_2.2.5");
COITER_GLIBC_COMPAT double exp_compat(double) __asm__("exp");
COITER_GLIBC_COMPAT double log_compat(double) __asm__("log");
COITER_GLIBC_COMPAT double log2_compat(double) __asm__("log2");
COITER_GLIBC_COMPAT double pow_compat(double, double) __asm__("pow");
double exp_compat(double x) { return exp_glibc_2_2_5(x); }
double log_compat(double x) { return log_glibc_2_2_5(x); }
double log2_compat(double x) { return log2_glibc_2_2_5(x); }
double pow_compat(double x, double y) { return pow_glibc_2_2_5(x, y); }
