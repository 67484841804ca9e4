// Internal state of one lowering run, shared by the lower_*.cpp files. Not part of the
// compiler's interface (see lower.hpp).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/guard_coordinates.hpp"
#include "lattice/iteration_lattice.hpp"
#include "lower/lower.hpp"
#include "schedule/scheduled_statement.hpp"

namespace coiter::lower {

using notation::AccessNode;
using notation::TensorVar;

// IR variables holding one tensor's arrays and extents inside the kernel.
struct TensorVars {
  notation::TensorVarPtr tensor;
  int index = 0;                 // position in KernelABI::tensors
  std::vector<ir::Var> extents;  // per mode
  // Per level: the arrays and scalars its level type takes (LevelType::kernelArrays), and the
  // extent of its coordinates (a mode's, or a derived level's: lower_derived_levels.cpp).
  // Workspaces, built by the lowerer, have none.
  std::vector<LevelKernelVars> levels;
  ir::Var vals, valsCap;
  // Position of the root, above the first level: a thread's slice of a dense workspace over
  // several variables inside a parallel loop (its thread id); null for 0.
  ir::Expr root;

  // A level's named array ("pos", "crd", "offset"), or null where it has none.
  ir::Var array(int level, const std::string& name) const {
    return static_cast<size_t>(level) < levels.size() ? levels[level].array(name) : nullptr;
  }
  ir::Var pos(int level) const { return array(level, "pos"); }
  ir::Var crd(int level) const { return array(level, "crd"); }
  ir::Var capacity(int level, const std::string& name) const { return levels.at(level).capacity(name); }
};

// Where the iteration of one access (an operand, or the result) stands.
struct AccessState {
  TensorVars* vars = nullptr;
  std::vector<std::string> levelVars;  // index variable of each level
  int entered = 0;                     // levels [0, entered) have positions
  std::vector<ir::Expr> pos;           // position at each entered level
  // End of the run of positions that share a coordinate at a non-unique level, so that a
  // singleton child iterates the run; null when the run is one position.
  std::vector<ir::Expr> runEnd;
};

// A result's compressed level with the singleton levels below it: they share one position
// counter and are appended together when the deepest of them is reached.
struct AppendGroup {
  int first = 0, last = 0;  // levels
  ir::Var count;            // entries appended so far
  int child = -1;           // the next group below, if any (its appends decide whether ours is kept)
  int parent = -1;          // the group above, if the level above `first` is in one
};

// A vector workspace (cin/workspaces.hpp, or precompute): the values its producer writes,
// and the list of coordinates it touched, through which its consumer iterates it in time
// proportional to its entries (lower_workspaces.cpp). By the format of its one level:
//   dense (d):      values and a mark per coordinate of the extent; the list is sorted when
//                   the result needs order, and its entries are reset after the consumer;
//   hashed (h):     an open-addressing table (keys, values) that grows, so memory follows the
//                   entries, not the extent; the list is sorted, looked up, then the table
//                   is emptied through the slots each entry took;
//   compressed (s): values appended in coordinate order beside the list (the producer must
//                   write the coordinates in order: its loop over them is its outermost).
// A dense workspace over several variables (DenseArray) is a dense array over all their
// extents instead, zeroed at each execution of its where and read like a dense operand
// (located, not iterated through a list).
enum class WorkspaceKind { Dense, Hashed, Compressed, DenseArray };
struct WorkspaceVars {
  WorkspaceKind kind = WorkspaceKind::Dense;
  std::unique_ptr<TensorVars> tensor;  // vals and crd (= the coordinate list) for iteration
  ir::Var mark;                        // dense: a flag per coordinate
  ir::Var count;                       // entries in the list
  std::string indexVar;
  // Dense, inside a parallel loop: every thread has its own slice: index = base + coordinate,
  // with base = ThreadId * extent; null when there is one workspace.
  ir::Expr base;
  ir::Var listCapacity;            // hashed, compressed: the list grows
  ir::Var valsCapacity;            // compressed: the values grow with the list
  ir::Var keys, slots, tableSize;  // hashed: keys[tableSize] (-1: empty), slot of each entry
  ir::Expr size;                   // dense array: its number of values
  ir::Expr at(const ir::Expr& index) const { return base ? ir::binary(ir::BinaryOp::Add, base, index) : index; }
};

// A segment of the forall being lowered, with what the lowerer needs to iterate or locate it.
struct SegmentInfo {
  const AccessNode* access = nullptr;  // null for the dimension
  int level = -1;
};

// The IR operation that computes an index notation operator.
ir::BinaryOp irOpOf(const notation::Operator& op);

class Lowerer {
 public:
  // `tryOverwrite`: store each entry of a dense result once, unzeroed, where the statement
  // allows it (lower_result_overwrite.cpp); overwriteBroken() tells whether lowering found
  // that it does not, and the kernel must be lowered again without.
  // `tryPattern`: a result that keeps an operand's pattern is lowered as such where the
  // statement allows it (lower_result_pattern.cpp); patternBroken() tells whether lowering
  // found that it does not, and the kernel must be lowered again without.
  Lowerer(const schedule::ScheduledStatement& stmt, const std::string& name, bool assemble = true,
          bool tryOverwrite = false, bool tryPattern = false);
  LoweredKernel run();
  bool overwriteBroken() const { return overwriteBroken_; }
  bool patternBroken() const { return patternBroken_; }
  std::string outerLattice();

