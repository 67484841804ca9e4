// Reductions into a local scalar (Kjolstad's thesis, ch. 5, footnote 30). A compound assignment
// whose result position does not depend on the innermost loop,
//     ∀j y(i) += A(i,j) * x(j)
// becomes a where with a scalar temporary,
//     (y(i) += t where ∀j t += A(i,j) * x(j))
// so the loop accumulates in a register and the result is read and written once, instead of
// once per iteration (the compiler cannot keep y(i) in a register itself: the result array
// could alias an operand's).
#pragma once
#include <set>

#include "cin/workspaces.hpp"

namespace coiter::cin {

// `parallelLoops` are not accumulated around: their iterations run on different threads, so
// they update the result itself (with the race strategy their schedule chose).
Stmt accumulateInScalars(const Stmt& s, const LoopBinds& binds = bindsItself,
                         const std::set<std::string>& parallelLoops = {});

}  // namespace coiter::cin
