// Arithmetic, comparisons and conversions on IR scalars, emitted with an IRBuilder: the
// numeric semantics of ir.hpp for the LLVM code generator. Private to the files of this folder
// (it includes LLVM headers); everything else goes through llvm_codegen.hpp.
#pragma once
#include <string>

#include <llvm/IR/IRBuilder.h>

#include "ir/ir.hpp"

namespace coiter {

// A scalar in registers. Complex values are carried as a (re, im) pair of floating-point
// values rather than an aggregate, so complex arithmetic is plain scalar code that the
// vectorizers handle like any other; `im` is null for every other type.
struct Scalar {
  llvm::Value* re = nullptr;
  llvm::Value* im = nullptr;
};

[[noreturn]] void failCodegen(const std::string& message);  // throws CompileError

bool isSignedInteger(DType t);
DType componentOf(DType complex);  // float32 for complex64, float64 for complex128
// The type of a value in registers: i1 for bool, the component type for complex.
llvm::Type* registerType(llvm::LLVMContext& context, DType t);

// `op` on two operands of dtype `operands` (the result is bool for comparisons).
Scalar emitBinary(llvm::IRBuilder<>& b, ir::BinaryOp op, DType operands, Scalar x, Scalar y);
Scalar emitUnary(llvm::IRBuilder<>& b, ir::UnaryOp op, DType operand, Scalar x);
// C conversions between bool, integer and floating-point types; real -> complex sets a zero
// imaginary part.
Scalar emitCast(llvm::IRBuilder<>& b, DType from, DType to, Scalar x);

}  // namespace coiter
