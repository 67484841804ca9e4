// See guard_coordinates.hpp.
#include "ir/guard_coordinates.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>
#include <vector>

#include "ir/distinct_buffers.hpp"
#include "ir/invariant_loads.hpp"
#include "ir/segment_positions.hpp"
#include "ir/visitor.hpp"
#include "util/errors.hpp"

namespace coiter::ir {
namespace {

// Which variables and arrays may carry a coordinate into an address. A coordinate that only
// becomes a value (a result's crd entry, a comparison, a sum) cannot make the kernel touch
// memory it should not, so it needs the flag but no clamp; one that reaches an address does.
// Seeds: the index of every load, store and prefetch, loop bounds, allocation sizes and
// runtime call arguments. Then backwards through assignments (a variable assigned to an
// address variable is one) and through arrays (a value stored into an array whose elements
// are loaded into an address is one), to a fixed point.
class AddressFlow {
 public:
  explicit AddressFlow(const Stmt& body) {
    stmt(body);
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [target, value] : flows_) {
        bool reaches = target.var ? vars_.count(target.var) > 0 : buffers_.count(target.buffer) > 0;
        if (reaches) changed |= reachAddress(value);
      }
    }
  }
  bool variableReachesAddress(const Var& v) const { return vars_.count(v.get()) > 0; }
  bool elementsReachAddress(const Var& buffer) const { return buffers_.count(buffer.get()) > 0; }

 private:
  struct Target {
    const VarNode* var = nullptr;     // a variable assigned `value`, or
    const VarNode* buffer = nullptr;  // an array given `value` as an element
  };

  // Every variable and array element `e` reads may become an address. Whether anything
  // was added.
  // A truth value is 0 or 1 whatever it was computed from (a merge's `jA == j` choosing an
  // operand's value), so nothing flows through it.
  bool reachAddress(const Expr& e) {
    if (!e || e->type == scalar(DType::Bool)) return false;
    bool added = false;
    if (e->kind == ExprKind::VarRef) added = vars_.insert(as<VarRefNode>(e).var.get()).second;
    if (e->kind == ExprKind::Load) added = buffers_.insert(as<LoadNode>(e).buffer.get()).second;
    forEachChildExpr(e, [&](const Expr& child) { added |= reachAddress(child); });
    return added;
  }
  // Seeds the indexes of the loads inside `e`.
  void loadIndexes(const Expr& e) {
    if (!e) return;
    if (e->kind == ExprKind::Load) reachAddress(as<LoadNode>(e).index);
    forEachChildExpr(e, [&](const Expr& child) { loadIndexes(child); });
  }
  void address(const Expr& e) {
    loadIndexes(e);
    reachAddress(e);
  }
  void value(const Expr& e, Target target) {
    if (!e) return;
    loadIndexes(e);
    flows_.emplace_back(target, e);
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Declare: return value(as<DeclareNode>(s).init, {as<DeclareNode>(s).var.get(), nullptr});
      case StmtKind::Assign: return value(as<AssignNode>(s).value, {as<AssignNode>(s).var.get(), nullptr});
      case StmtKind::Store: {
        const auto& n = as<StoreNode>(s);
        address(n.index);
        return value(n.value, {nullptr, n.buffer.get()});
      }
      case StmtKind::AtomicUpdate: {
        const auto& n = as<AtomicUpdateNode>(s);
        address(n.index);
        return value(n.value, {nullptr, n.buffer.get()});
      }
      case StmtKind::Prefetch: return address(as<PrefetchNode>(s).index);
      case StmtKind::Allocate: return address(as<AllocateNode>(s).count);
      case StmtKind::Grow: return address(as<GrowNode>(s).needed);
      case StmtKind::Call:
        for (const Expr& a : as<CallNode>(s).args) address(a);
        return;
      case StmtKind::For: {
        const auto& n = as<ForNode>(s);
        address(n.begin);
        address(n.end);
        return stmt(n.body);
      }
      case StmtKind::If: loadIndexes(as<IfNode>(s).cond); break;
      case StmtKind::While: loadIndexes(as<WhileNode>(s).cond); break;
      default: break;
    }
    forEachChildStmt(s, [this](const Stmt& child) { stmt(child); });
  }

  std::vector<std::pair<Target, Expr>> flows_;
  std::unordered_set<const VarNode*> vars_, buffers_;
};

// The guarded arrays a loop body loads coordinates from, and whether every such load is at
// the loop variable q (crd[q]) in a body with no loop (or return) of its own.
class InnermostCoordinateLoads : public IRVisitor {
 public:
  InnermostCoordinateLoads(const CoordinateRanges& ranges, Var q) : ranges_(ranges), q_(std::move(q)) {}
  bool onlyAtLoopVariable() const { return simple_ && !arrays_.empty(); }
  const std::vector<Var>& arrays() const { return arrays_; }

 protected:
  void visitLoad(const LoadNode& n) override {
    if (ranges_.count(n.buffer.get())) {
      simple_ = simple_ && n.index->kind == ExprKind::VarRef && as<VarRefNode>(n.index).var == q_;
      auto known = [&](const Var& v) { return v == n.buffer; };
      if (std::none_of(arrays_.begin(), arrays_.end(), known)) arrays_.push_back(n.buffer);
    }
    IRVisitor::visitLoad(n);
  }
  void visitFor(const ForNode&) override { simple_ = false; }
  void visitWhile(const WhileNode&) override { simple_ = false; }
  void visitReturn(const ReturnNode&) override { simple_ = false; }

 private:
  const CoordinateRanges& ranges_;
  Var q_;
  bool simple_ = true;
  std::vector<Var> arrays_;
};

// Rows of a loop that are checked together (checkedPerBlock): enough that the check's own
// cost (a pass over the block's coordinates, a branch) is small next to the block's work
// even at 4 entries per row, and few enough that the coordinates, read a second time by
// the rows, are still in the L1 cache.
constexpr int64_t kRowsPerCheck = 32;

// A loop over rows [begin, end) as blocks of kRowsPerCheck rows: the loop over blocks is
// where a block's checks and the interrupt checks go (its rows' loop is bounded).
struct RowBlocks {
  RowBlocks(const ForNode& n, const FreshName& fresh)
      : loop(n),
        begin(makeVar(fresh(n.var->name + "_begin"), n.var->type)),
        end(makeVar(fresh(n.var->name + "_end"), n.var->type)),
        size(intLit(kRowsPerCheck, n.var->type.elem)),
        count(binary(BinaryOp::Div,
                     binary(BinaryOp::Add, binary(BinaryOp::Sub, ir::ref(end), ir::ref(begin)),
                            intLit(kRowsPerCheck - 1, n.var->type.elem)),
                     size)) {}
  // begin and end, declared before the loop over blocks (in the same block as it).
  std::vector<Stmt> declarations() const { return {declare(begin, loop.begin), declare(end, loop.end)}; }
  // The rows [first, stop) of block `index`.
  std::vector<Stmt> bounds(const Var& index, const Var& first, const Var& stop) const {
    return {declare(first, binary(BinaryOp::Add, ir::ref(begin), binary(BinaryOp::Mul, ir::ref(index), size))),
            declare(stop, binary(BinaryOp::Min, binary(BinaryOp::Add, ir::ref(first), size), ir::ref(end)))};
  }
  // The loop over blocks `index`, each running `blockBody`, on the rows' schedule (a parallel
  // chunk of rows divided by the size).
  Stmt overBlocks(const Var& index, Stmt blockBody) const {
    LoopSchedule s = loop.schedule;
    if (s.chunk > 0) s.chunk = (s.chunk + kRowsPerCheck - 1) / kRowsPerCheck;
    return forLoop(index, lit(loop.var->type, 0), count, std::move(blockBody), s);
  }
  // The schedule of a block's rows: bounded, so that they are checked for interrupts once, by
  // the loop over blocks (a check per row, a load and a branch, cost short rows about 4 % of
  // their time).
  static LoopSchedule rowsOfBlock() {
    LoopSchedule s;
    s.bounded = true;
    return s;
  }

  const ForNode& loop;
  const Var begin, end;
  const Expr size, count;
};

