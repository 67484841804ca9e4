#include "autosched/lower_candidate.hpp"

#include <algorithm>
#include <map>

#include "notation/operators.hpp"
#include "schedule/schedule.hpp"

namespace coiter::autosched {

namespace nt = coiter::notation;

namespace {

bool contains(const std::vector<std::string>& vs, const std::string& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

std::string list(const std::vector<std::string>& vs) {
  std::string out = "[";
  for (size_t k = 0; k < vs.size(); ++k) out += (k ? "," : "") + vs[k];
  return out + "]";
}

std::string reorder(const std::vector<std::string>& loops) {
  if (loops.size() < 2) return "";
  std::string out = "reorder(";
  for (size_t k = 0; k < loops.size(); ++k) out += (k ? "," : "") + loops[k];
  return out + ")";
}

// A read of the access as the stage's tensor: its name and type, the candidate's format.
nt::Expr read(const ProgramAccess& a, const nt::TensorVar& like) {
  return nt::access(nt::makeTensorVar(a.tensor, a.format, like.dtype, like.indexType), a.indices);
}

nt::Expr product(const std::vector<nt::Expr>& factors) {
  nt::Expr out = factors.front();
  for (size_t k = 1; k < factors.size(); ++k) out = nt::binary(nt::mulOp(), out, factors[k]);
  return out;
}

// The workspace format as precompute names it, or "" where precompute has none for it.
std::string precomputeFormat(const Format& f) {
  if (f.order() == 0 || f.str() == std::string(static_cast<size_t>(f.order()), 'd')) return "dense";
  if (f.str() == "s") return "compressed";
  if (f.str() == "h") return "hashed";
  return "";
}

}  // namespace

// precompute keeps the workspace's loops in the consumer in the producer's order, and puts
// every other loop of the consumer around the where.
std::string precomputeProblem(const ProductStatement& s, const Candidate& c) {
  if (!c.grouped) return "";
  if (c.consumer.loops != c.workspaceVars)
    return "precompute cannot express it: the consumer's loops are not the workspace's, in its order";
  std::vector<int> rest;
  for (size_t f = 0; f < s.factors.size(); ++f) {
    const auto& group = c.groupedFactors;
    if (std::find(group.begin(), group.end(), static_cast<int>(f)) == group.end()) rest.push_back(static_cast<int>(f));
  }
  std::vector<std::string> restVars = s.varsOf(rest);
  for (const auto& v : c.outer) {
    if (!contains(restVars, v) && !contains(s.resultIndices, v))
      return "precompute cannot express it: loop " + v + " around the where is the grouped factors' alone";
  }
  if (precomputeFormat(c.workspaceFormat).empty())
    return "precompute cannot express it: a workspace over several variables is dense";
  for (const auto& a : c.consumer.factors) {
    if (a.tensor == c.workspace && a.transposed)
      return "precompute cannot express it: the consumer reads the workspace out of order";
  }
  return "";
}

namespace {

class Lowerer {
 public:
  Lowerer(const ProductStatement& s, const Candidate& c) : s_(s), c_(c) {}

  Lowering lower() {
    if (!c_.grouped) return single(product(reads(c_.consumer, c_.consumer.factors.size())), reorder(c_.outer));
    std::string why = precomputeProblem(s_, c_);
    if (why.empty()) return precomputed();
    if (!c_.outer.empty()) return {{}, why + ", and loops run around the where, so it is not two kernels either"};
    return twoKernels(c_.workspaceFormat);
  }

  // The two kernels, the first writing the workspace in `written` (the second reads it in the
  // candidate's workspace format, converted between them where the two differ).
  Lowering twoKernels(const Format& written) const {
    auto ws = nt::makeTensorVar(c_.workspace, written, s_.result->dtype, s_.result->indexType);
    nt::Assignment producer =
        nt::assignment(nt::access(ws, c_.workspaceVars), product(reads(c_.producer, c_.producer.factors.size())));
    std::vector<nt::Expr> factors = reads(c_.consumer, c_.consumer.factors.size());
    nt::Assignment consumer = resultAssignment(product(factors));
    return {{KernelStage{producer, reorder(c_.producer.loops)}, KernelStage{consumer, reorder(c_.consumer.loops)}}, ""};
  }

 private:
  std::vector<nt::Expr> reads(const Nest& n, size_t count) const {
    std::vector<nt::Expr> out;
    for (size_t k = 0; k < count; ++k) out.push_back(read(n.factors[k], factorTensor(n.factors[k].tensor)));
    return out;
  }

  const nt::TensorVar& factorTensor(const std::string& name) const {
    for (const auto& f : s_.factors) {
      if (f.tensor->name == name) return *f.tensor;
    }
    return *s_.result;  // the workspace: typed as the result
  }

