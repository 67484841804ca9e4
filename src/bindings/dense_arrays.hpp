// NumPy arrays as dense tensors, read in place: what a kernel call makes of an array operand.
#pragma once
#include <optional>

#include "bindings/numpy_buffer.hpp"
#include "format/format.hpp"
#include "storage/tensor_storage.hpp"

namespace coiter::bindings {

// A dense tensor (or one of `format`, a dense format of the array's order) reading the array in
// place; SignatureError if it needs converting first (not C-contiguous, not native byte order,
// a dtype coiter lacks).
std::shared_ptr<TensorStorage> wrapDense(const py::array& a, const std::optional<Format>& format);

}  // namespace coiter::bindings