// Coordinates this far apart or more, the first and last of a row, mark a row that does not
// read close together (checkedPerBlock: such long rows are checked in blocks, not one by one).
constexpr int64_t kFarColumns = 4096;
// Coordinates this far apart or more, the first and last of a block of rows, mark rows that
// gather from more of their operands than a core's L2 cache holds (512 KiB of doubles):
// their gathered elements are prefetched. Within the cache the prefetches only cost their
// loads and instructions (SpMV over 16384 columns at 164 entries per row, one thread: 0.66x
// SciPy's speed with them, 0.94x without, on a machine loaded by other jobs; equal within
// noise on a quiet one).
constexpr int64_t kPrefetchColumns = 65536;
// Bytes of coordinates per row, on average over the loop's rows, from which rows whose
// coordinates lie close together are checked one by one (checkedPerBlock): 56 entries of
// int32 coordinates, 28 of int64. Below it a row's own pass and its vector loop's remainder
// cost more than a block's pass; above it a block's pass over more bytes holds up the
// streams of coordinates and values more. Banded SpMV, the compiled kernel alone against
// SciPy's csr_matvec, one thread, interleaved calls (2026-11-27), SciPy's speed one by one
// against in blocks: int32 rows of 21, 28, 36 and 44 entries 0.76/0.93, 0.77/0.93,
// 0.83/0.95, 0.93/1.02, of 57 1.00/0.99, of 113 1.14 one by one; int64 rows of 21 0.83/0.87,
// of 28 and 44 0.83/0.77 and 0.95/0.78, of 71 0.90/0.95.
constexpr int64_t kLongRowBytes = 224;

// Coordinates a block of rows samples, besides its first, to tell whether they spread far
// (spreadsFar).
constexpr int64_t kSpreadSamples = 8;

// Row lengths for which a block whose rows all have that length runs its rows as one loop
// vectorized across rows (rowsByLength): each row's loop becomes that many steps over
// positions computed from the row's number, which LLVM unrolls, so that eight rows share a
// vector step and no row ends in a horizontal sum. Banded CSR SpMV of 10^4 rows, one thread,
// Sapphire Rapids, SciPy's time over coiter's, the scalar loop or masked step -> across rows
// (2026-11-28): rows of 1 0.60 -> 0.92, 2 0.67 -> 0.92, 3 0.72 -> 1.03, 4 0.78 -> 1.11, 5 0.75
// -> 1.04, 6 1.01 -> 1.16, but 7 0.97 -> 0.91 and 8 1.10 -> 0.97; the 5-point Poisson matrix
// (blocks of rows of 5 between its grid lines' shorter rows) 0.77 -> 0.91. Each length costs
// a vectorized copy of the rows to compile: CSR SpMV's cold compile took 148 ms with none,
// 217 ms with 1, 3 and 5, 273 ms with 1 to 6. So only the lengths of a diagonal and of the
// stencils of one and two dimensions.
constexpr int64_t kRowsAcross[] = {1, 3, 5};

// Windows of rows a row loop samples to tell whether its rows gather from far apart
// (gathersFar).
constexpr int64_t kSpreadBlocks = 8;

// Whether every guarded coordinate that the body of loop `i` loads is crd[q] in a row loop
// `for q in [pos[i], pos[i + 1])` of i itself (variables declared from i, like CSR's
// `pA1 = i`, are followed), or lies in row i's segment of pos where a merge loads it
// (segment_positions.hpp). Then the coordinates rows [lo, hi) load are among crd[pos[lo]]
// .. crd[pos[hi] - 1] (the caller checked that pos starts at 0, never decreases and ends at
// crd's length), and one pass over them checks a block of rows. Also required: the body
// leaves the loop only at its end (no break of it, no return), and writes neither i nor pos.
class RowLoopCoordinates : public IRVisitor {
 public:
  struct RowArrays {
    Var pos;
    std::vector<Var> crd;  // each loaded at its row loop's position
  };

  RowLoopCoordinates(const CoordinateRanges& ranges, const ForNode& loop)
      : ranges_(ranges), i_(loop.var.get()), definitions_(loop.body, i_) {
    std::unordered_set<const VarNode*> guarded;
    for (const auto& [crd, range] : ranges) guarded.insert(crd);
    withinSegments_ = loadsWithinRowSegments(loop, definitions_, guarded);
    visit(loop.body);
    for (const RowArrays& rows : rows_) eligible_ = eligible_ && !definitions_.written(rows.pos.get());
    eligible_ = eligible_ && !rows_.empty() && !definitions_.written(i_);
  }
  bool eligible() const { return eligible_; }
  const std::vector<RowArrays>& rows() const { return rows_; }
  // The body's row loops: position variable -> pos.
  const std::map<const VarNode*, Var>& rowLoops() const { return allRowLoops_; }
  // Whether every row loop is serial and runs outside any parallel loop of the body: only a
  // serial loop may stop at a bad coordinate and set the flag (checkEachEntry), a parallel
  // body writes only its own locals (a row loop under a split's parallel k0 inside each row).
  bool serialRows() const { return serialRows_; }
  // Whether every coordinate is loaded by a row loop at its own variable (no merge): then
  // checkEachEntry can check each where its row loop loads it.
  bool onlyRowLoops() const { return onlyRowLoops_; }

 protected:
  void visitLoad(const LoadNode& n) override {
    if (ranges_.count(n.buffer.get())) {
      const VarNode* q = n.index->kind == ExprKind::VarRef ? as<VarRefNode>(n.index).var.get() : nullptr;
      auto row = q ? rowLoops_.find(q) : rowLoops_.end();
      auto segment = withinSegments_.find(&n);
      if (row != rowLoops_.end()) {
        addCoordinates(row->second, n.buffer);
      } else if (segment != withinSegments_.end()) {
        addCoordinates(segment->second, n.buffer);
        onlyRowLoops_ = false;
      } else {
        eligible_ = false;
      }
    }
    IRVisitor::visitLoad(n);
  }
  void visitFor(const ForNode& n) override {
    visit(n.begin);
    visit(n.end);
    Var pos = rowPositions(n);
    if (pos) rowLoops_[n.var.get()] = allRowLoops_[n.var.get()] = pos;
    const bool serial = n.schedule.kind == LoopKind::Serial;
    if (pos && (!serial || parallelDepth_ > 0)) serialRows_ = false;
    ++loopDepth_;
    parallelDepth_ += serial ? 0 : 1;
    visit(n.body);
    parallelDepth_ -= serial ? 0 : 1;
    --loopDepth_;
    rowLoops_.erase(n.var.get());
  }
  void visitWhile(const WhileNode& n) override {
    visit(n.cond);
    ++loopDepth_;
    visit(n.body);
    --loopDepth_;
  }
  void visitBreak(const BreakNode&) override { eligible_ = eligible_ && loopDepth_ > 0; }
  void visitReturn(const ReturnNode&) override { eligible_ = false; }

 private:
  // The pos array of a loop over [pos[i], pos[i + 1]); null for other loops.
  Var rowPositions(const ForNode& n) const {
    Var start = definitions_.rowStart(n.begin);
    return start && start == definitions_.rowEnd(n.end) ? start : nullptr;
  }
  void addCoordinates(const Var& pos, const Var& crd) {
    RowArrays* rows = nullptr;
    for (RowArrays& r : rows_) {
      if (r.pos == pos) rows = &r;
    }
    if (!rows) rows = &rows_.emplace_back(RowArrays{pos, {}});
    if (std::find(rows->crd.begin(), rows->crd.end(), crd) == rows->crd.end()) rows->crd.push_back(crd);
  }

  const CoordinateRanges& ranges_;
  const VarNode* i_;
  RowDefinitions definitions_;
  std::unordered_map<const LoadNode*, Var> withinSegments_;
  std::map<const VarNode*, Var> rowLoops_;  // enclosing row loops: position variable -> pos
  std::map<const VarNode*, Var> allRowLoops_;
  int loopDepth_ = 0;
  int parallelDepth_ = 0;  // non-serial loops around the one visited, within the body
  bool eligible_ = true;
  bool serialRows_ = true;
  bool onlyRowLoops_ = true;
  std::vector<RowArrays> rows_;
};

