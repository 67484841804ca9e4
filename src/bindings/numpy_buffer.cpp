#include "bindings/numpy_buffer.hpp"

namespace coiter::bindings {

DType dtypeOf(const py::array& a) {
  // From the descriptor's kind and size (reading NumPy's dtype.name costs microseconds, and
  // every kernel call with NumPy operands asks); names only for the error of an unsupported one.
  py::dtype d = a.dtype();
  ssize_t size = d.itemsize();
  switch (d.kind()) {
    case 'b':
      if (size == 1) return DType::Bool;
      break;
    case 'i':
      if (size == 1) return DType::Int8;
      if (size == 2) return DType::Int16;
      if (size == 4) return DType::Int32;
      if (size == 8) return DType::Int64;
      break;
    case 'u':
      if (size == 1) return DType::UInt8;
      if (size == 2) return DType::UInt16;
      if (size == 4) return DType::UInt32;
      if (size == 8) return DType::UInt64;
      break;
    case 'f':
      if (size == 4) return DType::Float32;
      if (size == 8) return DType::Float64;
      break;
    case 'c':
      if (size == 8) return DType::Complex64;
      if (size == 16) return DType::Complex128;
      break;
  }
  return dtypeFromName(py::str(d.attr("name")));
}

bool isNative(const py::array& a) {
  char order = a.dtype().byteorder();
  constexpr char kHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '<' : '>';
  return order == '=' || order == '|' || order == kHost;
}

py::dtype numpyDType(DType t) { return py::dtype(dtypeName(t)); }

Buffer borrowArray(const py::array& a, const std::string& what) {
  if (a.ndim() != 1) throw ShapeError(what + " must be one-dimensional");
  if (!(a.flags() & py::array::c_style))
    throw FormatError(what + " must be C-contiguous");
  if (!isNative(a)) throw DTypeError(what + " must be in native byte order");
  return borrowData(a, a.shape(0));
}

Buffer borrowData(const py::array& a, int64_t length) {
  auto* keepAlive = new py::object(a);
  std::shared_ptr<void> owner(keepAlive, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
  return Buffer::borrow(dtypeOf(a), length, const_cast<void*>(a.data()), std::move(owner));
}

py::array viewOf(const Buffer& b) {
  auto* keepAlive = new std::shared_ptr<void>(b.owner());
  py::capsule base(keepAlive, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return py::array(numpyDType(b.dtype()), {b.length()}, {static_cast<py::ssize_t>(dtypeSize(b.dtype()))},
                   b.data(), base);
}

}  // namespace coiter::bindings
