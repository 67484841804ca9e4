#include "jit/cuda/nvrtc.hpp"

#include <dirent.h>
#include <dlfcn.h>

#include "runtime/cuda/cuda_driver.hpp"
#include "util/errors.hpp"

namespace coiter::cuda {

namespace {

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct NvrtcApi {
  nvrtcResult (*version)(int*, int*);
  nvrtcResult (*createProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*compileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*getProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*getProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*getCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*getCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*getPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*getPTX)(nvrtcProgram, char*);
  nvrtcResult (*destroyProgram)(nvrtcProgram*);
  const char* (*getErrorString)(nvrtcResult);
  std::string problem;
};

template <typename F>
void resolve(void* lib, const char* name, F& slot, std::string& problem) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (!slot && problem.empty()) problem = std::string("NVRTC has no function ") + name;
}

// NVRTC opens libnvrtc-builtins.so.X.Y by name when it compiles; outside the loader's search
// path (a wheel's lib folder) that fails unless the library is already loaded. Loading it from
// NVRTC's own folder makes the name resolve to it.
void preloadBuiltins(void* nvrtc) {
  Dl_info info{};
  void* symbol = dlsym(nvrtc, "nvrtcVersion");
  if (!symbol || !dladdr(symbol, &info) || !info.dli_fname) return;
  std::string path = info.dli_fname;
  std::string dir = path.substr(0, path.find_last_of('/'));
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind("libnvrtc-builtins.so.", 0) == 0 && name.find(".alt.") == std::string::npos) {
        dlopen((dir + "/" + name).c_str(), RTLD_NOW | RTLD_GLOBAL);
      }
    }
    closedir(d);
  }
}

const NvrtcApi& api() {
  static const NvrtcApi* loaded = [] {
    auto* a = new NvrtcApi{};
    std::string tried;
    void* lib = openLibrary({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, "COITER_NVRTC_LIBRARY", tried);
    if (!lib) {
      a->problem = "NVRTC (libnvrtc.so.13 or .12) is not installed or not found (tried " + tried +
                   "); install it with `pip install coiter[gpu]` (the nvidia-cuda-nvrtc wheel) or the CUDA "
                   "toolkit, or set COITER_NVRTC_LIBRARY to its path";
      return a;
    }
    preloadBuiltins(lib);
    resolve(lib, "nvrtcVersion", a->version, a->problem);
    resolve(lib, "nvrtcCreateProgram", a->createProgram, a->problem);
    resolve(lib, "nvrtcCompileProgram", a->compileProgram, a->problem);
    resolve(lib, "nvrtcGetProgramLogSize", a->getProgramLogSize, a->problem);
    resolve(lib, "nvrtcGetProgramLog", a->getProgramLog, a->problem);
    resolve(lib, "nvrtcGetCUBINSize", a->getCUBINSize, a->problem);
    resolve(lib, "nvrtcGetCUBIN", a->getCUBIN, a->problem);
    resolve(lib, "nvrtcGetPTXSize", a->getPTXSize, a->problem);
    resolve(lib, "nvrtcGetPTX", a->getPTX, a->problem);
    resolve(lib, "nvrtcDestroyProgram", a->destroyProgram, a->problem);
    resolve(lib, "nvrtcGetErrorString", a->getErrorString, a->problem);
    return a;
  }();
  if (!loaded->problem.empty()) throw DeviceError(loaded->problem);
  return *loaded;
}

}  // namespace

bool nvrtcAvailable(std::string* why) {
  try {
    api();
    return true;
  } catch (const DeviceError& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  api().version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<uint8_t> compileCuda(const std::string& source, const std::string& arch) {
  const NvrtcApi& n = api();
  bool ptx = arch.rfind("compute_", 0) == 0;
  if (!ptx && arch.rfind("sm_", 0) != 0) {
    throw CompileError("CUDA architecture '" + arch + "' is neither sm_XY (machine code) nor compute_XY (PTX)");
  }
  nvrtcProgram program = nullptr;
  auto fail = [&](nvrtcResult r, const char* what) {
    throw DeviceError(std::string("NVRTC: ") + what + " failed: " + n.getErrorString(r));
  };
  if (nvrtcResult r = n.createProgram(&program, source.c_str(), "coiter_kernel.cu", 0, nullptr, nullptr)) {
    fail(r, "nvrtcCreateProgram");
  }
  struct Destroy {
    const NvrtcApi& n;
    nvrtcProgram& p;
    ~Destroy() { n.destroyProgram(&p); }
  } destroy{n, program};
  std::string archOption = "--gpu-architecture=" + arch;
  const char* options[] = {archOption.c_str(), "--std=c++17"};
  nvrtcResult compiled = n.compileProgram(program, 2, options);
  if (compiled != 0) {
    size_t size = 0;
    n.getProgramLogSize(program, &size);
    std::string log(size, '\0');
    if (size) n.getProgramLog(program, log.data());
    // A lowering or printer bug, never user input: the log says where.
    throw CompileError("NVRTC could not compile the kernel for " + arch + ":\n" + log);
  }
  size_t size = 0;
  if (nvrtcResult r = ptx ? n.getPTXSize(program, &size) : n.getCUBINSize(program, &size))
    fail(r, "getting the code size");
  std::vector<uint8_t> code(size);
  if (nvrtcResult r = ptx ? n.getPTX(program, reinterpret_cast<char*>(code.data()))
                          : n.getCUBIN(program, reinterpret_cast<char*>(code.data()))) {
    fail(r, "getting the code");
  }
  return code;
}

}  // namespace coiter::cuda
