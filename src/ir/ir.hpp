// The imperative IR that lowering produces and every code generator consumes (C, LLVM, and
// later CUDA). It is deliberately small: typed scalar expressions, loads and stores through
// typed pointers, loops, conditionals, and a few memory statements. Nodes are immutable and
// shared; build them with the factory functions at the bottom of this file.
//
// A kernel is one `Function`. Its calling convention is fixed for every engine:
//
//     int32_t kernel(void** pointer_slots, int64_t* integer_slots)
//
// Each `Param` names a slot. On entry the generated code loads every parameter from its slot
// (pointer parameters from pointer_slots, integer parameters from integer_slots, converted to
// the parameter's type). Parameters marked `writeBack` are stored back into their slots before
// every `Return`, which is how a kernel hands grown result arrays and sizes to its caller.
// The returned status is 0 on success; see `KernelStatus`.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/runtime_call.hpp"
#include "memory/dtype.hpp"

namespace coiter::ir {

// A scalar of `elem`, or a pointer to an array of `elem` when `pointer` is true.
struct Type {
  DType elem = DType::Int64;
  bool pointer = false;
  bool operator==(const Type& o) const { return elem == o.elem && pointer == o.pointer; }
  bool operator!=(const Type& o) const { return !(*this == o); }
};
inline Type scalar(DType t) { return Type{t, false}; }
inline Type pointerTo(DType t) { return Type{t, true}; }

// kStructureMismatch: a compute-only kernel found that the result structure it was given is
// not the one its operands produce.
// kBoundViolated: an extent differs from what a bound() of the schedule promised.
// kUnorderedWorkspace: a compressed workspace was given its coordinates out of order.
// kInterrupted: the user asked the kernel to stop (Ctrl-C) before it finished.
// kTableFull: an inserted result level (hashed) met a segment at its load limit; the caller
// reruns the kernel with larger tables (LevelType::largerInsertScalars).
enum KernelStatus : int32_t {
  kOk = 0,
  kOutOfMemory = 1,
  kStructureMismatch = 2,
  kBoundViolated = 3,
  kUnorderedWorkspace = 4,
  kInterrupted = 5,
  kTableFull = 6
};

// ---------------------------------------------------------------------------------------------
// Variables. A variable is identified by its node (pointer identity); names are unique within
// a function (the lowerer guarantees it) and valid C identifiers. Names starting with
// `coiter_`, and `pointer_slots` and `integer_slots`, are reserved for generated code.
struct VarNode {
  std::string name;
  Type type;
};
using Var = std::shared_ptr<const VarNode>;
Var makeVar(const std::string& name, Type type);

// ---------------------------------------------------------------------------------------------
// Expressions.
enum class ExprKind { Literal, VarRef, Load, Binary, Unary, Cast, Select, ThreadId, NumThreads, InterruptRequested };

// Integer arithmetic wraps (two's complement), as in NumPy. Integer Div/Rem truncate (C
// semantics), but a zero divisor gives 0 and MIN / -1 gives MIN (NumPy's results) instead of
// trapping. Rem on floats is C's fmod; it is never generated for complex.
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Rem,  // arithmetic; Div/Rem truncate on integers (C semantics)
  Min,
  Max,  // NumPy's minimum/maximum: a NaN operand propagates
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,  // comparisons: result type Bool (complex: Eq and Ne only)
  And,
  Or  // logical on Bool operands, bitwise on integers. In the condition of an If or While, a
      // right operand that loads is evaluated only when the left one does not decide (it may
      // guard the load: `p < end && crd[p] == c`); elsewhere both sides are evaluated.
};
enum class UnaryOp { Neg, Not };

