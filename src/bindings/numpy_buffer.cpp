#include "bindings/numpy_buffer.hpp"

#include <array>

namespace coiter::bindings {

namespace {

// NumPy's dtype kind character and item size of each DType.
struct NumpyLayout {
  char kind;
  ssize_t size;
  DType type;
};
constexpr NumpyLayout kNumpyLayouts[] = {
    {'b', 1, DType::Bool},       {'i', 1, DType::Int8},    {'i', 2, DType::Int16},   {'i', 4, DType::Int32},
    {'i', 8, DType::Int64},      {'u', 1, DType::UInt8},   {'u', 2, DType::UInt16},  {'u', 4, DType::UInt32},
    {'u', 8, DType::UInt64},     {'f', 4, DType::Float32}, {'f', 8, DType::Float64}, {'c', 8, DType::Complex64},
    {'c', 16, DType::Complex128}};

}  // namespace

DType dtypeOf(const py::array& a) {
  // From the descriptor's kind and size (reading NumPy's dtype.name costs microseconds, and
  // every kernel call with NumPy operands asks); names only for the error of an unsupported one.
  py::dtype d = a.dtype();
  char kind = d.kind();
  ssize_t size = d.itemsize();
  for (const NumpyLayout& layout : kNumpyLayouts) {
    if (layout.kind == kind && layout.size == size) return layout.type;
  }
  return dtypeFromName(py::str(d.attr("name")));
}

bool isNative(const py::array& a) {
  char order = a.dtype().byteorder();
  constexpr char kHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '<' : '>';
  return order == '=' || order == '|' || order == kHost;
}

py::dtype numpyDType(DType t) {
  // Made once per dtype and kept for the process (never destroyed: the interpreter may be gone
  // by the time static destructors run). Parsing the name each time cost 0.1 us for every
  // array handed back to Python. Every caller holds the GIL, which guards the table.
  static std::array<py::dtype*, static_cast<size_t>(DType::Complex128) + 1> made{};
  py::dtype*& dtype = made.at(static_cast<size_t>(t));
  if (dtype == nullptr) dtype = new py::dtype(dtypeName(t));
  return *dtype;
}

Buffer borrowArray(const py::array& a, const std::string& what) {
  if (a.ndim() != 1) throw ShapeError(what + " must be one-dimensional");
  if (!(a.flags() & py::array::c_style)) throw FormatError(what + " must be C-contiguous");
  if (!isNative(a)) throw DTypeError(what + " must be in native byte order");
  return borrowData(a, a.shape(0));
}

std::shared_ptr<void> keepAlive(const py::object& object) {
  return std::shared_ptr<void>(new py::object(object), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

Buffer borrowData(const py::array& a, int64_t length) {
  return Buffer::borrow(dtypeOf(a), length, const_cast<void*>(a.data()), keepAlive(a));
}

py::array viewOf(const Buffer& b) {
  auto* keepAlive = new std::shared_ptr<void>(b.owner());
  py::capsule base(keepAlive, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return py::array(numpyDType(b.dtype()), {b.length()}, {static_cast<py::ssize_t>(dtypeSize(b.dtype()))}, b.data(),
                   base);
}

}  // namespace coiter::bindings
