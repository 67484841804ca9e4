#include "ir/distinct_buffers.hpp"

namespace coiter::ir {
namespace {

class BufferGroups {
 public:
  std::unordered_map<const VarNode*, const VarNode*> groups(const std::vector<Param>& params, const Stmt& body) {
    for (const Param& p : params) {
      if (p.var->type.pointer) add(p.var.get());
    }
    stmt(body);
    std::unordered_map<const VarNode*, const VarNode*> result;
    for (const auto& [buffer, parent] : parent_) result.emplace(buffer, representative(buffer));
    return result;
  }

 private:
  void add(const VarNode* v) { parent_.emplace(v, v); }
  const VarNode* representative(const VarNode* v) {
    while (parent_.at(v) != v) v = parent_[v] = parent_.at(parent_.at(v));
    return v;
  }
  void join(const VarNode* a, const VarNode* b) {
    add(a);
    add(b);
    parent_[representative(a)] = representative(b);
  }

  // Every pointer variable in a pointer-valued expression may share its memory with `v`
  // (the others are null literals: no memory).
  void joinAll(const VarNode* v, const Expr& e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::VarRef: return join(v, as<VarRefNode>(e).var.get());
      case ExprKind::Select: joinAll(v, as<SelectNode>(e).a); return joinAll(v, as<SelectNode>(e).b);
      case ExprKind::Cast: return joinAll(v, as<CastNode>(e).a);
      default: return;
    }
  }

  void pointerWrite(const Var& v, const Expr& value) {
    if (!v->type.pointer) return;
    add(v.get());
    joinAll(v.get(), value);
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Declare: return pointerWrite(as<DeclareNode>(s).var, as<DeclareNode>(s).init);
      case StmtKind::Assign: return pointerWrite(as<AssignNode>(s).var, as<AssignNode>(s).value);
      // Store, AtomicUpdate, Allocate, Free, Grow: the buffer keeps its own memory. Call: a
      // runtime function given a pointer works on that memory only (it keeps no copy).
      default: return forEachChildStmt(s, [this](const Stmt& child) { stmt(child); });
    }
  }

  std::unordered_map<const VarNode*, const VarNode*> parent_;
};

}  // namespace

std::unordered_map<const VarNode*, const VarNode*> distinctBufferGroups(const Function& f) {
  return BufferGroups().groups(f.params, f.body);
}

std::unordered_map<const VarNode*, const VarNode*> bufferGroupsOf(const Stmt& body) {
  return BufferGroups().groups({}, body);
}

}  // namespace coiter::ir
