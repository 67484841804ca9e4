#include "format/level_storage.hpp"

#include "util/errors.hpp"

namespace coiter {

const Buffer& LevelStorage::array(const std::string& name) const {
  auto it = arrays.find(name);
  if (it == arrays.end()) throw FormatError("level has no array '" + name + "'");
  return it->second;
}

int64_t LevelStorage::scalar(const std::string& name) const {
  auto it = scalars.find(name);
  if (it == scalars.end()) throw FormatError("level has no parameter '" + name + "'");
  return it->second;
}

}  // namespace coiter
