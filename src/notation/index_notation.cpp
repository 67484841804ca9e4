#include "notation/index_notation.hpp"

#include <cmath>

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "memory/dtype.hpp"
#include "notation/type_promotion.hpp"
#include "util/errors.hpp"

namespace coiter::notation {

TensorVarPtr makeTensorVar(std::string name, Format format, DType dtype, DType indexType, bool temporary) {
  return std::make_shared<const TensorVar>(TensorVar{std::move(name), std::move(format), dtype, indexType, temporary});
}

bool LiteralNode::isZero() const { return real == 0.0 && imag == 0.0 && intValue == 0; }

std::shared_ptr<const AccessNode> access(TensorVarPtr tensor, std::vector<std::string> indices) {
  if (static_cast<int>(indices.size()) != tensor->order()) {
    throw ShapeError("tensor " + tensor->name + " has " + std::to_string(tensor->order()) +
                     " modes but is indexed with " + std::to_string(indices.size()) + " indices");
  }
  return std::make_shared<AccessNode>(std::move(tensor), std::move(indices));
}

std::shared_ptr<const AccessNode> accessWithLevels(const AccessNode& a, std::vector<std::string> levelVars) {
  if (levelVars.size() != a.tensor->format.levels().size()) {
    throw CoiterError("tensor " + a.tensor->name + ": " + std::to_string(levelVars.size()) + " level variables for " +
                      std::to_string(a.tensor->format.levels().size()) + " levels");
  }
  auto node = std::make_shared<AccessNode>(a.tensor, a.indices);
  node->levelVars = std::move(levelVars);
  return node;
}

namespace {

std::shared_ptr<LiteralNode> literal(DType t, bool weak) {
  auto node = std::make_shared<LiteralNode>(t);
  node->weak = weak;
  return node;
}

bool isWeak(const Expr& e) { return e->kind == ExprKind::Literal && static_cast<const LiteralNode&>(*e).weak; }

}  // namespace

Expr intLiteral(int64_t value, bool weak) {
  auto node = literal(DType::Int64, weak);
  node->intValue = value;
  node->real = static_cast<double>(value);
  return node;
}
Expr floatLiteral(double value, bool weak) {
  auto node = literal(DType::Float64, weak);
  node->real = value;
  return node;
}
Expr complexLiteral(double re, double im, bool weak) {
  auto node = literal(DType::Complex128, weak);
  node->real = re;
  node->imag = im;
  return node;
}
Expr boolLiteral(bool value) {
  auto node = literal(DType::Bool, true);
  node->intValue = value ? 1 : 0;
  node->real = node->intValue;
  return node;
}

Expr negate(Expr a) {
  if (a->type == DType::Bool) {
    throw DTypeError("negation of a bool expression is not supported (NumPy rejects it too): " + toString(a));
  }
  return std::make_shared<NegateNode>(std::move(a));
}

namespace {

// Whether `e` may be zero where nothing is stored: it reads a level that does not hold every
// coordinate, or is a zero literal (then a quotient by it is ±inf or NaN there).
bool mayHoldUnstoredZeros(const Expr& e) {
  bool may = false;
  forEachSubexpression(e, [&](const Expr& x) {
    if (x->kind == ExprKind::Literal) may = may || static_cast<const LiteralNode&>(*x).isZero();
    if (x->kind != ExprKind::Access) return;
    for (const auto& level : static_cast<const AccessNode&>(*x).tensor->format.levels()) {
      may = may || !level->properties().full;
    }
  });
  return may;
}

}  // namespace

Expr binary(const Operator& given, Expr a, Expr b) {
  const Operator& op = &given == &divOp() && mayHoldUnstoredZeros(b) ? divideByUnstoredOp() : given;
  DType t = promoteOperands(a->type, isWeak(a), b->type, isWeak(b));
  if (op.name == divOp().name) t = trueDivisionType(t);
  if (&op == &subOp() && t == DType::Bool) {
    throw DTypeError("subtraction of bool values is not supported (NumPy rejects it too): " + toString(a) + " - " +
                     toString(b));
  }
  auto node = std::make_shared<BinaryNode>(&op, t, std::move(a), std::move(b));
  // A result of two weak literals stays weak, like NumPy's Python-scalar arithmetic.
  return node;
}

Expr reduce(const Operator& op, const std::string& var, Expr body) {
  if (!op.reduction) throw CoiterError("'" + op.name + "' is not a reduction operator");
  std::vector<std::string> used = indexVariables(body);
  if (std::find(used.begin(), used.end(), var) == used.end()) {
    throw ShapeError("reduction over '" + var + "' but the reduced expression " + toString(body) + " does not use it");
  }
  return std::make_shared<ReduceNode>(&op, var, std::move(body));
}

namespace {

void collectVariables(const Expr& e, std::vector<std::string>& out) {
  forEachSubexpression(e, [&](const Expr& x) {
    if (x->kind != ExprKind::Access) return;
    const auto& a = static_cast<const AccessNode&>(*x);
    for (const auto& vars : {a.indices, a.levelVars}) {
      for (const auto& v : vars) {
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
      }
    }
  });
}

void collectOperands(const Expr& e, std::vector<TensorVarPtr>& out) {
  forEachSubexpression(e, [&](const Expr& x) {
    if (x->kind != ExprKind::Access) return;
    const auto& t = static_cast<const AccessNode&>(*x).tensor;
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  });
}

// A reduction variable must not be reused outside its reduction, and reductions over the
// same variable must not nest.
void checkReductionScopes(const Expr& e, std::set<std::string>& bound, const std::set<std::string>& free) {
  if (e->kind == ExprKind::Reduce) {
    const auto& r = static_cast<const ReduceNode&>(*e);
    if (bound.count(r.var) || free.count(r.var)) {
      throw ShapeError("index '" + r.var + "' is reduced but also used outside the reduction in " + toString(e));
    }
    bound.insert(r.var);
    checkReductionScopes(r.body, bound, free);
    bound.erase(r.var);
  } else if (e->kind == ExprKind::Negate) {
    checkReductionScopes(static_cast<const NegateNode&>(*e).a, bound, free);
  } else if (e->kind == ExprKind::Binary) {
    checkReductionScopes(static_cast<const BinaryNode&>(*e).a, bound, free);
    checkReductionScopes(static_cast<const BinaryNode&>(*e).b, bound, free);
  }
}

}  // namespace

std::vector<std::string> levelIndices(const AccessNode& a) {
  if (!a.levelVars.empty()) return a.levelVars;
  std::vector<std::string> vars;
  for (int mode : a.tensor->format.modeOrder()) vars.push_back(a.indices[mode]);
  return vars;
}

void forEachSubexpression(const Expr& e, const std::function<void(const Expr&)>& fn) {
  fn(e);
  switch (e->kind) {
    case ExprKind::Negate: forEachSubexpression(static_cast<const NegateNode&>(*e).a, fn); break;
    case ExprKind::Binary:
      forEachSubexpression(static_cast<const BinaryNode&>(*e).a, fn);
      forEachSubexpression(static_cast<const BinaryNode&>(*e).b, fn);
      break;
    case ExprKind::Reduce: forEachSubexpression(static_cast<const ReduceNode&>(*e).body, fn); break;
    case ExprKind::Access:
    case ExprKind::Literal: break;
  }
}

std::vector<std::string> indexVariables(const Expr& e) {
  std::vector<std::string> out;
  collectVariables(e, out);
  return out;
}

std::vector<std::string> indexVariables(const Assignment& a) {
  std::vector<std::string> out = a.lhs->indices;
  collectVariables(a.rhs, out);
  return out;
}

std::vector<TensorVarPtr> operandsOf(const Expr& e) {
  std::vector<TensorVarPtr> out;
  collectOperands(e, out);
  return out;
}

Assignment assignment(std::shared_ptr<const AccessNode> lhs, Expr rhs, const Operator* accumulate) {
  std::set<std::string> free(lhs->indices.begin(), lhs->indices.end());
  if (free.size() != lhs->indices.size()) {
    throw ShapeError("result " + lhs->tensor->name + " is indexed with a repeated index; " +
                     "write the diagonal as an operand instead");
  }
  std::set<std::string> bound;
  checkReductionScopes(rhs, bound, {});
  for (const auto& v : lhs->indices) {
    std::set<std::string> none;
    // A free variable may not be reduced on the right.
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
      if (e->kind == ExprKind::Reduce) {
        const auto& r = static_cast<const ReduceNode&>(*e);
        if (r.var == v) {
          throw ShapeError("index '" + v + "' indexes the result " + lhs->tensor->name +
                           " and is also reduced on the right");
        }
        visit(r.body);
      } else if (e->kind == ExprKind::Negate) {
        visit(static_cast<const NegateNode&>(*e).a);
      } else if (e->kind == ExprKind::Binary) {
        visit(static_cast<const BinaryNode&>(*e).a);
        visit(static_cast<const BinaryNode&>(*e).b);
      }
    };
    visit(rhs);
  }
  if (accumulate && !accumulate->reduction) {
    throw CoiterError("'" + accumulate->name + "=' is not a compound assignment");
  }
  return Assignment{std::move(lhs), std::move(rhs), accumulate};
}

