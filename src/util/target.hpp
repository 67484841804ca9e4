// Where a kernel runs. The target flows from ct.compile through scheduling (which units a
// parallelize command may name, which default schedule applies), lowering and the engine
// (which code generator prints the IR, how the loaded code is run).
#pragma once
#include <string>

#include "util/errors.hpp"

namespace coiter {

enum class Target { Cpu, Cuda };

inline const char* targetName(Target t) { return t == Target::Cuda ? "cuda" : "cpu"; }

inline Target parseTarget(const std::string& name) {
  if (name == "cpu") return Target::Cpu;
  if (name == "cuda") return Target::Cuda;
  throw CompileError("unknown target '" + name + "' (expected 'cpu' or 'cuda')");
}

}  // namespace coiter
