// The variables a statement uses but does not declare: what the body of a parallel loop
// needs from its surroundings, and so what an outlined loop body captures.
#pragma once
#include <vector>

#include "ir/ir.hpp"

namespace coiter::ir {

// Every variable that `s` reads, writes or indexes (a buffer it loads from or stores to) and
// that is not declared inside `s` (by a Declare or as a For loop's variable), in order of
// first use, each once.
std::vector<Var> freeVariables(const Stmt& s);

}  // namespace coiter::ir
