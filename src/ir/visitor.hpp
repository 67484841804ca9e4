// Walking and rewriting IR without repeating its shape in every pass.
//
// IRVisitor visits every node of a statement or expression in program order (a loop's bounds
// before its body, a store's index before its value); a pass overrides the hooks of the
// kinds it cares about and calls the base hook where it wants the walk to go on below that
// node. IRMutator rebuilds a tree bottom-up and shares every node whose children did not
// change, so a pass that rewrites a few loops copies only the path down to them.
#pragma once
#include "ir/ir.hpp"

namespace coiter::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  void visit(const Expr& e);
  void visit(const Stmt& s);  // null statements (an If without else) are skipped

 protected:
  // Expressions. The defaults visit the operands.
  virtual void visitLiteral(const LiteralNode&) {}
  virtual void visitVarRef(const VarRefNode&) {}
  virtual void visitLoad(const LoadNode& n);
  virtual void visitBinary(const BinaryNode& n);
  virtual void visitUnary(const UnaryNode& n);
  virtual void visitCast(const CastNode& n);
  virtual void visitSelect(const SelectNode& n);
  virtual void visitThreadId(const ThreadIdNode&) {}
  virtual void visitNumThreads(const NumThreadsNode&) {}
  virtual void visitInterruptRequested(const InterruptRequestedNode&) {}

  // Statements. The defaults visit the expressions and then the statements inside.
  virtual void visitBlock(const BlockNode& n);
  virtual void visitDeclare(const DeclareNode& n);
  virtual void visitAssign(const AssignNode& n);
  virtual void visitStore(const StoreNode& n);
  virtual void visitFor(const ForNode& n);
  virtual void visitWhile(const WhileNode& n);
  virtual void visitIf(const IfNode& n);
  virtual void visitBreak(const BreakNode&) {}
  virtual void visitComment(const CommentNode&) {}
  virtual void visitAllocate(const AllocateNode& n);
  virtual void visitFree(const FreeNode&) {}
  virtual void visitGrow(const GrowNode& n);
  virtual void visitReturn(const ReturnNode&) {}
  virtual void visitCall(const CallNode& n);
  virtual void visitAtomicUpdate(const AtomicUpdateNode& n);
  virtual void visitPrefetch(const PrefetchNode& n);
};

// Each hook gets the node and the pointer that holds it, and returns the replacement (the same
// pointer for no change). The defaults mutate the children and rebuild the node only when one
// of them changed.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);  // null stays null

 protected:
  virtual Expr mutateLoad(const LoadNode& n, const Expr& e);
  virtual Expr mutateBinary(const BinaryNode& n, const Expr& e);
  virtual Expr mutateUnary(const UnaryNode& n, const Expr& e);
  virtual Expr mutateCast(const CastNode& n, const Expr& e);
  virtual Expr mutateSelect(const SelectNode& n, const Expr& e);
  // Literals, variable references, thread values and the interrupt flag have no children.
  virtual Expr mutateLeaf(const Expr& e) { return e; }

  virtual Stmt mutateBlock(const BlockNode& n, const Stmt& s);
  virtual Stmt mutateDeclare(const DeclareNode& n, const Stmt& s);
  virtual Stmt mutateAssign(const AssignNode& n, const Stmt& s);
  virtual Stmt mutateStore(const StoreNode& n, const Stmt& s);
  virtual Stmt mutateFor(const ForNode& n, const Stmt& s);
  virtual Stmt mutateWhile(const WhileNode& n, const Stmt& s);
  virtual Stmt mutateIf(const IfNode& n, const Stmt& s);
  virtual Stmt mutateAllocate(const AllocateNode& n, const Stmt& s);
  virtual Stmt mutateGrow(const GrowNode& n, const Stmt& s);
  virtual Stmt mutateCall(const CallNode& n, const Stmt& s);
  virtual Stmt mutateAtomicUpdate(const AtomicUpdateNode& n, const Stmt& s);
  virtual Stmt mutatePrefetch(const PrefetchNode& n, const Stmt& s);
  // Break, Comment, Free and Return have no children.
  virtual Stmt mutateLeaf(const Stmt& s) { return s; }
};

// Whether `s` holds a loop anywhere inside (a while loop that is a step of the loop around it
// does not count: it ends within the segment that loop is at).
bool holdsLoop(const Stmt& s);

}  // namespace coiter::ir
