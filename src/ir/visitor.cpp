#include "ir/visitor.hpp"

namespace coiter::ir {

void IRVisitor::visit(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Literal: return visitLiteral(as<LiteralNode>(e));
    case ExprKind::VarRef: return visitVarRef(as<VarRefNode>(e));
    case ExprKind::Load: return visitLoad(as<LoadNode>(e));
    case ExprKind::Binary: return visitBinary(as<BinaryNode>(e));
    case ExprKind::Unary: return visitUnary(as<UnaryNode>(e));
    case ExprKind::Cast: return visitCast(as<CastNode>(e));
    case ExprKind::Select: return visitSelect(as<SelectNode>(e));
    case ExprKind::ThreadId: return visitThreadId(as<ThreadIdNode>(e));
    case ExprKind::NumThreads: return visitNumThreads(as<NumThreadsNode>(e));
    case ExprKind::InterruptRequested: return visitInterruptRequested(as<InterruptRequestedNode>(e));
  }
}

void IRVisitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Block: return visitBlock(as<BlockNode>(s));
    case StmtKind::Declare: return visitDeclare(as<DeclareNode>(s));
    case StmtKind::Assign: return visitAssign(as<AssignNode>(s));
    case StmtKind::Store: return visitStore(as<StoreNode>(s));
    case StmtKind::For: return visitFor(as<ForNode>(s));
    case StmtKind::While: return visitWhile(as<WhileNode>(s));
    case StmtKind::If: return visitIf(as<IfNode>(s));
    case StmtKind::Break: return visitBreak(as<BreakNode>(s));
    case StmtKind::Comment: return visitComment(as<CommentNode>(s));
    case StmtKind::Allocate: return visitAllocate(as<AllocateNode>(s));
    case StmtKind::Free: return visitFree(as<FreeNode>(s));
    case StmtKind::Grow: return visitGrow(as<GrowNode>(s));
    case StmtKind::Return: return visitReturn(as<ReturnNode>(s));
    case StmtKind::Call: return visitCall(as<CallNode>(s));
    case StmtKind::AtomicUpdate: return visitAtomicUpdate(as<AtomicUpdateNode>(s));
    case StmtKind::Prefetch: return visitPrefetch(as<PrefetchNode>(s));
  }
}

void IRVisitor::visitLoad(const LoadNode& n) { visit(n.index); }
void IRVisitor::visitBinary(const BinaryNode& n) {
  visit(n.a);
  visit(n.b);
}
void IRVisitor::visitUnary(const UnaryNode& n) { visit(n.a); }
void IRVisitor::visitCast(const CastNode& n) { visit(n.a); }
void IRVisitor::visitSelect(const SelectNode& n) {
  visit(n.cond);
  visit(n.a);
  visit(n.b);
}

void IRVisitor::visitBlock(const BlockNode& n) {
  for (const Stmt& s : n.stmts) visit(s);
}
void IRVisitor::visitDeclare(const DeclareNode& n) {
  if (n.init) visit(n.init);
}
void IRVisitor::visitAssign(const AssignNode& n) { visit(n.value); }
void IRVisitor::visitStore(const StoreNode& n) {
  visit(n.index);
  visit(n.value);
}
void IRVisitor::visitFor(const ForNode& n) {
  visit(n.begin);
  visit(n.end);
  visit(n.body);
}
void IRVisitor::visitWhile(const WhileNode& n) {
  visit(n.cond);
  visit(n.body);
}
void IRVisitor::visitIf(const IfNode& n) {
  visit(n.cond);
  visit(n.then);
  visit(n.otherwise);
}
void IRVisitor::visitAllocate(const AllocateNode& n) { visit(n.count); }
void IRVisitor::visitGrow(const GrowNode& n) { visit(n.needed); }
void IRVisitor::visitCall(const CallNode& n) {
  for (const Expr& a : n.args) visit(a);
}
void IRVisitor::visitAtomicUpdate(const AtomicUpdateNode& n) {
  visit(n.index);
  visit(n.value);
}
void IRVisitor::visitPrefetch(const PrefetchNode& n) { visit(n.index); }

// ---------------------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Load: return mutateLoad(as<LoadNode>(e), e);
    case ExprKind::Binary: return mutateBinary(as<BinaryNode>(e), e);
    case ExprKind::Unary: return mutateUnary(as<UnaryNode>(e), e);
    case ExprKind::Cast: return mutateCast(as<CastNode>(e), e);
    case ExprKind::Select: return mutateSelect(as<SelectNode>(e), e);
    case ExprKind::Literal:
    case ExprKind::VarRef:
    case ExprKind::ThreadId:
    case ExprKind::NumThreads:
    case ExprKind::InterruptRequested: return mutateLeaf(e);
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::Block: return mutateBlock(as<BlockNode>(s), s);
    case StmtKind::Declare: return mutateDeclare(as<DeclareNode>(s), s);
    case StmtKind::Assign: return mutateAssign(as<AssignNode>(s), s);
    case StmtKind::Store: return mutateStore(as<StoreNode>(s), s);
    case StmtKind::For: return mutateFor(as<ForNode>(s), s);
    case StmtKind::While: return mutateWhile(as<WhileNode>(s), s);
    case StmtKind::If: return mutateIf(as<IfNode>(s), s);
    case StmtKind::Allocate: return mutateAllocate(as<AllocateNode>(s), s);
    case StmtKind::Grow: return mutateGrow(as<GrowNode>(s), s);
    case StmtKind::Call: return mutateCall(as<CallNode>(s), s);
    case StmtKind::AtomicUpdate: return mutateAtomicUpdate(as<AtomicUpdateNode>(s), s);
    case StmtKind::Prefetch: return mutatePrefetch(as<PrefetchNode>(s), s);
    case StmtKind::Break:
    case StmtKind::Comment:
    case StmtKind::Free:
    case StmtKind::Return: return mutateLeaf(s);
  }
  return s;
}