struct ExprNode {
  ExprKind kind;
  Type type;
  ExprNode(ExprKind k, Type t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
};
using Expr = std::shared_ptr<const ExprNode>;

// A constant of a scalar type. Integers and bool use `intValue`; floats use `real`; complex
// uses `real` and `imag`.
struct LiteralNode : ExprNode {
  int64_t intValue = 0;
  double real = 0.0;
  double imag = 0.0;
  explicit LiteralNode(Type t) : ExprNode(ExprKind::Literal, t) {}
};
struct VarRefNode : ExprNode {
  Var var;
  explicit VarRefNode(Var v) : ExprNode(ExprKind::VarRef, v->type), var(std::move(v)) {}
};
// buffer[index]; `buffer` is a pointer variable, `index` an integer expression.
struct LoadNode : ExprNode {
  Var buffer;
  Expr index;
  LoadNode(Var b, Expr i) : ExprNode(ExprKind::Load, scalar(b->type.elem)), buffer(std::move(b)), index(std::move(i)) {}
};
// Both operands have the same type (the lowerer casts first); the result has that type, or
// Bool for comparisons. On Bool operands Add means Or and Mul means And (NumPy's rule).
struct BinaryNode : ExprNode {
  BinaryOp op;
  Expr a, b;
  BinaryNode(BinaryOp o, Type t, Expr x, Expr y)
      : ExprNode(ExprKind::Binary, t), op(o), a(std::move(x)), b(std::move(y)) {}
};
struct UnaryNode : ExprNode {
  UnaryOp op;
  Expr a;
  UnaryNode(UnaryOp o, Expr x) : ExprNode(ExprKind::Unary, x->type), op(o), a(std::move(x)) {}
};
// Conversion between scalar types with C semantics; real -> complex sets a zero imaginary
// part; complex -> real is never generated.
struct CastNode : ExprNode {
  Expr a;
  CastNode(Type t, Expr x) : ExprNode(ExprKind::Cast, t), a(std::move(x)) {}
};
// cond ? a : b, both branches evaluated is allowed (they have no side effects).
struct SelectNode : ExprNode {
  Expr cond, a, b;
  SelectNode(Expr c, Expr x, Expr y)
      : ExprNode(ExprKind::Select, x->type), cond(std::move(c)), a(std::move(x)), b(std::move(y)) {}
};

// Int64: the index, in [0, NumThreads), of the thread running the innermost enclosing
// parallel loop; 0 outside parallel loops. Lets a parallel body pick its private slice of a
// per-thread buffer.
struct ThreadIdNode : ExprNode {
  ThreadIdNode() : ExprNode(ExprKind::ThreadId, scalar(DType::Int64)) {}
};
// Int64: how many threads a parallel loop started here may use (coiter.set_num_threads);
// at least 1. Sizes per-thread buffers before a parallel loop.
struct NumThreadsNode : ExprNode {
  NumThreadsNode() : ExprNode(ExprKind::NumThreads, scalar(DType::Int64)) {}
};
// Bool: whether the user asked the running kernels to stop (Ctrl-C: runtime/interrupts.hpp),
// read afresh each time it is evaluated (a volatile read of the runtime's flag, never hoisted
// out of a loop). Host code only; see ir/interrupt_points.hpp.
struct InterruptRequestedNode : ExprNode {
  InterruptRequestedNode() : ExprNode(ExprKind::InterruptRequested, scalar(DType::Bool)) {}
};

// ---------------------------------------------------------------------------------------------
// Statements.
enum class StmtKind {
  Block,
  Declare,
  Assign,
  Store,
  For,
  While,
  If,
  Break,
  Comment,
  Allocate,
  Free,
  Grow,
  Return,
  Call,
  AtomicUpdate,
  Prefetch
};

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};
using Stmt = std::shared_ptr<const StmtNode>;