// Whether a loop body stores through an address computed from a coordinate it loads (a
// scatter: CSR's transposed product, `y[crd[q]] += A[q] * x[i]`), followed through the
// variables the body declares or assigns.
class ScatterThroughCoordinates : public IRVisitor {
 public:
  ScatterThroughCoordinates(const CoordinateRanges& ranges, const Stmt& body) : ranges_(ranges) { visit(body); }
  bool scatters() const { return scatters_; }

 protected:
  void visitDeclare(const DeclareNode& n) override {
    if (n.init && fromCoordinate(n.init)) coordinates_.insert(n.var.get());
  }
  void visitAssign(const AssignNode& n) override {
    if (fromCoordinate(n.value)) coordinates_.insert(n.var.get());
  }
  void visitStore(const StoreNode& n) override { scatters_ = scatters_ || fromCoordinate(n.index); }
  void visitAtomicUpdate(const AtomicUpdateNode& n) override { scatters_ = scatters_ || fromCoordinate(n.index); }

 private:
  bool fromCoordinate(const Expr& e) const {
    if (e->kind == ExprKind::VarRef) return coordinates_.count(as<VarRefNode>(e).var.get()) > 0;
    if (e->kind == ExprKind::Load && ranges_.count(as<LoadNode>(e).buffer.get())) return true;
    bool found = false;
    forEachChildExpr(e, [&](const Expr& child) { found = found || fromCoordinate(child); });
    return found;
  }

  const CoordinateRanges& ranges_;
  std::unordered_set<const VarNode*> coordinates_;
  bool scatters_ = false;
};

class CoordinateGuard {
 public:
  CoordinateGuard(const Stmt& body, const CoordinateRanges& ranges, Var violations, const FreshName& fresh)
      : ranges_(ranges),
        violations_(std::move(violations)),
        fresh_(fresh),
        flow_(body),
        bufferGroups_(bufferGroupsOf(body)) {}

  GuardedFunctionBody run(const Stmt& body) {
    Var flag = newFlag();
    Stmt guarded = stmt(body, flag, /*topLevel=*/true);
    if (!guarded_) return {body, false};
    return {block({declare(flag, lit(flagType(), 0)), guarded}), true};
  }

 private:
  // A flag is an unsigned integer, nonzero once a bad coordinate was loaded: what each load
  // adds to it (badness) reuses the clamp's own minimum where there is one.
  static Type flagType() { return scalar(DType::UInt32); }
  Var newFlag() { return makeVar(fresh_("invalid_coordinate"), flagType()); }
  static Expr violated(const Var& flag) { return binary(BinaryOp::Ne, ir::ref(flag), lit(flagType(), 0)); }

  // A parallel loop's `body`, guarded with the flag `own`: declares it, and reports it as
  // the body ends.
  Stmt withOwnFlag(const Stmt& body, const Var& own) const {
    return block({declare(own, lit(flagType(), 0)), body,
                  ifThen(violated(own), atomicUpdate(BinaryOp::Add, violations_, intLit(0), intLit(1)))});
  }

  // Nonzero exactly when the coordinate `loaded` lies outside its range.
  Expr badness(const Expr& loaded, const CoordinateRange& range) const {
    if (!clampsByMinimum(loaded, range)) return cast(flagType(), outside(loaded, range));
    // u - min(u, last): how far past the last coordinate (a negative one is far past it),
    // or 1 for every coordinate of an empty dimension.
    Expr u = cast(flagType(), loaded);
    return binary(BinaryOp::Or, binary(BinaryOp::Sub, u, binary(BinaryOp::Min, u, lastCoordinate(range))),
                  cast(flagType(), binary(BinaryOp::Lt, range.extent, intLit(1))));
  }

  // Whether the coordinate `loaded` (a load from a guarded array) lies outside its range.
  Expr outside(const Expr& loaded, const CoordinateRange& range) const {
    const Type i64 = scalar(DType::Int64), u64 = scalar(DType::UInt64);
    Expr c = cast(i64, loaded), extent = range.extent;
    if (range.lo != 0) {  // shifted to start at 0 (hashed: + 1)
      c = binary(BinaryOp::Add, c, intLit(-range.lo));
      extent = binary(BinaryOp::Add, extent, intLit(-range.lo));
    }
    return binary(BinaryOp::Ge, cast(u64, c), cast(u64, extent));
  }

  // 32-bit coordinates from 0 are clamped by an unsigned minimum in 32 bits, which
  // vectorizes into one instruction per eight coordinates (with a compare and a blend of
  // 64-bit lanes and a flag of its own, CSR SpMV took 1.16-1.72x its time without checks;
  // with the minimum, 1.11-1.38x: docs/compiler.md).
  static bool clampsByMinimum(const Expr& loaded, const CoordinateRange& range) {
    return loaded->type == scalar(DType::Int32) && range.lo == 0;
  }
  // extent - 1 within [0, 2^31 - 1], as a 32-bit unsigned: the minimum is then a valid int32
  // (a negative coordinate is 2^31 or more unsigned); an empty dimension clamps to 0, as the
  // select does.
  static Expr lastCoordinate(const CoordinateRange& range) {
    Expr last =
        binary(BinaryOp::Max, binary(BinaryOp::Min, binary(BinaryOp::Sub, range.extent, intLit(1)), intLit(2147483647)),
               intLit(0));
    return cast(scalar(DType::UInt32), last);
  }

  // The coordinate `loaded` moved into its range [lo, extent): itself when it is in range,
  // else some coordinate of the range (lo, or the last one).
  Expr clamped(const Expr& loaded, const CoordinateRange& range) const {
    if (!clampsByMinimum(loaded, range)) return select(outside(loaded, range), lit(loaded->type, range.lo), loaded);
    return cast(loaded->type, binary(BinaryOp::Min, cast(scalar(DType::UInt32), loaded), lastCoordinate(range)));
  }

  // `e` with every guarded load clamped; each such load is added to `loads`. `asValue`: what
  // `e` computes never becomes an address (AddressFlow), or `e` is (part of) an operand of a
  // comparison, whose result is 0 or 1 whatever its operands hold: its loads need no clamp
  // (only the flag), unless they are addresses of other loads. (So merges advance their
  // positions by raw coordinates, and a union's coordinates reach the result's crd array
  // unclamped: no clamp on the chain from one step's loads to the next step's positions.)
  Expr expr(const Expr& e, std::vector<std::pair<Expr, const CoordinateRange*>>& loads, bool asValue = false) {
    auto sub = [&](const Expr& x) { return expr(x, loads, asValue); };
    switch (e->kind) {
      case ExprKind::Load: {
        const auto& l = as<LoadNode>(e);
        Expr index = expr(l.index, loads, /*asValue=*/false);
        Expr loaded = index == l.index ? e : load(l.buffer, index);
        auto range = ranges_.find(l.buffer.get());
        if (range == ranges_.end()) return loaded;
        guarded_ = true;
        loads.emplace_back(loaded, &range->second);
        if (asValue) return loaded;
        return clamped(loaded, range->second);
      }
      case ExprKind::Binary: {
        const auto& b = as<BinaryNode>(e);
        if (isComparison(b.op)) {
          Expr x = expr(b.a, loads, true), y = expr(b.b, loads, true);
          return x == b.a && y == b.b ? e : std::make_shared<BinaryNode>(b.op, b.type, x, y);
        }
        Expr x = sub(b.a), y = sub(b.b);
        return x == b.a && y == b.b ? e : std::make_shared<BinaryNode>(b.op, b.type, x, y);
      }
      case ExprKind::Unary: {
        const auto& u = as<UnaryNode>(e);
        Expr x = sub(u.a);
        return x == u.a ? e : std::make_shared<UnaryNode>(u.op, x);
      }
      case ExprKind::Cast: {
        Expr x = sub(as<CastNode>(e).a);
        return x == as<CastNode>(e).a ? e : cast(e->type, x);
      }
      case ExprKind::Select: {
        const auto& s = as<SelectNode>(e);
        Expr c = sub(s.cond), x = sub(s.a), y = sub(s.b);
        return c == s.cond && x == s.a && y == s.b ? e : select(c, x, y);
      }
      default: return e;
    }
  }

