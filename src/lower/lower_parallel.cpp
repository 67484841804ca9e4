// Tagged loops (taco-core.md §5, parallelize and unroll): what a loop tagged cpu_thread or
// cpu_vector (or, with target cuda, gpu_block, gpu_warp or gpu_thread) must satisfy, and how
// its body changes with the race strategy.
//   - The loop must be a single for loop: a merge of several operands (a while loop) cannot
//     be divided among threads; split it and tag the outer loop instead.
//   - The body races when iterations update the same result entries (the result is not
//     indexed by the loop's variable): `no_races` refuses that; `ignore_races` writes as is;
//     `atomics` makes each update atomic; `temporary` and `parallel_reduction` give every
//     thread a private copy of the (dense) result and merge the copies after the loop.
//   - Sparse results cannot be appended to from a loop inside the kernel; they are
//     assembled in parallel by chunks of the outermost loop instead (kernel_call).
//   - Workspaces and temporaries are shared by the iterations of loops they are declared
//     outside of, so a parallel loop must not write them. On a GPU, a loop nested in a
//     gpu_warp or gpu_block loop may reduce scalar temporaries across the warp's or block's
//     threads (`parallel_reduction`; ir.hpp, LoopSchedule::reduction).
//   - GPU loops nest as gpu_block > gpu_warp > gpu_thread; a result they race on is updated
//     with atomics (per-thread result copies would not fit a GPU's threads).
#include <algorithm>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
using schedule::ParallelUnit;
using schedule::RaceStrategy;

namespace {

// Temporaries whose where statement lies inside `s` (declared per iteration of loops around s).
void temporariesDeclaredIn(const cin::Stmt& s, std::vector<const TensorVar*>& out) {
  switch (s->kind) {
    case cin::StmtKind::Assign: return;
    case cin::StmtKind::Forall: return temporariesDeclaredIn(cin::as<cin::ForallNode>(s).body, out);
    case cin::StmtKind::Where: {
      const auto& w = cin::as<cin::WhereNode>(s);
      for (const auto& t : cin::resultsOf(w.producer)) {
        if (t->temporary) out.push_back(t.get());
      }
      temporariesDeclaredIn(w.consumer, out);
      return temporariesDeclaredIn(w.producer, out);
    }
    case cin::StmtKind::Sequence:
      temporariesDeclaredIn(cin::as<cin::SequenceNode>(s).define, out);
      return temporariesDeclaredIn(cin::as<cin::SequenceNode>(s).mutate, out);
  }
}

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

// Whether a loop inside `s` is tagged with a GPU unit and atomics.
bool hasInnerGpuAtomics(const cin::Stmt& s, const schedule::ScheduledStatement& scheduled) {
  switch (s->kind) {
    case cin::StmtKind::Assign: return false;
    case cin::StmtKind::Forall: {
      const auto& f = cin::as<cin::ForallNode>(s);
      const schedule::LoopTags* tags = scheduled.tagsOf(f.var);
      bool gpu = tags && (tags->unit == ParallelUnit::GpuBlock || tags->unit == ParallelUnit::GpuWarp ||
                          tags->unit == ParallelUnit::GpuThread);
      return (gpu && tags->races == RaceStrategy::Atomics) || hasInnerGpuAtomics(f.body, scheduled);
    }
    case cin::StmtKind::Where:
      return hasInnerGpuAtomics(cin::as<cin::WhereNode>(s).consumer, scheduled) ||
             hasInnerGpuAtomics(cin::as<cin::WhereNode>(s).producer, scheduled);
    case cin::StmtKind::Sequence:
      return hasInnerGpuAtomics(cin::as<cin::SequenceNode>(s).define, scheduled) ||
             hasInnerGpuAtomics(cin::as<cin::SequenceNode>(s).mutate, scheduled);
  }
  return false;
}

}  // namespace

