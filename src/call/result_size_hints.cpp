#include "call/result_size_hints.hpp"

#include <mutex>
#include <unordered_map>

namespace coiter {
namespace {

// Kernels are few and live as long as the process (or their engine): one small table. A kernel
// whose code is freed and whose address a new kernel takes inherits a wrong hint, which costs
// at most one call's worth of unused (untouched) capacity.
std::mutex hintsMutex;
std::unordered_map<KernelEntry, int64_t>& hints() {
  static auto* table = new std::unordered_map<KernelEntry, int64_t>();  // used until exit
  return *table;
}

}  // namespace

int64_t lastResultEntries(KernelEntry entry) {
  std::lock_guard<std::mutex> lock(hintsMutex);
  auto it = hints().find(entry);
  return it == hints().end() ? 0 : it->second;
}

void recordResultEntries(KernelEntry entry, int64_t entries) {
  std::lock_guard<std::mutex> lock(hintsMutex);
  hints()[entry] = entries;
}

}  // namespace coiter