 private:
  // lower_setup.cpp: slots, tensors, accesses, result groups.
  void declareTensors();
  TensorVars& addTensor(const notation::TensorVarPtr& t, bool result);
  void registerAccesses(const cin::Stmt& s);
  void planResultAssembly();
  // A result level inserted in one pass (Format::insertsResultLevel): its scratch arrays.
  void planResultInserts(int level);
  int insertedLevel_ = -1;  // that level, or -1
  ir::Expr extentOf(const std::string& indexVar) const;
  ir::Expr blockSize() const;  // values per appended entry (dense levels below the groups)
  std::string freshName(const std::string& base);
  // The coordinates each operand crd array may hold, for ir::guardCoordinates.
  ir::CoordinateRanges operandCoordinateRanges() const;

  // lower_result_overwrite.cpp
  void planResultOverwrite();
  // Called as each forall is lowered: whether its loop stores the result at every coordinate
  // of its variable's extent, unconditionally.
  void checkResultLoop(const cin::ForallNode& f, bool storesEveryCoordinate);
  bool tryOverwrite_ = false;
  bool overwriteResult_ = false;  // the result's one store overwrites (planned)
  bool overwriteBroken_ = false;  // a loop around it skips coordinates
  std::set<const cin::ForallNode*> resultLoops_;
  const cin::AssignNode* resultStore_ = nullptr;

  // lower_result_pattern.cpp
  // Finds the operand access whose pattern the result keeps (patternAccess_), if any, and
  // makes the kernel compute-only over that operand's structure.
  void planResultPattern();
  // The result's position at level k: the pattern operand's there, or (marking the plan
  // broken) a stand-in where lowering has not entered that level of the operand.
  ir::Expr patternPosition(int k);
  bool tryPattern_ = false;
  const AccessNode* patternAccess_ = nullptr;
  bool patternBroken_ = false;

  // lower_stmt.cpp
  ir::Stmt lowerStmt(const cin::Stmt& s);
  ir::Stmt lowerAssign(const cin::AssignNode& a);
  ir::Stmt lowerWhere(const cin::WhereNode& w);
  bool resultLevelOrdered(const std::string& indexVar) const;  // the result level it indexes

