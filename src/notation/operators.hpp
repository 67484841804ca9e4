// Operators are data. Each operator declares how zero behaves under it, and the iteration
// lattice builder uses only that (Kjolstad's thesis, ch. 3): an operand whose zero annihilates the
// result can be intersected; an operator that maps all-zero operands to zero can be iterated
// over the union; anything else needs the whole dimension. New operators and semirings are
// added here, without touching the lattice builder; the lowerer maps each to the IR
// operation that computes it (lower/lower_expr.cpp: irOpOf), as notation knows no IR.
#pragma once
#include <string>

namespace coiter::notation {

struct Operator {
  std::string name;    // "add", "mul", ...
  std::string symbol;  // "+", "*", ... as printed in index notation; empty for calls
  // A zero in the left (right) operand makes the result zero, whatever the other operand.
  // (Division: 0 / b = 0 where b is stored; see divideByUnstoredOp.)
  bool leftZeroAnnihilates;
  bool rightZeroAnnihilates;
  // op(0, 0) == 0, so regions where every operand is zero can be skipped.
  bool zeroPreserving;
  // Usable as the combining operator of a reduction or a compound assignment.
  bool reduction;
  // op(x, 0) == x: a reduction with it may skip the zeros of its operand (sum can, max
  // cannot: it sees unstored zeros).
  bool zeroIsIdentity;
  int precedence;  // for printing: higher binds tighter
};

const Operator& addOp();
const Operator& subOp();
const Operator& mulOp();
const Operator& divOp();
// Division by an expression that may hold unstored zeros (a sparse operand, a zero literal):
// there x / 0 is ±inf and 0 / 0 NaN, as NumPy on dense arrays gives (docs/reference.md, "Semantics"), so no zero
// annihilates and the whole dimension is iterated. notation::binary picks it for `/` when the
// denominator reads a level that does not store every coordinate; divOp's zero numerator
// annihilates, which is exact where every denominator entry is stored (and, like a product's
// unstored zero, ignores a stored 0 or NaN there).
const Operator& divideByUnstoredOp();
const Operator& maxOp();
const Operator& minOp();

// The operator with this name ("add", "sub", "mul", "div", "max", "min"); throws otherwise.
const Operator& operatorNamed(const std::string& name);

}  // namespace coiter::notation
