// See invariant_loads.hpp.
#include "ir/invariant_loads.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "ir/visitor.hpp"

namespace coiter::ir {
namespace {

class InvariantLoads {
 public:
  InvariantLoads(const ForNode& loop, const std::unordered_map<const VarNode*, const VarNode*>& groups)
      : groups_(groups) {
    variant_.insert(loop.var.get());
    changes(loop.body);
    if (loop.body->kind == StmtKind::Block) {
      for (const Stmt& s : as<BlockNode>(loop.body).stmts) collect(s);
    } else {
      collect(loop.body);
    }
  }
  const std::vector<Expr>& loads() const { return loads_; }

 private:
  const VarNode* groupOf(const VarNode* v) const {
    auto group = groups_.find(v);
    return group == groups_.end() ? v : group->second;
  }
  // The variables the body declares or writes, and the groups of the buffers it writes.
  void changes(const Stmt& s) {
    if (!s) return;
    if (forEachWrite(s, [this](const VarNode* v) {
          variant_.insert(v);
          written_.insert(groupOf(v));
        }))
      return;
    if (s->kind == StmtKind::Declare) variant_.insert(as<DeclareNode>(s).var.get());
    if (s->kind == StmtKind::For) variant_.insert(as<ForNode>(s).var.get());
    forEachChildStmt(s, [this](const Stmt& child) { changes(child); });
  }
  bool invariantIndex(const Expr& e) const {
    switch (e->kind) {
      case ExprKind::Literal: return true;
      case ExprKind::VarRef: return !variant_.count(as<VarRefNode>(e).var.get());
      case ExprKind::Binary: return invariantIndex(as<BinaryNode>(e).a) && invariantIndex(as<BinaryNode>(e).b);
      case ExprKind::Cast: return invariantIndex(as<CastNode>(e).a);
      default: return false;
    }
  }
  void expr(const Expr& e) {
    if (e->kind == ExprKind::Load) {
      const auto& l = as<LoadNode>(e);
      bool invariant = !written_.count(groupOf(l.buffer.get())) && invariantIndex(l.index);
      auto known = [&](const Expr& x) { return sameExpr(x, e); };
      if (invariant && std::none_of(loads_.begin(), loads_.end(), known)) loads_.push_back(e);
    }
    forEachChildExpr(e, [this](const Expr& child) { expr(child); });
  }
  // The loads of a statement directly in the body (its own expressions, not those of the
  // statements inside it).
  void collect(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Declare:
        if (as<DeclareNode>(s).init) expr(as<DeclareNode>(s).init);
        return;
      case StmtKind::Assign: return expr(as<AssignNode>(s).value);
      case StmtKind::Store: expr(as<StoreNode>(s).index); return expr(as<StoreNode>(s).value);
      case StmtKind::AtomicUpdate: expr(as<AtomicUpdateNode>(s).index); return expr(as<AtomicUpdateNode>(s).value);
      default: return;
    }
  }

  const std::unordered_map<const VarNode*, const VarNode*>& groups_;
  std::unordered_set<const VarNode*> variant_, written_;
  std::vector<Expr> loads_;
};

// The body with each hoisted load replaced by its variable.
class ReplaceLoads : public IRMutator {
 public:
  ReplaceLoads(const std::vector<Expr>& loads, const std::vector<Var>& vars) : loads_(loads), vars_(vars) {}

 protected:
  Expr mutateLoad(const LoadNode& n, const Expr& e) override {
    for (size_t k = 0; k < loads_.size(); ++k) {
      if (sameExpr(loads_[k], e)) return ref(vars_[k]);
    }
    return IRMutator::mutateLoad(n, e);
  }

 private:
  const std::vector<Expr>& loads_;
  const std::vector<Var>& vars_;
};

}  // namespace

Stmt hoistInvariantLoads(const Stmt& loop, const std::unordered_map<const VarNode*, const VarNode*>& groups,
                         const FreshName& fresh) {
  const auto& n = as<ForNode>(loop);
  InvariantLoads invariant(n, groups);
  if (invariant.loads().empty()) return loop;
  std::vector<Var> vars;
  std::vector<Stmt> out;
  for (const Expr& l : invariant.loads()) {
    vars.push_back(makeVar(fresh(as<LoadNode>(l).buffer->name + "_element"), l->type));
    out.push_back(declare(vars.back(), l));
  }
  out.push_back(forLoop(n.var, n.begin, n.end, ReplaceLoads(invariant.loads(), vars).mutate(n.body), n.schedule));
  return ifThen(binary(BinaryOp::Lt, n.begin, n.end), block(std::move(out)));
}

}  // namespace coiter::ir
