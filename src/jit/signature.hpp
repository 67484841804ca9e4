// The signature of a kernel: everything that determines its code. Two statements that differ
// only in the names of their tensors and index variables have equal signatures, so they share
// one compiled kernel (docs/reference.md, "Kernels and the cache").
#pragma once
#include <string>

#include "notation/index_notation.hpp"

namespace coiter {

struct Signature {
  std::string canonical;  // readable canonical text; the cache key
  std::string hash;       // 16 hex digits of a 64-bit hash of `canonical`
};

// `options` holds the schedule, target, engine fingerprint and anything else that changes code.
// keepIndexNames: index variables keep their names (a schedule refers to them by name).
Signature signatureOf(const notation::Assignment& a, const std::string& options, bool keepIndexNames = false);

// A 64-bit FNV-1a hash as 16 hex digits (also used to check cache file payloads).
std::string hashHex(const void* data, size_t size);

}  // namespace coiter
