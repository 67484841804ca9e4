// The rules that make parallel IR safe to run on many threads (ir.hpp, LoopSchedule and
// AtomicUpdateNode), checked by every code generator before it emits anything: a violation is a
// lowering bug, and running it would be a data race or a crash, not a wrong answer one could
// notice.
#pragma once

#include "ir/ir.hpp"

namespace coiter::ir {

// Throws CoiterError naming the loop and the offending statement when the body of a Parallel
// loop of `f` assigns a variable declared outside it, contains a Return, Allocate, Free or
// Grow, or a Break that would leave the parallel loop itself; or when an AtomicUpdate
// anywhere in `f` has an element type its operation does not support (Add: integer, float or
// complex; Min/Max: integer or float).
void checkParallelRules(const Function& f);

}  // namespace coiter::ir
