// IR factories. Integer arithmetic on literals is folded here (x + 0, x * 1, 2 * 3, ...), so
// the lowerer can build address arithmetic naively and still print readable kernels.
#include "ir/ir.hpp"

#include <algorithm>
#include <functional>

#include "util/errors.hpp"

namespace coiter {

const char* runtimeSymbol(RuntimeFunction f) {
  switch (f) {
    case RuntimeFunction::SortCoordinates: return "coiter_rt_sort_coordinates";
    case RuntimeFunction::ParallelFor: return "coiter_rt_parallel_for";
    case RuntimeFunction::NumThreads: return "coiter_rt_num_threads";
    case RuntimeFunction::GrowArray: return "coiter_rt_grow_array";
    case RuntimeFunction::InterruptFlag: return "coiter_rt_interrupt_flag";
  }
  return "coiter_rt_unknown";
}

}  // namespace coiter

namespace coiter::ir {

Var makeVar(const std::string& name, Type type) { return std::make_shared<const VarNode>(VarNode{name, type}); }

bool readsMemory(const Expr& e) {
  if (e->kind == ExprKind::Load) return true;
  bool reads = false;
  forEachChildExpr(e, [&](const Expr& child) { reads = reads || readsMemory(child); });
  return reads;
}

bool isComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: return true;
    default: return false;
  }
}

const char* binaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Rem: return "rem";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Eq: return "eq";
    case BinaryOp::Ne: return "ne";
    case BinaryOp::Lt: return "lt";
    case BinaryOp::Le: return "le";
    case BinaryOp::Gt: return "gt";
    case BinaryOp::Ge: return "ge";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
  }
  return "?";
}

Expr lit(Type t, int64_t value) {
  auto node = std::make_shared<LiteralNode>(t);
  node->intValue = value;
  node->real = static_cast<double>(value);
  return node;
}

Expr litReal(Type t, double re, double im) {
  auto node = std::make_shared<LiteralNode>(t);
  node->real = re;
  node->imag = im;
  node->intValue = static_cast<int64_t>(re);
  return node;
}

Expr intLit(int64_t value, DType t) { return lit(scalar(t), value); }
Expr zeroOf(DType t) { return isFloat(t) || isComplex(t) ? litReal(scalar(t), 0.0) : lit(scalar(t), 0); }
Expr boolLit(bool value) { return lit(scalar(DType::Bool), value ? 1 : 0); }
Expr ref(const Var& v) { return std::make_shared<VarRefNode>(v); }
Expr load(const Var& buffer, Expr index) {
  if (!buffer->type.pointer) throw CoiterError("IR: load from non-pointer " + buffer->name);
  return std::make_shared<LoadNode>(buffer, std::move(index));
}

namespace {

const LiteralNode* intLiteral(const Expr& e) {
  if (e->kind != ExprKind::Literal || !isInteger(e->type.elem)) return nullptr;
  return &as<LiteralNode>(e);
}

// Folds integer arithmetic with literal operands; null when nothing folds.
Expr foldInteger(BinaryOp op, const Expr& a, const Expr& b) {
  const LiteralNode* la = intLiteral(a);
  const LiteralNode* lb = intLiteral(b);
  if (la && lb) {
    int64_t x = la->intValue, y = lb->intValue;
    switch (op) {
      case BinaryOp::Add: return lit(a->type, x + y);
      case BinaryOp::Sub: return lit(a->type, x - y);
      case BinaryOp::Mul: return lit(a->type, x * y);
      case BinaryOp::Min: return lit(a->type, x < y ? x : y);
      case BinaryOp::Max: return lit(a->type, x > y ? x : y);
      default: return nullptr;
    }
  }
  if (op == BinaryOp::Add) {
    if (la && la->intValue == 0) return b;
    if (lb && lb->intValue == 0) return a;
  }
  if (op == BinaryOp::Sub && lb && lb->intValue == 0) return a;
  if (op == BinaryOp::Mul) {
    if (la && la->intValue == 1) return b;
    if (lb && lb->intValue == 1) return a;
    if ((la && la->intValue == 0) || (lb && lb->intValue == 0)) return lit(a->type, 0);
  }
  if ((op == BinaryOp::Div) && lb && lb->intValue == 1) return a;
  return nullptr;
}

}  // namespace

Expr binary(BinaryOp op, Expr a, Expr b) {
  if (a->type != b->type || a->type.pointer) {
    throw CoiterError(std::string("IR: operands of ") + binaryOpName(op) + " have types " + dtypeName(a->type.elem) +
                      " and " + dtypeName(b->type.elem));
  }
  if (isInteger(a->type.elem)) {
    if (Expr folded = foldInteger(op, a, b)) return folded;
  }
  bool logical = op == BinaryOp::And || op == BinaryOp::Or;
  if (logical && a->type.elem != DType::Bool && !isInteger(a->type.elem))
    throw CoiterError("IR: and/or of floating-point operands");
  Type result = isComparison(op) ? scalar(DType::Bool) : a->type;
  return std::make_shared<BinaryNode>(op, result, std::move(a), std::move(b));
}

Expr neg(Expr a) {
  if (const LiteralNode* l = intLiteral(a)) return lit(a->type, -l->intValue);
  return std::make_shared<UnaryNode>(UnaryOp::Neg, std::move(a));
}
Expr logicalNot(Expr a) { return std::make_shared<UnaryNode>(UnaryOp::Not, std::move(a)); }

