// Lowering (taco-core.md §4): concrete index notation -> one imperative IR function.
// Every forall is lowered from its iteration lattice: one loop per lattice point, an if-chain
// over the regions of the point, and the statement body lowered recursively in each region
// with the operands that are absent there replaced by zero (and simplified away). Results
// with compressed/singleton levels are appended in the same pass (assembly fused with
// compute, arrays grown geometrically); dense levels are located.
#pragma once
#include <string>

#include "cin/concrete_notation.hpp"
#include "ir/ir.hpp"
#include "lower/kernel_abi.hpp"

namespace coiter::lower {

struct LoweredKernel {
  ir::Function function;
  KernelABI abi;
};

// `result` is the tensor the statement defines; `functionName` names the IR function.
LoweredKernel lowerKernel(const cin::Stmt& stmt, const std::string& functionName);

}  // namespace coiter::lower
