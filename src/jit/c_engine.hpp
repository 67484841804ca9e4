// The C engine: prints a kernel as C (codegen/c_codegen.hpp), compiles it into a shared
// library with the system C compiler, and loads that library with dlopen. The compiler is
// `cc`, or the command in the environment variable COITER_CC (split at whitespace, so
// "ccache gcc" works), read at every compile.
#pragma once
#include "jit/engine.hpp"

namespace coiter {

class CEngine final : public Engine {
 public:
  std::string name() const override { return "c"; }
  std::string source(const ir::Function& f) const override;
  // Runs `cc -O3 -march=native -fPIC -shared -fwrapv -ffp-contract=off -fopenmp` in a private
  // temporary directory and returns the library's bytes. -fwrapv gives integer overflow
  // NumPy's wrapping; -ffp-contract=off keeps `a * b + c` rounded twice, as NumPy and the LLVM
  // engine do. -fopenmp is dropped, for the rest of the process, when the compiler rejects it.
  // On failure the source file is kept and its path is part of the CompileError.
  std::vector<uint8_t> compile(const ir::Function& f) const override;
  std::unique_ptr<LoadedKernel> load(const std::vector<uint8_t>& code, const std::string& symbol) const override;
  // "c;<first line of cc --version>;<CPU model>;<hash of the CPU feature flags>".
  std::string fingerprint() const override;
};

}  // namespace coiter
