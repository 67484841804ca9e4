#include "ir/free_variables.hpp"

#include <unordered_set>

namespace coiter::ir {
namespace {

class FreeVariables {
 public:
  std::vector<Var> of(const Stmt& s) {
    stmt(s);
    std::vector<Var> free;
    for (const Var& v : used_) {
      if (!declared_.count(v.get())) free.push_back(v);
    }
    return free;
  }

 private:
  void use(const Var& v) {
    if (seen_.insert(v.get()).second) used_.push_back(v);
  }

  void expr(const Expr& e) {
    if (e->kind == ExprKind::VarRef) use(as<VarRefNode>(e).var);
    if (e->kind == ExprKind::Load) use(as<LoadNode>(e).buffer);
    forEachChildExpr(e, [this](const Expr& child) { expr(child); });
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& x : as<BlockNode>(s).stmts) stmt(x);
        return;
      case StmtKind::Declare: {
        auto& n = as<DeclareNode>(s);
        declared_.insert(n.var.get());
        if (n.init) expr(n.init);
        return;
      }
      case StmtKind::Assign:
        use(as<AssignNode>(s).var);
        return expr(as<AssignNode>(s).value);
      case StmtKind::Store: {
        auto& n = as<StoreNode>(s);
        use(n.buffer);
        expr(n.index);
        return expr(n.value);
      }
      case StmtKind::AtomicUpdate: {
        auto& n = as<AtomicUpdateNode>(s);
        use(n.buffer);
        expr(n.index);
        return expr(n.value);
      }
      case StmtKind::Prefetch:
        use(as<PrefetchNode>(s).buffer);
        return expr(as<PrefetchNode>(s).index);
      case StmtKind::For: {
        auto& n = as<ForNode>(s);
        declared_.insert(n.var.get());
        expr(n.begin);
        expr(n.end);
        return stmt(n.body);
      }
      case StmtKind::While:
        expr(as<WhileNode>(s).cond);
        return stmt(as<WhileNode>(s).body);
      case StmtKind::If:
        expr(as<IfNode>(s).cond);
        stmt(as<IfNode>(s).then);
        return stmt(as<IfNode>(s).otherwise);
      case StmtKind::Allocate:
        use(as<AllocateNode>(s).buffer);
        return expr(as<AllocateNode>(s).count);
      case StmtKind::Free: return use(as<FreeNode>(s).buffer);
      case StmtKind::Grow: {
        auto& n = as<GrowNode>(s);
        use(n.buffer);
        use(n.capacity);
        return expr(n.needed);
      }
      case StmtKind::Call:
        for (const Expr& a : as<CallNode>(s).args) expr(a);
        return;
      case StmtKind::Break: case StmtKind::Comment: case StmtKind::Return: return;
    }
  }

  std::vector<Var> used_;
  std::unordered_set<const VarNode*> seen_;
  std::unordered_set<const VarNode*> declared_;
};

}  // namespace

std::vector<Var> freeVariables(const Stmt& s) { return FreeVariables().of(s); }

}  // namespace coiter::ir