  // A while condition is evaluated at every iteration, where no statement can record a
  // flag: its loads of coordinates must only be compared, never used as an address.
  void checkOnlyCompared(const Expr& e, bool asAddress) const {
    if (e->kind == ExprKind::Load) {
      const auto& l = as<LoadNode>(e);
      if (asAddress && ranges_.count(l.buffer.get()))
        throw CompileError("lowering: a coordinate loaded from " + l.buffer->name +
                           " in a while condition is used as an address without a check");
      return checkOnlyCompared(l.index, true);
    }
    forEachChildExpr(e, [&](const Expr& child) { checkOnlyCompared(child, asAddress); });
  }

  // Rewrites `s`: statements that load coordinates get them clamped and are preceded by the
  // flag updates. `flag` is the innermost region's flag.
  Stmt stmt(const Stmt& s, const Var& flag, bool topLevel) {
    if (!s) return s;
    std::vector<std::pair<Expr, const CoordinateRange*>> loads;
    auto sub = [&](const Expr& x) { return x ? expr(x, loads) : x; };
    auto valueOf = [&](const Expr& x, bool asValue) { return x ? expr(x, loads, asValue) : x; };
    auto withFlagUpdates = [&](Stmt rewritten) {
      if (loads.empty()) return rewritten;
      std::vector<Stmt> out;
      for (size_t n = 0; n < loads.size(); ++n) {
        const auto& [loaded, range] = loads[n];
        bool again =
            std::any_of(loads.begin(), loads.begin() + n, [&](const auto& l) { return sameExpr(l.first, loaded); });
        if (!again) out.push_back(assign(flag, binary(BinaryOp::Or, ir::ref(flag), badness(loaded, *range))));
      }
      out.push_back(std::move(rewritten));
      return block(std::move(out));
    };
    switch (s->kind) {
      case StmtKind::Block: {
        std::vector<Stmt> stmts;
        for (const Stmt& x : as<BlockNode>(s).stmts) stmts.push_back(stmt(x, flag, topLevel));
        return block(std::move(stmts));
      }
      case StmtKind::Declare: {
        const auto& d = as<DeclareNode>(s);
        return withFlagUpdates(declare(d.var, valueOf(d.init, !flow_.variableReachesAddress(d.var))));
      }
      case StmtKind::Assign: {
        const auto& a = as<AssignNode>(s);
        return withFlagUpdates(assign(a.var, valueOf(a.value, !flow_.variableReachesAddress(a.var))));
      }
      case StmtKind::Store: {
        const auto& n = as<StoreNode>(s);
        Expr index = sub(n.index);
        return withFlagUpdates(store(n.buffer, index, valueOf(n.value, !flow_.elementsReachAddress(n.buffer))));
      }
      case StmtKind::AtomicUpdate: {
        const auto& n = as<AtomicUpdateNode>(s);
        Expr index = sub(n.index);
        return withFlagUpdates(
            atomicUpdate(n.op, n.buffer, index, valueOf(n.value, !flow_.elementsReachAddress(n.buffer))));
      }
      case StmtKind::Call: {
        const auto& n = as<CallNode>(s);
        std::vector<Expr> args;
        for (const Expr& a : n.args) args.push_back(sub(a));
        return withFlagUpdates(call(n.function, std::move(args)));
      }
      case StmtKind::Allocate: {
        const auto& n = as<AllocateNode>(s);
        return withFlagUpdates(allocate(n.buffer, sub(n.count), n.zero));
      }
      case StmtKind::Grow: {
        const auto& n = as<GrowNode>(s);
        return withFlagUpdates(grow(n.buffer, n.capacity, sub(n.needed)));
      }
      case StmtKind::If: {
        const auto& n = as<IfNode>(s);
        Expr cond = sub(n.cond);
        return withFlagUpdates(ifThen(cond, stmt(n.then, flag, topLevel), stmt(n.otherwise, flag, topLevel)));
      }
      case StmtKind::While: {
        const auto& n = as<WhileNode>(s);
        checkOnlyCompared(n.cond, false);
        return whileLoop(n.cond, stmt(n.body, flag, topLevel), n.step);
      }
      case StmtKind::For: {
        const auto& n = as<ForNode>(s);
        Expr begin = sub(n.begin), end = sub(n.end);
        if (loads.empty() && !isGpuLoop(n.schedule.kind)) {
          if (Stmt versioned = checkedPerBlock(n, flag, topLevel)) return versioned;
        }
        if (n.schedule.kind != LoopKind::Parallel && !isGpuLoop(n.schedule.kind)) {
          if (loads.empty()) {
            if (Stmt versioned = checkedBeforeLoop(n, flag)) return versioned;
          }
          return withFlagUpdates(forLoop(n.var, begin, end, stmt(n.body, flag, topLevel), n.schedule));
        }
        // A parallel (or GPU) body has a flag of its own, reported as the body ends.
        Var own = newFlag();
        bool guardedBefore = guarded_;
        guarded_ = false;
        Stmt body = stmt(n.body, own, /*topLevel=*/false);
        bool guardsBody = guarded_;
        guarded_ = guarded_ || guardedBefore;
        if (guardsBody) body = withOwnFlag(body, own);
        return withFlagUpdates(forLoop(n.var, begin, end, body, n.schedule));
      }
      case StmtKind::Return:
        if (!topLevel) throw CompileError("lowering: a return inside a parallel loop");
        // (Atomic: chunks of one call run the function on several threads at once.)
        return block({ifThen(violated(flag), atomicUpdate(BinaryOp::Add, violations_, intLit(0), intLit(1))), s});
      case StmtKind::Prefetch:  // never faults, whatever its index
      case StmtKind::Break:
      case StmtKind::Comment:
      case StmtKind::Free: return s;
    }
    return s;
  }

  // Statements that check each array's coordinates at positions [begin, end) in one pass
  // that vectorizes, and the condition that all of them lie in their ranges. Coordinates are
  // shifted to start at 0 and taken as unsigned (a negative one becomes huge) and checked by
  // their largest: 32-bit ones against the last coordinate clamped into int32's range
  // (lastCoordinate), 64-bit ones against the extent. (64-bit ones were checked by two
  // reductions, an and of u - extent and an or of u, which AVX2 does in one instruction each
  // where its unsigned maximum takes four; but each row's check then ended in two horizontal
  // reductions: int64 CSR SpMV of banded rows of 50, one thread, took 7.4 ms against 6.8.)
  // `oneRow`: the range is one row's (checkedBeforeLoop), not a block's.
  struct RangeCheck {
    std::vector<Stmt> take;
    Expr inRange;
  };
  RangeCheck coordinatesInRange(const std::vector<Var>& arrays, const Expr& begin, const Expr& end,
                                const std::string& position, bool oneRow) {
    const Type i64 = scalar(DType::Int64), u32 = scalar(DType::UInt32), u64 = scalar(DType::UInt64);
    std::vector<Stmt> reductions, scan;
    Expr inRange;
    Var q = makeVar(fresh_(position), i64);
    auto both = [&](Expr x) { inRange = inRange ? binary(BinaryOp::And, inRange, x) : x; };
    for (const Var& crd : arrays) {
      const CoordinateRange& range = ranges_.at(crd.get());
      Expr loaded = load(crd, ir::ref(q));
      if (clampsByMinimum(loaded, range)) {
        Var largest = makeVar(fresh_(crd->name + "_largest"), u32);
        reductions.push_back(declare(largest, lit(u32, 0)));
        scan.push_back(assign(largest, binary(BinaryOp::Max, ir::ref(largest), cast(u32, loaded))));
        both(binary(BinaryOp::And, binary(BinaryOp::Le, ir::ref(largest), lastCoordinate(range)),
                    binary(BinaryOp::Ge, range.extent, intLit(1))));
        continue;
      }
      Expr u = cast(u64, binary(BinaryOp::Add, cast(i64, loaded), intLit(-range.lo)));
      Expr extent = cast(u64, binary(BinaryOp::Add, range.extent, intLit(-range.lo)));
      Var largest = makeVar(fresh_(crd->name + "_largest"), u64);
      reductions.push_back(declare(largest, lit(u64, 0)));
      scan.push_back(assign(largest, binary(BinaryOp::Max, ir::ref(largest), u)));
      both(binary(BinaryOp::Lt, ir::ref(largest), extent));
    }
    // One row's check is a segment's loop (not interleaved, loopHints): interleaved, its vector
    // loop starts at 32 64-bit coordinates, and a banded row of 50 ran mostly in the scalar
    // remainder (int64 CSR SpMV, one thread: 6.8 ms, 5.6-5.9 not interleaved; SciPy 5.5).
    // A block's check spans many rows and keeps the interleaving (the 5-point Poisson
    // matrix's SpMV: 0.66 ms interleaved, 0.85 not).
    LoopSchedule scanSchedule;
    scanSchedule.segment = oneRow;
    reductions.push_back(forLoop(q, cast(i64, begin), cast(i64, end), block(std::move(scan)), scanSchedule));
    return {std::move(reductions), inRange};
  }

