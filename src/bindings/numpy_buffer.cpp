#include "bindings/numpy_buffer.hpp"

namespace coiter::bindings {

DType dtypeOf(const py::array& a) {
  return dtypeFromName(py::str(a.dtype().attr("name")));
}

py::dtype numpyDType(DType t) { return py::dtype(dtypeName(t)); }

Buffer borrowArray(const py::array& a, const std::string& what) {
  if (a.ndim() != 1) throw ShapeError(what + " must be one-dimensional");
  if (!(a.flags() & py::array::c_style))
    throw FormatError(what + " must be C-contiguous");
  if (!a.dtype().attr("isnative").cast<bool>())
    throw DTypeError(what + " must be in native byte order");
  auto* keepAlive = new py::object(a);
  std::shared_ptr<void> owner(keepAlive, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
  return Buffer::borrow(dtypeOf(a), a.shape(0), const_cast<void*>(a.data()), std::move(owner));
}

py::array viewOf(const Buffer& b) {
  auto* keepAlive = new std::shared_ptr<void>(b.owner());
  py::capsule base(keepAlive, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return py::array(numpyDType(b.dtype()), {b.length()}, {static_cast<py::ssize_t>(dtypeSize(b.dtype()))},
                   b.data(), base);
}

}  // namespace coiter::bindings
