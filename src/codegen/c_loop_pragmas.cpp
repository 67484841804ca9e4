#include "codegen/c_loop_pragmas.hpp"

#include <set>
#include <vector>

namespace coiter::codegen {
namespace {

using namespace ir;

int countRefs(const Expr& e, const VarNode* v) {
  switch (e->kind) {
    case ExprKind::Literal:
    case ExprKind::ThreadId:
    case ExprKind::NumThreads:
    case ExprKind::InterruptRequested: return 0;
    case ExprKind::VarRef: return as<VarRefNode>(e).var.get() == v ? 1 : 0;
    case ExprKind::Load: return countRefs(as<LoadNode>(e).index, v);
    case ExprKind::Binary: return countRefs(as<BinaryNode>(e).a, v) + countRefs(as<BinaryNode>(e).b, v);
    case ExprKind::Unary: return countRefs(as<UnaryNode>(e).a, v);
    case ExprKind::Cast: return countRefs(as<CastNode>(e).a, v);
    case ExprKind::Select: {
      auto& s = as<SelectNode>(e);
      return countRefs(s.cond, v) + countRefs(s.a, v) + countRefs(s.b, v);
    }
  }
  return 0;
}

// Decides whether a Vectorized loop body fits `omp simd`, and finds its reductions.
class SimdAnalysis {
 public:
  explicit SimdAnalysis(const ForNode& loop) : loop_(loop) {}

  std::optional<std::string> pragma() {
    stmt(loop_.body, 0);
    if (!expressible_) return std::nullopt;
    std::string text = "#pragma omp simd";
    for (const Reduction& r : reductions_) {
      // Every read of the variable must be the left operand of its own update; any other read
      // would see one lane's partial result.
      if (r.updates != countAllRefs(r.var.get())) return std::nullopt;
      text += std::string(" reduction(") + reductionOperator(r.op, r.var->type.elem) + ":" + r.var->name + ")";
    }
    return text;
  }

 private:
  struct Reduction {
    Var var;
    BinaryOp op;
    int updates;
  };

  static const char* reductionOperator(BinaryOp op, DType t) {
    if (op == BinaryOp::Or) return t == DType::Bool ? "||" : "|";
    return op == BinaryOp::Add ? "+" : "*";
  }

  // `value` is `v op e` with op + or *, or op or (of flags: guard_coordinates.hpp collects
  // bad coordinates in the top bit of an integer), and e does not read v.
  void reductionUpdate(const Var& v, const Expr& value) {
    bool ok = value->kind == ExprKind::Binary;
    const BinaryNode* b = ok ? &as<BinaryNode>(value) : nullptr;
    const bool flags = v->type.elem == DType::Bool || isInteger(v->type.elem);
    const bool numbers = v->type.elem != DType::Bool;
    ok = ok && ((numbers && (b->op == BinaryOp::Add || b->op == BinaryOp::Mul)) || (flags && b->op == BinaryOp::Or)) &&
         b->a->kind == ExprKind::VarRef && as<VarRefNode>(b->a).var == v && countRefs(b->b, v.get()) == 0;
    if (!ok) {
      expressible_ = false;
      return;
    }
    for (Reduction& r : reductions_) {
      if (r.var != v) continue;
      if (r.op != b->op) expressible_ = false;
      r.updates++;
      return;
    }
    reductions_.push_back(Reduction{v, b->op, 1});
  }

  void expr(const Expr& e) { exprs_.push_back(e); }

  int countAllRefs(const VarNode* v) const {
    int n = 0;
    for (const Expr& e : exprs_) n += countRefs(e, v);
    return n;
  }

  void stmt(const Stmt& s, int depth) {
    if (!s || !expressible_) return;
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& x : as<BlockNode>(s).stmts) stmt(x, depth);
        return;
      case StmtKind::Declare:
        declared_.insert(as<DeclareNode>(s).var.get());
        if (as<DeclareNode>(s).init) expr(as<DeclareNode>(s).init);
        return;
      case StmtKind::Assign: {
        auto& n = as<AssignNode>(s);
        expr(n.value);
        if (n.var == loop_.var)
          expressible_ = false;
        else if (!declared_.count(n.var.get()))
          reductionUpdate(n.var, n.value);
        return;
      }
      case StmtKind::Store: expr(as<StoreNode>(s).index); return expr(as<StoreNode>(s).value);
      case StmtKind::For: {
        auto& n = as<ForNode>(s);
        if (n.schedule.kind == LoopKind::Parallel) expressible_ = false;
        declared_.insert(n.var.get());
        expr(n.begin);
        expr(n.end);
        return stmt(n.body, depth + 1);
      }
      case StmtKind::While: expr(as<WhileNode>(s).cond); return stmt(as<WhileNode>(s).body, depth + 1);
      case StmtKind::If:
        expr(as<IfNode>(s).cond);
        stmt(as<IfNode>(s).then, depth);
        return stmt(as<IfNode>(s).otherwise, depth);
      case StmtKind::Break:
        if (depth == 0) expressible_ = false;
        return;
      case StmtKind::Call:
        for (const Expr& a : as<CallNode>(s).args) expr(a);
        return;
      case StmtKind::Comment: return;
      case StmtKind::Prefetch: return expr(as<PrefetchNode>(s).index);
      case StmtKind::AtomicUpdate:
      case StmtKind::Return:
      case StmtKind::Allocate:
      case StmtKind::Free:
      case StmtKind::Grow: expressible_ = false; return;
    }
  }

  const ForNode& loop_;
  bool expressible_ = true;
  std::set<const VarNode*> declared_;
  std::vector<Reduction> reductions_;  // in order of first update
  std::vector<Expr> exprs_;            // every expression of the body, to count reads
};

}  // namespace

std::string parallelForPragma(const LoopSchedule& schedule, const std::string& chunk) {
  std::string kind = schedule.dynamic ? "dynamic" : "static";
  if (!chunk.empty())
    kind += ", " + chunk;
  else if (schedule.chunk > 0)
    kind += ", " + std::to_string(schedule.chunk);
  return "#pragma omp parallel for schedule(" + kind + ") num_threads(coiter_rt_num_threads())";
}

std::optional<std::string> simdPragma(const ForNode& n) { return SimdAnalysis(n).pragma(); }

std::string unrollPragma(int factor) { return "#pragma GCC unroll " + std::to_string(factor); }

}  // namespace coiter::codegen
