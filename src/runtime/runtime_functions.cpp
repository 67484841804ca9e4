#include "runtime/runtime_functions.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/parallel_runtime.hpp"
#include "runtime/result_memory.hpp"

namespace coiter {

namespace {

// A workspace's touched coordinates list[base, base + count), sorted before they are
// appended to a compressed level. Their marks (marks[base + c] is set for each listed c) give
// a second way: when the coordinates lie close together (banded and blocked matrices) scanning
// the marks between the smallest and the largest costs less than sorting.
extern "C" void coiter_rt_sort_coordinates(int64_t* list, const bool* marks, int64_t base, int64_t count) {
  if (count < 2) return;
  int64_t* first = list + base;
  auto [low, high] = std::minmax_element(first, first + count);
  int64_t lo = *low, hi = *high;
  if (hi - lo < 8 * count) {
    const bool* mark = marks + base;
    int64_t n = 0;
    for (int64_t c = lo; c <= hi; ++c) {
      first[n] = c;  // written always, kept when marked: no branch to mispredict
      n += mark[c];
    }
  } else {
    std::sort(first, first + count);
  }
}

// A hashed workspace's keys list[0, count), sorted before they are appended to an ordered
// level (there are no marks to scan: the keys may span any range).
extern "C" void coiter_rt_sort_keys(int64_t* list, int64_t count) { std::sort(list, list + count); }

extern "C" void* coiter_rt_grow_array(void* array, int64_t bytes, int64_t newBytes) {
  return growResultArray(array, static_cast<size_t>(bytes), static_cast<size_t>(newBytes));
}

}  // namespace

const std::vector<RuntimeFunctionInfo>& runtimeFunctions() {
  static const std::vector<RuntimeFunctionInfo> table = {
      {RuntimeFunction::SortCoordinates, "coiter_rt_sort_coordinates",
       "void (*%s)(int64_t*, const bool*, int64_t, int64_t)", reinterpret_cast<void*>(&coiter_rt_sort_coordinates)},
      {RuntimeFunction::SortKeys, "coiter_rt_sort_keys", "void (*%s)(int64_t*, int64_t)",
       reinterpret_cast<void*>(&coiter_rt_sort_keys)},
      {RuntimeFunction::ParallelFor, "coiter_rt_parallel_for",
       "void (*%s)(void (*)(void*, int64_t, int64_t, int64_t), void*, int64_t, int64_t, int64_t, "
       "int32_t)",
       reinterpret_cast<void*>(&coiter_rt_parallel_for)},
      {RuntimeFunction::NumThreads, "coiter_rt_num_threads", "int64_t (*%s)(void)",
       reinterpret_cast<void*>(&coiter_rt_num_threads)},
      {RuntimeFunction::GrowArray, "coiter_rt_grow_array", "void* (*%s)(void*, int64_t, int64_t)",
       reinterpret_cast<void*>(&coiter_rt_grow_array)},
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
