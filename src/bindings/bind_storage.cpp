// Bindings of tensor storage: packing, wrapping outside arrays, reading entries back.
#include <pybind11/stl.h>

#include <optional>

#include "bindings/dense_arrays.hpp"
#include "bindings/numpy_buffer.hpp"
#include "memory/allocation_limit.hpp"
#include "runtime/parallel_runtime.hpp"
#include "storage/coordinate_list.hpp"
#include "storage/pack.hpp"
#include "storage/transpose.hpp"
#include "storage/unpack.hpp"
#include "util/errors.hpp"

namespace coiter::bindings {

namespace {

py::list levelArrays(const TensorStorage& t) {
  py::list levels;
  for (size_t k = 0; k < t.levels().size(); ++k) {
    py::dict arrays;
    for (const auto& [name, buffer] : t.levels()[k].arrays) arrays[py::str(name)] = viewOf(buffer);
    levels.append(arrays);
  }
  return levels;
}

py::list levelParameters(const TensorStorage& t) {
  py::list levels;
  for (const auto& level : t.levels()) levels.append(py::cast(level.scalars));
  return levels;
}

std::shared_ptr<TensorStorage> pack(const Format& format, const std::vector<int64_t>& shape,
                                    const std::vector<py::array>& coords, const py::array& values, bool sumDuplicates,
                                    int indexBits, bool adopt,
                                    const std::optional<std::vector<int64_t>>& modeZeroBuckets) {
  PackRequest r;
  r.format = format;
  r.shape = shape;
  for (size_t m = 0; m < coords.size(); ++m)
    r.modeCoords.push_back(borrowArray(coords[m], "coordinates of mode " + std::to_string(m)));
  r.values = borrowArray(values, "values");
  r.sumDuplicates = sumDuplicates;
  r.indexBits = indexBits;
  r.adoptInputs = adopt;
  if (modeZeroBuckets) r.modeZeroBuckets = *modeZeroBuckets;
  r.threads = getNumThreads();
  py::gil_scoped_release nogil;
  return packCoordinates(r);
}

std::shared_ptr<TensorStorage> fromArrays(const Format& format, const std::vector<int64_t>& shape,
                                          const std::string& indexType,
                                          const std::vector<std::map<std::string, py::array>>& arrays,
                                          const std::vector<std::map<std::string, int64_t>>& scalars,
                                          const py::array& values) {
  if (arrays.size() != format.levels().size() || scalars.size() != format.levels().size())
    throw FormatError("format " + format.repr() + " has " + std::to_string(format.levels().size()) +
                      " levels; give arrays and parameters for each");
  std::vector<LevelStorage> levels(arrays.size());
  for (size_t k = 0; k < arrays.size(); ++k) {
    for (const auto& [name, array] : arrays[k])
      levels[k].arrays[name] = borrowArray(array, "level " + std::to_string(k) + " array '" + name + "'");
    levels[k].scalars = scalars[k];
  }
  return std::make_shared<TensorStorage>(format, shape, dtypeOf(values), dtypeFromName(indexType), std::move(levels),
                                         borrowArray(values, "values"));
}

bool readableInPlace(const py::array& a) { return a.ndim() == 1 && (a.flags() & py::array::c_style) && isNative(a); }

// A COO tensor reading a canonical 2-D SciPy coo array or matrix (sorted by row, then
// column; no duplicates) in place: its rows are the crd of the top level (whose pos is
// [0, nnz]), its columns the crd of the singleton level below. See wrapScipy.
std::shared_ptr<TensorStorage> wrapScipyCoo(const py::object& matrix, bool forKernelCall) {
  static const Format coo = Format::named("coo", 2);
  struct Names {
    py::str canonical{"has_canonical_format"}, coords{"coords"}, data{"data"}, shape{"shape"};
  };
  static const Names* const names = new Names();
  const auto shape = matrix.attr(names->shape).cast<std::vector<int64_t>>();
  if (shape.size() != 2)
    throw SignatureError("a SciPy coo array of order " + std::to_string(shape.size()) + " needs converting");
  // SciPy keeps the flag as a plain attribute (sum_duplicates and conversions set it): no scan.
  if (!matrix.attr(names->canonical).cast<bool>()) throw SignatureError("the matrix's coordinates are not canonical");
  const auto coords = matrix.attr(names->coords).cast<py::tuple>();
  py::array rows = coords[0], cols = coords[1], data = matrix.attr(names->data);
  if (!readableInPlace(rows) || !readableInPlace(cols) || !readableInPlace(data))
    throw SignatureError("the matrix's arrays need converting");
  DType indexType, valueType;
  try {
    indexType = dtypeOf(rows);
    valueType = dtypeOf(data);
  } catch (const DTypeError& e) {
    throw SignatureError(e.what());
  }
  if ((indexType != DType::Int32 && indexType != DType::Int64) || dtypeOf(cols) != indexType)
    throw SignatureError("the matrix's index arrays need converting to one width");
  const int64_t nnz = rows.shape(0);
  Buffer pos = Buffer::allocate(indexType, 2);
  visitIndices(pos, [&](auto* p) {
    p[0] = 0;
    p[1] = static_cast<std::remove_pointer_t<decltype(p)>>(nnz);
  });
  std::vector<LevelStorage> levels(2);
  levels[0].arrays["pos"] = pos;
  levels[0].arrays["crd"] = borrowData(rows, nnz);
  levels[1].arrays["crd"] = borrowData(cols, cols.shape(0));
  auto storage = std::make_shared<TensorStorage>(coo, shape, valueType, indexType, std::move(levels),
                                                 borrowData(data, data.shape(0)));
  // As for CSR: the flag vouches for order; kernels check coordinates as they load them.
  storage->markValid();
  storage->checkStructure();  // O(1): lengths
  if (forKernelCall) storage->markStructureChecked();
  return storage;
}

// A CSR or CSC tensor reading a canonical SciPy csr/csc array or matrix in place: what
// ct.asarray makes of one, without the Python (kernel calls take SciPy operands through
// here). SignatureError when the matrix needs a conversion (another SciPy format,
// non-canonical indices, mixed index widths, a dtype coiter does not store), so that the
// caller takes the general path, which converts it or explains why it cannot.
// `forKernelCall`: the tensor goes straight into a kernel call, with no user code in between
// to change the arrays, so that call need not check the structure again.
std::shared_ptr<TensorStorage> wrapScipy(const py::object& matrix, bool forKernelCall) {
  static const Format csr = Format::named("csr", 2);
  static const Format csc = Format::named("csc", 2);
  // Attribute names made once (attr("...") would make a Python string per lookup), and never
  // freed: they must outlive the interpreter's shutdown.
  struct Names {
    py::str format{"format"}, canonical{"has_canonical_format"}, indptr{"indptr"}, indices{"indices"}, data{"data"},
        shape{"shape"};
  };
  static const Names* const names = new Names();
  const std::string kind = py::str(matrix.attr(names->format));
  if (kind == "coo") return wrapScipyCoo(matrix, forKernelCall);
  if (kind != "csr" && kind != "csc") throw SignatureError("a SciPy " + kind + " matrix needs converting");
  py::array pos = matrix.attr(names->indptr), crd = matrix.attr(names->indices), data = matrix.attr(names->data);
  if (!readableInPlace(pos) || !readableInPlace(crd) || !readableInPlace(data))
    throw SignatureError("the matrix's arrays need converting");
  DType indexType, valueType;
  try {
    indexType = dtypeOf(pos);
    valueType = dtypeOf(data);
  } catch (const DTypeError& e) {
    throw SignatureError(e.what());
  }
  if ((indexType != DType::Int32 && indexType != DType::Int64) || dtypeOf(crd) != indexType)
    throw SignatureError("the matrix's index arrays need converting to one width");
  const auto shape = matrix.attr(names->shape).cast<std::vector<int64_t>>();
  std::vector<LevelStorage> levels(2);
  levels[0].scalars["size"] = shape[kind == "csr" ? 0 : 1];
  levels[1].arrays["pos"] = borrowData(pos, pos.shape(0));
  levels[1].arrays["crd"] = borrowData(crd, crd.shape(0));
  auto storage = std::make_shared<TensorStorage>(kind == "csr" ? csr : csc, shape, valueType, indexType,
                                                 std::move(levels), borrowData(data, data.shape(0)));
  // SciPy's canonical flag vouches for order and uniqueness, as SciPy itself trusts it;
  // kernels check coordinates as they load them, and conversions check their bounds. So a
  // call costs a pass over indptr, not over indices (which would cost as much as SpMV).
  // The structure is checked first: computing the flag, SciPy reads indices up to indptr[-1].
  storage->markValid();
  storage->checkStructure();
  if (!matrix.attr(names->canonical).cast<bool>()) throw SignatureError("the matrix's indices are not canonical");
  if (forKernelCall) storage->markStructureChecked();
  return storage;
}

py::tuple entries(const TensorStorage& t) {
  if (entriesListInOrder(t)) {
    // Column-major, so that each mode's coordinates are one contiguous array (what to_scipy
    // and the pydata conversions take apart), written straight from the levels' arrays.
    const int64_t n = countStoredEntries(t);
    const auto order = static_cast<int64_t>(t.shape().size());
    py::array_t<int64_t, py::array::f_style> coords({n, order});
    std::vector<int64_t*> modes;
    for (int64_t m = 0; m < order; ++m) modes.push_back(coords.mutable_data() + m * n);
    {
      py::gil_scoped_release nogil;
      listEntriesInOrder(t, modes);
    }
    return py::make_tuple(coords, viewOf(t.values().copy()));
  }
  StoredEntries e;
  {
    py::gil_scoped_release nogil;
    e = storedEntries(t);
  }
  const int64_t n = static_cast<int64_t>(e.valuePositions.size());
  const int64_t order = static_cast<int64_t>(e.modeCoords.size());
  py::array_t<int64_t> coords({n, order});
  auto c = coords.mutable_unchecked<2>();
  for (int64_t m = 0; m < order; ++m)
    for (int64_t k = 0; k < n; ++k) c(k, m) = e.modeCoords[m][k];
  return py::make_tuple(coords, viewOf(gatherValues(t, e.valuePositions)));
}

void toDense(const TensorStorage& t, py::array out) {
  if (!(out.flags() & py::array::c_style) || !out.writeable() || dtypeOf(out) != t.valueType())
    throw DTypeError("to_dense needs a writeable C-contiguous array of the tensor's dtype");
  int64_t size = 1;
  for (int64_t e : t.shape()) size *= e;
  if (out.size() != size) throw ShapeError("to_dense: output has the wrong size");
  void* data = out.mutable_data();
  py::gil_scoped_release nogil;
  scatterToDense(t, data);
}

py::object element(const TensorStorage& t, const std::vector<int64_t>& coords) {
  py::array out(numpyDType(t.valueType()), std::vector<py::ssize_t>{});
  readElement(t, coords, out.mutable_data());
  return out[py::tuple()];
}

}  // namespace

void bindStorage(py::module_& m) {
  py::class_<TensorStorage, std::shared_ptr<TensorStorage>>(m, "TensorStorage")
      .def_property_readonly("format", &TensorStorage::format)
      .def_property_readonly("shape", [](const TensorStorage& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", [](const TensorStorage& t) { return numpyDType(t.valueType()); })
      .def_property_readonly("index_dtype", [](const TensorStorage& t) { return numpyDType(t.indexType()); })
      .def_property_readonly("values", [](const TensorStorage& t) { return viewOf(t.values()); })
      .def_property_readonly("level_arrays", &levelArrays)
      .def_property_readonly("level_parameters", &levelParameters)
      .def_property_readonly("nnz", &TensorStorage::nnz)
      .def_property_readonly("is_validated", &TensorStorage::isValid)
      .def_property_readonly(
          "device",
          [](const TensorStorage& t) { return t.deviceCopy() ? t.deviceCopy()->device() : std::string("cpu"); })
      .def("validate",
           [](const TensorStorage& t) {
             py::gil_scoped_release nogil;
             t.validate();
           })
      .def("copy", &TensorStorage::copy)
      .def(
          "swap_compressed_modes",
          [](const TensorStorage& t, const Format& target) {
            py::gil_scoped_release nogil;
            return swapCompressedModes(t, target);
          },
          py::arg("format"),
          "The matrix in `format` when that swaps the two modes of a dense-over-compressed matrix "
          "(CSR <-> CSC), by a counting sort; None otherwise (storage/transpose.hpp).")
      .def(
          "list_as_coordinates",
          [](const TensorStorage& t, const Format& target) {
            py::gil_scoped_release nogil;
            return listAsCoordinates(t, target);
          },
          py::arg("format"),
          "The tensor in `format` when that is a coordinate list (COO) of its entries as they "
          "list in order, straight from its arrays; None otherwise (storage/coordinate_list.hpp).")
      .def("entries", &entries)
      .def("to_dense", &toDense)
      .def("element", &element);

  m.def("pack", &pack, py::arg("format"), py::arg("shape"), py::arg("coords"), py::arg("values"),
        py::arg("sum_duplicates") = true, py::arg("index_bits") = 32, py::arg("adopt") = false,
        py::arg("mode_zero_buckets") = py::none(),
        "Packs coordinates (one array per mode) and values into a tensor of the given format; with adopt, "
        "the arrays are given up (nothing else holds them, as a reader's parsed columns): the tensor may "
        "keep them instead of copies. mode_zero_buckets (with adopt): where each coarse bucket of mode 0 "
        "starts, the entries being laid out in those buckets (as parse_text_entries(bucket_extent=...) "
        "leaves them); the sort then skips its scatter.");
  m.def("wrap_dense", &wrapDense, py::arg("array"), py::arg("format") = py::none(),
        "A dense tensor reading the array in place; SignatureError if it needs converting.");
  m.def("wrap_scipy", &wrapScipy, py::arg("matrix"), py::arg("for_kernel_call") = false,
        "A CSR/CSC/COO tensor reading a canonical SciPy csr/csc/coo matrix in place; "
        "SignatureError if it needs converting.");
  m.def(
      "check_dense_array",
      [](const std::vector<int64_t>& shape, const std::string& dtype, const std::string& what) {
        checkedDenseArrayBytes(shape, dtypeFromName(dtype), what);
      },
      py::arg("shape"), py::arg("dtype"), py::arg("what"),
      "ShapeError naming `what` when a dense array of this shape and dtype cannot fit in memory.");
  m.def("from_arrays", &fromArrays, py::arg("format"), py::arg("shape"), py::arg("index_dtype"), py::arg("arrays"),
        py::arg("parameters"), py::arg("values"),
        "Wraps existing level arrays without copying; validate() checks them before use.");
}

}  // namespace coiter::bindings
