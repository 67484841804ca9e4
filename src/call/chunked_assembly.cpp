#include "call/chunked_assembly.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "ir/ir.hpp"
#include "runtime/parallel_runtime.hpp"
#include "runtime/result_memory.hpp"

namespace coiter {

namespace {

// Guided chunks: each takes 1 / (divisor * threads) of the weight left, down to
// 1 / (kSmallChunksPerThread * threads) of the total. The divisor is 1 when the rows' weights
// predict their work (chunk 0, which is not copied, then does a thread's share) and 2
// otherwise: SpGEMM's work per row is not its nonzeros, and a chunk 0 of half the rows let
// it wait for chunk 0 on power-law rows.
constexpr int kSmallChunksPerThread = 4;

struct Chunk {
  int64_t begin = 0, end = 0;  // rows
  std::vector<void*> pointers;
  std::vector<int64_t> integers;
  int32_t status = ir::kOk;
  int64_t entries = 0, offset = 0;
};

struct Run {
  const ChunkedCall* call;
  std::vector<Chunk>* chunks;  // chunk 0's arrays are the result's; the others are copied after
};

template <typename I>
int64_t countEntries(const void* pos, int64_t firstParent, int64_t lastParent) {
  const I* p = static_cast<const I*>(pos);
  int64_t total = 0;
  for (int64_t q = firstParent; q < lastParent; ++q) total += static_cast<int64_t>(p[q + 1]);
  return total;
}

// Counts per parent in pos[first + 1 .. last] become offsets, starting from `offset`.
// (pos[first] belongs to the chunk before, which another thread may be writing.)
template <typename I>
void offsetsFromCounts(void* pos, int64_t firstParent, int64_t lastParent, int64_t offset) {
  I* p = static_cast<I*>(pos);
  I running = static_cast<I>(offset);
  for (int64_t q = firstParent; q < lastParent; ++q) {
    running += p[q + 1];
    p[q + 1] = running;
  }
}

void callChunks(void* closure, int64_t begin, int64_t end, int64_t) {
  auto& run = *static_cast<Run*>(closure);
  const ChunkedCall& call = *run.call;
  for (int64_t c = begin; c < end; ++c) {
    Chunk& chunk = (*run.chunks)[c];
    chunk.status = call.entry(chunk.pointers.data(), chunk.integers.data());
    if (chunk.status != ir::kOk) continue;
    const void* pos = chunk.pointers[call.posSlot];
    int64_t first = chunk.begin * call.parentsPerRow, last = chunk.end * call.parentsPerRow;
    chunk.entries = call.posType == DType::Int32 ? countEntries<int32_t>(pos, first, last)
                                                 : countEntries<int64_t>(pos, first, last);
  }
}

// Once the chunks' offsets are known: each chunk's counts become offsets, and the chunks
// after chunk 0 are copied into the result's arrays.
void finishChunks(void* closure, int64_t begin, int64_t end, int64_t) {
  auto& run = *static_cast<Run*>(closure);
  const ChunkedCall& call = *run.call;
  for (int64_t c = begin; c < end; ++c) {
    Chunk& chunk = (*run.chunks)[c];
    void* pos = chunk.pointers[call.posSlot];
    int64_t first = chunk.begin * call.parentsPerRow, last = chunk.end * call.parentsPerRow;
    if (call.posType == DType::Int32) {
      offsetsFromCounts<int32_t>(pos, first, last, chunk.offset);
    } else {
      offsetsFromCounts<int64_t>(pos, first, last, chunk.offset);
    }
    if (c == 0) continue;  // appended to the result's arrays already
    for (const AppendedArray& array : call.appended) {
      size_t bytes = array.width * static_cast<size_t>(array.perEntry);
      void* result = (*run.chunks)[0].pointers[array.slot];
      copyIntoResultArray(static_cast<char*>(result) + static_cast<size_t>(chunk.offset) * bytes,
                          chunk.pointers[array.slot], static_cast<size_t>(chunk.entries) * bytes);
      releaseResultArray(chunk.pointers[array.slot]);
      chunk.pointers[array.slot] = nullptr;
    }
  }
}

// The first row r with weight(rows before r) >= target, weights given by row pointers.
template <typename I>
int64_t rowAtWeight(const void* rowPointers, int64_t rows, int64_t target) {
  const I* p = static_cast<const I*>(rowPointers);
  return std::lower_bound(p, p + rows + 1, static_cast<I>(target)) - p;
}

// Weight of the rows before row r: the operand's row pointer, or r itself without weights.
int64_t weightBefore(const ChunkedCall& call, int64_t r) {
  if (!call.rowWeights) return r;
  return call.rowWeightType == DType::Int32 ? static_cast<int64_t>(static_cast<const int32_t*>(call.rowWeights)[r])
                                            : static_cast<const int64_t*>(call.rowWeights)[r];
}

// The first row r with weightBefore(r) >= target.
int64_t rowAtWeight(const ChunkedCall& call, int64_t target) {
  if (!call.rowWeights) return std::min(target, call.rows);
  return call.rowWeightType == DType::Int32 ? rowAtWeight<int32_t>(call.rowWeights, call.rows, target)
                                            : rowAtWeight<int64_t>(call.rowWeights, call.rows, target);
}

// The chunks' row boundaries (count + 1 of them). Chunk 0 writes straight into the result's
// arrays and the others are copied after it, so the dynamic schedule is guided: each chunk
// takes a fixed share of the weight still left, chunk 0 the largest, down to a floor of small
// chunks that balance the end (a few per thread). A static schedule takes one equal chunk per
// thread; a chunk size given in the schedule fixes the rows per chunk.
std::vector<int64_t> chunkBounds(const ChunkedCall& call, int threads) {
  const ChunkedAssembly& plan = *call.chunks;
  std::vector<int64_t> bounds{0};
  if (plan.chunk > 0) {
    for (int64_t r = plan.chunk; r < call.rows; r += plan.chunk) bounds.push_back(r);
    bounds.push_back(call.rows);
    return bounds;
  }
  int64_t first = weightBefore(call, 0), last = weightBefore(call, call.rows);
  int64_t total = last - first;
  if (!plan.dynamic) {
    for (int t = 1; t < threads; ++t)
      bounds.push_back(std::max(bounds.back(), rowAtWeight(call, first + total * t / threads)));
    bounds.push_back(call.rows);
    return bounds;
  }
  int64_t floor = std::max<int64_t>(1, total / (int64_t{kSmallChunksPerThread} * threads));
  int64_t divisor = plan.workFollowsWeights && call.rowWeights ? 1 : 2;
  int64_t at = first;
  while (bounds.back() < call.rows) {
    int64_t share = std::max(floor, (last - at) / (divisor * threads));
    int64_t row = std::max(bounds.back() + 1, rowAtWeight(call, at + share));
    bounds.push_back(std::min(row, call.rows));
    at = weightBefore(call, bounds.back());
  }
  return bounds;
}

}  // namespace

int32_t runChunkedAssembly(const ChunkedCall& call, int threads, std::vector<void*>& pointers,
                           std::vector<int64_t>& integers) {
  const ChunkedAssembly& plan = *call.chunks;
  std::vector<int64_t> bounds = chunkBounds(call, threads);
  int64_t count = static_cast<int64_t>(bounds.size()) - 1;
  int64_t weight = std::max<int64_t>(1, weightBefore(call, call.rows) - weightBefore(call, 0));
  std::vector<Chunk> chunks(count);
  int32_t failed = ir::kOk;
  for (int64_t c = 0; c < count; ++c) {
    Chunk& chunk = chunks[c];
    chunk.begin = bounds[c];
    chunk.end = bounds[c + 1];
    chunk.pointers = pointers;
    chunk.integers = integers;
    chunk.integers[plan.beginSlot] = chunk.begin;
    chunk.integers[plan.endSlot] = chunk.end;
    if (c == 0) continue;  // chunk 0 appends to the arrays allocated for the whole call
    // The other chunks get arrays of their own (null until allocated: the copied slots hold
    // chunk 0's, which must not be freed twice if an allocation fails).
    for (const AppendedArray& a : call.appended) chunk.pointers[a.slot] = nullptr;
    double share = static_cast<double>(weightBefore(call, chunk.end) - weightBefore(call, chunk.begin)) / weight;
    for (const AppendedArray& a : call.appended) {
      if (failed != ir::kOk) break;
      // Its share of the serial guess, with room to spare (the weights are one operand's,
      // and growing a large array gets fresh pages); the kernel grows what it needs.
      int64_t capacity = std::max<int64_t>(16, static_cast<int64_t>(1.5 * share * integers[a.capacitySlot]));
      try {
        chunk.pointers[a.slot] = allocateResultArray(static_cast<size_t>(capacity) * a.width, false);
      } catch (const std::bad_alloc&) {
        failed = ir::kOutOfMemory;
      }
      chunk.integers[a.capacitySlot] = capacity;
    }
  }
  Run run{&call, &chunks};
  if (failed == ir::kOk) {
    coiter_rt_parallel_for(&callChunks, &run, 0, count, 1, plan.dynamic ? 1 : 0);
    for (const auto& chunk : chunks) {
      if (chunk.status != ir::kOk && failed == ir::kOk) failed = chunk.status;
    }
  }
  int64_t total = 0;
  if (failed == ir::kOk) {
    for (auto& chunk : chunks) {
      chunk.offset = total;
      total += chunk.entries;
    }
    // The result is chunk 0's arrays, grown where they lack room for every entry (by
    // remapping their pages, nothing copied); the other chunks are copied after chunk 0's.
    for (const AppendedArray& array : call.appended) {
      void*& first = chunks[0].pointers[array.slot];
      int64_t& capacity = chunks[0].integers[array.capacitySlot];
      int64_t needed = std::max<int64_t>(total * array.perEntry, 1);
      if (capacity < needed) {
        size_t used = static_cast<size_t>(chunks[0].entries * array.perEntry) * array.width;
        void* grown = growResultArray(first, used, static_cast<size_t>(needed) * array.width);
        if (!grown) {
          failed = ir::kOutOfMemory;
          break;
        }
        first = grown;
        capacity = needed;
      }
    }
  }
  if (failed != ir::kOk) {
    // Hand back chunk 0's arrays (the caller frees them with the rest of the result).
    for (const AppendedArray& array : call.appended) {
      pointers[array.slot] = chunks[0].pointers[array.slot];
      integers[array.capacitySlot] = 0;
      for (size_t c = 1; c < chunks.size(); ++c) releaseResultArray(chunks[c].pointers[array.slot]);
    }
    return failed;
  }
  coiter_rt_parallel_for(&finishChunks, &run, 0, count, 1, 1);
  for (const AppendedArray& array : call.appended) {
    pointers[array.slot] = chunks[0].pointers[array.slot];
    integers[array.capacitySlot] = chunks[0].integers[array.capacitySlot];
  }
  return ir::kOk;
}

}  // namespace coiter
