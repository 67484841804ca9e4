#include "codegen/llvm/llvm_vector_width.hpp"

#include <unordered_set>

#include "ir/visitor.hpp"

namespace coiter {

namespace {

using namespace ir;

bool mentions(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return refersTo(e, [&vars](const VarNode* x) { return vars.count(x) > 0; });
}

// The statements of an innermost loop's body: what it declares, stores (at indices that
// depend on the loop variable or those declarations) and loads.
class LoopBody : public IRVisitor {
 public:
  explicit LoopBody(const ForNode& loop) { dependent_.insert(loop.var.get()); }
  bool innermost = true;
  bool updatesInPlace() const {
    for (const VarNode* stored : stored_) {
      if (loaded_.count(stored)) return true;
    }
    return false;
  }

 protected:
  void visitFor(const ForNode&) override { innermost = false; }
  void visitWhile(const WhileNode&) override { innermost = false; }
  void visitDeclare(const DeclareNode& n) override {
    if (n.init && mentions(n.init, dependent_)) dependent_.insert(n.var.get());
    IRVisitor::visitDeclare(n);
  }
  void visitStore(const StoreNode& n) override {
    if (mentions(n.index, dependent_)) stored_.insert(n.buffer.get());
    IRVisitor::visitStore(n);
  }
  void visitLoad(const LoadNode& n) override {
    loaded_.insert(n.buffer.get());
    IRVisitor::visitLoad(n);
  }

 private:
  std::unordered_set<const VarNode*> dependent_, stored_, loaded_;
};

class RowUpdates : public IRVisitor {
 public:
  bool found = false;

 protected:
  void visitFor(const ForNode& n) override {
    LoopBody body(n);
    body.visit(n.body);
    if (body.innermost) {
      found = found || body.updatesInPlace();
      return;
    }
    IRVisitor::visitFor(n);
  }
};

}  // namespace

bool updatesRowsInPlace(const ir::Stmt& body) {
  RowUpdates updates;
  updates.visit(body);
  return updates.found;
}

const char* preferredVectorWidth(const ir::Stmt& body) { return updatesRowsInPlace(body) ? "256" : "512"; }

}  // namespace coiter
