// How many entries each kernel's last result had: the first capacity of the arrays the
// kernel's next call appends to.
//
// A sparse result's arrays start at a guess (the operands' entries) and the kernel grows them
// as it appends; SpGEMM's result has several times its operands' entries. Growing is cheap
// (pages are remapped, not copied), but the grown part is fresh memory, which costs a page
// fault and a zeroing per page, and a released array is reused only by a request it fits. So a
// loop of calls that starts each at the guess keeps growing into fresh memory until the pool of
// released arrays happens to hold large enough ones (measured: 8 calls of SpGEMM at 2 threads,
// each 1.5-2x the warm time). Starting where the last call ended asks the same sizes every call,
// which the arrays released by the calls before fit from the third call on.
#pragma once
#include <cstdint>

#include "jit/engine.hpp"

namespace coiter {

// The entries of `entry`'s last result, or 0 when it has not returned one.
int64_t lastResultEntries(KernelEntry entry);

void recordResultEntries(KernelEntry entry, int64_t entries);

}  // namespace coiter
