#include "cin/derived_level_sums.hpp"

#include <algorithm>

namespace coiter::cin {

using namespace notation;

namespace {

Expr replaceAccess(const Expr& e, const TensorVar* target, const Expr& by) {
  switch (e->kind) {
    case ExprKind::Access: return static_cast<const AccessNode&>(*e).tensor.get() == target ? by : e;
    case ExprKind::Negate: return negate(replaceAccess(static_cast<const NegateNode&>(*e).a, target, by));
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      return binary(*b.op, replaceAccess(b.a, target, by), replaceAccess(b.b, target, by));
    }
    default: return e;
  }
}

// Whether `var` indexes a level of a derived-level access in e below a level indexed by
// one of `summed`, which the level cannot be located from.
bool belowSummed(const Expr& e, const std::string& var, const std::vector<std::string>& summed) {
  bool below = false;
  forEachSubexpression(e, [&](const Expr& x) {
    if (x->kind != ExprKind::Access) return;
    const auto& access = static_cast<const AccessNode&>(*x);
    const auto& levels = access.levelVars;
    auto at = std::find(levels.begin(), levels.end(), var);
    // A level that locates (a dense offset inside a block) is reached from any loop order.
    if (at == levels.end() || access.tensor->format.levels()[at - levels.begin()]->locatesEveryCoordinate()) return;
    for (auto it = levels.begin(); it < at; ++it) {
      below = below || std::find(summed.begin(), summed.end(), *it) != summed.end();
    }
  });
  return below;
}

struct Hoister {
  int workspaces = 0;

  Stmt rewrite(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Assign: return s;
      case StmtKind::Where: return where(rewrite(as<WhereNode>(s).consumer), rewrite(as<WhereNode>(s).producer));
      case StmtKind::Sequence:
        return sequence(rewrite(as<SequenceNode>(s).define), rewrite(as<SequenceNode>(s).mutate));
      case StmtKind::Forall: break;
    }
    const auto& f = as<ForallNode>(s);
    if (f.body->kind != StmtKind::Where) return forall(f.var, rewrite(f.body));
    const auto& w = as<WhereNode>(f.body);
    auto [summed, inner] = forallChain(w.producer);
    if (summed.empty() || inner->kind != StmtKind::Assign) return forall(f.var, rewrite(f.body));
    const auto& a = as<AssignNode>(inner);
    if (!a.lhs->tensor->temporary || a.lhs->tensor->order() != 0 || !belowSummed(a.rhs, f.var, summed)) {
      return forall(f.var, rewrite(f.body));
    }
    auto ws = makeTensorVar("w_" + f.var + std::to_string(workspaces++), Format::parse("d"), a.lhs->tensor->dtype,
                            DType::Int64, true);
    auto wAccess = access(ws, {f.var});
    Stmt producer = nestForalls(summed, forall(f.var, assign(wAccess, a.rhs, a.accumulate)));
    Stmt consumer = forall(f.var, rewrite(replaceIn(w.consumer, a.lhs->tensor.get(), wAccess)));
    return where(consumer, producer);
  }

  Stmt replaceIn(const Stmt& s, const TensorVar* target, const Expr& by) {
    switch (s->kind) {
      case StmtKind::Assign: {
        const auto& a = as<AssignNode>(s);
        return assign(a.lhs, replaceAccess(a.rhs, target, by), a.accumulate);
      }
      case StmtKind::Forall: return forall(as<ForallNode>(s).var, replaceIn(as<ForallNode>(s).body, target, by));
      case StmtKind::Where:
        return where(replaceIn(as<WhereNode>(s).consumer, target, by),
                     replaceIn(as<WhereNode>(s).producer, target, by));
      case StmtKind::Sequence:
        return sequence(replaceIn(as<SequenceNode>(s).define, target, by),
                        replaceIn(as<SequenceNode>(s).mutate, target, by));
    }
    return s;
  }
};

}  // namespace

Stmt hoistDerivedLevelSums(const Stmt& s) { return Hoister{}.rewrite(s); }

}  // namespace coiter::cin
