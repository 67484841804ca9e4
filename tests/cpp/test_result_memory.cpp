// Result memory (runtime/result_memory.hpp): large arrays are mappings, recycled when released;
// grown arrays keep their contents; small ones go straight back to malloc; trimming keeps the
// front; the pool stays bounded.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ir_test_support.hpp"
#include "runtime/result_memory.hpp"

using namespace coiter;
using namespace coiter_test;

namespace {

void testRecycled() {
  size_t bytes = kMappedMinBytes * 3;
  void* a = allocateResultArray(bytes, false);
  check(isMappedResultArray(a), "a large array is a mapping of its own");
  releaseResultArray(a);
  void* b = allocateResultArray(bytes - 100, false);
  check(a == b, "a released large array is handed out again for a request it fits");
  std::memset(b, 0xff, bytes - 100);
  releaseResultArray(b);
  auto* zeroed = static_cast<unsigned char*>(allocateResultArray(bytes, true));
  check(zeroed == a, "the recycled array is reused for a zeroed request");
  bool allZero = true;
  for (size_t k = 0; k < bytes; ++k) allZero = allZero && zeroed[k] == 0;
  check(allZero, "a recycled array asked for zeroed comes back zeroed");
  releaseResultArray(zeroed);
  // The smallest kept block that fits is handed out, however much larger than the request.
  void* larger = allocateResultArray(bytes * 2, false);
  releaseResultArray(larger);
  void* small = allocateResultArray(kMappedMinBytes, false);
  check(small == a, "the smallest kept block that fits is handed out");
  void* next = allocateResultArray(kMappedMinBytes, false);
  check(next == larger, "then the next smallest");
  releaseResultArray(small);
  releaseResultArray(next);
  // Growing a kept block within its size keeps it where it is.
  void* again = allocateResultArray(bytes / 2, false);
  check(again == a && growResultArray(again, bytes / 2, bytes) == a, "a block grows in place into its own size");
  releaseResultArray(again);
  auto* aligned = static_cast<char*>(allocateResultArray(kMappedMinBytes * 9, false));
  check(reinterpret_cast<uintptr_t>(aligned) % (size_t{2} << 20) == 0, "fresh mappings start at a 2 MiB boundary");
  // 9 MiB are mapped as five whole huge pages, so growing to 10 MiB stays in place.
  check(growResultArray(aligned, kMappedMinBytes * 9, kMappedMinBytes * 10) == aligned,
        "mappings span whole huge pages");
  aligned = static_cast<char*>(growResultArray(aligned, kMappedMinBytes * 10, kMappedMinBytes * 90));
  check(reinterpret_cast<uintptr_t>(aligned) % (size_t{2} << 20) == 0, "grown mappings start at a 2 MiB boundary");
  releaseResultArray(aligned);
  void* tiny = allocateResultArray(64, true);
  check(!isMappedResultArray(tiny), "a small array comes from malloc");
  releaseResultArray(tiny);
  releaseResultArray(nullptr);
}

// Fills p[0, count) with a pattern and says whether p[0, count) still holds it.
void fill(int64_t* p, size_t count) {
  for (size_t k = 0; k < count; ++k) p[k] = static_cast<int64_t>(k * 7 + 1);
}
bool holds(const int64_t* p, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    if (p[k] != static_cast<int64_t>(k * 7 + 1)) return false;
  }
  return true;
}

void testGrow() {
  // Small to small (realloc), small to mapped (one copy), mapped to mapped (pages moved).
  for (size_t from : {size_t{64}, kMappedMinBytes / 2, kMappedMinBytes * 2, kMappedMinBytes * 40}) {
    size_t count = from / sizeof(int64_t);
    auto* p = static_cast<int64_t*>(allocateResultArray(from, false));
    fill(p, count);
    auto* grown = static_cast<int64_t*>(growResultArray(p, from, from * 4));
    check(grown != nullptr, "growing " + std::to_string(from) + " bytes succeeds");
    check(holds(grown, count), "growing " + std::to_string(from) + " bytes keeps the contents");
    check(isMappedResultArray(grown) == (from * 4 >= kMappedMinBytes), "grown to a mapping when large");
    grown[count * 4 - 1] = 5;  // the new part is writable
    // Growing twice more (as kernels do): each time the contents stay.
    grown = static_cast<int64_t*>(growResultArray(grown, from * 4, from * 8));
    grown = static_cast<int64_t*>(growResultArray(grown, from * 8, from * 16));
    check(grown && holds(grown, count) && grown[count * 4 - 1] == 5, "growing again keeps the contents");
    grown[count * 16 - 1] = 6;
    releaseResultArray(grown);
  }
  auto* fresh = static_cast<int64_t*>(growResultArray(nullptr, 0, kMappedMinBytes * 2));
  check(fresh != nullptr && isMappedResultArray(fresh), "growing null allocates");
  fresh[kMappedMinBytes * 2 / sizeof(int64_t) - 1] = 1;
  releaseResultArray(fresh);
  void* p = allocateResultArray(64, false);
  check(growResultArray(p, 64, SIZE_MAX / 2) == nullptr, "an impossible size fails with null");
  void* m = allocateResultArray(kMappedMinBytes * 2, false);
  check(growResultArray(m, kMappedMinBytes * 2, SIZE_MAX / 2) == nullptr, "an impossible remap fails with null");
  releaseResultArray(p);  // both untouched by the failed grows
  releaseResultArray(m);
}

