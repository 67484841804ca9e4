// NumPy arrays as dense tensors, read in place: what a kernel call makes of an array operand.
#pragma once
#include <optional>

#include "bindings/numpy_buffer.hpp"
#include "format/format.hpp"
#include "storage/tensor_storage.hpp"

namespace coiter::bindings {

// A dense tensor reading a NumPy array in place, in `format` (all dense, in mode order) or
// the dense format of the array's order: what ct.asarray makes of a NumPy array, and what
// kernel calls make of NumPy operands. SignatureError when the array would need a conversion
// (not C-contiguous, not native, an unsupported dtype), so that the caller takes the general
// path, which converts it or explains why it cannot.
std::shared_ptr<TensorStorage> wrapDense(const py::array& a, const std::optional<Format>& format);

}  // namespace coiter::bindings
