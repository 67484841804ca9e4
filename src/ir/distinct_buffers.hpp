// Which buffers of a kernel point to memory no other buffer variable points into, so that
// the code generator may tell LLVM that their loads and stores never alias each other
// (scoped noalias metadata): what lets it hoist an operand's value out of an inner loop
// that stores into the result, and vectorize that loop without runtime overlap checks.
#pragma once
#include <unordered_set>

#include "ir/ir.hpp"

namespace coiter::ir {

// The pointer variables of `f` that are never assigned a pointer value, declared with one,
// or given to another pointer variable: each holds a kernel parameter (an operand's array,
// read only, or a result array, which the runtime allocates afresh for every call) or
// memory the kernel allocates, and so points where no other such variable does (operands
// given twice are only read, and two loads never conflict).
std::unordered_set<const VarNode*> distinctBuffers(const Function& f);

}  // namespace coiter::ir
