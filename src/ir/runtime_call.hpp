// The functions of coiter's runtime a kernel may call, as the IR names them. The IR only
// names them; runtime/runtime_functions.cpp implements them and gives each its symbol and
// address, which the engines bind when they load a kernel.
#pragma once

namespace coiter {

// Only SortCoordinates is called through ir::CallNode; the code generators call the others
// themselves, for parallel loops (ForNode), ir::NumThreadsNode (parallel_runtime.hpp) and
// ir::GrowNode.
enum class RuntimeFunction {
  SortCoordinates,  // void coiter_rt_sort_coordinates(int64_t* list, int64_t base, int64_t count):
                    //   a workspace's distinct coordinates list[base, base + count), ascending
  ParallelFor,      // coiter_rt_parallel_for(body, closure, begin, end, chunk, dynamic)
  NumThreads,       // int64_t coiter_rt_num_threads(void)
  GrowArray,        // void* coiter_rt_grow_array(void* array, int64_t bytes, int64_t newBytes):
                    // result_memory.hpp's growResultArray
  InterruptFlag,    // a variable, not a function: int32_t coiter_rt_interrupt_flag, nonzero once
                    // the user asked the running kernels to stop (ir::InterruptRequestedNode)
};

// The symbol a kernel calls the function by ("coiter_rt_sort_coordinates").
const char* runtimeSymbol(RuntimeFunction f);

}  // namespace coiter
