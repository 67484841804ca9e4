// Calling a compiled kernel: operands are checked against the kernel's signature and against
// each other (so a kernel never reads out of bounds), their buffers are passed without copying,
// result arrays are allocated (and grown by the kernel), and the result storage is built from
// what the kernel wrote.
#pragma once
#include <memory>
#include <vector>

#include "jit/engine.hpp"
#include "lower/kernel_abi.hpp"
#include "storage/tensor_storage.hpp"

namespace coiter {

// `operands` in the order of abi.tensors (without the result). The result's shape is
// `resultShape` when `resultShapeGiven`, else derived from the operands' extents. A
// compute-only kernel (abi.assembles false) takes the result's index structure from
// `structure` and returns a tensor sharing it, with new values.
// A kernel that runs in memory of its own (a GPU) gets its operands' device copies where
// they have one (T.to("cuda")), copies of the others; its result stays on the device when an
// operand was there, else comes back to the host.
std::shared_ptr<TensorStorage> callKernel(const LoadedKernel& code, const KernelABI& abi,
                                          const std::vector<std::shared_ptr<const TensorStorage>>& operands,
                                          const std::vector<int64_t>& resultShape, bool resultShapeGiven,
                                          const TensorStorage* structure = nullptr);

}  // namespace coiter
