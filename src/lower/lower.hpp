// Lowering (Kjolstad's thesis, ch. 5): concrete index notation -> one imperative IR function.
// Every forall is lowered from its iteration lattice: one loop per lattice point, an if-chain
// over the regions of the point, and the statement body lowered recursively in each region
// with the operands that are absent there replaced by zero (and simplified away). Results
// with compressed/singleton levels are appended in the same pass (assembly fused with
// compute, arrays grown geometrically); dense levels are located.
#pragma once
#include <set>
#include <string>

#include "cin/concrete_notation.hpp"
#include "ir/guard_coordinates.hpp"
#include "ir/ir.hpp"
#include "lower/kernel_abi.hpp"
#include "schedule/scheduled_statement.hpp"

namespace coiter::lower {

struct LoweredKernel {
  ir::Function function;
  KernelABI abi;
  // What the IR passes need from lowering: every variable name lowering took (a pass's new
  // variables get others), and the coordinates each operand's crd arrays may hold.
  std::set<std::string> names;
  ir::CoordinateRanges coordinateRanges;
  Target target = Target::Cpu;  // the scheduled statement's: where the kernel runs
};

// `functionName` names the IR function. With `assemble` false the kernel computes values
// only, into a result whose index structure the caller supplies (assembled by an earlier
// call); it checks every coordinate against that structure and returns kStructureMismatch
// on the first difference.
// Loops of derived index variables and tagged loops follow `stmt`'s relations and tags.
// The function is as lowering built it; runIRPasses makes it the kernel the engines compile.
LoweredKernel lowerKernel(const schedule::ScheduledStatement& stmt, const std::string& functionName,
                          bool assemble = true);

// The IR passes, in order: software prefetch of values a loop over positions reads only in
// some iterations (ir/prefetch_streams.hpp) and of rows reached through an index array
// (ir/prefetch_rows.hpp; both CPU targets only: a GPU hides latency with its many threads), then
// the checks of loaded coordinates (ir/guard_coordinates.hpp; CPU targets only: a GPU
// kernel's operands are checked whole when copied to the device), which add the `violations`
// parameter to the function and the ABI when they check a load.
LoweredKernel runIRPasses(LoweredKernel lowered);

// `base` made a C identifier, with a numeric suffix when `used` holds it already; the result
// is added to `used`.
std::string freshName(std::set<std::string>& used, const std::string& base);

}  // namespace coiter::lower
