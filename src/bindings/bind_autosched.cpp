// Bindings of the autoscheduler's asymptotic stage (src/autosched/): the frontier of a typed
// statement, its candidates and its report. Legality is coiter::scheduleProblem's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "autosched/frontier.hpp"
#include "driver/compiler.hpp"

namespace py = pybind11;

namespace coiter::bindings {

using autosched::Frontier;

namespace {

// One candidate of a frontier, read through the frontier that holds it.
struct CandidateView {
  std::shared_ptr<const Frontier> frontier;
  int index = 0;
  const autosched::RankedCandidate& get() const { return frontier->candidates[static_cast<size_t>(index)]; }
};

py::dict stageFormats(const autosched::KernelStage& stage) {
  py::dict formats;
  for (const auto& [name, format] : stage.formats()) formats[py::str(name)] = format;
  return formats;
}

}  // namespace

void bindAutosched(py::module_& m) {
  py::class_<CandidateView>(m, "AsymptoticCandidate")
      .def_property_readonly("index", [](const CandidateView& c) { return c.index; })
      .def_property_readonly("program", [](const CandidateView& c) { return c.get().program.toString(); })
      .def_property_readonly("loop_order", [](const CandidateView& c) { return c.get().program.loopOrder; })
      .def_property_readonly("depth", [](const CandidateView& c) { return c.get().program.depth(); })
      .def_property_readonly(
          "cost",
          [](const CandidateView& c) { return c.get().lowered() ? autosched::toString(c.get().cost) : std::string(); })
      .def_property_readonly("on_frontier", [](const CandidateView& c) { return c.get().onFrontier; })
      .def_property_readonly("lowered", [](const CandidateView& c) { return c.get().lowered(); })
      .def_property_readonly("problem", [](const CandidateView& c) { return c.get().lowering.problem; })
      .def_property_readonly("dominated_by",
                             [](const CandidateView& c) -> py::object {
                               int d = c.get().dominatedBy;
                               return d < 0 ? py::object(py::none()) : py::object(py::int_(d));
                             })
      .def_property_readonly("stages",
                             [](const CandidateView& c) {
                               py::list stages;
                               for (const auto& s : c.get().lowering.stages) {
                                 stages.append(py::make_tuple(notation::toString(s.statement), stageFormats(s),
                                                              s.schedule, s.statement.lhs->tensor->name));
                               }
                               return stages;
                             })
      .def("__repr__", [](const CandidateView& c) {
        return "<AsymptoticCandidate #" + std::to_string(c.index) + " " + c.get().program.toString() + ">";
      });

  py::class_<Frontier, std::shared_ptr<Frontier>>(m, "AsymptoticFrontier")
      .def_property_readonly("minimum_depth", [](const Frontier& f) { return f.minimumDepth; })
      .def_property_readonly("deeper", [](const Frontier& f) { return f.deeper; })
      .def_property_readonly("complete", [](const Frontier& f) { return f.complete; })
      .def_property_readonly("members", [](const Frontier& f) { return f.members; })
      .def_property_readonly("cost_classes", [](const Frontier& f) { return f.costClasses; })
      .def_property_readonly("candidates",
                             [](const std::shared_ptr<Frontier>& f) {
                               std::vector<CandidateView> out;
                               for (size_t k = 0; k < f->candidates.size(); ++k)
                                 out.push_back(CandidateView{f, static_cast<int>(k)});
                               return out;
                             })
      .def("report", &Frontier::report, py::arg("all") = false);

  m.def(
      "asymptotic_frontier",
      [](const notation::Assignment& a, std::optional<double> seconds) {
        auto legal = [](const notation::Assignment& stage, const std::string& schedule) {
          return scheduleProblem(stage, schedule);
        };
        return std::make_shared<Frontier>(autosched::asymptoticFrontier(a, legal, seconds));
      },
      py::arg("assignment"), py::arg("seconds") = py::none(),
      "The asymptotic frontier of a product statement: its minimum-depth candidates, their costs, schedules "
      "and dominance. `seconds`: a deadline; past it, the frontier of the candidates ranked so far "
      "(`complete` false).");
}

}  // namespace coiter::bindings
