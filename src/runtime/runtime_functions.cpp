#include "runtime/runtime_functions.hpp"

#include <algorithm>

#include "runtime/parallel_runtime.hpp"

namespace coiter {

namespace {

// A workspace's touched coordinates, sorted before they are appended to a compressed level.
extern "C" void coiter_rt_sort_i64(int64_t* data, int64_t first, int64_t count) {
  if (count > 1) std::sort(data + first, data + first + count);
}

}  // namespace

const std::vector<RuntimeFunctionInfo>& runtimeFunctions() {
  static const std::vector<RuntimeFunctionInfo> table = {
      {RuntimeFunction::SortInt64, "coiter_rt_sort_i64", "void (*%s)(int64_t*, int64_t, int64_t)",
       reinterpret_cast<void*>(&coiter_rt_sort_i64)},
      {RuntimeFunction::ParallelFor, "coiter_rt_parallel_for",
       "void (*%s)(void (*)(void*, int64_t, int64_t, int64_t), void*, int64_t, int64_t, int64_t, "
       "int32_t)",
       reinterpret_cast<void*>(&coiter_rt_parallel_for)},
      {RuntimeFunction::NumThreads, "coiter_rt_num_threads", "int64_t (*%s)(void)",
       reinterpret_cast<void*>(&coiter_rt_num_threads)},
  };
  return table;
}

const RuntimeFunctionInfo& runtimeFunction(RuntimeFunction id) {
  for (const auto& f : runtimeFunctions()) {
    if (f.id == id) return f;
  }
  return runtimeFunctions().front();
}

}  // namespace coiter
