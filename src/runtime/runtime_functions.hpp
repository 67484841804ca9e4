// Functions of coiter's runtime that kernels call (ir::CallNode): work that is better written
// once in C++ than emitted as IR. Each engine binds the names to these addresses when it
// loads a kernel (the LLVM engine as absolute symbols, the C engine through function-pointer
// globals in the kernel library), so kernels never depend on how this extension was loaded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/runtime_call.hpp"

namespace coiter {

struct RuntimeFunctionInfo {
  RuntimeFunction id;
  std::string name;          // the symbol kernels use
  std::string cPointerType;  // C declarator of a pointer to it, with %s for the name
  void* address;
};

const RuntimeFunctionInfo& runtimeFunction(RuntimeFunction id);
const std::vector<RuntimeFunctionInfo>& runtimeFunctions();

}  // namespace coiter
