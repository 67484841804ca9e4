// Loads that every iteration of a loop repeats (the same element each time), moved before it.
//
// LLVM moves such a load out of a loop itself only when the load runs on every iteration
// before any exit of the loop. A loop that may leave early (a row loop that checks each
// coordinate as it loads it, guard_coordinates.hpp) keeps it inside, and CSR's transposed
// product `y[crd[q]] += A[q] * x[i]` then reads x[i] again for every entry of row i.
//
// `for q in [b, e) body` becomes `if (b < e) { let v = buffer[index]; for q in [b, e) body }`,
// the load replaced by v in body, for every load in a statement directly in the body (not
// under an if or an inner loop, which may not run it) whose index loads nothing and uses no
// variable that the body declares or assigns, nor q, and whose buffer the body does not write,
// nor any buffer that may share its memory (`groups`: ir/distinct_buffers.hpp). The load then
// runs once where the loop would have run it at least once.
#pragma once
#include <unordered_map>

#include "ir/ir.hpp"
#include "ir/prefetch_rows.hpp"

namespace coiter::ir {

// `loop` with its invariant loads moved before it; `loop` itself when it has none.
Stmt hoistInvariantLoads(const Stmt& loop, const std::unordered_map<const VarNode*, const VarNode*>& groups,
                         const FreshName& fresh);

}  // namespace coiter::ir
