#include "runtime/chunked_assembly.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "ir/ir.hpp"
#include "runtime/parallel_runtime.hpp"
#include "runtime/result_memory.hpp"

namespace coiter {

namespace {

// Chunk arrays are scratch: they live from a chunk's call to the copy into the result. Fresh
// memory costs a page fault and a page of zeroing per 4 KiB on first touch, which here would
// be paid twice per entry (chunk, then result); keeping the arrays for the next call pays it
// once. The pool holds at most kPoolBytes; beyond that arrays are freed.
class ScratchPool {
 public:
  static ScratchPool& instance() {
    static ScratchPool* pool = new ScratchPool();  // never destroyed: used until exit
    return *pool;
  }
  // A malloc'd array of at least `bytes`, and its size.
  std::pair<void*, size_t> take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = blocks_.end();
      for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
        if (it->second >= bytes && (best == blocks_.end() || it->second < best->second)) best = it;
      }
      if (best != blocks_.end()) {
        auto block = *best;
        blocks_.erase(best);
        held_ -= block.second;
        return block;
      }
    }
    return {allocateResultArray(bytes, false), bytes};
  }
  void give(void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_ + bytes > kPoolBytes) {
      std::free(data);
      return;
    }
    blocks_.emplace_back(data, bytes);
    held_ += bytes;
  }

 private:
  static constexpr size_t kPoolBytes = size_t{256} << 20;
  std::mutex mutex_;
  std::vector<std::pair<void*, size_t>> blocks_;
  size_t held_ = 0;
};

struct Chunk {
  int64_t begin = 0, end = 0;  // rows
  std::vector<void*> pointers;
  std::vector<int64_t> integers;
  int32_t status = ir::kOk;
  int64_t entries = 0, offset = 0;
};

struct Run {
  const ChunkedCall* call;
  std::vector<Chunk>* chunks;
  std::vector<void*>* final;  // per appended array
};

void callChunks(void* closure, int64_t begin, int64_t end, int64_t) {
  auto& run = *static_cast<Run*>(closure);
  for (int64_t c = begin; c < end; ++c) {
    Chunk& chunk = (*run.chunks)[c];
    chunk.status = run.call->entry(chunk.pointers.data(), chunk.integers.data());
  }
}

