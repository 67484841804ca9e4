#include "driver/compiler.hpp"

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "call/kernel_call.hpp"
#include "cin/concretize.hpp"
#include "cin/loop_order.hpp"
#include "cin/scalar_accumulators.hpp"
#include "cin/workspaces.hpp"
#include "ir/ir_printer.hpp"
#include "jit/build_id.hpp"
#include "jit/disk_cache.hpp"
#include "lower/lattice_printer.hpp"
#include "schedule/apply_schedule.hpp"
#include "schedule/default_schedule.hpp"
#include "schedule/legality.hpp"
#include "util/errors.hpp"

namespace coiter {

namespace {

const Engine& chooseEngine(const std::string& name, Target target) {
  if (target == Target::Cuda) {
    if (name == "auto" || name == "cuda") return cudaEngine();
    throw CompileError("engine '" + name + "' compiles for the CPU; target='cuda' uses the cuda engine");
  }
  if (name == "c") return cEngine();
  if (name == "llvm" || name == "auto") {
    if (const Engine* llvm = llvmEngine()) return *llvm;
    if (name == "llvm") throw CompileError("this build of coiter has no LLVM engine (engine='llvm')");
    return cEngine();
  }
  throw CompileError("unknown engine '" + name + "' (expected 'auto', 'llvm' or 'c'; 'cuda' with target='cuda')");
}

// Machine code by signature. An entry is a shared future, so concurrent requests for one
// signature wait for the single compilation instead of repeating it.
class KernelCache {
 public:
  using Code = std::shared_ptr<const LoadedKernel>;

  Code getOrCompile(const Signature& sig, const Engine& engine, const ir::Function& function) {
    std::promise<Code> promise;
    std::shared_future<Code> future;
    bool owner = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(sig.canonical);
      if (it != entries_.end()) {
        ++info_.hits;
        future = it->second;
      } else {
        ++info_.misses;
        future = promise.get_future().share();
        entries_[sig.canonical] = future;
        owner = true;
      }
    }
    if (!owner) return future.get();  // compiled, or being compiled by another thread
    try {
      Code code = build(sig, engine, function);
      promise.set_value(code);
      return code;
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        entries_.erase(sig.canonical);  // a later call retries
      }
      promise.set_exception(std::current_exception());
      throw;
    }
  }

  CacheInfo info() {
    std::lock_guard<std::mutex> lock(mutex_);
    CacheInfo out = info_;
    out.entries = static_cast<int64_t>(entries_.size());
    return out;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
  }

  std::vector<std::string> takeWarnings() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(warnings_, {});
  }

 private:
  void warn(std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back(std::move(message));
  }

  Code build(const Signature& signature, const Engine& engine, const ir::Function& function) {
    auto start = std::chrono::steady_clock::now();
    DiskCache disk = DiskCache::fromEnvironment();
    // On disk, the key also covers the kernel's IR (as ir_printer.hpp prints it): a cache
    // written by a different build of the compiler can never supply code for this one. Its
    // variables are numbered, not named, as the signature renames tensors and index variables:
    // `z(k) = B(k,l) * v(l)` finds the kernel that `y(i) = A(i,j) * x(j)` stored.
    std::string ir = ir::printIR(function, ir::IRNames::Numbered);
    Signature sig = signature;
    sig.canonical += " | ir " + hashHex(ir.data(), ir.size());
    sig.hash = hashHex(sig.canonical.data(), sig.canonical.size());
    std::unique_ptr<LoadedKernel> loaded;
    DiskCache::Entry entry = disk.load(sig.hash, sig.canonical);
    if (!entry.discarded.empty()) warn("kernel cache entry " + entry.discarded + "; recompiling the kernel");
    if (entry.code) {
      try {
        loaded = engine.load(*entry.code, function.name);
        std::lock_guard<std::mutex> lock(mutex_);
        ++info_.diskHits;
      } catch (const CompileError& e) {
        // Recompiled (and overwritten) below.
        warn("kernel cache entry for " + sig.hash + " would not load (" + e.what() + "); recompiling the kernel");
      }
    }
    if (!loaded) {
      std::vector<uint8_t> bytes = engine.compile(function);
      loaded = engine.load(bytes, function.name);
      disk.store(sig.hash, sig.canonical, bytes);
      std::lock_guard<std::mutex> lock(mutex_);
      ++info_.compiles;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(mutex_);
    info_.compileSeconds += seconds;
    return Code(std::move(loaded));
  }

  std::mutex mutex_;
  std::map<std::string, std::shared_future<Code>> entries_;
  CacheInfo info_;
  std::vector<std::string> warnings_;
};

KernelCache& kernelCache() {
  static KernelCache* cache = new KernelCache();  // never destroyed: kernels may outlive exit order
  return *cache;
}

}  // namespace

