#include "jit/cuda/cuda_engine.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "codegen/cuda_codegen.hpp"
#include "codegen/cuda_runtime_kernels.hpp"
#include "jit/cuda/nvrtc.hpp"
#include "runtime/cuda/cuda_driver.hpp"
#include "runtime/cuda/device_arrays.hpp"
#include "util/errors.hpp"

namespace coiter {

namespace cuda {

double& lastKernelSeconds() {
  thread_local double seconds = 0;
  return seconds;
}

std::string targetArchitecture() {
  if (const char* arch = std::getenv("COITER_CUDA_ARCH"); arch && *arch) return arch;
  std::string why;
  if (!available(&why)) {
    throw DeviceError(why + " (to compile for a GPU that is not here, set COITER_CUDA_ARCH, e.g. sm_90)");
  }
  return device().arch();
}

namespace {

// The bytes the engine stores: a header with the launch shape, then the cubin.
constexpr char kMagic[8] = {'C', 'O', 'I', 'T', 'C', 'U', 'D', '1'};
struct Header {
  char magic[8];
  int32_t blockSize;
  int32_t singleThread;
};

class CudaKernel : public LoadedKernel {
 public:
  CudaKernel(std::vector<uint8_t> cubin, std::string symbol, codegen::CudaLaunchShape shape)
      : cubin_(std::move(cubin)), symbol_(std::move(symbol)), shape_(shape) {}
  ~CudaKernel() override {
    if (module_ && available()) driver().cuModuleUnload(module_);
  }
  bool runsOnHost() const override { return false; }

