// Compute expressions. An access whose segment is absent in the current region is zero; zeros
// are simplified away using only each operator's declared zero behaviour, so every region
// gets exactly the code it needs (Kjolstad's thesis, ch. 5, zero-propagating simplification).
#include <cmath>
#include <map>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace nt = notation;

BinaryOp irOpOf(const nt::Operator& op) {
  static const std::map<std::string, BinaryOp> ops = {{"add", BinaryOp::Add}, {"sub", BinaryOp::Sub},
                                                      {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div},
                                                      {"max", BinaryOp::Max}, {"min", BinaryOp::Min}};
  auto it = ops.find(op.name);
  if (it == ops.end()) throw CompileError("lowering: no IR operation computes the operator '" + op.name + "'");
  return it->second;
}

Expr Lowerer::literal(const nt::Expr& e) const {
  const auto& l = static_cast<const nt::LiteralNode&>(*e);
  Type t = scalar(l.type);
  if (isFloat(l.type) || isComplex(l.type)) return litReal(t, l.real, l.imag);
  return lit(t, l.intValue);
}

bool Lowerer::isZero(const nt::Expr& e) const {
  switch (e->kind) {
    case nt::ExprKind::Access: return zeroed_.count(static_cast<const AccessNode*>(e.get())) > 0;
    case nt::ExprKind::Literal: return static_cast<const nt::LiteralNode&>(*e).isZero();
    case nt::ExprKind::Negate: return isZero(static_cast<const nt::NegateNode&>(*e).a);
    case nt::ExprKind::Binary: {
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      bool za = isZero(b.a), zb = isZero(b.b);
      if (za && b.op->leftZeroAnnihilates) return true;
      if (zb && b.op->rightZeroAnnihilates) return true;
      return za && zb && b.op->zeroPreserving;
    }
    case nt::ExprKind::Reduce: return isZero(static_cast<const nt::ReduceNode&>(*e).body);
  }
  return false;
}

Expr Lowerer::lowerExpr(const nt::Expr& e) {
  if (isZero(e)) return nullptr;
  switch (e->kind) {
    case nt::ExprKind::Access: {
      const auto& a = static_cast<const AccessNode&>(*e);
      if (a.tensor->temporary && a.tensor->order() == 0) return ir::ref(scalarTemps_.at(a.tensor.get()));
      const AccessState& state = accesses_.at(&a);
      const int levels = static_cast<int>(state.levelVars.size());
      if (state.entered != levels) {
        throw CompileError("lowering: " + nt::toString(e) + " is used before all its indices are bound");
      }
      Expr p = levels == 0 ? intLit(0) : state.pos.back();
      auto present = presentIf_.find(&a);
      if (present != presentIf_.end())
        return select(present->second, load(state.vars->vals, p), zeroOf(a.tensor->dtype));
      return load(state.vars->vals, p);
    }
    case nt::ExprKind::Literal: return literal(e);
    case nt::ExprKind::Negate: {
      const auto& n = static_cast<const nt::NegateNode&>(*e);
      return neg(cast(scalar(e->type), lowerExpr(n.a)));
    }
    case nt::ExprKind::Binary: {
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      Type t = scalar(e->type);
      Expr x = lowerExpr(b.a);
      Expr y = lowerExpr(b.b);
      // The zero operand of an operator whose identity is zero disappears (x + 0, x - 0, 0 + y).
      if (!x && b.op->zeroIsIdentity && b.op == &nt::addOp()) return cast(t, y);
      if (!x && b.op == &nt::subOp()) return neg(cast(t, y));
      if (!y && b.op->zeroIsIdentity) return cast(t, x);
      // Otherwise compute with an explicit zero (e.g. x / 0 gives inf, as NumPy does).
      x = x ? cast(t, x) : zeroOf(e->type);
      y = y ? cast(t, y) : zeroOf(e->type);
      return binary(irOpOf(*b.op), x, y);
    }
    case nt::ExprKind::Reduce: break;
  }
  throw CompileError("lowering: unexpected reduction in a concrete statement");
}

}  // namespace coiter::lower