  // lower_workspaces.cpp
  // `indexVars`: the variables its producer writes it under, one per mode.
  WorkspaceVars& declareWorkspace(const notation::TensorVarPtr& w, const std::vector<std::string>& indexVars);
  ir::Stmt storeToWorkspace(const AccessNode& lhs, const notation::Operator* accumulate, ir::Expr value);
  // At each execution of its where, before the producer: what the workspace must start as.
  ir::Stmt startWorkspace(const WorkspaceVars& ws);
  // Between producer and consumer: the list in coordinate order when the result needs it.
  ir::Stmt orderWorkspace(const WorkspaceVars& ws, const cin::Stmt& consumer);
  // The consumer reads the entry at list position `at`, coordinate `coord`: its values
  // index, found into `out`.
  ir::Expr workspaceValueIndex(const WorkspaceVars& ws, const ir::Expr& at, const ir::Expr& coord,
                               std::vector<ir::Stmt>& out);
  // After the consumer: what empties the workspace for the next execution of the where.
  ir::Stmt emptyWorkspace(const WorkspaceVars& ws);
  // Index of `key` in a hashed workspace's table, or of the empty slot where it goes.
  ir::Expr probeHashedWorkspace(const WorkspaceVars& ws, const ir::Var& keys, const ir::Expr& size, const ir::Expr& key,
                                std::vector<ir::Stmt>& out);
  ir::Stmt growHashedWorkspace(const WorkspaceVars& ws);
  std::vector<size_t> producerDepth_;  // openLoops_ size where each where's producer starts
  // Whether `s` computes nothing when the accesses in `zeroed_` are zero.
  bool isZero(const cin::Stmt& s) const;
  bool isZero(const notation::Expr& e) const;

  // lower_expr.cpp: null result means the expression is zero in the current region.
  ir::Expr lowerExpr(const notation::Expr& e);
  ir::Expr literal(const notation::Expr& e) const;