void Lowerer::planChunkedAssembly() {
  if (groups_.empty() || !assemble_ || root_->kind != cin::StmtKind::Forall) return;
  const auto& f = cin::as<cin::ForallNode>(root_);
  const schedule::LoopTags* tags = scheduled_.tagsOf(f.var);
  if (!tags || tags->unit != ParallelUnit::CpuThread) return;
  std::string root = scheduled_.rootOf(f.var);
  const AppendGroup& group = groups_.front();
  if (groups_.size() != 1 || group.first == 0 || result_.levelVars[0] != root) {
    throw ScheduleError("parallelize(" + f.var + ",cpu_thread," + schedule::raceStrategyName(tags->races) +
                        "): the sparse result " + resultTensor_->name + " (format " +
                        resultTensor_->format.str() + ") is assembled in parallel only by the loop over its "
                        "first, dense level, with one compressed level below (e.g. a CSR result by rows)");
  }
  Var begin = makeVar(freshName(root + "_chunk_begin"), scalar(DType::Int64));
  Var end = makeVar(freshName(root + "_chunk_end"), scalar(DType::Int64));
  abi_.chunks = ChunkedAssembly{true, root, abi_.integerSlots, abi_.integerSlots + 1, group.first, tags->dynamic,
                                tags->chunk, !hasWhere(root_)};
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
  if (!assemble_ && !groups_.empty() && writesResult(f.body)) return plan;
  bool threads = tags->unit == ParallelUnit::CpuThread;
  bool gpu = tags->unit == ParallelUnit::GpuBlock || tags->unit == ParallelUnit::GpuWarp ||
             tags->unit == ParallelUnit::GpuThread;
  std::string command = "parallelize(" + f.var + "," + schedule::parallelUnitName(tags->unit) + "," +
                        schedule::raceStrategyName(tags->races) + ")";
  auto fail = [&](const std::string& why) { throw ScheduleError(command + ": " + why); };
  if (gpu && gpuUnit_ != ParallelUnit::None && tags->unit <= gpuUnit_) {
    fail(std::string("the loop is nested inside a ") + schedule::parallelUnitName(gpuUnit_) +
         " loop; GPU loops nest as gpu_block, then gpu_warp, then gpu_thread");
  }
  if (!forForm) {
    fail("the loop coiterates several operands (a merge); split it and parallelize the outer loop, which iterates "
         "blocks densely");
  }
  if (threads && (parallelDepth_ > 0 || !chunkedLoop_.empty())) fail("the loop is nested inside another parallel loop");
  if (writesResult(f.body) && !groups_.empty()) {
    if (gpu) {
      fail("the loop appends entries to the sparse result " + resultTensor_->name +
           "; target='cuda' does not assemble sparse results yet (compute into a given structure with out=, or "
           "choose a dense result)");
    }
    fail("the loop appends entries to the sparse result " + resultTensor_->name +
         "; sparse results are assembled in parallel only by the outermost loop over their rows");
  }
  bool reduces = false;
  if (threads || gpu) {
    std::vector<const TensorVar*> local;
    temporariesDeclaredIn(f.body, local);
    for (const auto& t : cin::resultsOf(f.body)) {
      if (!t->temporary) continue;
      if (std::find(local.begin(), local.end(), t.get()) != local.end()) continue;
      bool nestedInGpuUnit = gpuUnit_ != ParallelUnit::None;
      if (gpu && nestedInGpuUnit && tags->races == RaceStrategy::ParallelReduction && t->order() == 0) {
        reduces = true;  // the threads' partial values are combined after the loop
        continue;
      }
      if (gpu && nestedInGpuUnit) {
        fail("the loop updates the temporary " + t->name + ", which is shared by its iterations; " +
             (t->order() == 0 ? "choose parallel_reduction to combine it across the threads"
                              : "only scalar temporaries can be reduced across threads"));
      }
      fail("the loop updates the temporary " + t->name + ", which is shared by its iterations; parallelize a "
           "loop outside the temporary's where statement");
    }
  }
  // A loop over a non-unique level's positions (COO's rows) meets a coordinate once per
  // entry, so its iterations update the same result entries whatever indexes the result.
  if (racesOnResult(f.body, root) || repeatsCoordinates) {
    const notation::Operator* op = nullptr;
    bool plain = false, mixed = false;
    cin::forEachAssignment(f.body, [&](const cin::AssignNode& a) {
      if (a.lhs->tensor != resultTensor_) return;
      if (!a.accumulate) plain = true;
      else if (!op) op = a.accumulate;
      else if (op != a.accumulate) mixed = true;
    });
    bool allDense = groups_.empty() && trailingDense_ < 0;
    std::string result = resultTensor_->name;
    RaceStrategy races = tags->races;
    // TACO's GPU schedules tag only the innermost GPU loop with atomics (SpMV: a block, its
    // warps, their threads): every result update is then atomic, which settles the races of
    // the loops around it too.
    if (gpu && races != RaceStrategy::Atomics && hasInnerGpuAtomics(f.body, scheduled_)) races = RaceStrategy::Atomics;
    if (races == RaceStrategy::NoRaces) {
      std::string vars;
      for (const auto& v : scheduled_.boundVariables(root)) vars += (vars.empty() ? "" : " and ") + v;
      std::string why = repeatsCoordinates ? "the loop visits the positions of a non-unique level, whose coordinates repeat"
                                           : "it is not indexed by " + vars;
      fail("iterations update the same entries of " + result + " (" + why +
           "); choose atomics, temporary or parallel_reduction");
    }
    if (gpu && (races == RaceStrategy::Temporary || races == RaceStrategy::ParallelReduction)) {
      fail("iterations update the same entries of " + result + "; on a GPU, choose atomics");
    }
    if (!threads && !gpu && races != RaceStrategy::IgnoreRaces) {
      fail("iterations update the same entries of " + result + "; a vectorized loop cannot reduce into it");
    }
    if (races != RaceStrategy::IgnoreRaces) {
      if (!allDense) fail("the result " + result + " is sparse; its updates cannot be made race free this way");
      if (plain || mixed || !op) fail("the result " + result + " is assigned, not only accumulated with one operator");
      if (BinaryOp o = irOpOf(*op); o != BinaryOp::Add && o != BinaryOp::Min && o != BinaryOp::Max) {
        fail("updates with " + op->name + " cannot be made race free");
      }
      DType t = resultTensor_->dtype;
      if (t == DType::Bool || (isComplex(t) && irOpOf(*op) != BinaryOp::Add)) {
        fail("atomic " + op->name + " on " + dtypeName(t) + " values is not supported");
      }
    }
    if (races == RaceStrategy::Atomics) {
      atomicResult_ = true;
    } else if (races == RaceStrategy::Temporary || races == RaceStrategy::ParallelReduction) {
      // Each thread accumulates into its own zeroed copy; the copies are combined after.
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
      Var q = makeVar(freshName("q"), index), t = makeVar(freshName("thread"), index);
      const Var& vals = result_.vars->vals;
      Expr copy = load(priv, binary(BinaryOp::Add, binary(BinaryOp::Mul, ir::ref(t), ir::ref(size)), ir::ref(q)));
      Stmt merge = store(vals, ir::ref(q), binary(irOpOf(*op), load(vals, ir::ref(q)), copy));
      plan.after = {ifThen(several, block({forLoop(q, intLit(0), ir::ref(size), forLoop(t, intLit(0), ir::ref(threadsVar), merge)),
                                           freeBuffer(priv)}))};
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