struct BlockNode : StmtNode {
  std::vector<Stmt> stmts;
  explicit BlockNode(std::vector<Stmt> s) : StmtNode(StmtKind::Block), stmts(std::move(s)) {}
};
// Defines a local variable (scalar or pointer) with an initial value, visible until the end
// of the enclosing block. A pointer variable may be declared with a null initial value
// (`init` == nullptr) and set later by Allocate/Grow/Assign.
struct DeclareNode : StmtNode {
  Var var;
  Expr init;
  DeclareNode(Var v, Expr i) : StmtNode(StmtKind::Declare), var(std::move(v)), init(std::move(i)) {}
};
struct AssignNode : StmtNode {
  Var var;
  Expr value;
  AssignNode(Var v, Expr e) : StmtNode(StmtKind::Assign), var(std::move(v)), value(std::move(e)) {}
};
// buffer[index] = value.
struct StoreNode : StmtNode {
  Var buffer;
  Expr index;
  Expr value;
  StoreNode(Var b, Expr i, Expr v)
      : StmtNode(StmtKind::Store), buffer(std::move(b)), index(std::move(i)), value(std::move(v)) {}
};
// How a For loop runs. Serial loops may carry an unroll hint. A Parallel loop's iterations
// are shared among NumThreads threads (OpenMP underneath), in chunks of `chunk` iterations
// (0: the runtime chooses), handed out statically (contiguous, equal counts) or dynamically
// (first come, first served: for skewed iterations). A Vectorized loop asks the code
// generator to vectorize it (the lowerer has checked it is legal: no loop-carried
// dependences but reductions into locals).
//
// The body of a Parallel loop obeys rules the lowerer guarantees and code generators rely on
// (the LLVM engine outlines the body into a function): it assigns no variable declared
// outside it (it declares its own locals, and writes only through stores and atomic updates),
// and contains no Return, Allocate, Free or Grow; Break only inside its own nested loops.
// Parallel loops do not nest (a parallel loop inside another runs serially).
//
// GPU loops (target cuda only) hand their iterations to the GPU's blocks, warps or threads:
// GpuBlock iterations go to thread blocks, GpuWarp iterations to the warps of the enclosing
// block (of the whole grid at the top), GpuThread iterations to the lanes of the enclosing warp
// (the threads of the enclosing block, of the grid at the top). They nest only in that order.
// Each iteration runs on one unit, whose threads all run the statements outside any inner GPU
// loop; so those statements only declare and assign locals, except the statements after the
// last inner GPU loop, which run once per iteration (codegen/cuda_codegen.hpp). A GPU loop's
// body assigns no variable declared outside it, except when `reduction` is set: then its
// iterations combine such variables (`v = v op e`, op + or | or min or max, v declared with
// op's identity in the enclosing unit's body) and every thread sees the total after the loop.
enum class LoopKind { Serial, Parallel, Vectorized, GpuBlock, GpuWarp, GpuThread };
inline bool isGpuLoop(LoopKind k) {
  return k == LoopKind::GpuBlock || k == LoopKind::GpuWarp || k == LoopKind::GpuThread;
}
struct LoopSchedule {
  LoopKind kind = LoopKind::Serial;
  bool dynamic = false;    // Parallel: dynamic (true) or static (false) distribution
  int64_t chunk = 0;       // Parallel: iterations per chunk, 0 = chosen by the runtime
  int unroll = 0;          // Serial/Vectorized: unroll factor hint, 0 = none
  bool reduction = false;  // GPU loops: the iterations reduce locals declared outside the loop
  bool segment = false;    // iterates one stored segment of a sparse level (a row's nonzeros)
  bool bounded = false;    // at most a few dozen iterations (a block of rows): no interrupt check of its own
  // A segment loop whose segments, in the block of rows around it, have one length (as far as
  // guard_coordinates.cpp's test tells): a loop chosen by that length predicts its exit.
  bool equalSegments = false;
};

