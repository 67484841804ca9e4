// The data of one level of one tensor: its named index arrays (pos, crd, offset, ...)
// and named integer parameters (dimension size, bucket count, ...).
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "memory/buffer.hpp"

namespace coiter {

struct LevelStorage {
  std::map<std::string, Buffer> arrays;    // e.g. "pos", "crd", "offset"
  std::map<std::string, int64_t> scalars;  // e.g. "size" (dense N, hashed W), "rows", "cols"

  const Buffer& array(const std::string& name) const;
  int64_t scalar(const std::string& name) const;
};

}  // namespace coiter
