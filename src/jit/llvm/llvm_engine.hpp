// The LLVM ORC engine: IR -> LLVM module (llvm_codegen) -> O3 for the host CPU -> a
// relocatable object file, which is linked into the process by one process-wide ORC
// ExecutionSession with a JITLink ObjectLinkingLayer (the object layer LLJIT uses on ELF,
// without LLJIT's IR layer, which coiter does not need). Each loaded kernel gets its own
// JITDylib, so the same object can be loaded twice without symbol clashes and destroying the
// LoadedKernel frees its code. Compiling and loading are thread-safe.
// LLVM types stay in llvm_engine.cpp; callers reach the engine through llvmEngine().
#pragma once
#include "jit/engine.hpp"

namespace coiter {

class LlvmEngine final : public Engine {
 public:
  std::string name() const override { return "llvm"; }
  std::string source(const ir::Function& f) const override;
  std::vector<uint8_t> compile(const ir::Function& f) const override;
  std::unique_ptr<LoadedKernel> load(const std::vector<uint8_t>& code, const std::string& symbol) const override;
  // "llvm;<LLVM version>;<host CPU>;<hash of the host's feature string>".
  std::string fingerprint() const override;
};

}  // namespace coiter
