#include "notation/operators.hpp"

#include "util/errors.hpp"

namespace coiter::notation {

const Operator& addOp() {
  static const Operator op{"add", "+", false, false, true, true, true, 1};
  return op;
}
const Operator& subOp() {
  static const Operator op{"sub", "-", false, false, true, false, true, 1};
  return op;
}
const Operator& mulOp() {
  static const Operator op{"mul", "*", true, true, true, false, false, 2};
  return op;
}
const Operator& divOp() {
  static const Operator op{"div", "/", true, false, false, false, false, 2};
  return op;
}
const Operator& divideByUnstoredOp() {
  static const Operator op{"div", "/", false, false, false, false, false, 2};
  return op;
}
const Operator& maxOp() {
  static const Operator op{"max", "", false, false, true, true, false, 3};
  return op;
}
const Operator& minOp() {
  static const Operator op{"min", "", false, false, true, true, false, 3};
  return op;
}

const Operator& operatorNamed(const std::string& name) {
  for (const Operator* op : {&addOp(), &subOp(), &mulOp(), &divOp(), &maxOp(), &minOp()}) {
    if (op->name == name) return *op;
  }
  throw CoiterError("unknown operator '" + name + "'");
}

}  // namespace coiter::notation
