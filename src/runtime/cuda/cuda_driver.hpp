// The CUDA driver API, loaded at run time (dlopen of libcuda.so.1), so that coiter builds and
// runs its CPU kernels on machines without CUDA and says what is missing when asked for a GPU.
// Only the functions coiter calls are declared, with the driver's stable C ABI (the _v2
// entry points where the driver has them). Every call goes through check(), which turns a
// failure into a DeviceError naming the call and the driver's message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace coiter::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;

struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuMemAllocAsync)(CUdeviceptr*, size_t, CUstream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemGetInfo)(size_t*, size_t*);
  CUresult (*cuMemGetAddressRange)(CUdeviceptr*, size_t*, CUdeviceptr);
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuDeviceGetDefaultMemPool)(void**, CUdevice);
  CUresult (*cuMemPoolSetAttribute)(void*, int, void*);
  CUresult (*cuEventCreate)(void**, unsigned);
  CUresult (*cuEventRecord)(void*, CUstream);
  CUresult (*cuEventSynchronize)(void*);
  CUresult (*cuEventElapsedTime)(float*, void*, void*);
};

// The GPU coiter uses (device 0, its primary context), set up on first use.
struct Device {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  size_t memory = 0;      // bytes
  int driverVersion = 0;  // e.g. 13000
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// Loads the driver, initializes it and makes device 0's primary context current on the
// calling thread. Throws DeviceError saying what is missing (no libcuda, no device).
const DriverApi& driver();
const Device& device();
// Whether driver() would succeed, without throwing; `why` gets the reason when not.
bool available(std::string* why = nullptr);

// Throws DeviceError "cuda: <what> failed: <driver message>" unless `r` is success.
void check(CUresult r, const char* what);

// Directories searched for CUDA libraries after the system's (set by the Python package: the
// `nvidia-*` wheels' lib folders).
void setLibraryDirectories(std::vector<std::string> dirs);
// dlopen of the first of `names` found, trying each directory of setLibraryDirectories and
// the usual CUDA locations after the system's search; nullptr when none loads, with what was
// tried appended to `tried`.
void* openLibrary(const std::vector<std::string>& names, const char* environmentOverride, std::string& tried);

}  // namespace coiter::cuda
