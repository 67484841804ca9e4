#include "ir/distinct_buffers.hpp"

namespace coiter::ir {
namespace {

class BufferAliases {
 public:
  std::unordered_set<const VarNode*> distinct(const Function& f) {
    for (const Param& p : f.params) {
      if (p.var->type.pointer) buffers_.insert(p.var.get());
    }
    stmt(f.body);
    for (const VarNode* v : shared_) buffers_.erase(v);
    return buffers_;
  }

 private:
  // Every pointer variable in a pointer-valued expression may share its memory.
  void shareAll(const Expr& e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::VarRef: shared_.insert(as<VarRefNode>(e).var.get()); return;
      case ExprKind::Select: shareAll(as<SelectNode>(e).a); return shareAll(as<SelectNode>(e).b);
      case ExprKind::Cast: return shareAll(as<CastNode>(e).a);
      default: return;
    }
  }

  void pointerWrite(const Var& v, const Expr& value) {
    if (!v->type.pointer) return;
    shared_.insert(v.get());
    shareAll(value);
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Declare: {
        auto& n = as<DeclareNode>(s);
        if (n.var->type.pointer) {
          buffers_.insert(n.var.get());
          if (n.init) pointerWrite(n.var, n.init);
        }
        return;
      }
      case StmtKind::Assign: return pointerWrite(as<AssignNode>(s).var, as<AssignNode>(s).value);
      // Store, AtomicUpdate, Allocate, Free, Grow: the buffer keeps its own memory. Call: a
      // runtime function given a pointer works on that memory only (it keeps no copy).
      default: return forEachChildStmt(s, [this](const Stmt& child) { stmt(child); });
    }
  }

  std::unordered_set<const VarNode*> buffers_, shared_;
};

}  // namespace

std::unordered_set<const VarNode*> distinctBuffers(const Function& f) { return BufferAliases().distinct(f); }

}  // namespace coiter::ir