// for (var = begin; var < end; var++) body. `var` is declared by the loop and has an integer
// type; begin and end are evaluated once, before the first iteration.
struct ForNode : StmtNode {
  Var var;
  Expr begin, end;
  Stmt body;
  LoopSchedule schedule;
  ForNode(Var v, Expr b, Expr e, Stmt s, LoopSchedule sch = {})
      : StmtNode(StmtKind::For),
        var(std::move(v)),
        begin(std::move(b)),
        end(std::move(e)),
        body(std::move(s)),
        schedule(sch) {}
};
struct WhileNode : StmtNode {
  Expr cond;
  Stmt body;
  // A step of the loop around it, not a loop of its own for interrupt checks
  // (ir/interrupt_points.hpp): it ends within the segment that loop is at (the end of a run of
  // equal coordinates, a merge's run of one operand's entries).
  bool step = false;
  WhileNode(Expr c, Stmt s, bool st = false)
      : StmtNode(StmtKind::While), cond(std::move(c)), body(std::move(s)), step(st) {}
};
// `otherwise` may be null.
struct IfNode : StmtNode {
  Expr cond;
  Stmt then, otherwise;
  IfNode(Expr c, Stmt t, Stmt e)
      : StmtNode(StmtKind::If), cond(std::move(c)), then(std::move(t)), otherwise(std::move(e)) {}
};
// Leaves the innermost enclosing For or While.
struct BreakNode : StmtNode {
  BreakNode() : StmtNode(StmtKind::Break) {}
};
struct CommentNode : StmtNode {
  std::string text;
  explicit CommentNode(std::string t) : StmtNode(StmtKind::Comment), text(std::move(t)) {}
};
// buffer = malloc(count * sizeof(elem)) (zeroed when `zero`, as calloc). The buffer variable
// must have been declared. On allocation failure (of an Allocate or a Grow) the kernel frees
// every block it allocated and has not freed yet, writes back its parameters and returns
// kOutOfMemory: one cleanup for every failure (tests/cpp/test_allocation_failure.cpp). A count
// of zero still yields a valid (non-null) pointer.
struct AllocateNode : StmtNode {
  Var buffer;
  Expr count;
  bool zero;
  AllocateNode(Var b, Expr c, bool z)
      : StmtNode(StmtKind::Allocate), buffer(std::move(b)), count(std::move(c)), zero(z) {}
};
struct FreeNode : StmtNode {
  Var buffer;
  explicit FreeNode(Var b) : StmtNode(StmtKind::Free), buffer(std::move(b)) {}
};
// Ensures buffer holds at least `needed` elements:
//   if (needed > capacity) { capacity = max(needed, 2 * capacity);
//                            buffer = realloc(buffer, capacity * sizeof(elem)); }
// New elements are not initialized. On failure: write back parameters, return kOutOfMemory.
// `capacity` is an Int64 variable. The buffer must come from malloc/realloc (kernel
// parameters that the caller allocated with malloc qualify).
struct GrowNode : StmtNode {
  Var buffer;
  Var capacity;
  Expr needed;
  GrowNode(Var b, Var c, Expr n)
      : StmtNode(StmtKind::Grow), buffer(std::move(b)), capacity(std::move(c)), needed(std::move(n)) {}
};
// Calls a function of coiter's runtime (ir/runtime_call.hpp) for its effect.
// `args` match the function's parameters: SortCoordinates takes (pointer to Int64, Int64, Int64).
struct CallNode : StmtNode {
  RuntimeFunction function;
  std::vector<Expr> args;
  CallNode(RuntimeFunction f, std::vector<Expr> a) : StmtNode(StmtKind::Call), function(f), args(std::move(a)) {}
};

// buffer[index] = buffer[index] `op` value, atomically with respect to other threads.
// `op` is Add, Min or Max; value has the buffer's element type, which is an integer or
// floating-point type (complex results are updated as two atomic float adds, real part then
// imaginary part, which is what += needs).
struct AtomicUpdateNode : StmtNode {
  BinaryOp op;
  Var buffer;
  Expr index;
  Expr value;
  AtomicUpdateNode(BinaryOp o, Var b, Expr i, Expr v)
      : StmtNode(StmtKind::AtomicUpdate), op(o), buffer(std::move(b)), index(std::move(i)), value(std::move(v)) {}
};