  int32_t run(KernelCall& call) const override {
    const DriverApi& d = driver();
    CUfunction function = loadedFunction(symbol_);
    size_t slots = call.pointers.size();
    // Device memory of this call, released on every path out.
    struct Temporaries {
      std::vector<CUdeviceptr> list;
      ~Temporaries() {
        for (CUdeviceptr p : list) release(p);
      }
    } temporaries;
    std::vector<CUdeviceptr> addresses(slots, 0);
    // The status word, the flag counter and a two-pass result's entries share one allocation,
    // one memset and one copy back.
    CUdeviceptr control = allocate(kControlWords * sizeof(int64_t));
    temporaries.list.push_back(control);
    check(d.cuMemsetD8Async(control, 0, kControlWords * sizeof(int64_t), nullptr), "cuMemsetD8Async");
    auto outputs = std::make_shared<DeviceArrays>();
    // An output's device array, kept with the result or released after the call.
    auto place = [&](size_t k) {
      addresses[k] = allocate(call.bytes[k]);
      if (call.keepOutputsOnDevice && call.uses[k] != SlotUse::Input)
        outputs->own(call.pointers[k], addresses[k], call.bytes[k]);
      else
        temporaries.list.push_back(addresses[k]);
    };
    for (size_t k = 0; k < slots; ++k) {
      if (!call.pointers[k]) continue;
      if (static_cast<int>(k) == call.flagSlot) {
        addresses[k] = control + sizeof(int64_t);
        continue;
      }
      if (call.deviceAddresses[k]) {
        addresses[k] = reinterpret_cast<CUdeviceptr>(call.deviceAddresses[k]);
        continue;
      }
      if (call.twoPass && appendedByPasses(*call.twoPass, static_cast<int>(k))) continue;  // sized after counting
      place(k);
      if (call.uses[k] == SlotUse::Input && call.bytes[k]) {
        check(d.cuMemcpyHtoD(addresses[k], call.pointers[k], call.bytes[k]), "cuMemcpyHtoD (an operand to the GPU)");
      } else if (call.uses[k] == SlotUse::ZeroedOutput) {
        check(d.cuMemsetD8Async(addresses[k], 0, std::max<size_t>(call.bytes[k], 1), nullptr), "cuMemsetD8Async");
      }
    }
    // struct coiter_args (codegen/cuda_codegen.cpp): pointers, integers, the status word.
    auto launch = [&] {
      size_t pointerCount = std::max<size_t>(slots, 1), integerCount = std::max<size_t>(call.integers.size(), 1);
      std::vector<uint64_t> args(pointerCount + integerCount + 1, 0);
      for (size_t k = 0; k < slots; ++k) args[k] = addresses[k];
      std::memcpy(args.data() + pointerCount, call.integers.data(), call.integers.size() * sizeof(int64_t));
      args[pointerCount + integerCount] = control;
      void* params[] = {args.data()};
      auto [grid, block] = launchShape(function);
      check(d.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
    };
    int64_t words[kControlWords] = {0, 0, 0};
    // Synchronizes: a failure of a kernel itself is reported here.
    auto readControl = [&] { check(d.cuMemcpyDtoH(words, control, sizeof words), "running the kernel"); };
    auto [start, stop] = events();
    check(d.cuEventRecord(start, nullptr), "cuEventRecord");
    if (call.twoPass) {
      TwoPassCall& passes = *call.twoPass;
      call.integers[passes.passSlot] = 0;
      launch();
      turnCountsIntoOffsets(passes, addresses[passes.posSlot], control + 2 * sizeof(int64_t), temporaries.list);
      readControl();
      if (words[0] == 0 && words[1] == 0) {
        passes.entries = words[2];
        if (passes.indexType == DType::Int32 && passes.entries > std::numeric_limits<int32_t>::max())
          throw ShapeError("the sparse result has more entries than its int32 index arrays can count");
        for (const auto& a : passes.appended) {
          call.bytes[a.slot] = static_cast<size_t>(passes.entries) * a.elementBytes;
          call.pointers[a.slot] = passes.resizeHost(a.slot, call.bytes[a.slot]);
          call.integers[a.capacitySlot] = passes.entries;
          place(a.slot);
          check(d.cuMemsetD8Async(addresses[a.slot], 0, std::max<size_t>(call.bytes[a.slot], 1), nullptr),
                "cuMemsetD8Async");
        }
        call.integers[passes.passSlot] = 1;
        launch();
      }
    } else {
      launch();
    }
    check(d.cuEventRecord(stop, nullptr), "cuEventRecord");
    readControl();
    if (call.flagSlot >= 0 && call.pointers[call.flagSlot])
      *static_cast<int64_t*>(call.pointers[call.flagSlot]) = words[1];
    int32_t result = static_cast<int32_t>(words[0]);
    float milliseconds = 0;
    check(d.cuEventElapsedTime(&milliseconds, start, stop), "cuEventElapsedTime");
    lastKernelSeconds() = milliseconds / 1e3;
    for (size_t k = 0; k < slots; ++k) {
      if (!call.pointers[k] || call.deviceAddresses[k] || call.uses[k] == SlotUse::Input || !addresses[k]) continue;
      if (static_cast<int>(k) == call.flagSlot || call.keepOutputsOnDevice) continue;
      if (call.bytes[k]) {
        check(d.cuMemcpyDtoH(call.pointers[k], addresses[k], call.bytes[k]), "cuMemcpyDtoH (a result to the host)");
      }
    }
    if (call.keepOutputsOnDevice) {
      if (call.outputsBorrow) outputs->borrow(call.outputsBorrow);
      call.outputs = outputs;
    }
    return result;
  }

 private:
  static constexpr size_t kControlWords = 3;  // status, flag counter, a two-pass result's entries

  static bool appendedByPasses(const TwoPassCall& passes, int slot) {
    for (const auto& a : passes.appended)
      if (a.slot == slot) return true;
    return false;
  }

  // The counts of a counting pass, pos[1..parents], turned into offsets on the device
  // (codegen/cuda_runtime_kernels.hpp); the entries go to `total`.
  void turnCountsIntoOffsets(const TwoPassCall& passes, CUdeviceptr pos, CUdeviceptr total,
                             std::vector<CUdeviceptr>& temporaries) const {
    using codegen::kOffsetsBlockSize;
    const DriverApi& d = driver();
    const std::string suffix = passes.indexType == DType::Int64 ? "_int64" : "_int32";
    long long parents = passes.parents;
    // Blocks of at least 8 parents per thread, at most kOffsetsMaxBlocks of them.
    long long blocks = std::clamp<long long>((parents + 8 * kOffsetsBlockSize - 1) / (8 * kOffsetsBlockSize), 1,
                                             codegen::kOffsetsMaxBlocks);
    long long perBlock = std::max<long long>((parents + blocks - 1) / blocks, 1);
    CUdeviceptr sums = allocate(static_cast<size_t>(blocks) * sizeof(int64_t));
    temporaries.push_back(sums);
    int blockCount = static_cast<int>(blocks);
    void* counts[] = {&pos, &parents, &perBlock, &sums};
    check(d.cuLaunchKernel(loadedFunction("coiter_block_counts" + suffix), static_cast<unsigned>(blocks), 1, 1,
                           kOffsetsBlockSize, 1, 1, 0, nullptr, counts, nullptr),
          "cuLaunchKernel (counting a result's entries)");
    void* scan[] = {&sums, &blockCount, &total};
    check(d.cuLaunchKernel(loadedFunction("coiter_scan_block_sums"), 1, 1, 1, kOffsetsBlockSize, 1, 1, 0, nullptr, scan,
                           nullptr),
          "cuLaunchKernel (counting a result's entries)");
    void* offsets[] = {&pos, &parents, &perBlock, &sums};
    check(d.cuLaunchKernel(loadedFunction("coiter_offsets" + suffix), static_cast<unsigned>(blocks), 1, 1,
                           kOffsetsBlockSize, 1, 1, 0, nullptr, offsets, nullptr),
          "cuLaunchKernel (counting a result's entries)");
  }

  // (grid, block): one thread for a kernel without GPU loops, else enough resident blocks to
  // fill the GPU (the kernel's loops stride over the rest); computed once.
  std::pair<unsigned, unsigned> launchShape(CUfunction function) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (grid_ == 0) {
      block_ = shape_.singleThread ? 1 : static_cast<unsigned>(shape_.blockSize);
      grid_ = 1;
      if (!shape_.singleThread) {
        int perMultiprocessor = 0;
        check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, function,
                                                                   static_cast<int>(block_), 0),
              "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        grid_ = static_cast<unsigned>(std::max(1, perMultiprocessor) * device().multiprocessors);
      }
    }
    return {grid_, block_};
  }

