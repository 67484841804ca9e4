#include "notation/result_format.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "notation/operators.hpp"

namespace coiter::notation {

namespace {

std::vector<const AccessNode*> accessesIn(const Expr& e) {
  std::vector<const AccessNode*> out;
  forEachSubexpression(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Access) out.push_back(static_cast<const AccessNode*>(x.get()));
  });
  return out;
}

// The product terms of a sum.
void collectTerms(const Expr& e, std::vector<Expr>& out) {
  if (e->kind == ExprKind::Binary) {
    const auto& b = static_cast<const BinaryNode&>(*e);
    if (b.op == &addOp() || b.op == &subOp()) {
      collectTerms(b.a, out);
      collectTerms(b.b, out);
      return;
    }
  }
  if (e->kind == ExprKind::Negate) return collectTerms(static_cast<const NegateNode&>(*e).a, out);
  out.push_back(e);
}

// The factors of a product (accesses and literals), or nullopt when `e` is not one product.
std::optional<std::vector<Expr>> factorsOf(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Access:
    case ExprKind::Literal: return std::vector<Expr>{e};
    case ExprKind::Negate: return factorsOf(static_cast<const NegateNode&>(*e).a);
    case ExprKind::Reduce: {
      const auto& r = static_cast<const ReduceNode&>(*e);
      if (r.op != &addOp()) return std::nullopt;
      return factorsOf(r.body);
    }
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      if (b.op != &mulOp()) return std::nullopt;
      auto a = factorsOf(b.a), c = factorsOf(b.b);
      if (!a || !c) return std::nullopt;
      a->insert(a->end(), c->begin(), c->end());
      return a;
    }
  }
  return std::nullopt;
}

Format lettered(char first, char rest, int order) {
  if (order == 0) return Format(std::vector<LevelTypePtr>{});
  return Format::parse(std::string(1, first) + std::string(order - 1, rest));
}

}  // namespace

Format inferResultFormat(const std::vector<std::string>& resultIndices, const Expr& rhs) {
  const int order = static_cast<int>(resultIndices.size());
  const std::set<std::string> resultSet(resultIndices.begin(), resultIndices.end());
  auto holds = [](const AccessNode* a, const std::string& v) {
    return std::find(a->indices.begin(), a->indices.end(), v) != a->indices.end();
  };
  std::vector<const AccessNode*> operands = accessesIn(rhs), sparseOps;
  for (const auto* a : operands)
    if (!a->tensor->format.isAllDense()) sparseOps.push_back(a);
  bool sparse = !operands.empty() && sparseOps.size() == operands.size();
  std::optional<std::vector<Expr>> factors = factorsOf(rhs);
  if (!sparse && factors && !sparseOps.empty()) {
    // One product with dense factors: sparse when a sparse factor carries every result index
    // and every summed index is one of dense factors only (a sum over a sparse index fills in).
    std::set<std::string> summed, denseVars;
    for (const Expr& f : *factors) {
      if (f->kind != ExprKind::Access) continue;
      const auto& a = static_cast<const AccessNode&>(*f);
      for (const auto& v : a.indices) {
        if (!resultSet.count(v)) summed.insert(v);
        if (a.tensor->format.isAllDense()) denseVars.insert(v);
      }
    }
    bool carried = std::any_of(sparseOps.begin(), sparseOps.end(), [&](const AccessNode* a) {
      return std::all_of(resultSet.begin(), resultSet.end(), [&](const std::string& v) { return holds(a, v); });
    });
    bool summedDense = std::includes(denseVars.begin(), denseVars.end(), summed.begin(), summed.end());
    bool summedInSparse = std::any_of(sparseOps.begin(), sparseOps.end(), [&](const AccessNode* a) {
      return std::any_of(summed.begin(), summed.end(), [&](const std::string& v) { return holds(a, v); });
    });
    sparse = carried && summedDense && !summedInSparse;
  }
  // A quotient by a denominator that may be zero where nothing is stored (binary() chose
  // divideByUnstoredOp) is ±inf or NaN almost everywhere: that fill is stored, not implicit.
  bool fillsUnstored = false;
  forEachSubexpression(rhs, [&](const Expr& e) {
    if (e->kind == ExprKind::Binary && static_cast<const BinaryNode&>(*e).op == &divideByUnstoredOp())
      fillsUnstored = true;
  });
  if (order == 0 || !sparse || fillsUnstored) return lettered('d', 'd', order);
  // The format of the sparse operands that carry result indices, when they share one.
  std::vector<Format> carrying;
  for (const auto* a : sparseOps) {
    bool carries = std::any_of(a->indices.begin(), a->indices.end(), [&](const auto& v) { return resultSet.count(v); });
    if (carries && std::find(carrying.begin(), carrying.end(), a->tensor->format) == carrying.end())
      carrying.push_back(a->tensor->format);
  }
  if (carrying.size() == 1 && carrying[0].order() == order && carrying[0].resultAssemblyProblem().empty())
    return carrying[0];
  if (order == 1) return lettered('s', 's', 1);
  // Rows stay dense (CSR-like) when some term reaches the first result index only through
  // dense levels, or not at all.
  const std::string& first = resultIndices[0];
  std::vector<Expr> terms;
  collectTerms(rhs, terms);
  for (const Expr& term : terms) {
    std::vector<const AccessNode*> users;
    for (const auto* a : accessesIn(term))
      if (holds(a, first)) users.push_back(a);
    if (users.empty()) return lettered('d', 's', order);
    for (const auto* a : users) {
      const Format& f = a->tensor->format;
      int mode = static_cast<int>(std::find(a->indices.begin(), a->indices.end(), first) - a->indices.begin());
      const auto& modes = f.modeOrder();
      int level = static_cast<int>(std::find(modes.begin(), modes.end(), mode) - modes.begin());
      if (f.levels()[level]->properties().full) return lettered('d', 's', order);  // a dense level
    }
  }
  return lettered('s', 's', order);
}

}  // namespace coiter::notation