void testTrim() {
  size_t bytes = kMappedMinBytes * 8;
  auto* p = static_cast<int64_t*>(allocateResultArray(bytes, false));
  size_t count = bytes / sizeof(int64_t) / 4;
  fill(p, count);
  trimResultArray(p, count * sizeof(int64_t));
  check(holds(p, count), "trimming keeps the first bytes");
  p[bytes / sizeof(int64_t) - 1] = 3;  // the trimmed part stays mapped and writable
  // A trimmed mapping keeps its size: released, it serves a request of the full size.
  releaseResultArray(p);
  void* q = allocateResultArray(bytes, true);
  check(q == p, "a trimmed mapping is kept at its full size");
  check(static_cast<int64_t*>(q)[bytes / sizeof(int64_t) - 1] == 0, "and comes back zeroed when asked");
  releaseResultArray(q);
  void* small = std::malloc(64);
  trimResultArray(small, 8);  // a malloc'd array is left alone
  releaseResultArray(small);
}

void testBounded() {
  // Releasing more than the pool holds evicts the oldest blocks (never touched: cheap to map).
  check(lazyPoolBytes() >= kRecycledPoolBytes && lazyPoolBytes() <= (size_t{4} << 30), "the pool's bound");
  const size_t hugePage = size_t{2} << 20;  // mappings span whole huge pages
  size_t bytes = lazyPoolBytes() / 4 / hugePage * hugePage;
  std::vector<void*> blocks;
  for (int k = 0; k < 6; ++k) blocks.push_back(allocateResultArray(bytes, false));
  for (void* b : blocks) releaseResultArray(b);
  check(recycledResultBytes() <= lazyPoolBytes(), "the pool keeps at most lazyPoolBytes()");
  check(recycledResultBytes() >= 4 * bytes, "the newest blocks are kept");
  std::vector<void*> again;
  for (int k = 0; k < 4; ++k) again.push_back(allocateResultArray(bytes, false));
  check(recycledResultBytes() < bytes, "taking blocks out empties the pool");
  bool newest = true;
  for (int k = 2; k < 6; ++k) newest = newest && std::find(again.begin(), again.end(), blocks[k]) != again.end();
  check(newest, "the kept blocks are the newest ones");
  for (void* b : again) releaseResultArray(b);
  size_t before = recycledResultBytes();
  void* huge = allocateResultArray(lazyPoolBytes() + 1, false);
  releaseResultArray(huge);  // too large to keep
  check(recycledResultBytes() == before, "an array larger than the pool is unmapped");
}

void testLazilyFreed() {
  // Past kRecycledPoolBytes, a released mapping is kept lazily freed; taken again, it is
  // written and read like any other (whether or not the system took its pages meanwhile).
  size_t count = kRecycledPoolBytes / sizeof(int64_t) + 1000;
  auto* first = static_cast<int64_t*>(allocateResultArray(count * sizeof(int64_t), false));
  fill(first, count);
  releaseResultArray(first);
  size_t kept = recycledResultBytes();
  check(kept > kRecycledPoolBytes, "a mapping beyond the pool's first part is kept");
  auto* again = static_cast<int64_t*>(allocateResultArray(count * sizeof(int64_t), false));
  check(recycledResultBytes() < kept, "and handed out again");
  fill(again, count);
  check(holds(again, count), "its contents are what was written after");
  releaseResultArray(again);
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
  testTrim();
  testBounded();
  testLazilyFreed();
  std::printf("%s\n", failures ? "FAILED" : "all result memory tests passed");
  return failures ? 1 : 0;
}
