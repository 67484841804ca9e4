#include "format/levels/level_checks.hpp"

#include <limits>

namespace coiter {

const Buffer& checkedArray(const LevelStorage& s, const std::string& name, int64_t length,
                           const std::string& where) {
  auto it = s.arrays.find(name);
  if (it == s.arrays.end()) throw FormatError(where + ": missing array '" + name + "'");
  const Buffer& b = it->second;
  if (!isIndexDType(b.dtype()))
    throw FormatError(where + ": array '" + name + "' must be int32 or int64, not " +
                      dtypeName(b.dtype()));
  if (length >= 0 && b.length() != length)
    throw FormatError(where + ": array '" + name + "' has length " +
                      std::to_string(b.length()) + ", expected " + std::to_string(length));
  return b;
}

int64_t checkedScalar(const LevelStorage& s, const std::string& name, const std::string& where) {
  auto it = s.scalars.find(name);
  if (it == s.scalars.end()) throw FormatError(where + ": missing parameter '" + name + "'");
  return it->second;
}

void checkRange(const Buffer& b, int64_t lo, int64_t hi, const std::string& what,
                const std::string& where) {
  visitIndices(b, [&](auto* v) {
    for (int64_t k = 0; k < b.length(); ++k) {
      int64_t x = v[k];
      if (x < lo || x >= hi)
        throw FormatError(where + ": " + what + "[" + std::to_string(k) + "] = " +
                          std::to_string(x) + " is outside [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + ")");
    }
  });
}

int64_t checkedProduct(int64_t a, int64_t b, const std::string& where) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    throw FormatError(where + ": the number of positions overflows 64 bits");
  return a * b;
}

}  // namespace coiter