  // lower_forall.cpp: a forall over its iteration lattice. lowerForall dispatches derived loops
  // (lower_blocks.cpp, lower_positions.cpp), builds the lattice, then lowers one loop per
  // lattice point (lower_lattice_point.cpp), in lockstep first where the operands' patterns
  // may agree.
  ir::Stmt lowerForall(const cin::ForallNode& f);
  // Where an iterator starts and ends: [begin, end) of positions, or of coordinates for the
  // dimension; `single`: exactly one position.
  struct IteratorRange {
    ir::Expr begin, end;
    bool single = false;
  };
  struct Interval {
    ir::Expr lo, hi;
    bool restricted = false;
  };
  // The state of one forall's lowering, shared by its lattice points' loops.
  struct LatticeLoop {
    const cin::ForallNode& f;
    std::string v;  // the variable iterated: f.var, or the root it derives from
    lattice::IterationLattice lattice;
    std::vector<SegmentInfo> info;
    Interval interval;
    bool writes = false;       // the body writes the result
    bool byRuns = false;       // non-unique levels are iterated run by run
    bool accumulates = false;  // some write to the result is compound
    bool shared = false;       // iterators keep their state in variables (state, stateEnd)
    std::map<int, ir::Var> state, stateEnd;
    bool storesEveryCoordinate = false;  // one loop over the whole extent, one unconditional body
    ir::Var leaps;                       // this row's merge takes runs (lower_runs.cpp)
    std::vector<ir::Stmt> out;
    const std::vector<lattice::LatticePoint>& points() const { return lattice.points(); }
    const std::vector<lattice::Segment>& segs() const { return lattice.segments(); }
    // Shared iterator s is at an entry of its segment: state[s] < stateEnd[s].
    ir::Expr holdsEntry(int s) const;
  };
  IteratorRange iteratorRange(LatticeLoop& loop, int s);
  std::string iteratorName(const LatticeLoop& loop, int s) const;
  bool iteratesNonUnique(const LatticeLoop& loop, const lattice::LatticePoint& p) const;
  bool iteratesRuns(const LatticeLoop& loop, const lattice::LatticePoint& p) const;
  void declareSharedIterators(LatticeLoop& loop);
  void reserveLoopAppends(LatticeLoop& loop);
  ir::Expr anyPointIterates(const LatticeLoop& loop) const;
  bool runsInLockstep(const LatticeLoop& loop) const;
  bool walksStoredCoordinates(const LatticeLoop& loop, int s) const;
  // Segment `s` of `loop` is the operand whose pattern the result keeps (lower_result_pattern.cpp).
  bool iteratesPatternOperand(const LatticeLoop& loop, int s) const;
  void skipDisjointIntersection(LatticeLoop& loop);
  // lower_runs.cpp: an intersection's runs of one operand's entries, leapt over in rows whose
  // probe finds one.
  bool mergesByRuns(const LatticeLoop& loop) const;
  ir::Expr storedCoordinateAt(const LatticeLoop& loop, int s, const ir::Expr& position) const;
  ir::Expr runTarget(const LatticeLoop& loop, int s, std::vector<ir::Expr>& inRange);
  ir::Stmt ifRunAhead(const LatticeLoop& loop, int s, const ir::Expr& target, std::vector<ir::Expr> inRange,
                      const ir::Stmt& onRun);
  ir::Stmt gallopPastRun(const LatticeLoop& loop, int s, const ir::Expr& target);
  void probeRuns(LatticeLoop& loop);
  // `after`: what follows a step's runs (the merge's carried coordinates, reloaded).
  void takeRuns(LatticeLoop& loop, std::vector<ir::Stmt>& out, ir::Stmt after);
  // lower_lattice_point.cpp: the loop of one lattice point, while its iterators last. A
  // `lockstep` loop runs only while every iterator is at the same coordinate, so its body is
  // the region where all are present and every step advances all of them.
  struct PointLoop {
    const lattice::LatticePoint& point;
    bool lockstep = false;
    bool forForm = false;  // one iterator, the last point: a for loop over its range
    bool single = false;   // one iterator
    ir::Var loopVar;       // forForm: the position (or coordinate) iterated
    IteratorRange loopRange;
    std::map<int, ir::Expr> coordOf;    // each iterator's coordinate
    ir::Expr resolved;                  // the coordinate of v at this step
    std::vector<ir::Expr> entries;      // conditions under which the positions hold entries
    std::map<int, ir::Expr> advanceTo;  // next position of each iterator when it is at v
    std::vector<int> failing;           // locators that may find nothing
    std::vector<ir::Stmt> body;
    size_t coordinatesEnd = 0;  // body statements that read the coordinates
    std::map<const AccessNode*, int> enteredBefore;
    int resultEnteredBefore = 0;
    // A merge's iterators carry their coordinates from step to step (carriesCoordinates):
    // each one's current coordinate, and the next one, loaded at the top of each step.
    std::map<int, ir::Var> carried, next;
    ir::Expr positionOf(const LatticeLoop& loop, int s) const {
      return forForm ? ir::ref(loopVar) : ir::ref(loop.state.at(s));
    }
  };
  void lowerLatticePoint(LatticeLoop& loop, size_t pi, bool lockstep, const ir::LoopSchedule& schedule);
  bool carriesCoordinates(const LatticeLoop& loop, const PointLoop& p) const;
  void carryCoordinates(LatticeLoop& loop, PointLoop& p);
  ir::Stmt reloadCarried(const LatticeLoop& loop, const PointLoop& p) const;
  void bindPointCoordinates(LatticeLoop& loop, PointLoop& p);
  void enterPointLevels(LatticeLoop& loop, PointLoop& p);
  ir::Stmt lowerPointRegions(LatticeLoop& loop, PointLoop& p);
  void advanceIterators(LatticeLoop& loop, PointLoop& p);
  lattice::IterationLattice latticeOf(const std::string& var, const cin::Stmt& body, std::vector<SegmentInfo>& info,
                                      bool restricted);
  lattice::DomainExprPtr domainOf(const cin::Stmt& s, const std::string& var);
  lattice::DomainExprPtr domainOf(const notation::Expr& e, const std::string& var);
  int segmentFor(const AccessNode* access, int level);
  bool onlyAccumulates(const cin::Stmt& s) const;        // every write to the result is compound
  bool accumulatesIntoResult(const cin::Stmt& s) const;  // some write to the result is compound
  bool writesResult(const cin::Stmt& s) const;           // s assigns the result somewhere
  void resolveLocates(std::vector<ir::Stmt>& out);
  ir::Expr locatePosition(AccessState& state, int level, const ir::Expr& coord, std::vector<ir::Stmt>& out);
  // lower_merge_selects.cpp: whether one merge loop's regions can be computed by one body,
  // each operand's value selected (present at the coordinate, or zero), instead of an
  // if-chain of regions; `testable` are the iterators that may be absent.
  bool mergesWithSelects(const cin::ForallNode& f, const std::vector<int>& testable,
                         const std::vector<SegmentInfo>& info);
  // A level of a tensor as its level type sees it in the kernel (workspaces: extents only).
  LevelKernelVars levelVarsOf(const TensorVars& vars, int level) const;