  // The rows [first, stop) of a block, their coordinates in range, as lowered; where the body
  // has one row loop and it is a segment loop, in more copies, by whether the block's rows look
  // like rows of one length: its first and last rows have the length of the block's average.
  // If that length is one of kRowsAcross and a pass over the block's pos entries confirms
  // that every row has it, the rows run as one loop vectorized across rows (ConstantSegments).
  // Otherwise such rows mark their segment loops equalSegments: the LLVM engine then runs a segment
  // shorter than kScalarEqualSegment as a plain scalar loop, whose exit the CPU predicts when
  // every row ends after as many entries, instead of as the masked vector step that rows of
  // varying length need (llvm_codegen.cpp, segmentLoop). (Rows of varying length that pass
  // the test only take the other loop: the result is the same.) CSR SpMV, 10,000 rows, one
  // thread, SciPy's time over coiter's: a diagonal matrix 0.32 -> 0.60, tridiagonal 0.53 ->
  // 0.73, rows of 4 0.67 -> 0.79. (A pass over the block's pos entries to compare every row
  // cost rows of 5 to 15 entries 5-10 %.)
  Stmt rowsByLength(const ForNode& n, const RowLoopCoordinates& rows, const Var& first, const Var& stop,
                    const LoopSchedule& rowsOfBlock) {
    Stmt asLowered = forLoop(n.var, ir::ref(first), ir::ref(stop), n.body, rowsOfBlock);
    if (rows.rowLoops().size() != 1) return asLowered;
    const auto& [position, pos] = *rows.rowLoops().begin();
    Stmt marked = EqualSegments(position).mutate(n.body);
    if (marked == n.body) return asLowered;  // (not a segment loop)
    const Type i64 = scalar(DType::Int64), type = n.var->type;
    auto at = [&](const Expr& row) { return cast(i64, load(pos, row)); };
    auto plus = [&](const Expr& row, int64_t k) { return binary(BinaryOp::Add, row, lit(type, k)); };
    Var length = makeVar(fresh_(pos->name + "_first_length"), i64);
    Expr rowCount = cast(i64, binary(BinaryOp::Sub, ir::ref(stop), ir::ref(first)));
    Expr average = binary(BinaryOp::Eq, binary(BinaryOp::Sub, at(ir::ref(stop)), at(ir::ref(first))),
                          binary(BinaryOp::Mul, rowCount, ir::ref(length)));
    Expr last =
        binary(BinaryOp::Eq, binary(BinaryOp::Sub, at(ir::ref(stop)), at(plus(ir::ref(stop), -1))), ir::ref(length));
    Stmt oneLength = block({comment("rows of one length: their segment loops run unmasked"),
                            forLoop(n.var, ir::ref(first), ir::ref(stop), marked, rowsOfBlock)});
    Stmt byLength = oneLength;
    Expr listed;
    Var rowsStart = makeVar(fresh_(pos->name + "_rows_start"), i64);
    for (int64_t entries : kRowsAcross) {
      Var step = makeVar(fresh_(position->name + "_step"), i64);
      Stmt unrolled = ConstantSegments(position, ir::ref(rowsStart), n.var, first, entries, step).mutate(n.body);
      LoopSchedule across = rowsOfBlock;
      across.kind = LoopKind::Vectorized;
      Expr is = binary(BinaryOp::Eq, ir::ref(length), intLit(entries));
      byLength = ifThen(is,
                        block({comment("rows of " + std::to_string(entries) + " entries: vectorized across rows"),
                               forLoop(n.var, ir::ref(first), ir::ref(stop), unrolled, across)}),
                        byLength);
      listed = listed ? binary(BinaryOp::Or, listed, is) : is;
    }
    if (listed) {
      // Positions computed from the row's number need every row of the block to have the length.
      Var differ = makeVar(fresh_(pos->name + "_lengths_differ"), i64);
      Var row = makeVar(fresh_(n.var->name + "_row"), type);
      LoopSchedule scan;
      scan.bounded = true;
      auto rowLength = [&](const Expr& r) { return binary(BinaryOp::Sub, at(plus(r, 1)), at(r)); };
      Stmt exactly =
          block({declare(rowsStart, at(ir::ref(first))), declare(differ, intLit(0)),
                 forLoop(row, ir::ref(first), ir::ref(stop),
                         assign(differ, binary(BinaryOp::Or, ir::ref(differ),
                                               binary(BinaryOp::Sub, rowLength(ir::ref(row)), ir::ref(length)))),
                         scan),
                 ifThen(binary(BinaryOp::Eq, ir::ref(differ), intLit(0)), byLength, oneLength)});
      byLength = ifThen(listed, exactly, oneLength);
    }
    return block({declare(length, binary(BinaryOp::Sub, at(plus(ir::ref(first), 1)), at(ir::ref(first)))),
                  ifThen(binary(BinaryOp::And, average, last), byLength, asLowered)});
  }
  // The statement with the row loop over `position` replaced by a loop of `entries` steps over
  // the positions start + (i - first) * entries + t: the rows of a block that all have
  // `entries` entries, whose loop the vectorizer can then run across rows.
  class ConstantSegments : public IRMutator {
   public:
    ConstantSegments(const VarNode* position, Expr start, const Var& row, const Var& first, int64_t entries,
                     const Var& step)
        : position_(position), start_(std::move(start)), row_(row), first_(first), entries_(entries), step_(step) {}

   private:
    Stmt mutateFor(const ForNode& n, const Stmt& s) override {
      if (n.var.get() != position_) return IRMutator::mutateFor(n, s);
      const Type i64 = scalar(DType::Int64);
      const Var& t = step_;
      Expr rowOffset =
          binary(BinaryOp::Mul, cast(i64, binary(BinaryOp::Sub, ir::ref(row_), ir::ref(first_))), intLit(entries_));
      Expr at = binary(BinaryOp::Add, binary(BinaryOp::Add, start_, rowOffset), ir::ref(t));
      return forLoop(t, intLit(0), intLit(entries_), block({declare(n.var, cast(n.var->type, at)), mutate(n.body)}));
    }
    const VarNode* position_;
    Expr start_;
    Var row_, first_;
    int64_t entries_;
    Var step_;
  };
  // The statement with the segment loop over `position` marked equalSegments, when it is an
  // innermost loop (else the same statement).
  class EqualSegments : public IRMutator {
   public:
    explicit EqualSegments(const VarNode* position) : position_(position) {}

   private:
    Stmt mutateFor(const ForNode& n, const Stmt& s) override {
      Stmt rewritten = IRMutator::mutateFor(n, s);
      // (Only an innermost loop: a row loop around another, SpMM's, keeps its vector loop.)
      if (n.var.get() != position_ || !n.schedule.segment || holdsLoop(n.body)) return rewritten;
      const auto& loop = as<ForNode>(rewritten);
      LoopSchedule schedule = loop.schedule;
      schedule.equalSegments = true;
      return forLoop(loop.var, loop.begin, loop.end, loop.body, schedule);
    }
    const VarNode* position_;
  };