  // Two events per thread, timing the launch (lastKernelSeconds).
  static std::pair<void*, void*> events() {
    thread_local std::pair<void*, void*> pair{nullptr, nullptr};
    if (!pair.first) {
      check(driver().cuEventCreate(&pair.first, 0), "cuEventCreate");
      check(driver().cuEventCreate(&pair.second, 0), "cuEventCreate");
    }
    return pair;
  }

  // A kernel of the module (loaded on the GPU on first use): the generated one, or one of the
  // runtime kernels every module carries.
  CUfunction loadedFunction(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const DriverApi& d = driver();
    if (!module_)
      check(d.cuModuleLoadData(&module_, cubin_.data()), "cuModuleLoadData (loading the kernel on the GPU)");
    CUfunction& function = functions_[name];
    if (!function) check(d.cuModuleGetFunction(&function, module_, name.c_str()), "cuModuleGetFunction");
    return function;
  }

  std::vector<uint8_t> cubin_;
  std::string symbol_;
  codegen::CudaLaunchShape shape_;
  mutable std::mutex mutex_;
  mutable CUmodule module_ = nullptr;
  mutable std::map<std::string, CUfunction> functions_;
  mutable unsigned grid_ = 0, block_ = 0;
};

class CudaEngine : public Engine {
 public:
  std::string name() const override { return "cuda"; }
  std::string source(const ir::Function& f) const override { return codegen::printCuda(f).text; }

  std::vector<uint8_t> compile(const ir::Function& f) const override {
    codegen::CudaSource printed = codegen::printCuda(f);
    std::vector<uint8_t> cubin = compileCuda(printed.text + codegen::cudaOffsetKernels(), targetArchitecture());
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.blockSize = printed.shape.blockSize;
    h.singleThread = printed.shape.singleThread;
    std::vector<uint8_t> bytes(sizeof h + cubin.size());
    std::memcpy(bytes.data(), &h, sizeof h);
    std::memcpy(bytes.data() + sizeof h, cubin.data(), cubin.size());
    return bytes;
  }

  std::unique_ptr<LoadedKernel> load(const std::vector<uint8_t>& code, const std::string& symbol) const override {
    Header h{};
    if (code.size() <= sizeof h) throw CompileError("cuda engine: the cached code is too short");
    std::memcpy(&h, code.data(), sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.blockSize < 1 || h.blockSize > 1024) {
      throw CompileError("cuda engine: the cached code is not a coiter CUDA kernel");
    }
    codegen::CudaLaunchShape shape{h.blockSize, h.singleThread != 0};
    // The module is loaded on the GPU when the kernel first runs, so compiling needs no GPU.
    return std::make_unique<CudaKernel>(std::vector<uint8_t>(code.begin() + sizeof h, code.end()), symbol, shape);
  }

  std::string fingerprint() const override { return "cuda;nvrtc " + nvrtcVersion() + ";" + targetArchitecture(); }
};

}  // namespace

}  // namespace cuda

const Engine& cudaEngine() {
  static const cuda::CudaEngine engine;
  return engine;
}

}  // namespace coiter
