// Prints an IR function as CUDA C++ for NVRTC: one `__global__` kernel per IR function, the
// C printer's statements and expressions reused (CudaPrinter extends CPrinter) and only what
// differs on a GPU replaced.
//
// How the IR runs on a GPU (ir.hpp, LoopKind):
//   - The kernel is launched on a whole grid; every thread runs the statements outside GPU
//     loops (they only compute locals, so all threads agree on them). A kernel without GPU
//     loops is launched on one thread.
//   - GPU loops are grid-, block- or warp-stride loops: gpu_block iterations go to blocks,
//     gpu_warp iterations to warps, gpu_thread iterations to threads (of the enclosing warp or
//     block, else of the grid). Any launch size computes the same result.
//   - Inside a block's or warp's iteration, the statements after its last inner GPU loop run on
//     the unit's first thread only; statements before it must not write memory.
//   - A reducing gpu_thread loop (parallel_reduction) is followed by a warp-shuffle or block
//     reduction of each local it accumulates, so that every thread holds the total.
//   - Memory statements and runtime calls (allocation, growth of result arrays) are host
//     operations: the printer refuses them with a CompileError naming what needs them.
//   - Status codes are stored into the launch's status word; the flag parameter (coordinate
//     violations) is incremented atomically.
//   - Atomic float additions aggregate the lanes of a warp that add to the same address.
// The kernel takes one by-value parameter, `struct coiter_args` (the pointer and integer slots
// of ir.hpp and the status word), so the IR's slot loads are unchanged.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "codegen/c_codegen.hpp"

namespace coiter::codegen {

// What the launcher needs to know besides the code.
struct CudaLaunchShape {
  int blockSize = 256;        // threads per block
  bool singleThread = false;  // no GPU loops: launch one thread
};

class CudaPrinter : public CPrinter {
 public:
  explicit CudaPrinter(const ir::Function& f);
  // The translation unit (CPrinter::print); shape() is valid afterwards.
  const CudaLaunchShape& shape() const { return shape_; }

 protected:
  std::string preamble() override;
  std::string signature() override;
  void bodyPrologue() override;
  void functionBody(const ir::BlockNode& body) override;
  LoopPragma loopPragma(const ir::ForNode& n) override;
  void forLoop(const ir::ForNode& n) override;
  void atomicUpdate(const ir::AtomicUpdateNode& n) override;
  void runtimeCall(const ir::CallNode& n) override;
  void allocate(const ir::AllocateNode& n) override;
  void grow(const ir::GrowNode& n) override;
  void writeBackAndReturn(int32_t status) override;

 private:
  // The statements of a unit's iteration (or of the whole grid, for `unit` Serial), split
  // around their inner GPU loops as the header says.
  void unitStatements(const std::vector<ir::Stmt>& stmts, ir::LoopKind unit);
  void gpuLoop(const ir::ForNode& n);
  void reduceAfter(const ir::ForNode& loop, ir::LoopKind parent);
  std::string reductionHelper(const std::string& op, DType t, ir::LoopKind over);
  // The helper that adds atomically, aggregating the lanes of a warp that add to one address.
  std::string warpAggregatedAdd(DType t);
  // The first side effect of `s` outside its GPU loops, described, or "" for none.
  std::string sideEffect(const ir::Stmt& s, bool skipGpuLoops) const;
  [[noreturn]] void refuse(const std::string& what) const;
  // Whether `buffer` is the flag parameter (ir.hpp, Param::flag).
  bool isFlag(const ir::Var& buffer) const;

  CudaLaunchShape shape_;
  std::vector<ir::LoopKind> units_;                      // GPU loops enclosing the statement being printed
  std::map<const ir::VarNode*, ir::Expr> declarations_;  // every Declare's initial value
  std::map<const ir::VarNode*, int> assignments_;        // Assigns of each variable, in all
  std::vector<std::string> deviceHelpers_;
  std::map<std::string, bool> deviceHelperNames_;
};

// The CUDA C++ of `f` and its launch shape.
struct CudaSource {
  std::string text;
  CudaLaunchShape shape;
};
CudaSource printCuda(const ir::Function& f);

}  // namespace coiter::codegen
