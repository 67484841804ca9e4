// Bindings of level types and formats.
#include <pybind11/stl.h>

#include "bindings/numpy_buffer.hpp"
#include "format/format.hpp"

namespace coiter::bindings {

namespace {

int option(const py::object& value) { return value.is_none() ? -1 : (value.cast<bool>() ? 1 : 0); }

py::dict propertiesOf(const LevelType& l) {
  LevelProperties p = l.properties();
  py::dict d;
  d["full"] = p.full;
  d["ordered"] = p.ordered;
  d["unique"] = p.unique;
  d["branchless"] = p.branchless;
  d["compact"] = p.compact;
  return d;
}

py::dict capabilitiesOf(const LevelType& l) {
  LevelCapabilities c = l.capabilities();
  py::dict d;
  d["coordinate_iterate"] = c.coordinateIterate;
  d["position_iterate"] = c.positionIterate;
  d["locate"] = c.locate;
  d["append"] = c.append;
  d["insert"] = c.insert;
  return d;
}

const char* assemblyName(LevelAssembly a) {
  switch (a) {
    case LevelAssembly::Located: return "located";
    case LevelAssembly::Appended: return "appended";
    case LevelAssembly::AppendedBelow: return "appended_below";
    case LevelAssembly::Inserted: return "inserted";
    case LevelAssembly::None: break;
  }
  return "none";
}

py::tuple levelCoordinateTuple(const LevelCoordinate& lc) {
  switch (lc.kind) {
    case LevelCoordinate::Kind::Mode: return py::make_tuple("mode", lc.mode);
    case LevelCoordinate::Kind::BlockIndex: return py::make_tuple("block", lc.mode, lc.factor);
    case LevelCoordinate::Kind::BlockOffset: return py::make_tuple("within_block", lc.mode, lc.factor);
    case LevelCoordinate::Kind::Diagonal: return py::make_tuple("diagonal", lc.mode, lc.factor);
    case LevelCoordinate::Kind::Slot: return py::make_tuple("slot", lc.mode);
  }
  return py::make_tuple();
}

}  // namespace

void bindFormats(py::module_& m) {
  py::class_<LevelType, std::shared_ptr<LevelType>>(
      m, "LevelType",
      "A level type (dense, compressed, singleton, hashed, range, offset). Call it to set "
      "optional properties: ct.compressed(ordered=False), ct.hashed(buckets=64).\n\n"
      "The six level types are the module attributes ct.dense, ct.compressed, ct.singleton, "
      "ct.hashed, ct.range and ct.offset. Level types compare equal by value (name and "
      "properties).")
      .def_property_readonly("name", &LevelType::name, "The level type's name: \"dense\", \"compressed\", ...")
      .def_property_readonly("properties", &propertiesOf, "The properties as a dict (full, ordered, unique, ...).")
      .def_property_readonly(
          "capabilities", &capabilitiesOf,
          "What the level supports, as a dict: coordinate_iterate, position_iterate, locate, append, insert.")
      .def_property_readonly("configurable_properties", &LevelType::configurableProperties,
                             "The properties a user may set on this level type (calling it with another raises).")
      .def_property_readonly(
          "full", [](const LevelType& l) { return l.properties().full; },
          "Whether every segment holds every coordinate of the dimension.")
      .def_property_readonly(
          "ordered", [](const LevelType& l) { return l.properties().ordered; },
          "Whether the coordinates under one parent are non-decreasing.")
      .def_property_readonly(
          "unique", [](const LevelType& l) { return l.properties().unique; },
          "Whether no coordinate repeats under one parent.")
      .def_property_readonly(
          "branchless", [](const LevelType& l) { return l.properties().branchless; },
          "Whether every parent has exactly one child (singleton levels).")
      .def_property_readonly(
          "compact", [](const LevelType& l) { return l.properties().compact; },
          "Whether no unlabeled (empty) slots lie between coordinates.")
      .def_property_readonly(
          "buckets",
          [](const LevelType& l) -> py::object {
            if (!l.buckets()) return py::none();
            return py::int_(l.buckets());
          },
          "A hashed level's bucket count per segment, or None.")
      .def_property_readonly(
          "letter",
          [](const LevelType& l) -> py::object {
            if (!l.letter()) return py::none();
            return py::str(std::string(1, l.letter()));
          },
          "The letter of the format syntax (d, s, u, q, c, h), or None for a level without one.")
      .def_property_readonly("array_names", &LevelType::arrayNames,
                             "The names of the level's arrays (pos, crd, ...), as Level exposes them.")
      // How a kernel computes the level in a result (format/level_kernel.hpp).
      .def_property_readonly(
          "assembly", [](const LevelType& l) { return assemblyName(l.assembly()); },
          "How a kernel builds the level in a result: located, appended, appended_below, inserted or none.")
      .def_property_readonly("locates", &LevelType::locatesEveryCoordinate,
                             "Whether the level has a position for every coordinate under each parent, computed from "
                             "the parent's position (dense, range): kernels locate it instead of iterating it.")
      .def_property_readonly("parameter_names", &LevelType::scalarNames,
                             "The names of the level's scalar parameters (a hashed level's buckets, ...).")
      .def(
          "__call__",
          [](const LevelType& l, py::object ordered, py::object unique, py::object full, py::object compact,
             py::object buckets) {
            LevelOptions o;
            o.ordered = option(ordered);
            o.unique = option(unique);
            o.full = option(full);
            o.compact = option(compact);
            if (!buckets.is_none()) {
              o.buckets = buckets.cast<int64_t>();
              if (o.buckets <= 0) throw FormatError("hashed level: buckets must be positive");
            }
            return std::const_pointer_cast<LevelType>(l.configure(o));
          },
          py::kw_only(), py::arg("ordered") = py::none(), py::arg("unique") = py::none(), py::arg("full") = py::none(),
          py::arg("compact") = py::none(), py::arg("buckets") = py::none())
      .def("__eq__", [](const LevelType& a, const LevelType& b) { return a == b; })
      .def("__eq__", [](const LevelType&, const py::object&) { return false; })
      .def("__hash__", [](const LevelType& l) { return py::hash(py::str(l.repr())); })
      .def("__repr__", &LevelType::repr);

  m.attr("dense") = std::const_pointer_cast<LevelType>(denseLevel());
  m.attr("compressed") = std::const_pointer_cast<LevelType>(compressedLevel());
  m.attr("singleton") = std::const_pointer_cast<LevelType>(singletonLevel());
  m.attr("hashed") = std::const_pointer_cast<LevelType>(hashedLevel());
  m.attr("range") = std::const_pointer_cast<LevelType>(rangeLevel());
  m.attr("offset") = std::const_pointer_cast<LevelType>(offsetLevel());

  py::class_<Format>(m, "Format", R"doc(A tensor storage format: one level type per stored level, and a mode order.

Parameters
----------
levels : list of LevelType
    The level types, outermost first (``[ct.dense, ct.compressed]`` is CSR).
mode_order : sequence of int, optional
    Which mode each level stores: ``(1, 0)`` stores columns first (CSC). By default
    ``(0, 1, ..., order - 1)``.

Notes
-----
``Format.parse("ds:1,0")`` reads the letter syntax (d dense, s compressed, u compressed
non-unique, q singleton, c singleton non-unique, h hashed; after ``:`` the mode order), and
every function that takes a format also takes a name (``"csr"``, ``"coo"``, ``"dia"``, ...):
see :func:`coiter.as_format`. Blocked and diagonal formats (``ct.bcsr``, ``"ell"``, ``"dia"``)
have more levels than modes; :attr:`level_map` says which coordinate each level stores.
Formats compare equal by value and print in the letter syntax when one exists.)doc")
      .def(py::init(
               [](const std::vector<std::shared_ptr<LevelType>>& levels, std::optional<std::vector<int>> modeOrder) {
                 std::vector<LevelTypePtr> l(levels.begin(), levels.end());
                 return Format(l, modeOrder.value_or(std::vector<int>{}));
               }),
           py::arg("levels"), py::arg("mode_order") = py::none())
      .def_static("parse", &Format::parse, py::arg("text"),
                  "The format a letter string spells (\"ds\", \"ds:1,0\", \"sss\"); FormatError if malformed.")
      .def_static("named", &Format::named, py::arg("name"), py::arg("order"),
                  "The named format (\"csr\", \"coo\", \"dense\", ...) for tensors of ``order`` modes.")
      .def_static("is_name", &Format::isName, "Whether a string is the name of a format.")
      .def_static("bcsr", &Format::bcsr, "Block CSR with the given block shape (as ct.bcsr).")
      .def_property_readonly(
          "levels",
          [](const Format& f) {
            py::list l;
            for (const auto& t : f.levels()) l.append(std::const_pointer_cast<LevelType>(t));
            return l;
          },
          "The level types, outermost first.")
      .def_property_readonly(
          "mode_order", [](const Format& f) { return py::tuple(py::cast(f.modeOrder())); },
          "Which mode each level stores, as a tuple.")
      .def_property_readonly("order", &Format::order, "The number of modes of the tensors the format describes.")
      .def_property_readonly(
          "name",
          [](const Format& f) -> py::object {
            if (f.name().empty()) return py::none();
            return py::str(f.name());
          },
          "The name of a named format without a letter spelling (\"dia\", \"ell\", \"bcsr\"), or None.")
      .def_property_readonly(
          "level_map",
          [](const Format& f) {
            py::list l;
            for (const auto& lc : f.levelMap()) l.append(levelCoordinateTuple(lc));
            return l;
          },
          "Which coordinate each level stores, one tuple per level: (kind, mode) or (kind, mode, factor), "
          "kind being mode, block, within_block, diagonal or slot.")
      .def_property_readonly(
          "block_shape",
          [](const Format& f) -> py::object {
            if (f.name() != "bcsr") return py::none();
            return py::make_tuple(f.levelMap()[0].factor, f.levelMap()[1].factor);
          },
          "A BCSR format's block shape (rows, cols), or None.")
      .def("holds_duplicates", &Format::holdsDuplicates,
           "Whether tensors in the format may store a coordinate more than once (non-unique levels).")
      // Why a kernel cannot compute a result in this format, or None (Format::resultAssemblyProblem).
      .def_property_readonly(
          "result_assembly_problem",
          [](const Format& f) -> py::object {
            std::string problem = f.resultAssemblyProblem();
            if (problem.empty()) return py::none();
            return py::str(problem);
          },
          "Why a kernel cannot compute a result in this format, or None.")
      .def_property_readonly("result_assembly_format", &Format::resultAssemblyFormat,
                             "The format a kernel computes a result of this format in: the format itself, or "
                             "with the hashed levels it cannot insert into in one pass compressed (the result "
                             "is packed after the call).")
      .def("__str__", [](const Format& f) { return f.str().empty() ? f.repr() : f.str(); })
      .def("__repr__", &Format::repr)
      .def("__eq__", [](const Format& a, const Format& b) { return a == b; })
      .def("__eq__", [](const Format&, const py::object&) { return false; })
      .def("__hash__", [](const Format& f) { return py::hash(py::str(f.repr())); });
}

}  // namespace coiter::bindings
