// Where a kernel checks whether the user asked it to stop (Ctrl-C, runtime/interrupts.hpp).
//
// Every loop that holds another loop (not counting while loops marked as steps of the loop
// around them, WhileNode::step) checks the flag at the top of each iteration: often
// enough that a long kernel stops within milliseconds (an iteration of such a loop is a row
// or a block, not a nonzero), and never in an innermost loop, whose vectorization a check
// would cost. A loop marked bounded (LoopSchedule::bounded, a block's few rows) is checked by
// the loop around it instead. What a set flag does depends on where the loop is:
//   - outside parallel loops: the kernel returns kInterrupted (its result arrays are written
//     back and freed by the caller, as for any other status);
//   - a parallel loop's iterations skip their bodies, and after the loop the kernel returns;
//   - inside a parallel loop's body, a nested loop breaks (the parallel loop then skips).
// The flag is one volatile read, never hoisted; the pass is for host code only.
#pragma once
#include "ir/ir.hpp"

namespace coiter::ir {

struct InterruptibleBody {
  Stmt body;
  bool checks = false;  // some loop checks the flag
};

InterruptibleBody addInterruptPoints(const Stmt& body);

}  // namespace coiter::ir
