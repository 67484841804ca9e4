#include "memory/allocation_limit.hpp"

#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <limits>

#include "util/errors.hpp"

namespace coiter {
namespace {

// "23.5 GiB", "32.0 EiB": sizes in messages are read by people.
std::string readableBytes(double bytes) {
  static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

[[noreturn]] void refuse(const std::string& what, const std::string& need) {
  throw ShapeError(what + " would need " + need + ", more than this machine's memory (" +
                   readableBytes(double(physicalMemoryBytes())) + ")");
}

}  // namespace

uint64_t physicalMemoryBytes() {
  static const uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    // Unknown (never on Linux or macOS): no bound beyond what a size_t can count.
    if (pages <= 0 || pageSize <= 0) return uint64_t(std::numeric_limits<size_t>::max());
    return uint64_t(pages) * uint64_t(pageSize);
  }();
  return bytes;
}

void refuseArray(int64_t length, DType type, const std::string& what) {
  if (length < 0) throw ShapeError(what + ": negative array length " + std::to_string(length));
  refuse(what, std::to_string(length) + " " + dtypeName(type) + " elements (" +
                   readableBytes(double(length) * double(dtypeSize(type))) + ")");
}

size_t checkedDenseArrayBytes(const std::vector<int64_t>& shape, DType type, const std::string& what) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw ShapeError(what + ": negative extent " + std::to_string(extent));
    if (extent == 0) return 0;  // empty, however large the other extents
  }
  for (int64_t extent : shape)
    if (__builtin_mul_overflow(count, extent, &count)) refuse(what, "more than 2**63 elements");
  return checkedArrayBytes(count, type, [&] { return what; });
}

}  // namespace coiter
