// IR builders the lowering files share: the type of positions and coordinates, e + 1, and the
// conjunction of conditions.
#pragma once
#include <vector>

#include "ir/ir.hpp"

namespace coiter::lower {

inline const ir::Type kIndex = ir::scalar(DType::Int64);

inline ir::Expr plusOne(const ir::Expr& e) { return ir::binary(ir::BinaryOp::Add, e, ir::intLit(1)); }

// true for no terms.
inline ir::Expr andAll(const std::vector<ir::Expr>& terms) {
  ir::Expr out;
  for (const auto& t : terms) out = out ? ir::binary(ir::BinaryOp::And, out, t) : t;
  return out ? out : ir::boolLit(true);
}

}  // namespace coiter::lower
