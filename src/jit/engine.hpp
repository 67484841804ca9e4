// An engine turns an IR function into machine code in this process. Three engines implement
// it: the LLVM ORC engine (default when the build has LLVM), the C engine (prints C, runs
// the system cc, loads the shared library with dlopen), and the CUDA engine (prints CUDA C++,
// compiles it with NVRTC, launches it on the GPU through the driver API). Compilation produces bytes that can be
// stored in the on-disk cache and loaded again later without recompiling:
//   LLVM engine: a relocatable object file for the host;  C engine: a shared library;
//   CUDA engine: a cubin for the GPU's architecture, with its launch shape.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "storage/device_copy.hpp"

namespace coiter {

// The kernel calling convention of ir.hpp.
using KernelEntry = int32_t (*)(void** pointerSlots, int64_t* integerSlots);

// How a kernel that runs in memory of its own (a GPU's) treats a pointer slot.
enum class SlotUse {
  Input,         // copied in, unless already there (KernelCall::deviceAddresses)
  Output,        // written by the kernel; its initial contents do not matter
  ZeroedOutput,  // written by the kernel, which expects zeros
};

// A device kernel that assembles its sparse result in two passes (lower/kernel_abi.hpp,
// TwoPassAssembly): the engine runs the counting pass, turns the counts in `posSlot` (one per
// parent, at pos[parent + 1]) into offsets on the device, allocates the appended arrays with
// one element per entry, and runs the filling pass.
struct TwoPassCall {
  struct Appended {
    int slot;             // pointer slot (crd, vals)
    int capacitySlot;     // integer slot: its elements, set to the entries before the filling pass
    size_t elementBytes;  // per entry
  };
  int passSlot = -1;  // integer slot: 0 counts, 1 fills
  int posSlot = -1;   // pointer slot of the counted level's pos (parents + 1 elements, zeroed)
  int64_t parents = 0;
  DType indexType = DType::Int32;  // of pos
  std::vector<Appended> appended;
  // The host array of an appended slot, resized to `bytes` (its contents need not be kept):
  // where the array comes back to, or what stands for it while it stays on the device.
  std::function<void*(int slot, size_t bytes)> resizeHost;
  int64_t entries = 0;  // set by the run: how many entries the result has
};

// The arguments of one kernel call: the slots of ir.hpp, and what a device kernel needs to
// move them. Host kernels read `pointers` and `integers` only.
struct KernelCall {
  std::vector<void*> pointers;
  std::vector<int64_t> integers;
  std::vector<size_t> bytes;           // per pointer slot: the array's size in bytes
  std::vector<SlotUse> uses;           // per pointer slot
  std::vector<void*> deviceAddresses;  // per pointer slot: the array on the device, or null
  // Outputs stay on the device (returned in `outputs`, keyed by their host addresses), except
  // `flagSlot` (the coordinate violations), which always comes back.
  bool keepOutputsOnDevice = false;
  int flagSlot = -1;
  std::shared_ptr<const DeviceCopy> outputs;
  std::shared_ptr<const DeviceCopy> outputsBorrow;  // arrays `outputs` also answers for
  TwoPassCall* twoPass = nullptr;                   // the result is assembled in two passes
};

// Machine code loaded into this process. Destroying it unloads the code; it must not be run
// afterwards.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  // Whether the code runs on the host: then entry() is its function (chunked assembly calls
  // it from several threads), else entry() is null and run() moves the data.
  virtual bool runsOnHost() const { return true; }
  KernelEntry entry() const { return entry_; }
  // Runs the kernel; returns its status (ir.hpp).
  virtual int32_t run(KernelCall& call) const { return entry_(call.pointers.data(), call.integers.data()); }

 protected:
  KernelEntry entry_ = nullptr;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;  // "llvm", "c" or "cuda"
  // Text of the code this engine compiles: C source, or the optimized LLVM IR module.
  virtual std::string source(const ir::Function& f) const = 0;
  // Compiles `f` to loadable bytes. Throws CompileError on failure.
  virtual std::vector<uint8_t> compile(const ir::Function& f) const = 0;
  // Loads bytes produced by compile() (possibly in another process) and resolves `symbol`
  // (the function's name). Throws CompileError when the bytes cannot be loaded.
  virtual std::unique_ptr<LoadedKernel> load(const std::vector<uint8_t>& code, const std::string& symbol) const = 0;
  // A short string identifying the code this engine produces on this machine (engine name,
  // LLVM version or cc version, host CPU); part of every cache key.
  virtual std::string fingerprint() const = 0;
};

// The engines built into this binary. `llvmEngine()` returns null when built without LLVM.
// The CUDA engine is always built; it loads NVRTC and the driver when it first needs them.
const Engine* llvmEngine();
const Engine& cEngine();
const Engine& cudaEngine();

}  // namespace coiter
