#include "cin/concretize.hpp"

#include "cin/derived_level_sums.hpp"

#include <algorithm>
#include <set>

#include "util/errors.hpp"

namespace coiter::cin {

using namespace notation;

namespace {

bool uses(const Expr& e, const std::string& var) {
  auto vars = indexVariables(e);
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

// Variables bound by an explicit reduction somewhere in e.
void reducedVariables(const Expr& e, std::set<std::string>& out) {
  forEachSubexpression(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Reduce) out.insert(static_cast<const ReduceNode&>(*x).var);
  });
}

Expr bindSum(const Expr& e, const std::string& var, bool levelSum = false);

// e with the smallest term strictly inside it that holds every use of var wrapped in
// sum(var, .), or nullptr when that term is e itself. A term is a whole product (docs/reference.md, "Index notation"):
// a sum is entered when one side holds every use of var, and so is a product factor when the
// term it leads to lies inside a sum or a reduction within that factor (b(i) * (c(i) + d(j,i))
// sums j over d alone), but never to a bare factor: sum_k of A*D*E binds around the product,
// so all its reductions form one loop nest. A reduction delimits a term of its own
// (2 * max(i, A(i,j)) sums j inside the max).
// `levelSum`: var is a derived level's variable (withLevelVariables), whose sum is the
// tensor's value. Moving that sum out of a factor is exact only where the value is linear in
// it (a product, a numerator, a sum or a negation): in a denominator or an operand of max/min
// it binds around that operand (A / B with B in DIA is A / Σ_diag B, not Σ_diag A / B, which
// adds A / 0 once for every other diagonal).
Expr bindInside(const Expr& e, const std::string& var, bool levelSum) {
  switch (e->kind) {
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      bool inA = uses(b.a, var), inB = uses(b.b, var);
      if (inA == inB) return nullptr;
      bool additive = b.op == &addOp() || b.op == &subOp();
      bool quotient = b.op == &divOp() || b.op == &divideByUnstoredOp();
      bool linear = additive || b.op == &mulOp() || (quotient && inA);
      const Expr& side = inA ? b.a : b.b;
      Expr bound = additive || (levelSum && !linear) ? bindSum(side, var, levelSum) : bindInside(side, var, levelSum);
      if (!bound) return nullptr;
      return inA ? binary(*b.op, bound, b.b) : binary(*b.op, b.a, bound);
    }
    case ExprKind::Negate: {
      Expr bound = bindInside(static_cast<const NegateNode&>(*e).a, var, levelSum);
      return bound ? negate(bound) : nullptr;
    }
    case ExprKind::Reduce: {
      const auto& r = static_cast<const ReduceNode&>(*e);
      return reduce(*r.op, r.var, bindSum(r.body, var, levelSum));
    }
    default: return nullptr;
  }
}

// e with the smallest term that holds every use of var (e itself at most) wrapped in sum(var, .).
Expr bindSum(const Expr& e, const std::string& var, bool levelSum) {
  Expr bound = bindInside(e, var, levelSum);
  return bound ? bound : reduce(addOp(), var, e);
}

struct Concretizer {
  int temporaries = 0;

  TensorVarPtr temporary(DType type) {
    return makeTensorVar("t" + std::to_string(temporaries++), Format({}, {}), type, DType::Int64, true);
  }

  // Replaces the outermost reductions of e by accesses to new scalar temporaries and
  // records their producers.
  Expr extractReductions(const Expr& e, std::vector<Stmt>& producers) {
    switch (e->kind) {
      case ExprKind::Reduce: {
        const auto& r = static_cast<const ReduceNode&>(*e);
        auto t = access(temporary(r.type), {});
        producers.push_back(forall(r.var, statement(t, r.body, r.op)));
        return t;
      }
      case ExprKind::Negate: return negate(extractReductions(static_cast<const NegateNode&>(*e).a, producers));
      case ExprKind::Binary: {
        const auto& b = static_cast<const BinaryNode&>(*e);
        Expr a = extractReductions(b.a, producers);
        Expr c = extractReductions(b.b, producers);
        return binary(*b.op, a, c);
      }
      default: return e;
    }
  }

