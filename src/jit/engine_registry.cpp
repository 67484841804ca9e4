// Engines that may be missing from a build. The LLVM engine defines llvmEngine() in
// jit/llvm/llvm_engine.cpp, which is compiled only when CMake found LLVM; without LLVM the
// registry answers null and callers fall back to the C engine.
#include "jit/engine.hpp"

namespace coiter {

#if !COITER_WITH_LLVM
const Engine* llvmEngine() { return nullptr; }
#endif

}  // namespace coiter
