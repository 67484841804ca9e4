// ir::AtomicUpdateNode for the LLVM code generator: `*address = *address op value` as one
// atomic operation with respect to other threads. Private to this folder, like llvm_scalar_ops.
#pragma once
#include <llvm/IR/IRBuilder.h>

#include "codegen/llvm/llvm_scalar_ops.hpp"

namespace coiter {

// `address` points at an element of type `elem` in memory (a complex element is a pair of
// parts). Add is an atomicrmw (two for complex, real part first); integer Min and Max are
// atomicrmw min/max (umin/umax when unsigned); floating-point Min and Max are a
// compare-and-swap loop around NumPy's NaN-propagating minimum/maximum (llvm_scalar_ops),
// which no atomicrmw operation matches. Ordering is monotonic: updates only need to be
// indivisible; the end of the parallel loop orders them before what follows.
void emitAtomicUpdate(llvm::IRBuilder<>& b, ir::BinaryOp op, DType elem, llvm::Value* address, Scalar value);

}  // namespace coiter
