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
  // (Division: 0 / b = 0 is the usual sparse convention, see docs/reference.md, "Semantics".)
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
const Operator& maxOp();
const Operator& minOp();

// The operator with this name ("add", "sub", "mul", "div", "max", "min"); throws otherwise.
const Operator& operatorNamed(const std::string& name);

}  // namespace coiter::notation
