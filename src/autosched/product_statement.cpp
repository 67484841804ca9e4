#include "autosched/product_statement.hpp"

#include <algorithm>
#include <set>

#include "notation/operators.hpp"
#include "util/errors.hpp"

namespace coiter::autosched {

namespace nt = coiter::notation;

namespace {

[[noreturn]] void refuse(const nt::Assignment& a, const std::string& why) {
  throw ArgumentError("autoschedule: " + nt::toString(a) + ": " + why +
                      " (the asymptotic stage schedules products of tensor accesses, summed over the "
                      "variables the result does not have)");
}

void collectFactors(const nt::Assignment& a, const nt::Expr& e, std::vector<Factor>& out) {
  if (e->kind == nt::ExprKind::Access) {
    const auto& access = static_cast<const nt::AccessNode&>(*e);
    if (access.tensor->format.hasDerivedLevels()) {
      refuse(a, "tensor " + access.tensor->name + " has format " + access.tensor->format.str() +
                    ", whose levels are not one per mode");
    }
    std::set<std::string> distinct(access.indices.begin(), access.indices.end());
    if (distinct.size() != access.indices.size()) refuse(a, "an access repeats an index variable");
    out.push_back({access.tensor, access.indices});
    return;
  }
  if (e->kind == nt::ExprKind::Binary) {
    const auto& b = static_cast<const nt::BinaryNode&>(*e);
    if (b.op != &nt::mulOp()) refuse(a, "it applies '" + b.op->name + "'");
    collectFactors(a, b.a, out);
    collectFactors(a, b.b, out);
    return;
  }
  refuse(a, "it has a literal, a negation or an explicit reduction");
}

}  // namespace

std::vector<std::string> ProductStatement::varsOf(const std::vector<int>& factorIndices) const {
  std::set<std::string> used;
  for (int f : factorIndices) used.insert(factors[f].indices.begin(), factors[f].indices.end());
  std::vector<std::string> out;
  for (const auto& v : vars) {
    if (used.count(v)) out.push_back(v);
  }
  return out;
}

ProductStatement productStatement(const nt::Assignment& a) {
  if (a.accumulate) refuse(a, "it accumulates into its result");
  ProductStatement s;
  s.result = a.lhs->tensor;
  s.resultIndices = a.lhs->indices;
  std::set<std::string> distinct(a.lhs->indices.begin(), a.lhs->indices.end());
  if (distinct.size() != a.lhs->indices.size()) refuse(a, "the result repeats an index variable");
  collectFactors(a, a.rhs, s.factors);
  for (const auto& f : s.factors) {
    if (f.tensor->name == s.result->name) refuse(a, "it reads its result");
  }
  s.vars = nt::indexVariables(a);
  return s;
}

}  // namespace coiter::autosched