Expr cast(Type t, Expr a) {
  if (a->type == t) return a;
  if (const LiteralNode* l = intLiteral(a); l && isInteger(t.elem)) return lit(t, l->intValue);
  return std::make_shared<CastNode>(t, std::move(a));
}

Expr select(Expr cond, Expr a, Expr b) {
  if (a->type != b->type) throw CoiterError("IR: select branches differ in type");
  return std::make_shared<SelectNode>(std::move(cond), std::move(a), std::move(b));
}

Stmt block(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (s->kind == StmtKind::Block) {
      for (auto& inner : as<BlockNode>(s).stmts) flat.push_back(inner);
    } else {
      flat.push_back(std::move(s));
    }
  }
  return std::make_shared<BlockNode>(std::move(flat));
}

Stmt declare(const Var& v, Expr init) { return std::make_shared<DeclareNode>(v, std::move(init)); }
Stmt assign(const Var& v, Expr value) { return std::make_shared<AssignNode>(v, std::move(value)); }
Stmt store(const Var& buffer, Expr index, Expr value) {
  if (!buffer->type.pointer) throw CoiterError("IR: store to non-pointer " + buffer->name);
  return std::make_shared<StoreNode>(buffer, std::move(index), std::move(value));
}
Stmt forLoop(const Var& v, Expr begin, Expr end, Stmt body, LoopSchedule schedule) {
  return std::make_shared<ForNode>(v, std::move(begin), std::move(end), std::move(body), schedule);
}
Expr threadId() { return std::make_shared<ThreadIdNode>(); }
Expr numThreads() { return std::make_shared<NumThreadsNode>(); }
Expr interruptRequested() { return std::make_shared<InterruptRequestedNode>(); }
Stmt atomicUpdate(BinaryOp op, const Var& buffer, Expr index, Expr value) {
  if (!buffer->type.pointer) throw CoiterError("IR: atomic update of non-pointer " + buffer->name);
  if (op != BinaryOp::Add && op != BinaryOp::Min && op != BinaryOp::Max) {
    throw CoiterError(std::string("IR: atomic ") + binaryOpName(op) + " is not supported");
  }
  return std::make_shared<AtomicUpdateNode>(op, buffer, std::move(index), std::move(value));
}
Stmt prefetch(const Var& buffer, Expr index) {
  if (!buffer->type.pointer) throw CoiterError("IR: prefetch of non-pointer " + buffer->name);
  return std::make_shared<PrefetchNode>(buffer, std::move(index));
}
Stmt whileLoop(Expr cond, Stmt body, bool step) {
  return std::make_shared<WhileNode>(std::move(cond), std::move(body), step);
}
Stmt ifThen(Expr cond, Stmt then, Stmt otherwise) {
  return std::make_shared<IfNode>(std::move(cond), std::move(then), std::move(otherwise));
}
Stmt breakLoop() { return std::make_shared<BreakNode>(); }
Stmt comment(const std::string& text) { return std::make_shared<CommentNode>(text); }
Stmt allocate(const Var& buffer, Expr count, bool zero) {
  return std::make_shared<AllocateNode>(buffer, std::move(count), zero);
}
Stmt freeBuffer(const Var& buffer) { return std::make_shared<FreeNode>(buffer); }
Stmt grow(const Var& buffer, const Var& capacity, Expr needed) {
  return std::make_shared<GrowNode>(buffer, capacity, std::move(needed));
}
Stmt ret(int32_t status) { return std::make_shared<ReturnNode>(status); }
Stmt call(RuntimeFunction function, std::vector<Expr> args) {
  return std::make_shared<CallNode>(function, std::move(args));
}

bool sameExpr(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->type != b->type) return false;
  switch (a->kind) {
    case ExprKind::Literal: {
      const auto &x = as<LiteralNode>(a), &y = as<LiteralNode>(b);
      return x.intValue == y.intValue && x.real == y.real && x.imag == y.imag;
    }
    case ExprKind::VarRef: return as<VarRefNode>(a).var == as<VarRefNode>(b).var;
    case ExprKind::Load:
      return as<LoadNode>(a).buffer == as<LoadNode>(b).buffer && sameExpr(as<LoadNode>(a).index, as<LoadNode>(b).index);
    case ExprKind::Binary: {
      const auto &x = as<BinaryNode>(a), &y = as<BinaryNode>(b);
      return x.op == y.op && sameExpr(x.a, y.a) && sameExpr(x.b, y.b);
    }
    case ExprKind::Unary:
      return as<UnaryNode>(a).op == as<UnaryNode>(b).op && sameExpr(as<UnaryNode>(a).a, as<UnaryNode>(b).a);
    case ExprKind::Cast: return sameExpr(as<CastNode>(a).a, as<CastNode>(b).a);
    case ExprKind::Select: {
      const auto &x = as<SelectNode>(a), &y = as<SelectNode>(b);
      return sameExpr(x.cond, y.cond) && sameExpr(x.a, y.a) && sameExpr(x.b, y.b);
    }
    case ExprKind::ThreadId:
    case ExprKind::NumThreads:
    case ExprKind::InterruptRequested: return true;
  }
  return false;
}

std::vector<Var> allocatedBuffers(const Stmt& s) {
  std::vector<Var> out;
  std::function<void(const Stmt&)> walk = [&](const Stmt& x) {
    if (!x) return;
    if (x->kind == StmtKind::Allocate) {
      const Var& buffer = as<AllocateNode>(x).buffer;
      if (std::find(out.begin(), out.end(), buffer) == out.end()) out.push_back(buffer);
    }
    forEachChildStmt(x, walk);
  };
  walk(s);
  return out;
}

}  // namespace coiter::ir
