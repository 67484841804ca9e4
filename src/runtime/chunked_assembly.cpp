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
  // Dynamic chunks balance skewed rows; a few per thread keep the copies cheap.
  int64_t count = plan.chunk > 0 ? (call.rows + plan.chunk - 1) / plan.chunk
                                 : std::min<int64_t>(call.rows, int64_t{threads} * (plan.dynamic ? 4 : 1));
  count = std::max<int64_t>(count, 1);
  std::vector<Chunk> chunks(count);
  for (const AppendedArray& a : call.appended) {  // the single-call arrays are not used
    std::free(pointers[a.slot]);
    pointers[a.slot] = nullptr;
  }
  int32_t failed = ir::kOk;
  try {
    for (int64_t c = 0; c < count; ++c) {
      Chunk& chunk = chunks[c];
      chunk.begin = plan.chunk > 0 ? std::min(call.rows, c * plan.chunk) : call.rows * c / count;
      chunk.end = plan.chunk > 0 ? std::min(call.rows, (c + 1) * plan.chunk) : call.rows * (c + 1) / count;
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
    try {
      for (size_t a = 0; a < call.appended.size(); ++a) {
        const AppendedArray& array = call.appended[a];
        final[a] = allocateResultArray(static_cast<size_t>(total * array.perEntry) * array.width, false);
      }
    } catch (const std::bad_alloc&) {
      failed = ir::kOutOfMemory;
    }
  }
  if (failed != ir::kOk) {
    // Hand back chunk 0's arrays (the caller frees them with the rest of the result).
    for (size_t a = 0; a < call.appended.size(); ++a) {
      std::free(final[a]);
      const AppendedArray& array = call.appended[a];
      pointers[array.slot] = chunks[0].pointers[array.slot];
      integers[array.capacitySlot] = 0;
      for (size_t c = 1; c < chunks.size(); ++c) std::free(chunks[c].pointers[array.slot]);
    }
    return failed;
  }
  coiter_rt_parallel_for(&copyChunks, &run, 0, count, 1, 1);
  for (size_t a = 0; a < call.appended.size(); ++a) {
    pointers[call.appended[a].slot] = final[a];
    integers[call.appended[a].capacitySlot] = total * call.appended[a].perEntry;
  }
  return ir::kOk;
}

}  // namespace coiter
