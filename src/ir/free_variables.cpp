#include "ir/free_variables.hpp"

#include <unordered_set>

#include "ir/visitor.hpp"

namespace coiter::ir {
namespace {

// Notes every variable a node names, and those that Declare and For introduce; the walk
// itself (operands, bounds, bodies) is IRVisitor's.
class FreeVariables : public IRVisitor {
 public:
  std::vector<Var> of(const Stmt& s) {
    visit(s);
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

  void visitVarRef(const VarRefNode& n) override { use(n.var); }
  void visitLoad(const LoadNode& n) override {
    use(n.buffer);
    IRVisitor::visitLoad(n);
  }
  void visitDeclare(const DeclareNode& n) override {
    declared_.insert(n.var.get());
    IRVisitor::visitDeclare(n);
  }
  void visitAssign(const AssignNode& n) override {
    use(n.var);
    IRVisitor::visitAssign(n);
  }
  void visitStore(const StoreNode& n) override {
    use(n.buffer);
    IRVisitor::visitStore(n);
  }
  void visitAtomicUpdate(const AtomicUpdateNode& n) override {
    use(n.buffer);
    IRVisitor::visitAtomicUpdate(n);
  }
  void visitPrefetch(const PrefetchNode& n) override {
    use(n.buffer);
    IRVisitor::visitPrefetch(n);
  }
  void visitFor(const ForNode& n) override {
    declared_.insert(n.var.get());
    IRVisitor::visitFor(n);
  }
  void visitAllocate(const AllocateNode& n) override {
    use(n.buffer);
    IRVisitor::visitAllocate(n);
  }
  void visitFree(const FreeNode& n) override { use(n.buffer); }
  void visitGrow(const GrowNode& n) override {
    use(n.buffer);
    use(n.capacity);
    IRVisitor::visitGrow(n);
  }

  std::vector<Var> used_;
  std::unordered_set<const VarNode*> seen_;
  std::unordered_set<const VarNode*> declared_;
};

}  // namespace

std::vector<Var> freeVariables(const Stmt& s) { return FreeVariables().of(s); }

}  // namespace coiter::ir
