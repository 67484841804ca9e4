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
#include "schedule/scheduled_statement.hpp"

namespace coiter::lower {

struct LoweredKernel {
  ir::Function function;
  KernelABI abi;
};

// `functionName` names the IR function. With `assemble` false the kernel computes values
// only, into a result whose index structure the caller supplies (assembled by an earlier
// call); it checks every coordinate against that structure and returns kStructureMismatch
// on the first difference.
// Loops of derived index variables and tagged loops follow `stmt`'s relations and tags.
LoweredKernel lowerKernel(const schedule::ScheduledStatement& stmt, const std::string& functionName,
                          bool assemble = true);

}  // namespace coiter::lower