// Nodes are rebuilt with make_shared, not the factories: a factory may simplify or check
// (cast() drops a cast to the same type), and a mutator must not change what it did not touch.

Expr IRMutator::mutateLoad(const LoadNode& n, const Expr& e) {
  Expr index = mutate(n.index);
  return index == n.index ? e : std::make_shared<LoadNode>(n.buffer, index);
}
Expr IRMutator::mutateBinary(const BinaryNode& n, const Expr& e) {
  Expr a = mutate(n.a), b = mutate(n.b);
  return a == n.a && b == n.b ? e : std::make_shared<BinaryNode>(n.op, n.type, a, b);
}
Expr IRMutator::mutateUnary(const UnaryNode& n, const Expr& e) {
  Expr a = mutate(n.a);
  return a == n.a ? e : std::make_shared<UnaryNode>(n.op, a);
}
Expr IRMutator::mutateCast(const CastNode& n, const Expr& e) {
  Expr a = mutate(n.a);
  return a == n.a ? e : std::make_shared<CastNode>(n.type, a);
}
Expr IRMutator::mutateSelect(const SelectNode& n, const Expr& e) {
  Expr c = mutate(n.cond), a = mutate(n.a), b = mutate(n.b);
  return c == n.cond && a == n.a && b == n.b ? e : std::make_shared<SelectNode>(c, a, b);
}

Stmt IRMutator::mutateBlock(const BlockNode& n, const Stmt& s) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const Stmt& x : n.stmts) {
    stmts.push_back(mutate(x));
    changed = changed || stmts.back() != x;
  }
  // block() flattens a statement that became a block into this one.
  return changed ? block(std::move(stmts)) : s;
}
Stmt IRMutator::mutateDeclare(const DeclareNode& n, const Stmt& s) {
  Expr init = n.init ? mutate(n.init) : n.init;
  return init == n.init ? s : std::make_shared<DeclareNode>(n.var, init);
}
Stmt IRMutator::mutateAssign(const AssignNode& n, const Stmt& s) {
  Expr value = mutate(n.value);
  return value == n.value ? s : std::make_shared<AssignNode>(n.var, value);
}
Stmt IRMutator::mutateStore(const StoreNode& n, const Stmt& s) {
  Expr index = mutate(n.index), value = mutate(n.value);
  return index == n.index && value == n.value ? s : std::make_shared<StoreNode>(n.buffer, index, value);
}
Stmt IRMutator::mutateFor(const ForNode& n, const Stmt& s) {
  Expr begin = mutate(n.begin), end = mutate(n.end);
  Stmt body = mutate(n.body);
  if (begin == n.begin && end == n.end && body == n.body) return s;
  return std::make_shared<ForNode>(n.var, begin, end, body, n.schedule);
}
Stmt IRMutator::mutateWhile(const WhileNode& n, const Stmt& s) {
  Expr cond = mutate(n.cond);
  Stmt body = mutate(n.body);
  return cond == n.cond && body == n.body ? s : std::make_shared<WhileNode>(cond, body, n.step);
}
Stmt IRMutator::mutateIf(const IfNode& n, const Stmt& s) {
  Expr cond = mutate(n.cond);
  Stmt then = mutate(n.then), otherwise = mutate(n.otherwise);
  if (cond == n.cond && then == n.then && otherwise == n.otherwise) return s;
  return std::make_shared<IfNode>(cond, then, otherwise);
}
Stmt IRMutator::mutateAllocate(const AllocateNode& n, const Stmt& s) {
  Expr count = mutate(n.count);
  return count == n.count ? s : std::make_shared<AllocateNode>(n.buffer, count, n.zero);
}
Stmt IRMutator::mutateGrow(const GrowNode& n, const Stmt& s) {
  Expr needed = mutate(n.needed);
  return needed == n.needed ? s : std::make_shared<GrowNode>(n.buffer, n.capacity, needed);
}
Stmt IRMutator::mutateCall(const CallNode& n, const Stmt& s) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : n.args) {
    args.push_back(mutate(a));
    changed = changed || args.back() != a;
  }
  return changed ? std::make_shared<CallNode>(n.function, std::move(args)) : s;
}
Stmt IRMutator::mutateAtomicUpdate(const AtomicUpdateNode& n, const Stmt& s) {
  Expr index = mutate(n.index), value = mutate(n.value);
  if (index == n.index && value == n.value) return s;
  return std::make_shared<AtomicUpdateNode>(n.op, n.buffer, index, value);
}
Stmt IRMutator::mutatePrefetch(const PrefetchNode& n, const Stmt& s) {
  Expr index = mutate(n.index);
  return index == n.index ? s : std::make_shared<PrefetchNode>(n.buffer, index);
}

namespace {
class HoldsLoop : public IRVisitor {
 public:
  bool found = false;

 protected:
  void visitFor(const ForNode&) override { found = true; }
  void visitWhile(const WhileNode& n) override { found = found || !n.step; }
};
}  // namespace

bool holdsLoop(const Stmt& s) {
  HoldsLoop v;
  v.visit(s);
  return v.found;
}

}  // namespace coiter::ir
