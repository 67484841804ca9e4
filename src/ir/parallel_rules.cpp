#include "ir/parallel_rules.hpp"

#include <unordered_set>

#include "util/errors.hpp"

namespace coiter::ir {
namespace {

void checkAtomicUpdate(const AtomicUpdateNode& n) {
  DType t = n.buffer->type.elem;
  bool supported = isInteger(t) || isFloat(t) || (isComplex(t) && n.op == BinaryOp::Add);
  if (!supported) {
    throw CoiterError(std::string("IR: atomic ") + binaryOpName(n.op) + " of " + n.buffer->name +
                      " is not supported for elements of type " + dtypeName(t));
  }
  if (n.value->type != scalar(t)) {
    throw CoiterError("IR: atomic update of " + n.buffer->name + " (" + dtypeName(t) + ") with a value of type " +
                      dtypeName(n.value->type.elem));
  }
}

// Checks one parallel loop's body.
class ParallelBodyCheck {
 public:
  explicit ParallelBodyCheck(const ForNode& loop) : loop_(loop) {}

  void run() { stmt(loop_.body, 0); }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw CoiterError("IR: the body of the parallel loop over '" + loop_.var->name + "' " + what +
                      "; parallel loop bodies write only their own locals, stores and atomic "
                      "updates, and never leave the loop (a lowering bug)");
  }

  // `depth` counts the loops inside the parallel loop that enclose `s` (Break needs one).
  void stmt(const Stmt& s, int depth) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& x : as<BlockNode>(s).stmts) stmt(x, depth);
        return;
      case StmtKind::Declare: declared_.insert(as<DeclareNode>(s).var.get()); return;
      case StmtKind::Assign: {
        const Var& v = as<AssignNode>(s).var;
        if (!declared_.count(v.get())) fail("assigns '" + v->name + "', declared outside it");
        return;
      }
      case StmtKind::For: declared_.insert(as<ForNode>(s).var.get()); return stmt(as<ForNode>(s).body, depth + 1);
      case StmtKind::While: return stmt(as<WhileNode>(s).body, depth + 1);
      case StmtKind::If: stmt(as<IfNode>(s).then, depth); return stmt(as<IfNode>(s).otherwise, depth);
      case StmtKind::Break:
        if (depth == 0) fail("breaks out of the parallel loop");
        return;
      case StmtKind::Return: fail("returns from the kernel");
      case StmtKind::Allocate: fail("allocates " + as<AllocateNode>(s).buffer->name);
      case StmtKind::Free: fail("frees " + as<FreeNode>(s).buffer->name);
      case StmtKind::Grow: fail("grows " + as<GrowNode>(s).buffer->name);
      case StmtKind::Store:
      case StmtKind::AtomicUpdate:
      case StmtKind::Call:
      case StmtKind::Comment:
      case StmtKind::Prefetch: return;
    }
  }

  const ForNode& loop_;
  std::unordered_set<const VarNode*> declared_;
};

void check(const Stmt& s) {
  if (!s) return;
  // A GPU loop that reduces assigns outer locals by design; the CUDA printer checks that
  // each such assignment is a reduction.
  const LoopSchedule* schedule = s->kind == StmtKind::For ? &as<ForNode>(s).schedule : nullptr;
  if (schedule && (schedule->kind == LoopKind::Parallel || (isGpuLoop(schedule->kind) && !schedule->reduction))) {
    ParallelBodyCheck(as<ForNode>(s)).run();
  } else if (s->kind == StmtKind::AtomicUpdate) {
    checkAtomicUpdate(as<AtomicUpdateNode>(s));
  }
  forEachChildStmt(s, check);
}

}  // namespace

void checkParallelRules(const Function& f) { check(f.body); }

}  // namespace coiter::ir
