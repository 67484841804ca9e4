// An engine turns an IR function into machine code in this process. Two engines implement
// it: the LLVM ORC engine (default when the build has LLVM) and the C engine (prints C, runs
// the system cc, loads the shared library with dlopen). Compilation produces bytes that can be
// stored in the on-disk cache and loaded again later without recompiling:
//   LLVM engine: a relocatable object file for the host;  C engine: a shared library.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace coiter {

// The kernel calling convention of ir.hpp.
using KernelEntry = int32_t (*)(void** pointerSlots, int64_t* integerSlots);

// Machine code loaded into this process. Destroying it unloads the code; `entry` must not be
// called afterwards.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  KernelEntry entry() const { return entry_; }

 protected:
  KernelEntry entry_ = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;          // "llvm" or "c"
  // Text of the code this engine compiles: C source, or the optimized LLVM IR module.
  virtual std::string source(const ir::Function& f) const = 0;
  // Compiles `f` to loadable bytes. Throws CompileError on failure.
  virtual std::vector<uint8_t> compile(const ir::Function& f) const = 0;
  // Loads bytes produced by compile() (possibly in another process) and resolves `symbol`
  // (the function's name). Throws CompileError when the bytes cannot be loaded.
  virtual std::unique_ptr<LoadedKernel> load(const std::vector<uint8_t>& code,
                                             const std::string& symbol) const = 0;
  // A short string identifying the code this engine produces on this machine (engine name,
  // LLVM version or cc version, host CPU); part of every cache key.
  virtual std::string fingerprint() const = 0;
};

// The engines built into this binary. `llvmEngine()` returns null when built without LLVM.
const Engine* llvmEngine();
const Engine& cEngine();

}  // namespace coiter
