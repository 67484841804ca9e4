// Bindings of the compiler: index-notation builders, compilation, kernel calls, the cache.
#include <pybind11/stl.h>

#include "bindings/dense_arrays.hpp"
#include "bindings/numpy_buffer.hpp"
#include "cin/concretize.hpp"
#include "cin/loop_order.hpp"
#include "driver/compiler.hpp"
#include "driver/operand_orders.hpp"
#include "jit/build_id.hpp"
#include "lower/lattice_printer.hpp"
#include "notation/result_format.hpp"
#include "schedule/schedule.hpp"

namespace coiter::bindings {

using namespace notation;

namespace {

// A kernel call's operands: TensorStorage, or NumPy arrays read in place as dense tensors.
// Wrapping an array here makes no Python object for it (about 0.8 us a call, which a solver's
// matvec pays at every step).
std::vector<std::shared_ptr<const TensorStorage>> callOperands(const py::list& operands) {
  std::vector<std::shared_ptr<const TensorStorage>> in;
  in.reserve(operands.size());
  for (const py::handle item : operands) {
    if (py::isinstance<py::array>(item))
      in.push_back(wrapDense(py::reinterpret_borrow<py::array>(item), std::nullopt));
    else if (py::isinstance<TensorStorage>(item))
      in.push_back(item.cast<std::shared_ptr<TensorStorage>>());
    else
      throw py::type_error("a kernel operand must be a TensorStorage or a NumPy array, not " +
                           std::string(py::str(py::type::of(item).attr("__name__"))));
  }
  return in;
}

Expr pythonLiteral(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return boolLiteral(value.cast<bool>());
  if (py::isinstance<py::int_>(value)) {
    try {
      return intLiteral(value.cast<int64_t>());
    } catch (const py::cast_error&) {
      throw DTypeError("integer literal " + py::str(value).cast<std::string>() + " does not fit in int64");
    }
  }
  if (py::isinstance<py::float_>(value)) return floatLiteral(value.cast<double>());
  if (PyComplex_Check(value.ptr())) {
    auto c = value.cast<std::complex<double>>();
    return complexLiteral(c.real(), c.imag());
  }
  throw DTypeError("cannot use " + py::repr(value).cast<std::string>() + " in an expression");
}

const Operator* accumulator(const std::optional<std::string>& name) { return name ? &operatorNamed(*name) : nullptr; }

py::dict cacheInfoDict() {
  CacheInfo info = cacheInfo();
  py::dict d;
  d["hits"] = info.hits;
  d["misses"] = info.misses;
  d["disk_hits"] = info.diskHits;
  d["compiles"] = info.compiles;
  d["compile_seconds"] = info.compileSeconds;
  d["entries"] = info.entries;
  d["disk_directory"] = info.diskDirectory.empty() ? py::object(py::none()) : py::object(py::str(info.diskDirectory));
  if (!info.diskProblem.empty()) d["disk_problem"] = info.diskProblem;
  return d;
}

}  // namespace

void bindCompiler(py::module_& m) {
  py::class_<TensorVar, std::shared_ptr<TensorVar>>(m, "TensorVar")
      .def(py::init([](const std::string& name, const Format& format, const std::string& dtype,
                       const std::string& indexDType) {
             return std::make_shared<TensorVar>(
                 TensorVar{name, format, dtypeFromName(dtype), dtypeFromName(indexDType), false});
           }),
           py::arg("name"), py::arg("format"), py::arg("dtype"), py::arg("index_dtype"))
      .def_property_readonly("name", [](const TensorVar& t) { return t.name; })
      .def_property_readonly("format", [](const TensorVar& t) { return t.format; })
      .def_property_readonly("dtype", [](const TensorVar& t) { return dtypeName(t.dtype); })
      .def_property_readonly("index_dtype", [](const TensorVar& t) { return dtypeName(t.indexType); });

  py::class_<ExprNode, std::shared_ptr<ExprNode>>(m, "Expr")
      .def_property_readonly("dtype", [](const ExprNode& e) { return dtypeName(e.type); })
      .def("__str__", [](const std::shared_ptr<ExprNode>& e) { return toString(Expr(e)); });

  py::class_<Assignment>(m, "Assignment")
      .def("__str__", [](const Assignment& a) { return toString(a); })
      .def_property_readonly("result",
                             [](const Assignment& a) { return std::const_pointer_cast<TensorVar>(a.lhs->tensor); });

  auto mutableExpr = [](const Expr& e) { return std::const_pointer_cast<ExprNode>(e); };
  m.def("access", [=](const std::shared_ptr<TensorVar>& t, const std::vector<std::string>& indices) {
    return mutableExpr(access(t, indices));
  });
  m.def("compiler_build_id", &compilerBuildId, "What identifies this build in kernel cache keys.");
  m.def("literal", [=](const py::object& value) { return mutableExpr(pythonLiteral(value)); });
  m.def("negate", [=](const std::shared_ptr<ExprNode>& a) { return mutableExpr(negate(a)); });
  m.def("binary", [=](const std::string& op, const std::shared_ptr<ExprNode>& a, const std::shared_ptr<ExprNode>& b) {
    return mutableExpr(binary(operatorNamed(op), a, b));
  });
  m.def("reduce", [=](const std::string& op, const std::string& var, const std::shared_ptr<ExprNode>& body) {
    return mutableExpr(reduce(operatorNamed(op), var, body));
  });
  m.def(
      "assignment",
      [](const std::shared_ptr<ExprNode>& lhs, const std::shared_ptr<ExprNode>& rhs,
         const std::optional<std::string>& accumulate) {
        if (lhs->kind != ExprKind::Access) throw CoiterError("the left side of an assignment must be a tensor access");
        auto access = std::static_pointer_cast<const AccessNode>(std::shared_ptr<const ExprNode>(lhs));
        return assignment(access, rhs, accumulator(accumulate));
      },
      py::arg("lhs"), py::arg("rhs"), py::arg("accumulate") = py::none());

  m.def("operand_orders_that_traverse", &operandOrdersThatTraverse, py::arg("assignment"), py::arg("schedule") = "",
        py::arg("target") = "cpu", py::arg("max_trials") = 256,
        "The operands (by name) to store in other mode orders so that the statement's loops "
        "traverse every operand in storage order (driver/operand_orders.hpp); empty when they do.");
  m.def(
      "infer_result_format",
      [](const std::vector<std::string>& resultIndices, const std::shared_ptr<ExprNode>& rhs) {
        return inferResultFormat(resultIndices, rhs);
      },
      py::arg("result_indices"), py::arg("rhs"),
      "The format inferred for a result indexed by result_indices (docs/reference.md, \"Result formats\").");
  m.def("concretize", [](const Assignment& a) { return cin::toString(cin::concretize(a)); });
  m.def(
      "default_loop_order",
      [](const Assignment& a) {
        cin::ForallChain chain = cin::forallChain(cin::chooseLoopOrder(cin::concretize(a)));
        if (chain.body->kind != cin::StmtKind::Assign) return std::vector<std::string>{};
        return chain.vars;
      },
      py::arg("assignment"),
      "The loops of the statement's default schedule, outermost first (its automatic loop order, before "
      "workspaces and parallel tags); empty unless that is one chain of loops around the assignment.");
  m.def(
      "outer_lattice", [](const Assignment& a) { return lower::outerLattice(cin::concretize(a)); },
      "The iteration lattice of the outermost loop of the statement, as text.");

  py::class_<CompiledKernel, std::shared_ptr<CompiledKernel>>(m, "CompiledKernel")
      .def_property_readonly("concrete", &CompiledKernel::concreteText)
      .def_property_readonly("signature", [](const CompiledKernel& k) { return k.signature.canonical; })
      .def_property_readonly("engine", [](const CompiledKernel& k) { return k.engine->name(); })
      .def_property_readonly("tensor_names",
                             [](const CompiledKernel& k) {
                               std::vector<std::string> names;
                               for (const auto& t : k.lowered.abi.tensors) names.push_back(t->name);
                               return names;
                             })
      .def("source", &CompiledKernel::source, py::arg("language") = "c")
      .def("stages", &CompiledKernel::stages)
      .def(
          "run",
          [](const CompiledKernel& k, const py::list& operands, const std::optional<std::vector<int64_t>>& shape,
             const py::object& structure) {
            // `structure` is taken as an object: pybind11 converting None to a holder searches
            // other modules for the type first, which costs a raised AttributeError per call.
            std::shared_ptr<TensorStorage> given;
            if (!structure.is_none()) given = structure.cast<std::shared_ptr<TensorStorage>>();
            const auto in = callOperands(operands);
            py::gil_scoped_release nogil;
            return k.run(in, shape ? &*shape : nullptr, given.get());
          },
          py::arg("operands"), py::arg("shape") = py::none(), py::arg("structure") = py::none(),
          "Runs the kernel on operands given as TensorStorage or C-contiguous NumPy arrays (SignatureError if "
          "one needs converting); the result shape is derived from the operands unless given.")
      .def(
          "run_values",
          [](const CompiledKernel& k, const py::list& operands) {
            // A solver's matvec makes this call at every step: the all-dense result comes back as
            // its values array, without a TensorStorage object around it.
            const auto in = callOperands(operands);
            std::shared_ptr<TensorStorage> result;
            {
              py::gil_scoped_release nogil;
              result = k.run(in, nullptr, nullptr);
            }
            return viewOf(result->values());
          },
          py::arg("operands"),
          "Runs a kernel whose result is dense and returns its values (flat); operands are "
          "TensorStorage or C-contiguous NumPy arrays (SignatureError if one needs converting).");

  m.def(
      "compile",
      [](const Assignment& a, const std::string& engine, const std::string& schedule, const std::string& target,
         bool assemble) {
        CompileOptions options{engine, schedule, target, assemble};
        py::gil_scoped_release nogil;
        return std::const_pointer_cast<CompiledKernel>(compileKernel(a, options));
      },
      py::arg("assignment"), py::arg("engine") = "auto", py::arg("schedule") = "", py::arg("target") = "cpu",
      py::arg("assemble") = true);
  m.def(
      "schedule_problem",
      [](const Assignment& a, const std::string& schedule, const std::string& target, bool assemble) {
        return scheduleProblem(a, schedule, target, assemble);
      },
      py::arg("assignment"), py::arg("schedule"), py::arg("target") = "cpu", py::arg("assemble") = true,
      "Why the schedule is illegal for the statement (\"\" when it is legal), decided without lowering or "
      "compiling it.");
  m.def(
      "parse_schedule",
      [](const std::string& text) {
        py::list commands;
        for (const auto& c : schedule::parseSchedule(text).commands) {
          py::list args;
          for (const auto& a : c.args) {
            if (a.isList)
              args.append(py::cast(a.items));
            else
              args.append(a.text);
          }
          commands.append(py::make_tuple(c.name, args));
        }
        return commands;
      },
      "Reads a schedule's text form into [(command, [argument or [list items]])].");
  m.def("cache_info", &cacheInfoDict);
  m.def("take_cache_warnings", &takeCacheWarnings,
        "Warnings about disk cache entries discarded since the last call, for the log.");
  m.def("clear_cache", [](bool disk) { clearCache(disk); }, py::arg("disk") = false);
}

}  // namespace coiter::bindings
