// See prefetch_streams.hpp.
#include "ir/prefetch_streams.hpp"

#include <algorithm>
#include <vector>

#include "ir/visitor.hpp"

namespace coiter::ir {
namespace {

// A loop whose start is loaded (through a cast): it runs over a segment of positions.
bool overPositions(const ForNode& n) {
  const Expr& begin = n.begin->kind == ExprKind::Cast ? as<CastNode>(n.begin).a : n.begin;
  return begin->kind == ExprKind::Load;
}

// The arrays a loop body loads at exactly the loop's position q: those that every iteration
// loads (in statements directly in the body, a loop's bounds and an if's condition included,
// or in the body of an inner loop over a dimension, which runs whole at every iteration),
// and those loaded only inside a branch, a while loop or an inner loop over positions
// (whose segment may be empty).
class ReadsAtPosition : public IRVisitor {
 public:
  ReadsAtPosition(const VarNode* q, const Stmt& body) : q_(q) { visit(body); }
  // The arrays read at q in some iterations only; none in an innermost loop (a body without
  // loops), whose vectorization a prefetch could cost.
  std::vector<Var> skipped() const {
    std::vector<Var> out;
    if (!holdsLoop_) return out;
    for (const Var& a : sometimes_) {
      if (!holds(always_, a)) out.push_back(a);
    }
    return out;
  }

 protected:
  void visitLoad(const LoadNode& n) override {
    bool atQ = n.index->kind == ExprKind::VarRef && as<VarRefNode>(n.index).var.get() == q_;
    std::vector<Var>& reads = nested_ > 0 ? sometimes_ : always_;
    if (atQ && !holds(reads, n.buffer)) reads.push_back(n.buffer);
    IRVisitor::visitLoad(n);
  }
  void visitFor(const ForNode& n) override {
    holdsLoop_ = true;
    visit(n.begin);
    visit(n.end);
    if (overPositions(n)) return nestedVisit(n.body);
    visit(n.body);
  }
  void visitWhile(const WhileNode& n) override {
    holdsLoop_ = true;
    visit(n.cond);
    nestedVisit(n.body);
  }
  void visitIf(const IfNode& n) override {
    visit(n.cond);
    nestedVisit(n.then);
    nestedVisit(n.otherwise);
  }

 private:
  static bool holds(const std::vector<Var>& arrays, const Var& a) {
    return std::find(arrays.begin(), arrays.end(), a) != arrays.end();
  }
  void nestedVisit(const Stmt& s) {
    ++nested_;
    visit(s);
    --nested_;
  }

  const VarNode* q_;
  int nested_ = 0;
  bool holdsLoop_ = false;
  std::vector<Var> always_, sometimes_;
};

class PrefetchSkippedReads : public IRMutator {
 protected:
  Stmt mutateFor(const ForNode& n, const Stmt& s) override {
    Stmt rewritten = IRMutator::mutateFor(n, s);
    const auto& loop = as<ForNode>(rewritten);
    if (loop.schedule.kind == LoopKind::Vectorized || isGpuLoop(loop.schedule.kind) || !overPositions(loop))
      return rewritten;
    std::vector<Var> skipped = ReadsAtPosition(loop.var.get(), loop.body).skipped();
    if (skipped.empty()) return rewritten;
    Expr ahead = binary(BinaryOp::Add, ir::ref(loop.var), intLit(kStreamPrefetchDistance, loop.var->type.elem));
    std::vector<Stmt> body;
    for (const Var& a : skipped) body.push_back(prefetch(a, ahead));
    body.push_back(loop.body);
    return forLoop(loop.var, loop.begin, loop.end, block(std::move(body)), loop.schedule);
  }
};

}  // namespace

Stmt prefetchSkippedReads(const Stmt& s) { return PrefetchSkippedReads().mutate(s); }

}  // namespace coiter::ir
