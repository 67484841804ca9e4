// Functions of coiter's runtime that kernels call (ir::CallNode): work that is better written
// once in C++ than emitted as IR. Each engine binds the names to these addresses when it
// loads a kernel (the LLVM engine as absolute symbols, the C engine through function-pointer
// globals in the kernel library), so kernels never depend on how this extension was loaded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace coiter {

// Only SortCoordinates is called through ir::CallNode; the code generators call the others
// themselves, for parallel loops (ForNode), ir::NumThreadsNode (parallel_runtime.hpp) and
// ir::GrowNode.
enum class RuntimeFunction {
  SortCoordinates,  // void coiter_rt_sort_coordinates(int64_t* list, int64_t base, int64_t count):
                    //   a workspace's distinct coordinates list[base, base + count), ascending
  ParallelFor,  // coiter_rt_parallel_for(body, closure, begin, end, chunk, dynamic)
  NumThreads,   // int64_t coiter_rt_num_threads(void)
  GrowArray,    // void* coiter_rt_grow_array(void* array, int64_t bytes, int64_t newBytes):
                // result_memory.hpp's growResultArray
};

struct RuntimeFunctionInfo {
  RuntimeFunction id;
  std::string name;              // the symbol kernels use
  std::string cPointerType;      // C declarator of a pointer to it, with %s for the name
  void* address;
};

const RuntimeFunctionInfo& runtimeFunction(RuntimeFunction id);
const std::vector<RuntimeFunctionInfo>& runtimeFunctions();

}  // namespace coiter