  // A loop over rows whose coordinates are all loaded by row loops of its own rows (CSR
  // SpMV's and SpMM's row loop, RowLoopCoordinates) is versioned per block of
  // kRowsPerCheck rows: one pass checks the block's coordinates (coordinatesInRange), and
  // when all lie in their ranges the block's rows run as lowered, else guarded. Checking
  // each row before it runs (checkedBeforeLoop) cost a loop, a reduction and a branch per
  // row: with 4 entries per row, SpMV took about 1.4x its time without checks. (As there, the
  // coordinates are read twice, the second time from cache, and a writer changing them
  // between the reads is outside the guarantee.) The loop's iterations become blocks, a
  // parallel loop's too (its chunk is divided by the block's size); a block runs its rows
  // in order, as a serial loop would.
  Stmt checkedPerBlock(const ForNode& n, const Var& flag, bool topLevel) {
    if (n.schedule.kind != LoopKind::Serial && n.schedule.kind != LoopKind::Parallel) return nullptr;
    RowLoopCoordinates rows(ranges_, n);
    if (!rows.eligible()) return nullptr;
    if (rows.serialRows() && ScatterThroughCoordinates(ranges_, n.body).scatters())
      return rows.onlyRowLoops() ? checkedPerEntry(n, rows, flag) : nullptr;
    const Type i64 = scalar(DType::Int64), type = n.var->type;
    const RowBlocks blocksOfRows(n, fresh_);
    const Var &begin = blocksOfRows.begin, &end = blocksOfRows.end;
    Var blockIndex = makeVar(fresh_(n.var->name + "_block"), type);
    Var first = makeVar(fresh_(n.var->name + "_first"), type), stop = makeVar(fresh_(n.var->name + "_stop"), type);
    bool parallel = n.schedule.kind == LoopKind::Parallel;
    // A parallel body has a flag of its own, reported as the body ends.
    Var blockFlag = parallel ? newFlag() : flag;
    std::vector<Stmt> body = blocksOfRows.bounds(blockIndex, first, stop);
    Expr inRange;
    std::map<const VarNode*, Expr> limits, ends;  // pos -> the block's, and the loop's, last position + 1
    for (const RowLoopCoordinates::RowArrays& row : rows.rows()) {
      Var limit = makeVar(fresh_(row.pos->name + "_limit"), i64);
      body.push_back(declare(limit, cast(i64, load(row.pos, ir::ref(stop)))));
      limits[row.pos.get()] = ir::ref(limit);
      ends[row.pos.get()] = cast(i64, load(row.pos, ir::ref(end)));
      RangeCheck check =
          coordinatesInRange(row.crd, load(row.pos, ir::ref(first)), ir::ref(limit), n.var->name + "_position", false);
      for (Stmt& s : check.take) body.push_back(std::move(s));
      inRange = inRange ? binary(BinaryOp::And, inRange, check.inRange) : check.inRange;
    }
    guarded_ = true;
    const RowLoopCoordinates::RowArrays& sample = rows.rows().front();
    std::map<const VarNode*, GatheringLoop> gathering;
    for (const auto& [q, pos] : rows.rowLoops()) {
      for (const RowLoopCoordinates::RowArrays& row : rows.rows()) {
        if (row.pos == pos) gathering[q] = GatheringLoop{row.crd, ends.at(pos.get())};
      }
    }
    const LoopSchedule rowsOfBlock = RowBlocks::rowsOfBlock();
    // The rows [rowFirst, rowStop) with their gathers prefetched, each row's body made by
    // `rowBody` from the prefetching one. A row loop prefetches the element d positions ahead
    // only while that position lies before the loop's last (prefetchGathers), so each row's
    // loop is split there; but only the last rows of the whole loop come that close, so a
    // block whose last position is d or more before the end runs its rows in one piece. The
    // split's bounds and its second, empty loop per row had cost short rows a fifth of their
    // time: CSR SpMV, the compiled kernel alone against SciPy's csr_matvec, one thread,
    // interleaved (2026-11-27): 125,000 rows, 92 % empty (hypersparse-1M/8), 0.62 -> 0.90
    // of SciPy's speed; at 1 M rows 1.75 -> 2.43; webbase-1M/8 0.89 -> 0.99, webbase-1M
    // 1.48 -> 1.60; 100,000 uniform rows of 3 0.95 -> 1.11; rows of 4 to 20 (uniform,
    // power-law) within noise.
    auto prefetchedRows = [&](Expr rowFirst, Expr rowStop, const std::function<Stmt(Stmt)>& rowBody) {
      std::map<const VarNode*, GatheringLoop> unsplit = gathering;
      Expr within;
      for (auto& [q, loop] : unsplit) {
        loop.aheadWithinLimit = true;
        Expr reach = binary(
            BinaryOp::Le,
            binary(BinaryOp::Add, cast(i64, load(rows.rowLoops().at(q), rowStop)), intLit(kGatherPrefetchDistance)),
            loop.limit);
        within = within ? binary(BinaryOp::And, within, reach) : reach;
      }
      Stmt split = forLoop(n.var, rowFirst, rowStop, rowBody(prefetchGathers(n.body, gathering, fresh_)), rowsOfBlock);
      if (!within) return split;  // (no row loop gathers)
      return ifThen(within,
                    forLoop(n.var, rowFirst, rowStop, rowBody(prefetchGathers(n.body, unsplit, fresh_)), rowsOfBlock),
                    split);
    };
    Stmt inRangeRows = rowsByLength(n, rows, first, stop, rowsOfBlock);
    if (!gathering.empty()) {
      // Rows whose coordinates lie far apart gather from all over their operands: their
      // elements are prefetched (prefetchGathers). Rows that read close together (banded)
      // would only pay for the prefetches' instructions. The block's first and last
      // coordinates tell the two apart. (A merge's rows have no row loop that gathers:
      // nothing to prefetch, and no second copy of its rows.)
      Var farBlock = makeVar(fresh_(n.var->name + "_far"), scalar(DType::Bool));
      body.push_back(declare(farBlock, boolLit(false)));
      body.push_back(
          ifThen(binary(BinaryOp::Lt, cast(i64, load(sample.pos, ir::ref(first))), limits.at(sample.pos.get())),
                 assign(farBlock, logicalNot(close(sample, ir::ref(first), ir::ref(stop), kPrefetchColumns)))));
      Stmt prefetched = prefetchedRows(ir::ref(first), ir::ref(stop), [](Stmt rowBody) { return rowBody; });
      inRangeRows = ifThen(ir::ref(farBlock), prefetched, inRangeRows);
    }
    Stmt checked =
        forLoop(n.var, ir::ref(first), ir::ref(stop), stmt(n.body, blockFlag, topLevel && !parallel), rowsOfBlock);
    body.push_back(ifThen(inRange, inRangeRows, checked));
    Stmt blockBody = parallel ? withOwnFlag(block(std::move(body)), blockFlag) : block(std::move(body));
    Stmt blocks = blocksOfRows.overBlocks(blockIndex, blockBody);
    // Where most rows gather from far apart (gathersFar, decided once per call), the
    // blocks skip their pass: each coordinate is checked as the row loads it
    // (checkEachEntry), and every row's gathers are prefetched; their row loops are scalar
    // anyway. The blocks' choice on two coordinates took a third of a power-law matrix's
    // blocks for close, whose gathers then went without prefetches, and their pass cost the
    // rest more than the check per entry: SpMV at one thread went from 0.72x SciPy's speed
    // to 0.91x on a 200,000-row power-law matrix and from 0.81x to 1.0x on a uniform one
    // (docs/compiler.md). The rows still go by blocks, checked for interrupts once a block.
    // (Only serial row loops may stop at a bad coordinate: rows whose loops run in parallel
    // keep the blocks.)
    Stmt farRows;
    if (rows.serialRows() && rows.onlyRowLoops()) {
      Var farFlag = parallel ? newFlag() : flag;
      Var farBlockIndex = makeVar(fresh_(n.var->name + "_far_block"), type);
      Var farFirst = makeVar(fresh_(n.var->name + "_far_first"), type),
          farStop = makeVar(fresh_(n.var->name + "_far_stop"), type);
      std::vector<Stmt> farBlock = blocksOfRows.bounds(farBlockIndex, farFirst, farStop);
      farBlock.push_back(prefetchedRows(ir::ref(farFirst), ir::ref(farStop),
                                        [&](Stmt rowBody) { return checkEachEntry(rowBody, rows, farFlag); }));
      Stmt farRowsOfBlock = block(std::move(farBlock));
      farRows =
          blocksOfRows.overBlocks(farBlockIndex, parallel ? withOwnFlag(farRowsOfBlock, farFlag) : farRowsOfBlock);
    }
    // A merge's rows always go by blocks: checked one by one, its loads would each be
    // checked (a while loop is no innermost row loop for checkedBeforeLoop), and that
    // costs a sparse sum of matrices about a sixth of its time.
    if (!rows.onlyRowLoops()) {
      std::vector<Stmt> out = blocksOfRows.declarations();
      out.push_back(blocks);
      return block(std::move(out));
    }
    // Long rows that read close together (banded) run row by row, each checked before it
    // runs (checkedBeforeLoop): a pass over a whole block's coordinates before its rows
    // keeps the core from streaming the coordinates and the values at once (SpMV at 113
    // entries per row took 1.14x as long in blocks; kLongRowBytes). Decided once per call, on
    // the average row length and the middle row's spread.
    Var own = parallel ? newFlag() : flag;
    Stmt rowBody = stmt(n.body, own, topLevel && !parallel);
    Stmt byRow =
        forLoop(n.var, ir::ref(begin), ir::ref(end), parallel ? withOwnFlag(rowBody, own) : rowBody, n.schedule);
    Var rowByRow = makeVar(fresh_(n.var->name + "_by_row"), scalar(DType::Bool));
    Var middle = makeVar(fresh_(n.var->name + "_middle"), type);
    Expr entries =
        binary(BinaryOp::Sub, cast(i64, load(sample.pos, ir::ref(end))), cast(i64, load(sample.pos, ir::ref(begin))));
    int64_t entryBytes = 0;
    for (const Var& crd : sample.crd) entryBytes += static_cast<int64_t>(dtypeSize(crd->type.elem));
    Expr longRows = binary(
        BinaryOp::Ge, binary(BinaryOp::Mul, entries, intLit(std::max<int64_t>(entryBytes, 1))),
        binary(BinaryOp::Mul, cast(i64, binary(BinaryOp::Sub, ir::ref(end), ir::ref(begin))), intLit(kLongRowBytes)));
    Expr middleStart = cast(i64, load(sample.pos, ir::ref(middle))),
         middleEnd = cast(i64, load(sample.pos, binary(BinaryOp::Add, ir::ref(middle), intLit(1, type.elem))));
    std::vector<Stmt> decide{
        declare(middle, binary(BinaryOp::Add, ir::ref(begin),
                               binary(BinaryOp::Div, binary(BinaryOp::Sub, ir::ref(end), ir::ref(begin)),
                                      intLit(2, type.elem)))),
        ifThen(binary(BinaryOp::And, longRows, binary(BinaryOp::Lt, middleStart, middleEnd)),
               assign(rowByRow, close(sample, ir::ref(middle),
                                      binary(BinaryOp::Add, ir::ref(middle), intLit(1, type.elem)), kFarColumns)))};
    std::vector<Stmt> out = blocksOfRows.declarations();
    out.push_back(declare(rowByRow, boolLit(false)));
    Stmt rest = blocks;
    if (farRows) {
      Var far = makeVar(fresh_(n.var->name + "_gathers_far"), scalar(DType::Bool));
      out.push_back(declare(far, boolLit(false)));
      decide.push_back(ifThen(logicalNot(ir::ref(rowByRow)), gathersFar(sample, ir::ref(begin), ir::ref(end), far)));
      rest = ifThen(ir::ref(far), farRows, blocks);
    }
    out.push_back(ifThen(binary(BinaryOp::Lt, ir::ref(begin), ir::ref(end)), block(std::move(decide))));
    out.push_back(ifThen(ir::ref(rowByRow), byRow, rest));
    return block(std::move(out));
  }

