// Tensor index notation (Kjolstad's thesis, ch. 4): the expression a user writes, before any loop
// order is chosen. Nodes are immutable and shared. Every expression node carries its value
// type, computed by NumPy's promotion rules when the node is built (see type_promotion.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "memory/dtype.hpp"
#include "notation/operators.hpp"

namespace coiter::notation {

// A tensor as the compiler sees it: a name, a format and a value type. Extents are not part
// of it: kernels take them at call time. Workspaces created by the compiler are tensors
// with `temporary` set.
struct TensorVar {
  std::string name;
  Format format;
  DType dtype = DType::Float64;
  DType indexType = DType::Int32;  // width of the level index arrays (int32 or int64)
  bool temporary = false;
  int order() const { return format.order(); }
};
using TensorVarPtr = std::shared_ptr<const TensorVar>;
TensorVarPtr makeTensorVar(std::string name, Format format, DType dtype, DType indexType = DType::Int32,
                           bool temporary = false);

enum class ExprKind { Access, Literal, Negate, Binary, Reduce };

struct ExprNode {
  ExprKind kind;
  DType type;
  ExprNode(ExprKind k, DType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
};
using Expr = std::shared_ptr<const ExprNode>;

// tensor(indices...): indices[m] indexes mode m. A tensor whose format has derived levels
// (DIA, ELL, BCSR) is indexed by its modes too; concretize gives each of its levels an index
// variable in `levelVars` (the mode's variable where the level stores a mode's coordinate or
// a block offset, a new summed variable where it stores a diagonal, a slot or a block number).
struct AccessNode : ExprNode {
  TensorVarPtr tensor;
  std::vector<std::string> indices;
  std::vector<std::string> levelVars;  // empty: one level per mode, in the format's mode order
  AccessNode(TensorVarPtr t, std::vector<std::string> i)
      : ExprNode(ExprKind::Access, t->dtype), tensor(std::move(t)), indices(std::move(i)) {}
};
// A constant. `weak` literals come from Python scalars and follow NumPy's NEP 50: they do
// not widen the type of the array they meet.
struct LiteralNode : ExprNode {
  double real = 0.0, imag = 0.0;
  int64_t intValue = 0;
  bool weak = true;
  explicit LiteralNode(DType t) : ExprNode(ExprKind::Literal, t) {}
  bool isZero() const;
};
struct NegateNode : ExprNode {
  Expr a;
  explicit NegateNode(Expr x) : ExprNode(ExprKind::Negate, x->type), a(std::move(x)) {}
};
struct BinaryNode : ExprNode {
  const Operator* op;
  Expr a, b;
  BinaryNode(const Operator* o, DType t, Expr x, Expr y)
      : ExprNode(ExprKind::Binary, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
// A reduction over one index variable, e.g. sum(j, B(i,j) * c(j)).
struct ReduceNode : ExprNode {
  const Operator* op;
  std::string var;
  Expr body;
  ReduceNode(const Operator* o, std::string v, Expr x)
      : ExprNode(ExprKind::Reduce, x->type), op(o), var(std::move(v)), body(std::move(x)) {}
};

// lhs(indices) = rhs, or lhs(indices) op= rhs when `accumulate` is set.
struct Assignment {
  std::shared_ptr<const AccessNode> lhs;
  Expr rhs;
  const Operator* accumulate = nullptr;
};

// Builders (types promoted here).
std::shared_ptr<const AccessNode> access(TensorVarPtr tensor, std::vector<std::string> indices);
// The same access with an index variable per level (see AccessNode::levelVars).
std::shared_ptr<const AccessNode> accessWithLevels(const AccessNode& a, std::vector<std::string> levelVars);
Expr intLiteral(int64_t value, bool weak = true);
Expr floatLiteral(double value, bool weak = true);
Expr complexLiteral(double re, double im, bool weak = true);
Expr boolLiteral(bool value);
Expr negate(Expr a);
Expr binary(const Operator& op, Expr a, Expr b);
Expr reduce(const Operator& op, const std::string& var, Expr body);
// Checks indices (count per tensor, reductions binding used variables) and returns the
// assignment; implicit summation is left to concretize.
Assignment assignment(std::shared_ptr<const AccessNode> lhs, Expr rhs, const Operator* accumulate = nullptr);

// The index variable of each of the accessed tensor's levels, in storage order (levelVars
// when set).
std::vector<std::string> levelIndices(const AccessNode& a);

// Calls fn on e and every subexpression of e, parents before children, left to right.
void forEachSubexpression(const Expr& e, const std::function<void(const Expr&)>& fn);

// Index variables in order of first appearance (lhs first for assignments).
std::vector<std::string> indexVariables(const Expr& e);
std::vector<std::string> indexVariables(const Assignment& a);
// Tensors read by the expression, in order of first appearance, without duplicates.
std::vector<TensorVarPtr> operandsOf(const Expr& e);

// Prints as in the string syntax of docs/reference.md, "Index notation": "y(i) = A(i,j) * x(j)".
std::string toString(const Expr& e);
std::string toString(const Assignment& a);

}  // namespace coiter::notation
