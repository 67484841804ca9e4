// Statements other than forall: assignments (stores into the result or a scalar
// temporary), where (temporaries initialized, producer, then consumer) and sequence.
#include <cmath>
#include <limits>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace nt = notation;

namespace {

// The value a temporary starts at: the identity of the operator that accumulates into it.
Expr identityOf(const nt::Operator* op, DType t) {
  bool floating = isFloat(t) || isComplex(t);
  if (op == &nt::maxOp() || op == &nt::minOp()) {
    bool max = op == &nt::maxOp();
    if (floating) return litReal(scalar(t), max ? -INFINITY : INFINITY);
    if (t == DType::Bool) return boolLit(!max);
    int64_t lo = 0, hi = 0;
    dispatchDType(t, [&](auto* p) {
      using T = std::remove_pointer_t<decltype(p)>;
      if constexpr (std::is_integral_v<T>) {
        lo = static_cast<int64_t>(std::numeric_limits<T>::min());
        hi = static_cast<int64_t>(std::numeric_limits<T>::max());
      }
    });
    return lit(scalar(t), max ? lo : hi);
  }
  return floating ? litReal(scalar(t), 0.0) : lit(scalar(t), 0);
}

// The first compound operator that writes `temp` in `s`.
const nt::Operator* accumulatorOf(const cin::Stmt& s, const TensorVar* temp) {
  switch (s->kind) {
    case cin::StmtKind::Assign: {
      const auto& a = cin::as<cin::AssignNode>(s);
      return a.lhs->tensor.get() == temp ? a.accumulate : nullptr;
    }
    case cin::StmtKind::Forall:
      return accumulatorOf(cin::as<cin::ForallNode>(s).body, temp);
    case cin::StmtKind::Where: {
      const auto& w = cin::as<cin::WhereNode>(s);
      const nt::Operator* op = accumulatorOf(w.producer, temp);
      return op ? op : accumulatorOf(w.consumer, temp);
    }
    case cin::StmtKind::Sequence: {
      const auto& q = cin::as<cin::SequenceNode>(s);
      const nt::Operator* op = accumulatorOf(q.define, temp);
      return op ? op : accumulatorOf(q.mutate, temp);
    }
  }
  return nullptr;
}

}  // namespace

bool Lowerer::isZero(const cin::Stmt& s) const {
  switch (s->kind) {
    case cin::StmtKind::Assign: {
      const auto& a = cin::as<cin::AssignNode>(s);
      // Accumulating a zero changes nothing only when zero is the operator's identity.
      bool identity = !a.accumulate || a.accumulate->zeroIsIdentity;
      return identity && isZero(a.rhs);
    }
    case cin::StmtKind::Forall:
      return isZero(cin::as<cin::ForallNode>(s).body);
    case cin::StmtKind::Where:
      return isZero(cin::as<cin::WhereNode>(s).consumer);
    case cin::StmtKind::Sequence:
      return isZero(cin::as<cin::SequenceNode>(s).define) && isZero(cin::as<cin::SequenceNode>(s).mutate);
  }
  return false;
}

Stmt Lowerer::lowerStmt(const cin::Stmt& s) {
  switch (s->kind) {
    case cin::StmtKind::Assign:
      return lowerAssign(cin::as<cin::AssignNode>(s));
    case cin::StmtKind::Forall:
      return lowerForall(cin::as<cin::ForallNode>(s));
    case cin::StmtKind::Where:
      return lowerWhere(cin::as<cin::WhereNode>(s));
    case cin::StmtKind::Sequence: {
      const auto& q = cin::as<cin::SequenceNode>(s);
      return block({lowerStmt(q.define), lowerStmt(q.mutate)});
    }
  }
  return nullptr;
}

Stmt Lowerer::lowerAssign(const cin::AssignNode& a) {
  const TensorVar& target = *a.lhs->tensor;
  Type t = scalar(target.dtype);
  Expr value = lowerExpr(a.rhs);
  bool identity = !a.accumulate || a.accumulate->zeroIsIdentity;
  if (!value) {
    if (identity && (a.accumulate || !target.temporary)) return nullptr;  // results start at zero
    value = identityOf(nullptr, target.dtype);
  }
  value = cast(t, value);
  if (target.temporary) {
    Var temp = scalarTemps_.at(&target);
    if (a.accumulate) value = binary(a.accumulate->irOp, ir::ref(temp), value);
    return assign(temp, value);
  }
  const Var& vals = result_.vars->vals;
  Expr p = resultPosition();
  if (a.accumulate) value = binary(a.accumulate->irOp, load(vals, p), value);
  return store(vals, p, value);
}

Stmt Lowerer::lowerWhere(const cin::WhereNode& w) {
  std::vector<Stmt> out;
  // Temporaries the producer writes: scalars held in local variables (footnote 30), set to
  // the identity of the operator that accumulates into them.
  for (const auto& t : cin::resultsOf(w.producer)) {
    if (!t->temporary) continue;
    if (t->order() != 0) throw CompileError("lowering: tensor-valued temporaries are not supported yet");
    Var v = makeVar(freshName(t->name), scalar(t->dtype));
    scalarTemps_[t.get()] = v;
    out.push_back(declare(v, identityOf(accumulatorOf(w.producer, t.get()), t->dtype)));
  }
  out.push_back(lowerStmt(w.producer));
  out.push_back(lowerStmt(w.consumer));
  return block(std::move(out));
}

}  // namespace coiter::lower