// A hint that buffer[index] will be read soon: the code generators emit a prefetch, which
// never faults and changes no result, so `index` may be past the buffer's end.
struct PrefetchNode : StmtNode {
  Var buffer;
  Expr index;
  PrefetchNode(Var b, Expr i) : StmtNode(StmtKind::Prefetch), buffer(std::move(b)), index(std::move(i)) {}
};

// Writes back parameters and returns `status`.
struct ReturnNode : StmtNode {
  int32_t status;
  explicit ReturnNode(int32_t s) : StmtNode(StmtKind::Return), status(s) {}
};

// ---------------------------------------------------------------------------------------------
// A kernel function.
struct Param {
  Var var;         // pointer params: pointer type; integer params: Int32 or Int64 scalar
  int slot;        // index into pointer_slots (pointer params) or integer_slots (others)
  bool writeBack;  // stored back into its slot before every Return
  // A flag counter (the coordinate violations, ir/guard_coordinates.hpp): the kernel only ever
  // adds to it to say that something happened, so a code generator may add more than once.
  bool flag = false;
};

struct Function {
  std::string name;  // a valid C identifier, unique per kernel
  std::vector<Param> params;
  Stmt body;  // must end with a Return
};

// ---------------------------------------------------------------------------------------------
// Factories. Binary/compare factories require equal operand types and throw CoiterError
// otherwise (a lowering bug, never user input). Call `ir::ref(var)` qualified: Var is a
// std::shared_ptr, so for a non-const Var an unqualified `ref(var)` picks std::ref by ADL.
Expr lit(Type t, int64_t value);                   // integer or bool literal
Expr litReal(Type t, double re, double im = 0.0);  // float or complex literal
Expr intLit(int64_t value, DType t = DType::Int64);
Expr zeroOf(DType t);  // 0 of any scalar type (false for bool)
Expr boolLit(bool value);
Expr ref(const Var& v);
Expr load(const Var& buffer, Expr index);
Expr binary(BinaryOp op, Expr a, Expr b);
Expr neg(Expr a);
Expr logicalNot(Expr a);
Expr cast(Type t, Expr a);  // returns `a` unchanged when already of type t
Expr select(Expr cond, Expr a, Expr b);

Stmt block(std::vector<Stmt> stmts);  // flattens nested blocks, drops nulls
Stmt declare(const Var& v, Expr init);
Stmt assign(const Var& v, Expr value);
Stmt store(const Var& buffer, Expr index, Expr value);
Stmt forLoop(const Var& v, Expr begin, Expr end, Stmt body, LoopSchedule schedule = {});
Expr threadId();
Expr numThreads();
Expr interruptRequested();
Stmt atomicUpdate(BinaryOp op, const Var& buffer, Expr index, Expr value);
Stmt prefetch(const Var& buffer, Expr index);
Stmt whileLoop(Expr cond, Stmt body, bool step = false);
Stmt ifThen(Expr cond, Stmt then, Stmt otherwise = nullptr);
Stmt breakLoop();
Stmt comment(const std::string& text);
Stmt allocate(const Var& buffer, Expr count, bool zero);
Stmt freeBuffer(const Var& buffer);
Stmt grow(const Var& buffer, const Var& capacity, Expr needed);
Stmt ret(int32_t status = kOk);
Stmt call(RuntimeFunction function, std::vector<Expr> args);

bool isComparison(BinaryOp op);
bool readsMemory(const Expr& e);        // whether evaluating e loads from a buffer
const char* binaryOpName(BinaryOp op);  // "add", "min", "lt", ...

// Typed downcast: as<LoadNode>(expr). The caller has checked the kind.
template <typename T, typename P>
const T& as(const std::shared_ptr<const P>& node) {
  return static_cast<const T&>(*node);
}

