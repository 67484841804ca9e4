// Which buffers of a kernel point to memory that no buffer outside their own group points
// into, so that the code generator may tell LLVM that loads and stores of different groups
// never alias each other (scoped noalias metadata): what lets it hoist an operand's value out
// of an inner loop that stores into the result, and vectorize that loop without runtime
// overlap checks.
#pragma once
#include <unordered_map>

#include "ir/ir.hpp"

namespace coiter::ir {

// The pointer variables of `f` grouped by the memory they may share: variables joined by a
// pointer write (`p = q`, `p = select(c, q, r)`) are one group, which owns what its members
// were given: kernel parameters (an operand's array, read only, or a result array, which the
// runtime allocates afresh for every call) and memory the kernel allocates. So a group
// points where no other group does (operands given twice are only read, and two loads never
// conflict), while its own members may point into the same memory (a transposed product's
// private copy of the result is the result itself on one thread). Each buffer maps to its
// group's representative variable.
std::unordered_map<const VarNode*, const VarNode*> distinctBufferGroups(const Function& f);

// The same groups for the pointer variables a statement writes or joins (a pointer variable
// it does not mention is a group of its own).
std::unordered_map<const VarNode*, const VarNode*> bufferGroupsOf(const Stmt& body);

}  // namespace coiter::ir
