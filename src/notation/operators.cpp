#include "notation/operators.hpp"

#include "util/errors.hpp"

namespace coiter::notation {

using ir::BinaryOp;

const Operator& addOp() {
  static const Operator op{"add", "+", BinaryOp::Add, false, false, true, true, true, 1};
  return op;
}
const Operator& subOp() {
  static const Operator op{"sub", "-", BinaryOp::Sub, false, false, true, false, true, 1};
  return op;
}
const Operator& mulOp() {
  static const Operator op{"mul", "*", BinaryOp::Mul, true, true, true, false, false, 2};
  return op;
}
const Operator& divOp() {
  static const Operator op{"div", "/", BinaryOp::Div, true, false, false, false, false, 2};
  return op;
}
const Operator& maxOp() {
  static const Operator op{"max", "", BinaryOp::Max, false, false, true, true, false, 3};
  return op;
}
const Operator& minOp() {
  static const Operator op{"min", "", BinaryOp::Min, false, false, true, true, false, 3};
  return op;
}

const Operator& operatorNamed(const std::string& name) {
  for (const Operator* op : {&addOp(), &subOp(), &mulOp(), &divOp(), &maxOp(), &minOp()}) {
    if (op->name == name) return *op;
  }
  throw CoiterError("unknown operator '" + name + "'");
}

}  // namespace coiter::notation
