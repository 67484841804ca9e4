#include "cin/concretize.hpp"

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

Expr bindSum(const Expr& e, const std::string& var);

// e with the smallest term strictly inside it that holds every use of var wrapped in
// sum(var, .), or nullptr when that term is e itself. A term is a whole product (API.md §3):
// a sum is entered when one side holds every use of var, and so is a product factor when the
// term it leads to lies inside a sum or a reduction within that factor (b(i) * (c(i) + d(j,i))
// sums j over d alone), but never to a bare factor: sum_k of A*D*E binds around the product,
// so all its reductions form one loop nest. A reduction delimits a term of its own
// (2 * max(i, A(i,j)) sums j inside the max).
Expr bindInside(const Expr& e, const std::string& var) {
  switch (e->kind) {
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      bool inA = uses(b.a, var), inB = uses(b.b, var);
      if (inA == inB) return nullptr;
      bool additive = b.op == &addOp() || b.op == &subOp();
      const Expr& side = inA ? b.a : b.b;
      Expr bound = additive ? bindSum(side, var) : bindInside(side, var);
      if (!bound) return nullptr;
      return inA ? binary(*b.op, bound, b.b) : binary(*b.op, b.a, bound);
    }
    case ExprKind::Negate: {
      Expr bound = bindInside(static_cast<const NegateNode&>(*e).a, var);
      return bound ? negate(bound) : nullptr;
    }
    case ExprKind::Reduce: {
      const auto& r = static_cast<const ReduceNode&>(*e);
      return reduce(*r.op, r.var, bindSum(r.body, var));
    }
    default:
      return nullptr;
  }
}

// e with the smallest term that holds every use of var (e itself at most) wrapped in sum(var, .).
Expr bindSum(const Expr& e, const std::string& var) {
  Expr bound = bindInside(e, var);
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
      case ExprKind::Negate:
        return negate(extractReductions(static_cast<const NegateNode&>(*e).a, producers));
      case ExprKind::Binary: {
        const auto& b = static_cast<const BinaryNode&>(*e);
        Expr a = extractReductions(b.a, producers);
        Expr c = extractReductions(b.b, producers);
        return binary(*b.op, a, c);
      }
      default:
        return e;
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
  Concretizer c;
  Stmt s = c.statement(a.lhs, a.rhs, a.accumulate);
  // Free variables outermost, in the order of the result's levels.
  return nestForalls(levelIndices(*a.lhs), s);
}

}  // namespace coiter::cin
