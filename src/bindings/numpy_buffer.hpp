// Conversions between coiter Buffers and NumPy arrays, both without copying: a Buffer
// borrowing a NumPy array keeps the array alive, and a NumPy view of a Buffer keeps the
// Buffer's memory alive.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "memory/buffer.hpp"

namespace coiter::bindings {

namespace py = pybind11;

DType dtypeOf(const py::array& a);
// Whether the array's elements are in the host's byte order.
bool isNative(const py::array& a);
py::dtype numpyDType(DType t);
// An owner that keeps `object` alive (releasing it takes the GIL): for memory a Python object
// owns and C++ reads.
std::shared_ptr<void> keepAlive(const py::object& object);
// Borrows a C-contiguous, native-endian, one-dimensional array.
Buffer borrowArray(const py::array& a, const std::string& what);
// Borrows the first `length` elements of a C-contiguous, native-endian array of any shape.
Buffer borrowData(const py::array& a, int64_t length);
// A one-dimensional NumPy view of the buffer.
py::array viewOf(const Buffer& b);

}  // namespace coiter::bindings
