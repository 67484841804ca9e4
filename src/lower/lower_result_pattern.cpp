// Lowering a sparse result that keeps an operand's pattern (cin/result_pattern.hpp says when
// one does): nothing is appended. The kernel is compute-only over the operand's structure
// (KernelABI::patternOperand) and stores each value at the operand's position; the call gives
// the result the operand's index arrays and zeroed values. That drops the appends' capacity
// checks, and any loop over the operand's entries (its rows, or its positions) fills the
// result in parallel: on CPU threads without chunked assembly, on a GPU in one pass, not two.
//
// Whether a store finds the operand's position depends on how its loops lower, so lowering
// assumes it and patternPosition checks it at each result level; lowerKernel lowers again
// without when a check fails (and refuses a schedule that was legal only with it).
#include "cin/result_pattern.hpp"
#include "lower/lowerer.hpp"

namespace coiter::lower {

void Lowerer::planResultPattern() {
  if (!tryPattern_) return;
  const AccessNode* operand = cin::resultPatternOperand(root_);
  if (!operand || !accesses_.count(operand)) return;
  patternAccess_ = operand;
  assemble_ = false;
  abi_.assembles = false;
  abi_.patternOperand = accesses_.at(operand).vars->index;
}

bool Lowerer::iteratesPatternOperand(const LatticeLoop& loop, int s) const {
  const AccessNode* access = loop.info[s].access;
  return patternAccess_ && access && cin::readsSameEntries(*access, *patternAccess_);
}

ir::Expr Lowerer::patternPosition(int k) {
  // (The operand may be read more than once, A(i,j) * D(i,j) + A(i,j): any of its accesses
  // that the loops entered gives the position.)
  for (const auto& [access, state] : accesses_) {
    if (cin::readsSameEntries(*access, *patternAccess_) && state.entered > k && state.pos[k]) return state.pos[k];
  }
  patternBroken_ = true;  // (lowered again without: lowerKernel)
  return ir::intLit(0);
}

}  // namespace coiter::lower
