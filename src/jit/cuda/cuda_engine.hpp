// The CUDA engine (jit/engine.hpp): CUDA C++ from codegen/cuda_codegen.hpp, compiled by NVRTC
// (jit/cuda/nvrtc.hpp) to a cubin for the GPU's architecture, loaded and launched through the
// driver API (runtime/cuda/cuda_driver.hpp) when first run. Compiling needs NVRTC only, so a
// machine without a GPU compiles (and caches) kernels for the architecture named by
// COITER_CUDA_ARCH; running them needs the GPU.
#pragma once
#include <string>

#include "jit/engine.hpp"

namespace coiter::cuda {

// The architecture kernels are compiled for: COITER_CUDA_ARCH ("sm_90") when set, else the
// GPU's. Throws DeviceError when neither is known.
std::string targetArchitecture();

// The GPU time of the last kernel this thread launched (CUDA events around the launch), for
// benchmarks that separate a kernel from the call around it.
double& lastKernelSeconds();

}  // namespace coiter::cuda
