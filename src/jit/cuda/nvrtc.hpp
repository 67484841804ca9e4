// NVRTC, NVIDIA's in-process CUDA C++ compiler, loaded at run time (dlopen) from the CUDA
// toolkit or the `nvidia-cuda-nvrtc` wheel (runtime/cuda/cuda_driver.hpp searches both).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace coiter::cuda {

// Compiles CUDA C++ `source` for `arch` ("sm_90": a cubin; "compute_90": PTX text). Throws
// DeviceError when NVRTC cannot be loaded, CompileError with NVRTC's log when the source
// does not compile.
std::vector<uint8_t> compileCuda(const std::string& source, const std::string& arch);
// "13.0", or throws DeviceError when NVRTC cannot be loaded.
std::string nvrtcVersion();
// Whether NVRTC loads; `why` gets the reason when not.
bool nvrtcAvailable(std::string* why = nullptr);

}  // namespace coiter::cuda