  // Rows that scatter through their coordinates (`y[crd[q]] += A[q] * x[i]`) check each
  // coordinate as their row loop loads it instead (checkEachEntry). A scatter cannot
  // vectorize, so the branch costs no vector loop, and a pass over a block's coordinates
  // before its rows (checkedPerBlock) held up the row loop's own stream of coordinates and
  // values: the transposed product of a 200,000-row power-law matrix at one thread took
  // 1.31-1.56x the time of SciPy's csc_matvec with it, 1.01-1.16x with this
  // (docs/compiler.md).
  //
  // The rows go by blocks of kRowsPerCheck, as checkedPerBlock's do, so that the loop over
  // blocks checks for interrupts once a block (interrupt_points.cpp): a check per row cost
  // CSC SpMV 10-14 % of its time (the kernel alone against SciPy's csc_matvec, one thread,
  // 2026-11-27: hypersparse-1M 0.91 -> 1.04 of SciPy's speed, hypersparse-1M/8 0.90 -> 0.99,
  // webbase-1M 1.04 -> 1.16, measured on its C source with and without the check).
  Stmt checkedPerEntry(const ForNode& n, const RowLoopCoordinates& rows, const Var& flag) {
    guarded_ = true;
    const Type type = n.var->type;
    bool parallel = n.schedule.kind == LoopKind::Parallel;
    // A parallel body has a flag of its own, reported as the body ends.
    Var own = parallel ? newFlag() : flag;
    const RowBlocks blocksOfRows(n, fresh_);
    Var blockIndex = makeVar(fresh_(n.var->name + "_block"), type);
    Var first = makeVar(fresh_(n.var->name + "_first"), type), stop = makeVar(fresh_(n.var->name + "_stop"), type);
    std::vector<Stmt> body = blocksOfRows.bounds(blockIndex, first, stop);
    body.push_back(
        forLoop(n.var, ir::ref(first), ir::ref(stop), checkEachEntry(n.body, rows, own), RowBlocks::rowsOfBlock()));
    Stmt blockBody = parallel ? withOwnFlag(block(std::move(body)), own) : block(std::move(body));
    std::vector<Stmt> out = blocksOfRows.declarations();
    out.push_back(blocksOfRows.overBlocks(blockIndex, blockBody));
    return block(std::move(out));
  }

  // `body` with each row loop of `rows` checking each coordinate as it loads it:
  // `if (outside(crd[q])) { flag; break; }`, one compare and a branch never taken per entry,
  // before the entry's statements use it. A row with a bad coordinate stops at it, and the
  // flag makes the kernel report it (its result is not returned). The row loop no longer
  // vectorizes: worth it where its loads are scattered anyway (a scatter, or rows whose
  // gathers are prefetched).
  Stmt checkEachEntry(const Stmt& body, const RowLoopCoordinates& rows, const Var& flag) {
    class CheckEntries : public IRMutator {
     public:
      CheckEntries(const CoordinateGuard& guard, const RowLoopCoordinates& rows, const Var& flag)
          : guard_(guard), rows_(rows), flag_(flag) {}

     protected:
      Stmt mutateFor(const ForNode& loop, const Stmt& s) override {
        Stmt body = mutate(loop.body);
        auto pos = rows_.rowLoops().find(loop.var.get());
        if (pos == rows_.rowLoops().end())
          return body == loop.body ? s : forLoop(loop.var, loop.begin, loop.end, body, loop.schedule);
        Expr outside;
        for (const RowLoopCoordinates::RowArrays& row : rows_.rows()) {
          if (row.pos != pos->second) continue;
          for (const Var& crd : row.crd) {
            Expr bad = guard_.outside(load(crd, ir::ref(loop.var)), guard_.ranges_.at(crd.get()));
            outside = outside ? binary(BinaryOp::Or, outside, bad) : bad;
          }
        }
        if (!outside) return body == loop.body ? s : forLoop(loop.var, loop.begin, loop.end, body, loop.schedule);
        Stmt stop = block({assign(flag_, binary(BinaryOp::Or, ir::ref(flag_), lit(flagType(), 1))), breakLoop()});
        Stmt checked = forLoop(loop.var, loop.begin, loop.end, block({ifThen(outside, stop), body}), loop.schedule);
        // (The early exit keeps LLVM from moving x[i] out of the row loop itself.)
        return hoistInvariantLoads(checked, guard_.bufferGroups_, guard_.fresh_);
      }

     private:
      const CoordinateGuard& guard_;
      const RowLoopCoordinates& rows_;
      const Var& flag_;
    };
    return CheckEntries(*this, rows, flag).mutate(body);
  }

