// Bindings of the text readers' parser (storage/text_entries.hpp): the entry lines of a
// Matrix Market or FROSTT file, parsed in parallel without the GIL, into NumPy columns (in
// text order, or laid out in the coarse buckets of their first field).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings/numpy_buffer.hpp"
#include "runtime/parallel_runtime.hpp"
#include "storage/text_entries.hpp"
#include "util/errors.hpp"

namespace py = pybind11;

namespace coiter::bindings {

namespace {

TextField textField(const std::string& name) {
  if (name == "int32") return TextField::Int32;
  if (name == "int64") return TextField::Int64;
  if (name == "uint64") return TextField::UInt64;
  if (name == "float64") return TextField::Float64;
  throw ArgumentError("a text field is int32, int64, uint64 or float64, not '" + name + "'");
}

py::tuple parseTextEntries(const py::buffer& text, const std::vector<std::string>& fields, const std::string& comment,
                           int64_t skipLines, const std::optional<std::vector<int64_t>>& bases,
                           const std::optional<int64_t>& bucketExtent) {
  py::buffer_info info = text.request();
  if (info.ndim != 1 || info.itemsize != 1 || info.strides[0] != 1)
    throw ArgumentError("the text to parse must be contiguous bytes");
  if (comment.size() != 1) throw ArgumentError("the comment marker must be one character");
  if (fields.empty()) throw ArgumentError("a text line has at least one field");
  if (bases && bases->size() != fields.size()) throw ArgumentError("one base per field");
  std::vector<TextColumn> columns;
  for (size_t c = 0; c < fields.size(); ++c) {
    const TextField type = textField(fields[c]);
    const int64_t base = bases ? (*bases)[c] : 0;
    if (base != 0 && (type == TextField::UInt64 || type == TextField::Float64))
      throw ArgumentError("only signed integer fields have a base");
    columns.push_back({type, base});
  }
  if (bucketExtent &&
      (*bucketExtent < 1 || (columns[0].type != TextField::Int32 && columns[0].type != TextField::Int64)))
    throw ArgumentError("entries are bucketed by a signed integer first field of extent at least 1");
  std::unique_ptr<TextEntries> entries;
  {
    py::gil_scoped_release nogil;
    entries = std::make_unique<TextEntries>(static_cast<const char*>(info.ptr), static_cast<size_t>(info.size), columns,
                                            comment[0], skipLines, getNumThreads(), bucketExtent.value_or(0));
  }
  // Uninitialized arrays of the bound on the entries: the parser writes every slot it keeps.
  std::vector<py::array> arrays;
  std::vector<void*> out;
  for (const std::string& name : fields) {
    arrays.emplace_back(py::dtype(name), std::vector<py::ssize_t>{entries->capacity()});
    out.push_back(arrays.back().mutable_data());
  }
  {
    py::gil_scoped_release nogil;
    entries->parse(out);
  }
  py::list parsed, extremes;
  for (size_t c = 0; c < fields.size(); ++c) {
    const py::array& array = arrays[c];
    // The first count() slots; copied out when the rest would waste much memory (a "\r\n"
    // file's bound is twice its lines), since a tensor may keep the array it gets.
    const int64_t unused = entries->capacity() - entries->count();
    py::object kept = unused == 0 ? py::object(array) : py::object(array[py::slice(0, entries->count(), 1)]);
    parsed.append(unused > entries->capacity() / 8 ? kept.attr("copy")() : kept);
    const bool isSigned = columns[c].type == TextField::Int32 || columns[c].type == TextField::Int64;
    extremes.append(isSigned ? py::object(py::make_tuple(entries->minimum(c), entries->maximum(c))) : py::none());
  }
  const std::vector<int64_t>& starts = entries->bucketStarts();
  py::object buckets = starts.empty() ? py::object(py::none()) : py::object(py::array(py::cast(starts)));
  return py::make_tuple(parsed, entries->lineEnds(), entries->badLine(), py::bytes(entries->badText()), extremes,
                        buckets);
}

}  // namespace

void bindIo(py::module_& m) {
  m.def("parse_text_entries", &parseTextEntries, py::arg("text"), py::arg("fields"), py::arg("comment"),
        py::arg("skip_lines"), py::arg("bases") = py::none(), py::arg("bucket_extent") = py::none(),
        R"(Parse the entry lines of a text tensor file, in parallel.

Parameters
----------
text : bytes-like
    The text, latin-1; lines end at "\n", "\r\n" or "\r".
fields : list of str
    The type of each field of a data line: "int32", "int64", "uint64" or "float64". An
    "int32" field is parsed as an int64 and stored narrowed: its extremes say whether it fits.
comment : str
    The character that starts a comment (to the end of the line).
skip_lines : int
    Lines at the start of `text` that hold no data and are not read.
bases : list of int, optional
    Per field, a number subtracted from each value before it is stored (signed integer fields
    only; 1 turns 1-based coordinates into 0-based ones). None: all 0.
bucket_extent : int, optional
    The first field (a signed integer) holds values in [0, bucket_extent) once its base is
    subtracted: lay the entries out in the coarse buckets of those values that packing's sort
    scatters entries into (bucket c holds the values ``c << shift`` to ``(c + 1) << shift``,
    at most 256 buckets), stably, when every line starts with one or with a line end and
    the first lines of the text's chunks are not all in order already; otherwise they stay
    in text order (``buckets`` None).

Returns
-------
tuple
    ``(columns, line_ends, bad_line, bad_text, extremes, buckets)``: one array per field with the
    values of the entries in order (those before the first malformed line, if any), the number
    of line ends in `text`, the 1-based number of the first malformed line (0 when none), its
    text, and per field the ``(least, greatest)`` value parsed (before the base is subtracted;
    ``(0, -1)`` when there are no entries) of a signed integer field, None for the others;
    ``buckets``: None when the entries are in text order, else where each coarse bucket starts
    in the columns (an int64 array of one more than the buckets, the last the entry count),
    the entries in each in text order (valid when no line is malformed); pack(...,
    mode_zero_buckets=buckets) takes them.
)");
}

}  // namespace coiter::bindings
