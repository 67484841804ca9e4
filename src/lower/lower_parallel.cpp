// Tagged loops (Kjolstad's thesis, ch. 6, parallelize and unroll): how a loop tagged cpu_thread or
// cpu_vector (or, with target cuda, gpu_block, gpu_warp or gpu_thread) runs, and how its body
// changes with the race strategy. What such a loop must satisfy (one for loop, not nested in
// another parallel loop, no sparse result appended, temporaries declared inside it, a race
// strategy that fits its races) is the schedule's legality, checked before lowering
// (schedule/legality.hpp).
//   - When iterations update the same result entries (the result is not indexed by the
//     loop's variable): `ignore_races` writes as is; `atomics` makes each update atomic;
//     `temporary` and `parallel_reduction` give every thread a private copy of the (dense)
//     result and merge the copies after the loop.
//   - Sparse results are assembled in parallel by chunks of the outermost loop over their
//     rows (kernel_call): each chunk is a call of the serial kernel on a range of rows.
//   - On a GPU, a loop nested in a gpu_warp or gpu_block loop may reduce scalar temporaries
//     across the warp's or block's threads (`parallel_reduction`; ir.hpp,
//     LoopSchedule::reduction), and a result the GPU loops race on is updated with atomics.
#include <algorithm>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
using schedule::ParallelUnit;
using schedule::RaceStrategy;

namespace {

// Entries of the result per block when the threads' private copies are added into it: 32 KiB
// of doubles, so a block of the result stays in the L1/L2 cache while each copy is added.
constexpr int64_t kMergedBlock = 4096;

// Whether s computes a temporary (a workspace or a reduction's scalar) somewhere.
bool hasWhere(const cin::Stmt& s) {
  switch (s->kind) {
    case cin::StmtKind::Assign: return false;
    case cin::StmtKind::Forall: return hasWhere(cin::as<cin::ForallNode>(s).body);
    case cin::StmtKind::Where: return true;
    case cin::StmtKind::Sequence:
      return hasWhere(cin::as<cin::SequenceNode>(s).define) || hasWhere(cin::as<cin::SequenceNode>(s).mutate);
  }
  return true;
}

}  // namespace

void Lowerer::planChunkedAssembly() {
  // (A result assembled in two passes is filled by rows in place: its row loop runs in parallel.)
  if (groups_.empty() || !assemble_ || twoPass_ || root_->kind != cin::StmtKind::Forall) return;
  const auto& f = cin::as<cin::ForallNode>(root_);
  const schedule::LoopTags* tags = scheduled_.tagsOf(f.var);
  if (!tags || tags->unit != ParallelUnit::CpuThread) return;
  std::string root = scheduled_.rootOf(f.var);
  const AppendGroup& group = groups_.front();
  if (groups_.size() != 1 || group.first == 0 || result_.levelVars[0] != root) {
    throw CompileError("lowering: the sparse result " + resultTensor_->name +
                       " is assembled in parallel only by "
                       "the loop over its rows (the schedule's legality check refuses the others)");
  }
  Var begin = makeVar(freshName(root + "_chunk_begin"), scalar(DType::Int64));
  Var end = makeVar(freshName(root + "_chunk_end"), scalar(DType::Int64));
  abi_.chunks = ChunkedAssembly{true,        root,          abi_.integerSlots, abi_.integerSlots + 1,
                                group.first, tags->dynamic, tags->chunk,       !hasWhere(root_)};
  params_.push_back(Param{begin, abi_.integerSlots++, false});
  params_.push_back(Param{end, abi_.integerSlots++, false});
  intervals_[root] = Interval{ir::ref(begin), ir::ref(end), true};
  chunkedLoop_ = f.var;  // the chunks run in parallel: loops inside them do not
}

bool Lowerer::racesOnResult(const cin::Stmt& body, const std::string& root) const {
  // Iterations write distinct entries when the result is indexed by every variable the loop
  // binds (a fused loop binds two).
  std::vector<std::string> bound = scheduled_.boundVariables(root);
  bool races = false;
  cin::forEachAssignment(body, [&](const cin::AssignNode& a) {
    if (a.lhs->tensor != resultTensor_) return;
    const auto& idx = a.lhs->indices;
    for (const auto& v : bound) races = races || std::find(idx.begin(), idx.end(), v) == idx.end();
  });
  return races;
}

