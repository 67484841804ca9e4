// Code generation from the kernel IR (ir.hpp) to an LLVM module, built directly with
// IRBuilder. Only forward declarations of LLVM types appear here so that including this
// header stays cheap; the LLVM headers are confined to llvm_codegen.cpp.
#pragma once
#include <memory>

#include "ir/ir.hpp"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace coiter {

// Builds a verified, unoptimized module holding one external function
//     i32 f.name(ptr pointer_slots, ptr integer_slots)
// that follows the calling convention of ir.hpp. `target` supplies the triple and data
// layout, and its CPU and features are attached to the function so that the optimizer's
// vectorizers see the host's vector width. Throws CompileError on malformed IR (an
// undeclared variable, mismatched types, a body that does not end with a Return, ...).
std::unique_ptr<llvm::Module> generateModule(const ir::Function& f, llvm::LLVMContext& context,
                                             const llvm::TargetMachine& target);

}  // namespace coiter