  // Sets `far` when most of kSpreadBlocks windows of kRowsPerCheck rows, evenly spaced over
  // rows [begin, end), spread far (spreadsFar); windows without entries do not count.
  Stmt gathersFar(const RowLoopCoordinates::RowArrays& rows, const Expr& begin, const Expr& end, const Var& far) {
    const Type i64 = scalar(DType::Int64), type = begin->type;
    Var window = makeVar(fresh_("window"), i64), first = makeVar(fresh_("window_first"), type),
        stop = makeVar(fresh_("window_stop"), type), limit = makeVar(fresh_("window_limit"), i64),
        spread = makeVar(fresh_("window_far"), scalar(DType::Bool)), farWindows = makeVar(fresh_("far_windows"), i64),
        windows = makeVar(fresh_("windows"), i64);
    Expr offset =
        binary(BinaryOp::Div, binary(BinaryOp::Mul, cast(i64, binary(BinaryOp::Sub, end, begin)), ir::ref(window)),
               intLit(kSpreadBlocks));
    Stmt sampleWindow =
        block({declare(first, binary(BinaryOp::Add, begin, cast(type, offset))),
               declare(stop, binary(BinaryOp::Min,
                                    binary(BinaryOp::Add, ir::ref(first), intLit(kRowsPerCheck, type.elem)), end)),
               declare(limit, cast(i64, load(rows.pos, ir::ref(stop)))),
               ifThen(binary(BinaryOp::Lt, cast(i64, load(rows.pos, ir::ref(first))), ir::ref(limit)),
                      block({declare(spread, boolLit(false)), spreadsFar(rows, ir::ref(first), ir::ref(limit), spread),
                             assign(windows, binary(BinaryOp::Add, ir::ref(windows), intLit(1))),
                             ifThen(ir::ref(spread),
                                    assign(farWindows, binary(BinaryOp::Add, ir::ref(farWindows), intLit(1))))}))});
    return block(
        {declare(farWindows, intLit(0)), declare(windows, intLit(0)),
         forLoop(window, intLit(0), intLit(kSpreadBlocks), sampleWindow),
         assign(far, binary(BinaryOp::Gt, binary(BinaryOp::Mul, ir::ref(farWindows), intLit(2)), ir::ref(windows)))});
  }

  // Sets `far` when the coordinates of a block of rows with entries, positions
  // [pos[first], limit), spread over kPrefetchColumns or more: the largest minus the
  // smallest of kSpreadSamples + 1 coordinates at evenly spaced positions (so rows count by
  // their entries). Comparing only the block's first and last coordinate took a third of a
  // power-law matrix's blocks for close, whose gathers then went without prefetches.
  Stmt spreadsFar(const RowLoopCoordinates::RowArrays& rows, const Expr& first, const Expr& limit, const Var& far) {
    const Type i64 = scalar(DType::Int64);
    std::vector<Stmt> out;
    Var start = makeVar(fresh_(rows.pos->name + "_start"), i64), last = makeVar(fresh_(rows.pos->name + "_last"), i64);
    out.push_back(declare(start, cast(i64, load(rows.pos, first))));
    out.push_back(declare(last, binary(BinaryOp::Sub, binary(BinaryOp::Add, limit, intLit(-1)), ir::ref(start))));
    Var lo = makeVar(fresh_(rows.crd.front()->name + "_low"), i64),
        hi = makeVar(fresh_(rows.crd.front()->name + "_high"), i64);
    out.push_back(declare(lo, cast(i64, load(rows.crd.front(), ir::ref(start)))));
    out.push_back(declare(hi, ir::ref(lo)));
    for (int64_t k = 1; k <= kSpreadSamples; ++k) {
      Expr at = binary(BinaryOp::Add, ir::ref(start),
                       binary(BinaryOp::Div, binary(BinaryOp::Mul, ir::ref(last), intLit(k)), intLit(kSpreadSamples)));
      Var c = makeVar(fresh_(rows.crd.front()->name + "_sample"), i64);
      out.push_back(declare(c, cast(i64, load(rows.crd.front(), at))));
      out.push_back(assign(lo, binary(BinaryOp::Min, ir::ref(lo), ir::ref(c))));
      out.push_back(assign(hi, binary(BinaryOp::Max, ir::ref(hi), ir::ref(c))));
    }
    out.push_back(
        assign(far, binary(BinaryOp::Ge, binary(BinaryOp::Sub, ir::ref(hi), ir::ref(lo)), intLit(kPrefetchColumns))));
    return block(std::move(out));
  }

  // Whether the coordinates of rows [first, stop) lie close together: their first and last
  // (of the first crd array) less than `columns` apart. Only for rows with entries.
  static Expr close(const RowLoopCoordinates::RowArrays& rows, const Expr& first, const Expr& stop, int64_t columns) {
    const Type i64 = scalar(DType::Int64), u64 = scalar(DType::UInt64);
    Expr start = cast(i64, load(rows.pos, first)), limit = cast(i64, load(rows.pos, stop));
    Expr spread = binary(BinaryOp::Sub, cast(i64, load(rows.crd.front(), binary(BinaryOp::Add, limit, intLit(-1)))),
                         cast(i64, load(rows.crd.front(), start)));
    return binary(BinaryOp::Le, cast(u64, binary(BinaryOp::Add, spread, intLit(columns))),
                  cast(u64, intLit(2 * columns)));
  }

  // An innermost serial loop whose only coordinate loads are crd[q] of its own variable q
  // (a row loop that checkedPerBlock does not cover) is checked before it runs: one pass
  // takes the largest coordinate of each array over the loop's range, and when all lie in
  // their ranges the loop runs as lowered, without a clamp or a flag per coordinate;
  // otherwise it runs guarded. Clamping each coordinate cost the SpMV loop three
  // instructions of about seven per entry. (The arrays are read twice, the second time from
  // cache. A writer changing them between the two reads, while the kernel runs, is outside
  // the guarantee: guard_coordinates.hpp.)
  Stmt checkedBeforeLoop(const ForNode& n, const Var& flag) {
    InnermostCoordinateLoads loads(ranges_, n.var);
    loads.visit(n.body);
    if (!loads.onlyAtLoopVariable()) return nullptr;
    guarded_ = true;
    RangeCheck largest = coordinatesInRange(loads.arrays(), n.begin, n.end, n.var->name + "_checked", true);
    std::vector<Stmt> out = std::move(largest.take);
    Stmt unchecked = forLoop(n.var, n.begin, n.end, n.body, n.schedule);
    Stmt checked = forLoop(n.var, n.begin, n.end, stmt(n.body, flag, false), n.schedule);
    out.push_back(ifThen(largest.inRange, unchecked, checked));
    return block(std::move(out));
  }

  const CoordinateRanges& ranges_;
  Var violations_;
  const FreshName& fresh_;
  AddressFlow flow_;
  std::unordered_map<const VarNode*, const VarNode*> bufferGroups_;  // ir/distinct_buffers.hpp
  bool guarded_ = false;
};

}  // namespace

GuardedFunctionBody guardCoordinates(const Stmt& body, const CoordinateRanges& ranges, const Var& violations,
                                     const FreshName& fresh) {
  if (ranges.empty()) return {body, false};
  return CoordinateGuard(body, ranges, violations, fresh).run(body);
}

}  // namespace coiter::ir