Lowerer::ParallelPlan Lowerer::planLoop(const cin::ForallNode& f, const std::string& root, bool forForm,
                                        bool repeatsCoordinates) {
  ParallelPlan plan;
  const schedule::LoopTags* tags = scheduled_.tagsOf(f.var);
  if (!tags) return plan;
  plan.schedule.unroll = tags->unroll;
  // The chunked loop runs serially in each call; the dispatcher runs the calls in parallel.
  if (tags->unit == ParallelUnit::None || f.var == chunkedLoop_) return plan;
  // A compute-only kernel (out= with a given sparse structure) checks the structure entry by
  // entry in order: its loops over the result's rows run serially.
  if (!assemble_ && (!groups_.empty() || insertedLevel_ >= 0) && writesResult(f.body)) return plan;
  // (The schedule's legality check has refused every tagged loop that cannot be lowered so:
  // schedule/legality.hpp. A merge would need while loops, which no unit divides.)
  if (!forForm) throw CompileError("lowering: the parallel loop '" + f.var + "' coiterates several operands");
  bool threads = tags->unit == ParallelUnit::CpuThread;
  bool gpu = schedule::isGpuUnit(tags->unit);
  // A GPU unit nested in a gpu_warp or gpu_block loop combines the scalar temporaries it
  // updates, declared outside it, across its threads (parallel_reduction).
  bool reduces = false;
  if (gpu && gpuUnit_ != ParallelUnit::None && tags->races == RaceStrategy::ParallelReduction) {
    std::vector<const TensorVar*> local = cin::temporariesDeclaredIn(f.body);
    for (const auto& t : cin::resultsOf(f.body)) {
      bool shared = t->temporary && std::find(local.begin(), local.end(), t.get()) == local.end();
      reduces = reduces || (shared && t->order() == 0);
    }
  }
  // A loop over a non-unique level's positions (COO's rows) meets a coordinate once per
  // entry, so its iterations update the same result entries whatever indexes the result.
  if (racesOnResult(f.body, root) || repeatsCoordinates) {
    const notation::Operator* op = nullptr;
    cin::forEachAssignment(f.body, [&](const cin::AssignNode& a) {
      if (a.lhs->tensor == resultTensor_ && a.accumulate && !op) op = a.accumulate;
    });
    RaceStrategy races = tags->races;
    if (gpu && races != RaceStrategy::Atomics && scheduled_.hasGpuAtomicsInside(f.body)) races = RaceStrategy::Atomics;
    if (races == RaceStrategy::Atomics) {
      atomicResult_ = true;
    } else if (races == RaceStrategy::Temporary || races == RaceStrategy::ParallelReduction) {
      // Each thread accumulates into its own zeroed copy; the copies are combined after.
      const std::string& result = resultTensor_->name;
      const Type index = scalar(DType::Int64);
      Var threadsVar = makeVar(freshName("nthreads"), index);
      Var size = makeVar(freshName(result + "_size"), index);
      Var priv = makeVar(freshName(result + "_private"), pointerTo(resultTensor_->dtype));
      Expr total = intLit(1);
      for (const Var& e : result_.vars->extents) total = binary(BinaryOp::Mul, total, ir::ref(e));
      // One thread writes the result itself.
      Expr several = binary(BinaryOp::Gt, ir::ref(threadsVar), intLit(1));
      plan.before = {declare(threadsVar, numThreads()), declare(size, total), declare(priv, nullptr),
                     ifThen(several, allocate(priv, binary(BinaryOp::Mul, ir::ref(threadsVar), ir::ref(size)), true),
                            assign(priv, ir::ref(result_.vars->vals)))};
      // The copies are added into the result by blocks of its entries, the blocks divided among
      // the threads (on the CPU): within a block, one copy after the other, so the loop over
      // entries is innermost (it vectorizes, and the interrupt check falls on each block and
      // copy, not on each entry). A serial loop over entries took as long as a third of the
      // product itself (`A.T @ x` of CSR at 200,000 rows, two threads).
      Var b = makeVar(freshName("merged_block"), index), q = makeVar(freshName("q"), index),
          t = makeVar(freshName("thread"), index);
      Var first = makeVar(freshName("merged_first"), index), stop = makeVar(freshName("merged_stop"), index);
      const Var& vals = result_.vars->vals;
      Expr copy = load(priv, binary(BinaryOp::Add, binary(BinaryOp::Mul, ir::ref(t), ir::ref(size)), ir::ref(q)));
      Stmt merge = store(vals, ir::ref(q), binary(irOpOf(*op), load(vals, ir::ref(q)), copy));
      Expr blocks =
          binary(BinaryOp::Div, binary(BinaryOp::Add, ir::ref(size), intLit(kMergedBlock - 1)), intLit(kMergedBlock));
      Stmt blockBody =
          block({declare(first, binary(BinaryOp::Mul, ir::ref(b), intLit(kMergedBlock))),
                 declare(stop, binary(BinaryOp::Min, binary(BinaryOp::Add, ir::ref(first), intLit(kMergedBlock)),
                                      ir::ref(size))),
                 forLoop(t, intLit(0), ir::ref(threadsVar), forLoop(q, ir::ref(first), ir::ref(stop), merge))});
      LoopSchedule blockSchedule;
      if (threads) blockSchedule.kind = LoopKind::Parallel;
      plan.after = {
          ifThen(several, block({forLoop(b, intLit(0), blocks, blockBody, blockSchedule), freeBuffer(priv)}))};
      privateResult_ = priv;
      privateOffset_ = binary(BinaryOp::Mul, threadId(), ir::ref(size));
    }
  }
  if (gpu) {
    plan.schedule.kind = tags->unit == ParallelUnit::GpuBlock  ? LoopKind::GpuBlock
                         : tags->unit == ParallelUnit::GpuWarp ? LoopKind::GpuWarp
                                                               : LoopKind::GpuThread;
    plan.schedule.reduction = reduces;
    gpuUnit_ = tags->unit;
  } else if (threads) {
    plan.schedule.kind = LoopKind::Parallel;
    plan.schedule.dynamic = tags->dynamic;
    plan.schedule.chunk = tags->chunk;
    ++parallelDepth_;
  } else {
    plan.schedule.kind = LoopKind::Vectorized;
  }
  return plan;
}

}  // namespace coiter::lower
