// The compiler driver: index notation -> concrete index notation -> IR -> machine code,
// through the signature cache (memory, then disk). Safe to call from several threads: two
// threads asking for the same signature compile it once.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cin/concrete_notation.hpp"
#include "jit/engine.hpp"
#include "jit/signature.hpp"
#include "lower/lower.hpp"
#include "schedule/scheduled_statement.hpp"
#include "storage/tensor_storage.hpp"

namespace coiter {

struct CompileOptions {
  std::string engine = "auto";  // "auto" (LLVM when built with it), "llvm" or "c"
  std::string schedule;         // schedule text (schedule.hpp; empty: the default schedule)
  std::string target = "cpu";
  bool assemble = true;  // false: compute values into a given result structure
};

// One compiled kernel as its caller sees it: its own tensor names, what each stage of the
// pipeline made of its statement, and the shared machine code.
struct CompiledKernel {
  Signature signature;
  const Engine* engine = nullptr;
  notation::Assignment assignment;
  cin::Stmt ordered;                      // concretized, in its default loop order
  schedule::ScheduledStatement concrete;  // scheduled: the statement lowering lowered
  ir::Function beforePasses;              // as lowering built it
  lower::LoweredKernel lowered;           // after the IR passes: what the engine compiled
  std::shared_ptr<const LoadedKernel> code;

  std::string concreteText() const { return concrete.toString(); }
  // (stage name, text) for every stage in pipeline order: "index notation", "concrete index
  // notation", "scheduled", "iteration lattices" (of the outermost loop), "lowered IR" and
  // "after IR passes" (ir_printer.hpp). Printed when asked, not while compiling.
  std::vector<std::pair<std::string, std::string>> stages() const;
  // "c" (the C the IR prints as) or "llvm" (LLVM IR; needs the LLVM engine).
  std::string source(const std::string& language) const;
  // Operands in the order of lowered.abi.tensors (the result excluded); `resultShape` null:
  // derived from the operands.
  std::shared_ptr<TensorStorage> run(const std::vector<std::shared_ptr<const TensorStorage>>& operands,
                                     const std::vector<int64_t>* resultShape,
                                     const TensorStorage* structure = nullptr) const;
};

std::shared_ptr<const CompiledKernel> compileKernel(const notation::Assignment& a, const CompileOptions& options);

struct CacheInfo {
  int64_t hits = 0, misses = 0, diskHits = 0, compiles = 0, entries = 0;
  double compileSeconds = 0.0;
  std::string diskDirectory, diskProblem;
};
CacheInfo cacheInfo();
void clearCache(bool disk);
// Warnings about disk cache entries discarded since the last call (a file that is not an
// entry, or one that is corrupt or would not load), oldest first. The core does not log:
// the Python layer passes them to the "coiter" logger after each compilation.
std::vector<std::string> takeCacheWarnings();

// The concrete statement compileKernel would lower (for printing and tests): concretize,
// the default loop order, the schedule's commands, then automatic workspaces and scalar
// accumulators. Throws ScheduleError when a command does not apply.
schedule::ScheduledStatement concreteStatement(const notation::Assignment& a, const std::string& schedule = "");

// Whether `schedule` (its text) is legal for the statement, decided without lowering or
// compiling anything (what an autoscheduler asks of each candidate): "" when it is, else the
// reason, as compileKernel's ScheduleError would give it. `target` and `assemble` as in
// CompileOptions. Errors that are not the schedule's (a statement that does not concretize)
// are thrown.
std::string scheduleProblem(const notation::Assignment& a, const std::string& schedule,
                            const std::string& target = "cpu", bool assemble = true);

}  // namespace coiter
