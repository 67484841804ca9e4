// See interrupt_points.hpp.
#include "ir/interrupt_points.hpp"

#include "ir/visitor.hpp"

namespace coiter::ir {
namespace {

class InterruptPoints : public IRMutator {
 public:
  bool checks = false;

 protected:
  Stmt mutateFor(const ForNode& n, const Stmt& s) override {
    // A bounded loop (a block's rows) is checked by the loop around it, once per block.
    if (isGpuLoop(n.schedule.kind) || n.schedule.bounded || !holdsLoop(n.body)) return IRMutator::mutateFor(n, s);
    checks = true;
    if (n.schedule.kind == LoopKind::Parallel) {
      ++parallelDepth_;
      Stmt body = mutate(n.body);
      --parallelDepth_;
      Stmt loop = forLoop(n.var, n.begin, n.end, ifThen(logicalNot(interruptRequested()), body), n.schedule);
      return parallelDepth_ > 0 ? loop : block({loop, stop()});
    }
    return forLoop(n.var, n.begin, n.end, block({stop(), mutate(n.body)}), n.schedule);
  }
  Stmt mutateWhile(const WhileNode& n, const Stmt& s) override {
    if (!holdsLoop(n.body)) return IRMutator::mutateWhile(n, s);
    checks = true;
    return whileLoop(n.cond, block({stop(), mutate(n.body)}), n.step);
  }

 private:
  // What a set flag does here: return, or (inside a parallel loop) leave this loop.
  Stmt stop() const { return ifThen(interruptRequested(), parallelDepth_ > 0 ? breakLoop() : ret(kInterrupted)); }
  int parallelDepth_ = 0;
};

}  // namespace

InterruptibleBody addInterruptPoints(const Stmt& body) {
  InterruptPoints pass;
  Stmt out = pass.mutate(body);
  return {out, pass.checks};
}

}  // namespace coiter::ir