namespace {

// A float as the parser reads it back: statements are printed for kernels to be compiled from
// (the autoscheduler's pipelines), so a literal that overflowed to infinity (`1e9995`) prints
// as one that parses to infinity again, not as `inf`, which would read as a tensor's name.
std::string realText(double x) {
  if (std::isinf(x)) return x > 0 ? "1e999" : "-1e999";
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

std::string literalText(const LiteralNode& l) {
  if (l.type == DType::Bool) return l.intValue ? "True" : "False";
  if (isInteger(l.type)) return std::to_string(l.intValue);
  if (isComplex(l.type)) {
    // (A NaN part prints as "nan", which does not parse: no literal the parser reads is one.)
    return "(" + realText(l.real) + (l.imag < 0 ? "-" : "+") + realText(std::abs(l.imag)) + "j)";
  }
  // NaN (a folded inf - inf) as the difference it came from.
  if (std::isnan(l.real)) return "(1e999 - 1e999)";
  std::string s = realText(l.real);
  // Keep float literals distinguishable from integer ones: "2.0", not "2".
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string print(const Expr& e, int parentPrecedence) {
  switch (e->kind) {
    case ExprKind::Access: {
      const auto& a = static_cast<const AccessNode&>(*e);
      std::string s = a.tensor->name + "(";
      for (size_t k = 0; k < a.indices.size(); ++k) s += (k ? "," : "") + a.indices[k];
      return s + ")";
    }
    case ExprKind::Literal: return literalText(static_cast<const LiteralNode&>(*e));
    case ExprKind::Negate: return "-" + print(static_cast<const NegateNode&>(*e).a, 4);
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      if (b.op->symbol.empty()) {
        return b.op->name + "(" + print(b.a, 0) + ", " + print(b.b, 0) + ")";
      }
      int p = b.op->precedence;
      // Left-associative: the right operand needs parentheses at equal precedence.
      std::string s = print(b.a, p) + " " + b.op->symbol + " " + print(b.b, p + 1);
      return p < parentPrecedence ? "(" + s + ")" : s;
    }
    case ExprKind::Reduce: {
      const auto& r = static_cast<const ReduceNode&>(*e);
      // Reductions print as the API spells them: sum/max/min.
      std::string name = r.op == &addOp() ? "sum" : r.op->name;
      return name + "(" + r.var + ", " + print(r.body, 0) + ")";
    }
  }
  return "?";
}

}  // namespace

std::string toString(const Expr& e) { return print(e, 0); }

std::string toString(const Assignment& a) {
  return toString(Expr(a.lhs)) + (a.accumulate ? " " + a.accumulate->symbol + "= " : " = ") + toString(a.rhs);
}

}  // namespace coiter::notation
