// Result memory (runtime/result_memory.hpp): large arrays are recycled, grown arrays keep
// their contents, small ones go straight back to malloc, and the pool stays bounded.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/result_memory.hpp"
#include "ir_test_support.hpp"

using namespace coiter;
using namespace coiter_test;

namespace {

void testRecycled() {
  size_t bytes = kRecycledMinBytes * 3;
  void* a = allocateResultArray(bytes, false);
  releaseResultArray(a, bytes);
  void* b = allocateResultArray(bytes - 100, false);
  check(a == b, "a released large array is handed out again for a request it fits");
  std::memset(b, 0xff, bytes - 100);
  releaseResultArray(b, bytes);
  auto* zeroed = static_cast<unsigned char*>(allocateResultArray(bytes, true));
  check(zeroed == a, "the recycled array is reused for a zeroed request");
  bool allZero = true;
  for (size_t k = 0; k < bytes; ++k) allZero = allZero && zeroed[k] == 0;
  check(allZero, "a recycled array asked for zeroed comes back zeroed");
  releaseResultArray(zeroed, bytes);
  // A block more than twice the request is not used for it (it would hold memory idle).
  void* small = allocateResultArray(kRecycledMinBytes, false);
  check(small != a, "a block over twice the request's size is not handed out for it");
  std::free(small);
  void* again = allocateResultArray(bytes, false);
  check(again == a, "the large block is still kept");
  std::free(again);
}

void testGrow() {
  for (size_t from : {size_t{64}, kRecycledMinBytes / 2, kRecycledMinBytes * 2}) {
    size_t count = from / sizeof(int64_t);
    auto* p = static_cast<int64_t*>(allocateResultArray(from, false));
    for (size_t k = 0; k < count; ++k) p[k] = static_cast<int64_t>(k * 7 + 1);
    auto* grown = static_cast<int64_t*>(growResultArray(p, from, from * 4));
    check(grown != nullptr, "growing " + std::to_string(from) + " bytes succeeds");
    bool kept = true;
    for (size_t k = 0; k < count; ++k) kept = kept && grown[k] == static_cast<int64_t>(k * 7 + 1);
    check(kept, "growing " + std::to_string(from) + " bytes keeps the contents");
    grown[count * 4 - 1] = 5;  // the new part is writable
    releaseResultArray(grown, from * 4);
  }
  void* p = allocateResultArray(64, false);
  check(growResultArray(p, 64, SIZE_MAX) == nullptr, "an impossible size fails with null");
  std::free(p);  // untouched by the failed grow
}

void testBounded() {
  // Releasing more than the pool holds evicts the oldest blocks.
  size_t bytes = kRecycledPoolBytes / 4;
  std::vector<void*> blocks;
  for (int k = 0; k < 6; ++k) blocks.push_back(allocateResultArray(bytes, false));
  for (void* b : blocks) releaseResultArray(b, bytes);
  check(recycledResultBytes() <= kRecycledPoolBytes, "the pool keeps at most kRecycledPoolBytes");
  check(recycledResultBytes() >= 4 * bytes, "the newest blocks are kept");
  std::vector<void*> again;
  for (int k = 0; k < 4; ++k) again.push_back(allocateResultArray(bytes, false));
  check(recycledResultBytes() < bytes, "taking blocks out empties the pool");
  bool newest = true;
  for (int k = 2; k < 6; ++k) newest = newest && std::find(again.begin(), again.end(), blocks[k]) != again.end();
  check(newest, "the kept blocks are the newest ones");
  for (void* b : again) std::free(b);
  releaseResultArray(std::malloc(bytes * 2), kRecycledPoolBytes + 1);  // too large to keep
  check(recycledResultBytes() < bytes, "an array larger than the pool is freed");
}

void testCopy() {
  // Streaming copies handle any alignment of either side and any length around the threshold.
  size_t big = (size_t{256} << 10) + 77;
  std::vector<unsigned char> source(big + 64), target(big + 64);
  for (size_t k = 0; k < source.size(); ++k) source[k] = static_cast<unsigned char>(k * 31 + 7);
  for (size_t bytes : {size_t{0}, size_t{5}, size_t{4096}, big - 80, big}) {
    for (size_t from : {0, 3}) {
      for (size_t to : {0, 9}) {
        std::fill(target.begin(), target.end(), 0);
        copyIntoResultArray(target.data() + to, source.data() + from, bytes);
        bool same = std::equal(source.begin() + from, source.begin() + from + bytes, target.begin() + to);
        bool untouched = std::all_of(target.begin(), target.begin() + to, [](unsigned char c) { return c == 0; }) &&
                         std::all_of(target.begin() + to + bytes, target.end(), [](unsigned char c) { return c == 0; });
        check(same && untouched, "copying " + std::to_string(bytes) + " bytes from offset " + std::to_string(from) +
                                     " to offset " + std::to_string(to));
      }
    }
  }
}

}  // namespace

int main() {
  testCopy();
  testRecycled();
  testGrow();
  testBounded();
  std::printf("%s\n", failures ? "FAILED" : "all result memory tests passed");
  return failures ? 1 : 0;
}