  // lower_blocks.cpp: loops of derived index variables (split, divide, bound).
  // The coordinates [lo, hi) a loop over the original variable `root` iterates now.
  Interval intervalOf(const std::string& root, const std::string& loopVar) const;
  ir::Stmt lowerBlockLoop(const cin::ForallNode& f, const schedule::IndexRelation& r);
  // A split's inner loop outside its outer loop (TACO's GPU schedules: a thread's offset
  // outside the blocks it visits): a strided walk, whose outer loop binds the root.
  ir::Stmt lowerStridedLoop(const cin::ForallNode& f, const schedule::IndexRelation& r);
  std::set<const schedule::IndexRelation*> openBlocks_;         // splits whose outer loop is around
  std::map<const schedule::IndexRelation*, ir::Expr> strided_;  // inner loops around: their offset
  // First position in [begin, end) of an ordered level whose coordinate is >= target.
  ir::Expr searchPosition(const ir::Var& crd, ir::Expr begin, ir::Expr end, ir::Expr target, const std::string& name,
                          std::vector<ir::Stmt>& out);
  void checkBounds(std::vector<ir::Stmt>& out);

  // lower_derived_levels.cpp: levels whose coordinates derive from the modes' (DIA, ELL, BCSR).
  // The extent of a level's coordinates.
  ir::Expr levelExtentOf(const TensorVars& vars, int level) const;
  // The coordinate of an iterated level at `position` (loaded from crd, or computed).
  ir::Expr storedCoordinate(const AccessState& state, int level, const ir::Expr& position);
  // The condition under which an iterated level's coordinate is an entry (not a padding
  // slot or an empty bucket), or null when every position is one.
  ir::Expr entryCondition(const AccessState& state, int level, const ir::Expr& coord);
  // The level coordinate a locate uses, from the loop coordinate of its variable.
  ir::Expr levelCoordinate(const AccessState& state, int level, const ir::Expr& coord) const;
  // Narrows the coordinates a loop over `var` visits to those a derived level allows given
  // the loops around it (a block's rows, a diagonal's rows).
  void restrictToLevels(const std::string& var, Interval& interval, std::vector<ir::Stmt>& out);
  // Offset levels whose padding need not be tested (their rows were restricted).
  std::set<const AccessNode*> paddingExcluded_;
  std::map<const AccessNode*, ir::Expr> diagonalOffset_;  // offset[d] of the diagonal being visited
  std::map<std::string, ir::Expr> levelVarExtents_;       // variables of derived levels

  // A parallel outermost loop over the rows of a sparse result: the kernel computes a range
  // of rows given by the caller, which assembles the chunks (kernel_abi.hpp).
  void planChunkedAssembly();
  std::string chunkedLoop_;

  // lower_two_pass.cpp: a sparse result counted, then filled (kernel_abi.hpp, TwoPassAssembly).
  void planTwoPassAssembly();
  // `s` (a store at the row's counter) run in the filling pass only, and only inside the row's
  // room (as is when the result is assembled in one pass).
  ir::Stmt inFillPass(ir::Stmt s) const;
  // A row's entries (the body of the loop over the parent of the group's level), counted
  // from the row's offset in the filling pass (from zero in the counting pass, which stores
  // the count in pos).
  ir::Stmt countRowInPasses(const AppendGroup& group, const std::vector<ir::Stmt>& body);
  bool twoPass_ = false;
  ir::Var pass_;    // the pass: 0 counts, 1 fills
  ir::Var rowEnd_;  // where the row being filled ends (0 while counting)