namespace {

// `schedule` applied to `ordered` (a concretized statement in its default loop order), then
// automatic workspaces and scalar accumulators.
schedule::ScheduledStatement scheduleStatement(const cin::Stmt& ordered, const std::string& result,
                                               const schedule::Schedule& schedule, Target target) {
  schedule::ScheduledStatement s = schedule::applySchedule(ordered, schedule, target);
  auto binds = [&s](const std::string& v) { return s.boundVariables(v); };
  // assemble(A, append): the result is appended in loop order, never through a workspace.
  bool appendOnly = s.assembly.count(result) && s.assembly.at(result) == "append";
  if (!appendOnly) s.stmt = cin::insertWorkspaces(s.stmt, binds);
  std::set<std::string> parallel;
  for (const auto& [var, tags] : s.tags) {
    // Iterations on different threads cannot share a scalar accumulator, except the GPU
    // threads of a parallel_reduction, whose partial sums are combined (lower_parallel.cpp).
    bool gpu = tags.unit == schedule::ParallelUnit::GpuBlock || tags.unit == schedule::ParallelUnit::GpuWarp ||
               tags.unit == schedule::ParallelUnit::GpuThread;
    if (tags.unit == schedule::ParallelUnit::CpuThread ||
        (gpu && tags.races != schedule::RaceStrategy::ParallelReduction)) {
      parallel.insert(var);
    }
  }
  s.stmt = cin::accumulateInScalars(s.stmt, binds, parallel);
  return s;
}

}  // namespace

schedule::ScheduledStatement concreteStatement(const notation::Assignment& a, const std::string& scheduleText) {
  return scheduleStatement(cin::chooseLoopOrder(cin::concretize(a)), a.lhs->tensor->name,
                           schedule::parseSchedule(scheduleText), Target::Cpu);
}

std::string scheduleProblem(const notation::Assignment& a, const std::string& scheduleText, const std::string& target,
                            bool assemble) {
  try {
    schedule::ScheduledStatement s = scheduleStatement(cin::chooseLoopOrder(cin::concretize(a)), a.lhs->tensor->name,
                                                       schedule::parseSchedule(scheduleText), parseTarget(target));
    return schedule::legalityProblem(s, assemble);
  } catch (const ScheduleError& e) {
    return e.what();
  }
}

std::string CompiledKernel::source(const std::string& language) const {
  bool gpu = lowered.target == Target::Cuda;
  if (language == "cuda") {
    if (!gpu)
      throw CompileError("this kernel was compiled for the CPU; compile with target='cuda' for its CUDA source");
    return cudaEngine().source(lowered.function);
  }
  if (gpu && (language == "c" || language == "llvm")) {
    throw CompileError("this kernel was compiled for target='cuda'; its source is kern.source('cuda')");
  }
  if (language == "c") return cEngine().source(lowered.function);
  if (language == "llvm") {
    const Engine* llvm = llvmEngine();
    if (!llvm) throw CompileError("this build of coiter has no LLVM engine, so there is no LLVM IR to show");
    return llvm->source(lowered.function);
  }
  throw CompileError("unknown source language '" + language + "' (expected 'c', 'llvm' or 'cuda')");
}

std::shared_ptr<TensorStorage> CompiledKernel::run(const std::vector<std::shared_ptr<const TensorStorage>>& operands,
                                                   const std::vector<int64_t>* resultShape,
                                                   const TensorStorage* structure) const {
  static const std::vector<int64_t> none;
  return callKernel(*code, lowered.abi, operands, resultShape ? *resultShape : none, resultShape != nullptr, structure);
}

std::vector<std::pair<std::string, std::string>> CompiledKernel::stages() const {
  std::string lattice;
  try {
    lattice = lower::outerLattice(concrete.stmt);
  } catch (const CoiterError& e) {
    // The printer builds the outermost loop's lattice alone, without the schedule's derived
    // variables; the kernel itself was lowered with them.
    lattice = std::string("(not printable: ") + e.what() + ")";
  }
  return {
      {"index notation", notation::toString(assignment)},
      {"concrete index notation", cin::toString(ordered)},
      {"scheduled", concrete.toString()},
      {"iteration lattices", lattice},
      {"lowered IR", ir::printIR(beforePasses)},
      {"after IR passes", ir::printIR(lowered.function)},
  };
}

