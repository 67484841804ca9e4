// Bindings of the text readers' parser (storage/text_entries.hpp): the entry lines of a
// Matrix Market or FROSTT file, parsed in parallel without the GIL, into NumPy columns.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/parallel_runtime.hpp"
#include "storage/text_entries.hpp"
#include "util/errors.hpp"

namespace py = pybind11;

namespace coiter::bindings {

namespace {

TextField textField(const std::string& name) {
  if (name == "int64") return TextField::Int64;
  if (name == "uint64") return TextField::UInt64;
  if (name == "float64") return TextField::Float64;
  throw ArgumentError("a text field is int64, uint64 or float64, not '" + name + "'");
}

py::tuple parseTextEntries(const py::buffer& text, const std::vector<std::string>& fields, const std::string& comment,
                           int64_t skipLines) {
  py::buffer_info info = text.request();
  if (info.ndim != 1 || info.itemsize != 1 || info.strides[0] != 1)
    throw ArgumentError("the text to parse must be contiguous bytes");
  if (comment.size() != 1) throw ArgumentError("the comment marker must be one character");
  std::vector<TextField> kinds;
  for (const std::string& name : fields) kinds.push_back(textField(name));
  std::unique_ptr<TextEntries> entries;
  {
    py::gil_scoped_release nogil;
    entries = std::make_unique<TextEntries>(static_cast<const char*>(info.ptr), static_cast<size_t>(info.size), kinds,
                                            comment[0], skipLines, getNumThreads());
  }
  py::list columns;
  std::vector<void*> out;
  for (const std::string& name : fields) {
    py::array array(py::dtype(name), std::vector<py::ssize_t>{entries->count()});
    out.push_back(array.mutable_data());
    columns.append(array);
  }
  {
    py::gil_scoped_release nogil;
    entries->copyColumns(out);
  }
  return py::make_tuple(columns, entries->lineEnds(), entries->badLine(), py::bytes(entries->badText()));
}

}  // namespace

void bindIo(py::module_& m) {
  m.def("parse_text_entries", &parseTextEntries, py::arg("text"), py::arg("fields"), py::arg("comment"),
        py::arg("skip_lines"),
        R"(Parse the entry lines of a text tensor file, in parallel.

Parameters
----------
text : bytes-like
    The text, latin-1; lines end at "\n", "\r\n" or "\r".
fields : list of str
    The type of each field of a data line: "int64", "uint64" or "float64".
comment : str
    The character that starts a comment (to the end of the line).
skip_lines : int
    Lines at the start of `text` that hold no data and are not read.

Returns
-------
tuple
    ``(columns, line_ends, bad_line, bad_text)``: one array per field with the values of the
    entries in order (those before the first malformed line, if any), the number of line ends
    in `text`, the 1-based number of the first malformed line (0 when none) and its text.
)");
}

}  // namespace coiter::bindings