  // lower_positions.cpp: loops over an operand's stored positions (pos), fused loops (fuse).
  struct PositionLevel {
    const AccessNode* access = nullptr;
    int level = -1;      // the level whose positions are iterated
    bool fused = false;  // the loop also binds the levels above (pos of fused loops)
    const LevelType& typeOf(int k) const { return *access->tensor->format.levels()[k]; }
    // For a fused loop: the rows are located (CSR: a row is its position) or stored in
    // segments (DCSR, with the row's coordinate in its crd; COO, where the iterated level is
    // branchless and shares the rows' positions, one row coordinate per position).
    bool denseRows() const { return typeOf(0).locatesEveryCoordinate(); }
    bool rowPerPosition() const { return typeOf(level).properties().branchless; }
  };
  PositionLevel positionLevel(const schedule::IndexRelation& r) const;
  Interval positionInterval(const schedule::IndexRelation& r) const;
  // Positions of the level above a fused position loop's level (CSR: its rows; DCSR: the
  // rows it stores).
  ir::Expr storedRows(const PositionLevel& p) const;
  // How many positions level k of a fused position loop's access has (k = 0: storedRows).
  ir::Expr positionsOfLevel(const PositionLevel& p, int k) const;
  ir::Stmt lowerPositionLoop(const cin::ForallNode& f, const schedule::IndexRelation& r);
  ir::Stmt lowerFusedLoop(const cin::ForallNode& f, const schedule::IndexRelation& r);
  // result(position) op= value, as the race strategy of the enclosing parallel loop asks.
  ir::Stmt updateResult(const notation::Operator* op, ir::Expr position, ir::Expr value);
  // The position of the current entry of an all-dense result, from the bound coordinates.
  ir::Expr denseResultPosition() const;

  // lower_parallel.cpp: how a tagged loop runs, and what its body must do differently.
  struct ParallelPlan {
    ir::LoopSchedule schedule;
    std::vector<ir::Stmt> before, after;  // per-thread result copies: set up, merge
    ir::Stmt around(ir::Stmt loop) const {
      std::vector<ir::Stmt> all = before;
      all.push_back(std::move(loop));
      all.insert(all.end(), after.begin(), after.end());
      return ir::block(std::move(all));
    }
  };
  ParallelPlan planLoop(const cin::ForallNode& f, const std::string& root, bool forForm,
                        bool repeatsCoordinates = false);
  // Restores the race-strategy state planLoop changes when the loop's lowering ends.
  struct ParallelStateGuard {
    Lowerer& lowerer;
    bool atomic;
    ir::Var privateResult;
    ir::Expr privateOffset;
    int depth;
    schedule::ParallelUnit gpuUnit;
    explicit ParallelStateGuard(Lowerer& l)
        : lowerer(l),
          atomic(l.atomicResult_),
          privateResult(l.privateResult_),
          privateOffset(l.privateOffset_),
          depth(l.parallelDepth_),
          gpuUnit(l.gpuUnit_) {}
    ~ParallelStateGuard() {
      lowerer.gpuUnit_ = gpuUnit;
      lowerer.atomicResult_ = atomic;
      lowerer.privateResult_ = privateResult;
      lowerer.privateOffset_ = privateOffset;
      lowerer.parallelDepth_ = depth;
    }
  };
  bool racesOnResult(const cin::Stmt& body, const std::string& root) const;