namespace {

// The GPU runs a lowered kernel only as the CUDA printer's rules allow (which statements run
// on every thread of a unit, what reduces); it throws CompileError otherwise.
void requirePrintableForGpu(const lower::LoweredKernel& lowered) {
  try {
    cudaEngine().source(lower::runIRPasses(lowered).function);
  } catch (const CompileError&) {
    throw;
  } catch (const CoiterError& e) {
    // The IR breaks a rule of parallel loops (ir/parallel_rules.hpp) that lowering checks only
    // for CPU loops: a GPU loop nested in another shares a local of the outer one.
    throw CompileError(std::string("the GPU cannot run the kernel as scheduled: ") + e.what());
  }
}

// The schedule stage, its legality check and lowering. The default schedule ties them
// together: its candidates are tried in order of preference, the first that applies and is
// legal is lowered, and without one the statement is lowered as the user wrote it (serial:
// on a GPU, one thread), which computes the same. A default that does not apply (a merge in
// the outer loop, a result that cannot be assembled by rows, ...) is not a failure of the
// statement. A user's schedule is judged before lowering: an illegal one raises ScheduleError
// from here, and lowering never meets it.
void scheduleAndLower(CompiledKernel& kernel, const std::string& result, const schedule::Schedule& userSchedule,
                      const CompileOptions& options) {
  const std::string name = "coiter_kernel_" + kernel.signature.hash;
  const Target target = parseTarget(options.target);
  if (userSchedule.empty()) {
    std::vector<std::string> candidates = target == Target::Cuda
                                              ? schedule::defaultGpuSchedules(kernel.ordered)
                                              : std::vector<std::string>{schedule::defaultSchedule(kernel.ordered)};
    for (const std::string& automatic : candidates) {
      if (automatic.empty()) continue;
      schedule::ScheduledStatement candidate;
      try {
        candidate = scheduleStatement(kernel.ordered, result, schedule::parseSchedule(automatic), target);
      } catch (const ScheduleError&) {
        continue;
      }
      if (!schedule::legalityProblem(candidate, options.assemble).empty()) continue;
      lower::LoweredKernel lowered;
      try {
        lowered = lower::lowerKernel(candidate, name, options.assemble);
      } catch (const ScheduleError&) {
        continue;  // legal only for a result keeping its operand's pattern, which lowering found it cannot
      }
      if (target == Target::Cuda) {
        try {
          requirePrintableForGpu(lowered);
        } catch (const CompileError&) {
          continue;  // the next candidate, or one thread
        }
      }
      kernel.concrete = std::move(candidate);
      kernel.lowered = std::move(lowered);
      return;
    }
    kernel.concrete = scheduleStatement(kernel.ordered, result, userSchedule, target);
    kernel.lowered = lower::lowerKernel(kernel.concrete, name, options.assemble);
    return;
  }
  kernel.concrete = scheduleStatement(kernel.ordered, result, userSchedule, target);
  if (std::string problem = schedule::legalityProblem(kernel.concrete, options.assemble); !problem.empty()) {
    throw ScheduleError(problem);
  }
  kernel.lowered = lower::lowerKernel(kernel.concrete, name, options.assemble);
  if (target == Target::Cuda) {
    try {
      requirePrintableForGpu(kernel.lowered);
    } catch (const CompileError& e) {
      // The CUDA printer's rules are the GPU's part of a schedule's legality.
      throw ScheduleError("schedule " + userSchedule.toString() + " cannot run on the GPU: " + e.what());
    }
  }
}

}  // namespace

// The pipeline, one stage after the other; CompiledKernel::stages prints what each produced.
// Iteration lattices are built inside lowering, one per forall as it is lowered.
std::shared_ptr<const CompiledKernel> compileKernel(const notation::Assignment& a, const CompileOptions& options) {
  const Engine& engine = chooseEngine(options.engine, parseTarget(options.target));
  schedule::Schedule userSchedule = schedule::parseSchedule(options.schedule);
  std::string scheduleText = userSchedule.toString();
  std::string optionText = "engine=" + engine.fingerprint() + ";schedule=" + scheduleText +
                           ";target=" + options.target + ";assemble=" + (options.assemble ? "yes" : "no") +
                           ";version=" + compilerBuildId();
  auto kernel = std::make_shared<CompiledKernel>();
  // A schedule names index variables, so scheduled kernels keep their names in the key.
  kernel->signature = signatureOf(a, optionText, /*keepIndexNames=*/!scheduleText.empty());
  kernel->engine = &engine;
  kernel->assignment = a;
  kernel->ordered = cin::chooseLoopOrder(cin::concretize(a));             // concretize
  scheduleAndLower(*kernel, a.lhs->tensor->name, userSchedule, options);  // schedule, lower
  kernel->beforePasses = kernel->lowered.function;
  kernel->lowered = lower::runIRPasses(std::move(kernel->lowered));                                // IR passes
  kernel->code = kernelCache().getOrCompile(kernel->signature, engine, kernel->lowered.function);  // engine
  return kernel;
}

CacheInfo cacheInfo() {
  CacheInfo info = kernelCache().info();
  DiskCache disk = DiskCache::fromEnvironment();
  info.diskDirectory = disk.directory();
  info.diskProblem = disk.problem();
  return info;
}

void clearCache(bool disk) {
  kernelCache().clear();
  if (disk) DiskCache::fromEnvironment().clear();
}

std::vector<std::string> takeCacheWarnings() { return kernelCache().takeWarnings(); }

}  // namespace coiter
