#include "runtime/cuda/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "util/errors.hpp"

namespace coiter::cuda {

namespace {

constexpr int kAttributeMultiprocessors = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttributeMajor = 75;            // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttributeMinor = 76;            // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

std::mutex& libraryMutex() {
  static std::mutex m;
  return m;
}

std::vector<std::string>& libraryDirectories() {
  static std::vector<std::string> dirs;
  return dirs;
}

struct Loaded {
  DriverApi api{};
  Device device;
  CUcontext context = nullptr;
  std::string problem;  // empty when loaded
};

template <typename F>
bool resolve(void* lib, const char* name, F& slot, std::string& problem) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (!slot && problem.empty()) problem = std::string("the CUDA driver has no function ") + name + " (too old?)";
  return slot != nullptr;
}

Loaded load() {
  Loaded out;
  std::string tried;
  void* lib = openLibrary({"libcuda.so.1", "libcuda.so"}, "COITER_CUDA_DRIVER_LIBRARY", tried);
  if (!lib) {
    out.problem = "the NVIDIA driver library (libcuda.so.1) is not installed or not found (tried " + tried +
                  "); target='cuda' needs an NVIDIA GPU and its driver";
    return out;
  }
  DriverApi& d = out.api;
  std::string& p = out.problem;
  resolve(lib, "cuInit", d.cuInit, p);
  resolve(lib, "cuDriverGetVersion", d.cuDriverGetVersion, p);
  resolve(lib, "cuDeviceGetCount", d.cuDeviceGetCount, p);
  resolve(lib, "cuDeviceGet", d.cuDeviceGet, p);
  resolve(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, p);
  resolve(lib, "cuDeviceGetName", d.cuDeviceGetName, p);
  resolve(lib, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem, p);
  resolve(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, p);
  resolve(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, p);
  resolve(lib, "cuCtxSynchronize", d.cuCtxSynchronize, p);
  resolve(lib, "cuStreamSynchronize", d.cuStreamSynchronize, p);
  resolve(lib, "cuModuleLoadData", d.cuModuleLoadData, p);
  resolve(lib, "cuModuleUnload", d.cuModuleUnload, p);
  resolve(lib, "cuModuleGetFunction", d.cuModuleGetFunction, p);
  resolve(lib, "cuMemAllocAsync", d.cuMemAllocAsync, p);
  resolve(lib, "cuMemFreeAsync", d.cuMemFreeAsync, p);
  resolve(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, p);
  resolve(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, p);
  resolve(lib, "cuMemsetD8Async", d.cuMemsetD8Async, p);
  resolve(lib, "cuMemGetInfo_v2", d.cuMemGetInfo, p);
  resolve(lib, "cuMemGetAddressRange_v2", d.cuMemGetAddressRange, p);
  resolve(lib, "cuPointerGetAttribute", d.cuPointerGetAttribute, p);
  resolve(lib, "cuLaunchKernel", d.cuLaunchKernel, p);
  resolve(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor", d.cuOccupancyMaxActiveBlocksPerMultiprocessor, p);
  resolve(lib, "cuGetErrorString", d.cuGetErrorString, p);
  resolve(lib, "cuDeviceGetDefaultMemPool", d.cuDeviceGetDefaultMemPool, p);
  resolve(lib, "cuMemPoolSetAttribute", d.cuMemPoolSetAttribute, p);
  resolve(lib, "cuEventCreate", d.cuEventCreate, p);
  resolve(lib, "cuEventRecord", d.cuEventRecord, p);
  resolve(lib, "cuEventSynchronize", d.cuEventSynchronize, p);
  resolve(lib, "cuEventElapsedTime", d.cuEventElapsedTime, p);
  if (!p.empty()) return out;
  auto step = [&](CUresult r, const char* what) {
    if (r == 0 || !p.empty()) return r == 0;
    const char* message = nullptr;
    d.cuGetErrorString(r, &message);
    p = std::string("cuda: ") + what + " failed: " + (message ? message : "error " + std::to_string(r));
    return false;
  };
  int count = 0;
  if (!step(d.cuInit(0), "cuInit") || !step(d.cuDeviceGetCount(&count), "cuDeviceGetCount")) return out;
  if (count < 1) {
    p = "the NVIDIA driver found no GPU";
    return out;
  }
  CUdevice dev = 0;
  char name[256] = {0};
  Device& info = out.device;
  if (step(d.cuDeviceGet(&dev, 0), "cuDeviceGet") &&
      step(d.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName") &&
      step(d.cuDeviceGetAttribute(&info.major, kAttributeMajor, dev), "cuDeviceGetAttribute") &&
      step(d.cuDeviceGetAttribute(&info.minor, kAttributeMinor, dev), "cuDeviceGetAttribute") &&
      step(d.cuDeviceGetAttribute(&info.multiprocessors, kAttributeMultiprocessors, dev), "cuDeviceGetAttribute") &&
      step(d.cuDeviceTotalMem(&info.memory, dev), "cuDeviceTotalMem") &&
      step(d.cuDriverGetVersion(&info.driverVersion), "cuDriverGetVersion") &&
      step(d.cuDevicePrimaryCtxRetain(&out.context, dev), "cuDevicePrimaryCtxRetain")) {
    info.name = name;
    // Memory freed into the stream-ordered pool stays there for the next call: by default
    // the pool returns it to the system at every synchronization, which each kernel call
    // reaches, so every call would map fresh memory.
    void* pool = nullptr;
    uint64_t keepAll = ~uint64_t{0};
    constexpr int kReleaseThreshold = 4;  // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    step(d.cuDeviceGetDefaultMemPool(&pool, dev), "cuDeviceGetDefaultMemPool") &&
        step(d.cuMemPoolSetAttribute(pool, kReleaseThreshold, &keepAll), "cuMemPoolSetAttribute");
  }
  return out;
}

const Loaded& loaded() {
  static const Loaded* l = new Loaded(load());  // never unloaded: kernels may outlive exit order
  return *l;
}

}  // namespace

void setLibraryDirectories(std::vector<std::string> dirs) {
  std::lock_guard<std::mutex> lock(libraryMutex());
  libraryDirectories() = std::move(dirs);
}

void* openLibrary(const std::vector<std::string>& names, const char* environmentOverride, std::string& tried) {
  if (const char* path = std::getenv(environmentOverride); path && *path) {
    tried += std::string(environmentOverride) + "=" + path;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  std::vector<std::string> dirs{""};  // "": the system's search (LD_LIBRARY_PATH, ld.so.cache)
  {
    std::lock_guard<std::mutex> lock(libraryMutex());
    for (const auto& d : libraryDirectories()) dirs.push_back(d);
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = std::getenv(var); root && *root) dirs.push_back(std::string(root) + "/lib64");
  }
  for (const char* d : {"/usr/local/cuda/lib64", "/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu"}) {
    dirs.push_back(d);
  }
  for (const auto& dir : dirs) {
    for (const auto& name : names) {
      std::string path = dir.empty() ? name : dir + "/" + name;
      if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
      if (dir.empty()) tried += (tried.empty() ? "" : ", ") + name;
    }
    if (!dir.empty()) tried += ", " + dir + "/";
  }
  return nullptr;
}

bool available(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.problem;
  return l.problem.empty();
}

const DriverApi& driver() {
  const Loaded& l = loaded();
  if (!l.problem.empty()) throw DeviceError(l.problem);
  // The primary context, current on each thread that reaches the GPU.
  thread_local bool current = false;
  if (!current) {
    check(l.api.cuCtxSetCurrent(l.context), "cuCtxSetCurrent");
    current = true;
  }
  return l.api;
}

const Device& device() {
  driver();
  return loaded().device;
}

void check(CUresult r, const char* what) {
  if (r == 0) return;
  const char* message = nullptr;
  const Loaded& l = loaded();
  if (l.api.cuGetErrorString) l.api.cuGetErrorString(r, &message);
  std::string text = std::string("cuda: ") + what + " failed: " + (message ? message : "error " + std::to_string(r));
  // Errors after which the context cannot be used again (CUDA's "sticky" errors).
  if (r == 700 || r == 701 || r == 702 || r == 714 || r == 715 || r == 716 || r == 719) {
    text += " (the GPU context is unusable now; restart the process to use the GPU again)";
  }
  throw DeviceError(text);
}

}  // namespace coiter::cuda