  // lhs op= rhs as a statement; reductions in rhs become where statements.
  Stmt statement(const std::shared_ptr<const AccessNode>& lhs, const Expr& rhs, const Operator* op) {
    if (rhs->kind == ExprKind::Reduce) {
      const auto& r = static_cast<const ReduceNode&>(*rhs);
      // Simplification: the consumer would only forward the temporary. Only sums simplify
      // when the statement is a plain assignment, because results start at zero (the sum's
      // identity), not at max/min's identity.
      bool sameOp = op == r.op || (op == nullptr && r.op == &addOp());
      if (sameOp) return forall(r.var, statement(lhs, r.body, r.op));
    }
    std::vector<Stmt> producers;
    Expr consumerRhs = extractReductions(rhs, producers);
    Stmt s = assign(lhs, consumerRhs, op);
    for (const auto& p : producers) s = where(s, p);
    return s;
  }
};

// e with each access to a tensor with derived levels (DIA, ELL, BCSR) given an index
// variable per level: a level that stores a mode's coordinate, or the offset inside a block,
// is indexed by that mode's variable; a level that stores a diagonal, a slot or a block
// number by a new variable, appended to `added`. Such a tensor is the sum over its new
// variables of the entries they select (each coordinate is stored at most once), so the new
// variables are summed like any index used on the right only.
Expr withLevelVariables(const Expr& e, std::set<std::string>& used, std::vector<std::string>& added) {
  switch (e->kind) {
    case ExprKind::Access: {
      const auto& a = static_cast<const AccessNode&>(*e);
      const Format& format = a.tensor->format;
      if (!format.hasDerivedLevels() || !a.levelVars.empty()) return e;
      std::vector<std::string> levelVars;
      for (const LevelCoordinate& lc : format.levelMap()) {
        using K = LevelCoordinate::Kind;
        if (lc.kind == K::Mode || lc.kind == K::BlockOffset) {
          levelVars.push_back(a.indices[lc.mode]);
          continue;
        }
        std::string base = lc.kind == K::Diagonal ? a.tensor->name + "_diag"
                           : lc.kind == K::Slot   ? a.tensor->name + "_slot"
                                                  : a.indices[lc.mode] + "_" + a.tensor->name + "_block";
        std::string name = base;
        for (int n = 1; used.count(name); ++n) name = base + std::to_string(n);
        used.insert(name);
        added.push_back(name);
        levelVars.push_back(name);
      }
      return accessWithLevels(a, levelVars);
    }
    case ExprKind::Literal: return e;
    case ExprKind::Negate: return negate(withLevelVariables(static_cast<const NegateNode&>(*e).a, used, added));
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      return binary(*b.op, withLevelVariables(b.a, used, added), withLevelVariables(b.b, used, added));
    }
    case ExprKind::Reduce: {
      const auto& r = static_cast<const ReduceNode&>(*e);
      return reduce(*r.op, r.var, withLevelVariables(r.body, used, added));
    }
  }
  return e;
}

}  // namespace

Assignment makeReductionsExplicit(const Assignment& a) {
  std::set<std::string> explicitly;
  reducedVariables(a.rhs, explicitly);
  Expr rhs = a.rhs;
  for (const auto& v : indexVariables(a.rhs)) {
    bool free = std::find(a.lhs->indices.begin(), a.lhs->indices.end(), v) != a.lhs->indices.end();
    if (!free && !explicitly.count(v)) rhs = bindSum(rhs, v);
  }
  return assignment(a.lhs, rhs, a.accumulate);
}

Stmt concretize(const Assignment& input) {
  Assignment a = makeReductionsExplicit(input);
  if (a.lhs->tensor->format.hasDerivedLevels()) {
    throw FormatError("result " + a.lhs->tensor->name + ": a " + a.lhs->tensor->format.str() +
                      " result cannot be assembled by a kernel; compute it in another format (csr, "
                      "dense) and convert it with asformat()");
  }
  std::vector<std::string> all = indexVariables(a);
  std::set<std::string> used(all.begin(), all.end());
  std::vector<std::string> added;
  Expr rhs = withLevelVariables(a.rhs, used, added);
  for (const auto& v : added) rhs = bindSum(rhs, v, /*levelSum=*/true);
  a = assignment(a.lhs, rhs, a.accumulate);
  Concretizer c;
  Stmt s = c.statement(a.lhs, a.rhs, a.accumulate);
  // Free variables outermost, in the order of the result's levels.
  return hoistDerivedLevelSums(nestForalls(levelIndices(*a.lhs), s));
}

}  // namespace coiter::cin