// Calls visit(child) on each operand expression of `e` (a load's index, a binary's two sides,
// a select's condition and branches, ...); nothing for literals, variables and thread values.
template <typename Visit>
void forEachChildExpr(const Expr& e, Visit&& visit) {
  switch (e->kind) {
    case ExprKind::Load: return visit(as<LoadNode>(e).index);
    case ExprKind::Binary: visit(as<BinaryNode>(e).a); return visit(as<BinaryNode>(e).b);
    case ExprKind::Unary: return visit(as<UnaryNode>(e).a);
    case ExprKind::Cast: return visit(as<CastNode>(e).a);
    case ExprKind::Select:
      visit(as<SelectNode>(e).cond);
      visit(as<SelectNode>(e).a);
      return visit(as<SelectNode>(e).b);
    default: return;
  }
}

// Whether `e` reads, at any depth, a variable (a VarRef, not a buffer it loads from) for which
// pick(variable) holds.
template <typename Pick>
bool refersTo(const Expr& e, Pick&& pick) {
  if (e->kind == ExprKind::VarRef) return pick(as<VarRefNode>(e).var.get());
  bool found = false;
  forEachChildExpr(e, [&](const Expr& child) { found = found || refersTo(child, pick); });
  return found;
}

// Calls visit(child) on each statement directly inside `s`: a block's statements, a loop's
// body, an if's branches (`otherwise` may be null); nothing for the other kinds. For analyses
// that act on a few statement kinds and walk through the rest.
template <typename Visit>
void forEachChildStmt(const Stmt& s, Visit&& visit) {
  switch (s->kind) {
    case StmtKind::Block:
      for (const Stmt& x : as<BlockNode>(s).stmts) visit(x);
      return;
    case StmtKind::For: return visit(as<ForNode>(s).body);
    case StmtKind::While: return visit(as<WhileNode>(s).body);
    case StmtKind::If: visit(as<IfNode>(s).then); return visit(as<IfNode>(s).otherwise);
    default: return;
  }
}

// Calls write(v) on each variable or buffer statement `s` itself writes: an assigned variable;
// a buffer stored into, updated atomically, allocated, freed or grown (and the grown array's
// capacity); a runtime call's pointer arguments (the functions write through them). Returns
// whether `s` is such a statement; declarations, loops and blocks are left to the caller (what
// they mean, a definition or a write, depends on the analysis).
template <typename Write>
bool forEachWrite(const Stmt& s, Write&& write) {
  switch (s->kind) {
    case StmtKind::Assign: write(as<AssignNode>(s).var.get()); return true;
    case StmtKind::Store: write(as<StoreNode>(s).buffer.get()); return true;
    case StmtKind::AtomicUpdate: write(as<AtomicUpdateNode>(s).buffer.get()); return true;
    case StmtKind::Allocate: write(as<AllocateNode>(s).buffer.get()); return true;
    case StmtKind::Free: write(as<FreeNode>(s).buffer.get()); return true;
    case StmtKind::Grow:
      write(as<GrowNode>(s).buffer.get());
      write(as<GrowNode>(s).capacity.get());
      return true;
    case StmtKind::Call:
      for (const Expr& a : as<CallNode>(s).args) {
        if (a->kind == ExprKind::VarRef) write(as<VarRefNode>(a).var.get());
      }
      return true;
    default: return false;
  }
}

// Whether two expressions compute the same value the same way: equal literals, the same
// variables, loads of one array at indices that are the same (a statement that loads a
// coordinate twice records it in a flag once; a loop that reads one element at every entry
// reads it once, ir/invariant_loads.hpp).
bool sameExpr(const Expr& a, const Expr& b);

// The buffers `s` allocates (Allocate statements anywhere inside), each once, in the order of
// their first Allocate: what an allocation failure must free (ir.hpp, AllocateNode).
std::vector<Var> allocatedBuffers(const Stmt& s);

}  // namespace coiter::ir
