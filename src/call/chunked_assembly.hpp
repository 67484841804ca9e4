// Parallel assembly of a sparse result (a CSR-like result built by rows), which TACO cannot
// do. The rows are cut into chunks; every chunk is one call of the kernel on its rows, run in
// parallel. A call appends its entries into its own growing arrays (the fused single-pass
// assembly of the serial kernel, so nothing is computed twice) and counts entries per row in
// the shared pos array (rows are disjoint, so these writes never collide). Then the counts
// give each chunk its offset (a prefix sum over chunks). Chunk 0 appends straight into the
// arrays allocated for the whole result, and the other chunks are copied after it in
// parallel; chunks are guided (the first ones large), so that copy is a fraction of the
// result. Each chunk also turns its rows' counts in pos into offsets, so finishing the result
// is parallel too. Chunk arrays are recycled memory (result_memory.hpp), kept warm between
// calls.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "jit/engine.hpp"
#include "lower/kernel_abi.hpp"

namespace coiter {

// One result array that calls append to: its slot, its capacity slot, the width of an
// element, and how many elements each result entry has (the values of a trailing dense block).
struct AppendedArray {
  int slot;
  int capacitySlot;
  size_t width;
  int64_t perEntry;
};

struct ChunkedCall {
  KernelEntry entry;
  const ChunkedAssembly* chunks;
  int64_t rows;           // extent of chunks->indexVar
  int64_t parentsPerRow;  // positions of the dense levels above the appended level, per row
  int posSlot;            // the appended level's pos array (counts per parent)
  DType posType;
  std::vector<AppendedArray> appended;
  // An operand's row pointers (rows + 1 entries), when it has them: chunks then hold equal
  // numbers of its nonzeros, a good proxy for equal work.
  const void* rowWeights = nullptr;
  DType rowWeightType = DType::Int32;
};

// Runs the call over all rows with `threads` threads. `pointers`/`integers` are the slots
// prepared for one call over all rows (appended arrays allocated, pos zeroed); on return the
// appended slots hold malloc'd arrays the caller owns, with their lengths in the capacity
// slots, whatever the status. Returns the first failing kernel status, or kOk, in which case
// pos holds offsets (not counts).
int32_t runChunkedAssembly(const ChunkedCall& call, int threads, std::vector<void*>& pointers,
                           std::vector<int64_t>& integers);

}  // namespace coiter