  // lower_assembly.cpp: result positions and appends.
  // Positions of the result levels whose indices are now all bound.
  void enterResultLevels(std::vector<ir::Stmt>& out);
  // `writesResult`: whether the loop's body assigns the result (not only temporaries).
  // `accumulates`: the body adds into the entry (so it starts at zero).
  ir::Stmt beginResultEntry(const std::string& var, bool writesResult, bool accumulates, ir::Var& startVar);
  ir::Stmt countEntries(const std::string& var, const std::vector<ir::Stmt>& body, bool writesResult);
  ir::Stmt commitResultEntry(const std::string& var, bool writesResult, const ir::Var& startVar);
  // Whether the one region of a merge loop over `var` whose body is not zero may run its body
  // at every step, committing the appended entry only when that region holds
  // (appendIf_): the body is a plain assignment of the result, appended at `var`.
  bool appendsSpeculatively(const cin::ForallNode& f, const std::string& var) const;
  // Set while such a body is lowered: the condition under which its entry is kept.
  ir::Expr appendIf_;
  // Room for the entries the loop over `var` appends to the result, `steps` at most (its
  // iterations): the grows of the result's arrays, once before the loop, or null when the
  // loop's appends cannot be bounded so (they then grow per entry). While reservedGroup_ is
  // that group, appending checks no capacity and keeps an entry without a branch.
  ir::Stmt reserveResultRoom(const std::string& var, const ir::Expr& steps, bool writesResult);
  int reservedGroup_ = -1;
  ir::Expr resultPosition() const;
  // result(entry) op= value at the entry the bound coordinates name: located, or inserted
  // into the result's inserted level.
  ir::Stmt updateResultEntry(const notation::Operator* op, const ir::Expr& value);
  const LevelType& levelOf(int resultLevel) const;  // a level of the result
  // Whether the result's entries are appended in the order var's loop visits its coordinates:
  // var indexes a result level at or above the last level of an append group.
  bool appendsInOrderOf(const std::string& var) const;
  // Refuses (FormatError) a loop over var that would iterate an unordered operand level while
  // the result's layout depends on var's order: var indexes an ordered appended level, or a
  // level above an appended one (rows laid out one after another) in a one-pass assembly.
  void checkAppendOrder(const std::string& var, const lattice::IterationLattice& lattice) const;
  ir::Stmt checkResultEntry(const AppendGroup& group);

  schedule::ScheduledStatement scheduled_;
  cin::Stmt root_;
  std::string name_;
  bool assemble_;
  std::vector<std::unique_ptr<TensorVars>> tensors_;
  std::vector<ir::Param> params_;
  KernelABI abi_;
  std::set<std::string> usedNames_;

  std::map<const AccessNode*, AccessState> accesses_;  // operand accesses
  std::vector<const AccessNode*> accessOrder_;         // in order of appearance
  AccessState result_;                                 // the result
  notation::TensorVarPtr resultTensor_;
  std::vector<AppendGroup> groups_;
  std::vector<int> groupOfLevel_;  // result level -> group, or -1
  int trailingDense_ = -1;         // first dense level below the groups

  std::map<std::string, ir::Expr> coords_;  // bound index variables
  std::vector<std::string> openLoops_;      // foralls being lowered, outermost first
  std::map<const TensorVar*, ir::Var> scalarTemps_;
  std::map<const TensorVar*, lattice::DomainExprPtr> tempDomains_;
  std::map<const TensorVar*, WorkspaceVars> workspaces_;
  std::vector<ir::Stmt> prologue_, epilogue_;  // workspace allocation and release
  std::set<const AccessNode*> zeroed_;
  // Operand accesses read as select(present, value, 0) (a merge lowered with selects).
  std::map<const AccessNode*, ir::Expr> presentIf_;
  std::map<std::string, Interval> intervals_;                      // original variables restricted to a block
  int parallelDepth_ = 0;                                          // parallel loops being lowered
  schedule::ParallelUnit gpuUnit_ = schedule::ParallelUnit::None;  // innermost GPU loop's unit
  bool atomicResult_ = false;                                      // result updates are atomic (race strategy)
  ir::Var privateResult_;                                          // per-thread result copies (race strategy)
  ir::Expr privateOffset_;                                         // this thread's copy: ThreadId * result size

  // Segments of the forall being lowered.
  std::vector<lattice::Segment> segments_;
  std::vector<SegmentInfo> segmentInfo_;
  int dimensionSegment_ = -1;
};

}  // namespace coiter::lower