  // The result in the format the candidate writes it in (transposed where its loops are).
  nt::Assignment resultAssignment(const nt::Expr& rhs) const {
    const ProgramAccess& lhs = c_.consumer.lhs;
    auto result = nt::makeTensorVar(s_.result->name, lhs.format, s_.result->dtype, s_.result->indexType);
    return nt::assignment(nt::access(result, s_.resultIndices), rhs);
  }

  Lowering single(const nt::Expr& rhs, const std::string& schedule) const {
    return {{KernelStage{resultAssignment(rhs), schedule}}, ""};
  }

  Lowering precomputed() const {
    const Nest& consumer = c_.consumer;
    std::vector<nt::Expr> rest = reads(consumer, consumer.factors.size() - 1);  // the workspace is last
    nt::Expr group = product(reads(c_.producer, c_.producer.factors.size()));
    rest.push_back(group);
    nt::Expr rhs = product(rest);
    std::vector<std::string> chain = c_.outer;
    chain.insert(chain.end(), c_.producer.loops.begin(), c_.producer.loops.end());
    std::string schedule = reorder(chain);
    schedule += (schedule.empty() ? "" : ";") + std::string("precompute(") + nt::toString(group) + "," +
                list(c_.workspaceVars) + "," + list(c_.workspaceVars) + "," + precomputeFormat(c_.workspaceFormat) +
                ")";
    return single(rhs, schedule::parseSchedule(schedule).toString());  // canonical: no spaces
  }

  const ProductStatement& s_;
  const Candidate& c_;
};

// A tensor read in two orders in one kernel would need two formats under one name.
std::string twoFormatsOfOneTensor(const nt::Assignment& a) {
  std::map<std::string, Format> formats;
  std::string problem;
  nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
    if (e->kind != nt::ExprKind::Access) return;
    const auto& t = *static_cast<const nt::AccessNode&>(*e).tensor;
    auto [it, fresh] = formats.emplace(t.name, t.format);
    if (!fresh && it->second != t.format && problem.empty())
      problem = "one kernel would read " + t.name + " in two mode orders";
  });
  return problem;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> KernelStage::formats() const {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](const nt::TensorVar& t) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const auto& f) { return f.first == t.name; });
    if (t.order() > 0 && !seen) out.emplace_back(t.name, t.format.str());
  };
  add(*statement.lhs->tensor);
  nt::forEachSubexpression(statement.rhs, [&](const nt::Expr& e) {
    if (e->kind == nt::ExprKind::Access) add(*static_cast<const nt::AccessNode&>(*e).tensor);
  });
  return out;
}

namespace {

// Empties the stages, with the reason, when one of them is not legal.
void judge(Lowering& out, const LegalityCheck& legal) {
  for (size_t k = 0; k < out.stages.size(); ++k) {
    std::string problem = twoFormatsOfOneTensor(out.stages[k].statement);
    if (problem.empty()) problem = legal(out.stages[k].statement, out.stages[k].schedule);
    if (!problem.empty()) {
      out.problem = (out.stages.size() > 1 ? "kernel " + std::to_string(k + 1) + ": " : std::string()) + problem;
      out.stages.clear();
      return;
    }
  }
}

bool readsWorkspaceTransposed(const Candidate& c) {
  return std::any_of(c.consumer.factors.begin(), c.consumer.factors.end(),
                     [&](const ProgramAccess& a) { return a.tensor == c.workspace && a.transposed; });
}

}  // namespace

Lowering lowerCandidate(const ProductStatement& s, const Candidate& c, const LegalityCheck& legal) {
  Lowerer lowerer(s, c);
  Lowering out = lowerer.lower();
  judge(out, legal);
  // A sparse workspace the second kernel reads transposed is converted between the kernels
  // anyway, so the first writes it as dense rows of compressed lists, the least storage to
  // write and to convert from (a d..ds workspace holds every coordinate of its dense levels:
  // SpMTTKRP's w(k,j,l), read as dense (k,l) rows of j lists, would fill N² positions twice).
  const Format& ws = c.workspaceFormat;
  if (out.stages.size() == 2 && readsWorkspaceTransposed(c) && ws.order() > 1 &&
      ws.str() != std::string(static_cast<size_t>(ws.order()), 'd')) {
    Format rows = Format::parse("d" + std::string(static_cast<size_t>(ws.order()) - 1, 's'));
    if (rows.str() != ws.str()) {
      Lowering compact = lowerer.twoKernels(rows);
      judge(compact, legal);
      if (!compact.stages.empty()) out = std::move(compact);
    }
  }
  return out;
}

}  // namespace coiter::autosched