void copyChunks(void* closure, int64_t begin, int64_t end, int64_t) {
  auto& run = *static_cast<Run*>(closure);
  for (int64_t c = begin; c < end; ++c) {
    Chunk& chunk = (*run.chunks)[c];
    for (size_t a = 0; a < run.call->appended.size(); ++a) {
      const AppendedArray& array = run.call->appended[a];
      size_t bytes = array.width * static_cast<size_t>(array.perEntry);
      std::memcpy(static_cast<char*>((*run.final)[a]) + static_cast<size_t>(chunk.offset) * bytes,
                  chunk.pointers[array.slot], static_cast<size_t>(chunk.entries) * bytes);
      ScratchPool::instance().give(chunk.pointers[array.slot],
                                   static_cast<size_t>(chunk.integers[array.capacitySlot]) * array.width);
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

template <typename I>
int64_t countEntries(const void* pos, int64_t firstParent, int64_t lastParent) {
  const I* p = static_cast<const I*>(pos);
  int64_t total = 0;
  for (int64_t q = firstParent; q < lastParent; ++q) total += static_cast<int64_t>(p[q + 1]);
  return total;
}

}  // namespace

int32_t runChunkedAssembly(const ChunkedCall& call, int threads, std::vector<void*>& pointers,
                           std::vector<int64_t>& integers) {
  const ChunkedAssembly& plan = *call.chunks;
  // A few chunks per thread, handed out dynamically, balance skewed rows; with row weights
  // they also hold equal numbers of nonzeros. (One chunk per thread would copy less, but a
  // chunk that outgrows its share of the capacity guess then pays for growing large arrays.)
  bool weighted = plan.chunk == 0 && call.rowWeights;
  int64_t count = plan.chunk > 0 ? (call.rows + plan.chunk - 1) / plan.chunk
                                 : std::min<int64_t>(call.rows, int64_t{threads} * (plan.dynamic ? 4 : 1));
  count = std::max<int64_t>(count, 1);
  std::vector<int64_t> bounds(count + 1, call.rows);
  for (int64_t c = 0; c < count; ++c) {
    if (plan.chunk > 0) {
      bounds[c] = std::min(call.rows, c * plan.chunk);
    } else if (weighted) {
      auto weightAt = [&](int64_t r) {
        return call.rowWeightType == DType::Int32
                   ? static_cast<int64_t>(static_cast<const int32_t*>(call.rowWeights)[r])
                   : static_cast<const int64_t*>(call.rowWeights)[r];
      };
      int64_t first = weightAt(0), total = weightAt(call.rows) - first;
      int64_t target = first + total * c / count;
      bounds[c] = call.rowWeightType == DType::Int32 ? rowAtWeight<int32_t>(call.rowWeights, call.rows, target)
                                                     : rowAtWeight<int64_t>(call.rowWeights, call.rows, target);
      if (c > 0) bounds[c] = std::max(bounds[c], bounds[c - 1]);
    } else {
      bounds[c] = call.rows * c / count;
    }
  }
  std::vector<Chunk> chunks(count);
  for (const AppendedArray& a : call.appended) {  // the single-call arrays are not used
    std::free(pointers[a.slot]);
    pointers[a.slot] = nullptr;
  }
  int32_t failed = ir::kOk;
  try {
    for (int64_t c = 0; c < count; ++c) {
      Chunk& chunk = chunks[c];
      chunk.begin = bounds[c];
      chunk.end = bounds[c + 1];
      chunk.pointers = pointers;
      chunk.integers = integers;
      chunk.integers[plan.beginSlot] = chunk.begin;
      chunk.integers[plan.endSlot] = chunk.end;
      for (const AppendedArray& a : call.appended) {
        // A share of the serial guess (or more, from the pool); the kernel grows what it needs.
        int64_t capacity = std::max<int64_t>(16, integers[a.capacitySlot] / count);
        auto [data, bytes] = ScratchPool::instance().take(static_cast<size_t>(capacity) * a.width);
        chunk.pointers[a.slot] = data;
        chunk.integers[a.capacitySlot] = static_cast<int64_t>(bytes / a.width);
      }
    }
  } catch (...) {
    for (auto& chunk : chunks) {
      for (const AppendedArray& a : call.appended) std::free(chunk.pointers.empty() ? nullptr : chunk.pointers[a.slot]);
    }
    throw;
  }
  std::vector<void*> final(call.appended.size(), nullptr);
  Run run{&call, &chunks, &final};
  coiter_rt_parallel_for(&callChunks, &run, 0, count, 1, plan.dynamic ? 1 : 0);

  for (const auto& chunk : chunks) {
    if (chunk.status != ir::kOk && failed == ir::kOk) failed = chunk.status;
  }
  int64_t total = 0;
  if (failed == ir::kOk) {
    for (auto& chunk : chunks) {
      int64_t first = chunk.begin * call.parentsPerRow, last = chunk.end * call.parentsPerRow;
      chunk.entries = call.posType == DType::Int32 ? countEntries<int32_t>(pointers[call.posSlot], first, last)
                                                   : countEntries<int64_t>(pointers[call.posSlot], first, last);
      chunk.offset = total;
      total += chunk.entries;
    }
    // The result starts with chunk 0's entries: its arrays, grown to the total, become the
    // result's arrays (large blocks grow by remapping pages, without copying).
    for (size_t a = 0; a < call.appended.size() && failed == ir::kOk; ++a) {
      const AppendedArray& array = call.appended[a];
      size_t bytes = static_cast<size_t>(std::max<int64_t>(total * array.perEntry, 1)) * array.width;
      void* grown = std::realloc(chunks[0].pointers[array.slot], bytes);
      if (grown) {
        final[a] = grown;
        chunks[0].pointers[array.slot] = nullptr;
      } else {
        failed = ir::kOutOfMemory;
      }
    }
  }
  if (failed != ir::kOk) {
    // Hand back one array per slot (the caller frees them with the rest of the result).
    for (size_t a = 0; a < call.appended.size(); ++a) {
      const AppendedArray& array = call.appended[a];
      pointers[array.slot] = final[a] ? final[a] : chunks[0].pointers[array.slot];
      integers[array.capacitySlot] = 0;
      for (size_t c = 1; c < chunks.size(); ++c) std::free(chunks[c].pointers[array.slot]);
    }
    return failed;
  }
  coiter_rt_parallel_for(&copyChunks, &run, 1, count, 1, 1);
  for (size_t a = 0; a < call.appended.size(); ++a) {
    pointers[call.appended[a].slot] = final[a];
    integers[call.appended[a].capacitySlot] = total * call.appended[a].perEntry;
  }
  return ir::kOk;
}

}  // namespace coiter
