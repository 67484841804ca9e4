#include "codegen/cuda_codegen.hpp"

#include <algorithm>
#include <functional>

#include "util/errors.hpp"

namespace coiter::codegen {

using namespace ir;

namespace {

// visit(x) for `s` and every statement inside it, in program order.
void forEachStmt(const Stmt& s, const std::function<void(const Stmt&)>& visit) {
  if (!s) return;
  visit(s);
  forEachChildStmt(s, [&](const Stmt& child) { forEachStmt(child, visit); });
}

bool containsGpuLoop(const Stmt& s) {
  bool found = false;
  forEachStmt(s, [&](const Stmt& x) {
    found = found || (x->kind == StmtKind::For && isGpuLoop(as<ForNode>(x).schedule.kind));
  });
  return found;
}

std::vector<Stmt> statementsOf(const Stmt& s) {
  if (!s) return {};
  if (s->kind == StmtKind::Block) return as<BlockNode>(s).stmts;
  return {s};
}

int countRefs(const Expr& e, const VarNode* v) {
  if (e->kind == ExprKind::VarRef) return as<VarRefNode>(e).var.get() == v;
  int n = 0;
  forEachChildExpr(e, [&](const Expr& child) { n += countRefs(child, v); });
  return n;
}

// Every read of `v` in the expressions of `s`.
int countRefs(const Stmt& s, const VarNode* v) {
  int n = 0;
  forEachStmt(s, [&](const Stmt& x) {
    switch (x->kind) {
      case StmtKind::Declare:
        if (as<DeclareNode>(x).init) n += countRefs(as<DeclareNode>(x).init, v);
        break;
      case StmtKind::Assign: n += countRefs(as<AssignNode>(x).value, v); break;
      case StmtKind::Store: n += countRefs(as<StoreNode>(x).index, v) + countRefs(as<StoreNode>(x).value, v); break;
      case StmtKind::AtomicUpdate:
        n += countRefs(as<AtomicUpdateNode>(x).index, v) + countRefs(as<AtomicUpdateNode>(x).value, v);
        break;
      case StmtKind::For: n += countRefs(as<ForNode>(x).begin, v) + countRefs(as<ForNode>(x).end, v); break;
      case StmtKind::While: n += countRefs(as<WhileNode>(x).cond, v); break;
      case StmtKind::If: n += countRefs(as<IfNode>(x).cond, v); break;
      default: break;
    }
  });
  return n;
}

bool isZeroLiteral(const Expr& e) {
  if (!e || e->kind != ExprKind::Literal) return false;
  const auto& l = as<LiteralNode>(e);
  return l.intValue == 0 && l.real == 0.0 && l.imag == 0.0;
}

const char* unitName(LoopKind k) {
  switch (k) {
    case LoopKind::GpuBlock: return "gpu_block";
    case LoopKind::GpuWarp: return "gpu_warp";
    case LoopKind::GpuThread: return "gpu_thread";
    default: return "grid";
  }
}

// The type __shfl_xor_sync moves a value of type t as.
const char* shuffleType(DType t) {
  switch (t) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Int64: return "long long";
    case DType::UInt64: return "unsigned long long";
    case DType::UInt32: return "unsigned";
    default: return "int";
  }
}

}  // namespace

CudaPrinter::CudaPrinter(const Function& f) : CPrinter(f) {
  expr().setFunctionQualifier("static __device__ __forceinline__");
  forEachStmt(f.body, [&](const Stmt& s) {
    if (s->kind == StmtKind::Declare) declarations_[as<DeclareNode>(s).var.get()] = as<DeclareNode>(s).init;
    if (s->kind == StmtKind::Assign) ++assignments_[as<AssignNode>(s).var.get()];
  });
}

bool CudaPrinter::isFlag(const Var& buffer) const {
  for (const Param& p : function().params) {
    if (p.var == buffer) return p.flag;
  }
  return false;
}

void CudaPrinter::refuse(const std::string& what) const {
  throw CompileError("target='cuda': kernel " + function().name + " " + what);
}

std::string CudaPrinter::preamble() {
  if (expr().usesComplex()) refuse("computes with complex values, which the CUDA printer does not support yet");
  if (expr().usesOpenmp()) refuse("uses CPU thread numbers (a per-thread result copy), which a GPU has no use for");
  if (!expr().runtimeUsed().empty()) refuse("uses coiter's host runtime (" + *expr().runtimeUsed().begin() + ")");
  std::ostringstream out;
  // NVRTC compiles without the C library's headers: the fixed-width types and the macros the
  // C printer's expressions use are defined here; math functions are NVRTC built-ins.
  out << "typedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long long int64_t;\n"
      << "typedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
      << "typedef unsigned long long uint64_t;\n"
      << "#ifndef NULL\n#define NULL 0\n#endif\n"
      << "#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fffffff)\n";
  int pointers = 1, integers = 1;
  for (const Param& p : function().params) {
    if (p.var->type.pointer)
      pointers = std::max(pointers, p.slot + 1);
    else
      integers = std::max(integers, p.slot + 1);
  }
  // The launcher (runtime/cuda_launch.cpp) fills this struct: device pointers, then integers.
  // (Numbers are formatted by std::to_string: an ostream's number formatting depends on the
  // process's locale, which a host application may have replaced.)
  out << "struct coiter_args {\n  void* p[" + std::to_string(pointers) + "];\n  int64_t i[" + std::to_string(integers) +
             "];\n  int32_t* status;\n};\n";
  for (const std::string& helper : expr().helpers()) out << '\n' << helper;
  for (const std::string& helper : deviceHelpers_) out << '\n' << helper;
  return out.str();
}

std::string CudaPrinter::signature() {
  return "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(shape_.blockSize) + ")\n" +
         function().name + "(const struct coiter_args args)";
}

void CudaPrinter::bodyPrologue() {
  line("void* const* pointer_slots = args.p;");
  line("const int64_t* integer_slots = args.i;");
}

void CudaPrinter::functionBody(const BlockNode& body) {
  bool gpu = false;
  for (const Stmt& s : body.stmts) gpu = gpu || containsGpuLoop(s);
  shape_.singleThread = !gpu;
  if (!gpu) return CPrinter::functionBody(body);  // one thread runs it as the CPU would
  unitStatements(body.stmts, LoopKind::Serial);
}

std::string CudaPrinter::sideEffect(const Stmt& s, bool skipGpuLoops) const {
  std::string found;
  std::function<void(const Stmt&)> visit = [&](const Stmt& x) {
    if (!x || !found.empty()) return;
    switch (x->kind) {
      case StmtKind::Store: found = "stores into " + as<StoreNode>(x).buffer->name; return;
      case StmtKind::AtomicUpdate: {
        const Var& b = as<AtomicUpdateNode>(x).buffer;
        if (!isFlag(b)) found = "updates " + b->name + " atomically";  // more flag increments say the same
        return;
      }
      case StmtKind::Call: found = "calls a runtime function"; return;
      case StmtKind::Allocate: found = "allocates " + as<AllocateNode>(x).buffer->name; return;
      case StmtKind::Free: found = "frees " + as<FreeNode>(x).buffer->name; return;
      case StmtKind::Grow: found = "grows " + as<GrowNode>(x).buffer->name; return;
      case StmtKind::For:
        if (skipGpuLoops && isGpuLoop(as<ForNode>(x).schedule.kind)) return;
        return visit(as<ForNode>(x).body);
      default: return forEachChildStmt(x, visit);
    }
  };
  visit(s);
  return found;
}

void CudaPrinter::unitStatements(const std::vector<Stmt>& stmts, LoopKind unit) {
  int last = -1;
  for (size_t k = 0; k < stmts.size(); ++k) {
    if (containsGpuLoop(stmts[k])) last = static_cast<int>(k);
  }
  const std::string where = unit == LoopKind::Serial ? "the kernel" : std::string("a ") + unitName(unit) + " loop";
  for (int k = 0; k <= last; ++k) {
    const Stmt& s = stmts[k];
    if (!containsGpuLoop(s)) {
      // Run by every thread of the unit: it may only compute locals.
      std::string effect = sideEffect(s, false);
      if (!effect.empty()) refuse(effect + " in " + where + " before its inner GPU loop, where every thread runs it");
      stmt(s);
      continue;
    }
    std::string effect = sideEffect(s, true);
    switch (s->kind) {
      case StmtKind::Block: unitStatements(as<BlockNode>(s).stmts, unit); break;
      case StmtKind::For: {
        const auto& n = as<ForNode>(s);
        if (isGpuLoop(n.schedule.kind)) {
          gpuLoop(n);
          break;
        }
        // A serial loop around GPU loops: every thread of the unit runs it, in step.
        std::string T = expr().type(n.var->type);
        std::string end = freshName(n.var->name + "_end");
        line("const " + T + " " + end + " = " + expr().print(n.end) + ";");
        line("for (" + T + " " + n.var->name + " = " + expr().print(n.begin) + "; " + n.var->name + " < " + end + "; " +
             n.var->name + "++) {");
        ++indent_;
        unitStatements(statementsOf(n.body), unit);
        --indent_;
        line("}");
        break;
      }
      case StmtKind::While: {
        line("while (" + expr().print(as<WhileNode>(s).cond) + ") {");
        ++indent_;
        unitStatements(statementsOf(as<WhileNode>(s).body), unit);
        --indent_;
        line("}");
        break;
      }
      case StmtKind::If: {
        const auto& n = as<IfNode>(s);
        line("if (" + expr().print(n.cond) + ") {");
        ++indent_;
        unitStatements(statementsOf(n.then), unit);
        --indent_;
        if (n.otherwise) {
          line("} else {");
          ++indent_;
          unitStatements(statementsOf(n.otherwise), unit);
          --indent_;
        }
        line("}");
        break;
      }
      default: refuse("has a GPU loop inside a statement it cannot print (a lowering bug)");
    }
  }
  // After the last inner GPU loop: once per iteration of the unit.
  std::vector<Stmt> suffix(stmts.begin() + (last + 1), stmts.end());
  std::string effect;
  for (const Stmt& s : suffix) {
    if (effect.empty()) effect = sideEffect(s, false);
  }
  if (effect.empty()) {
    for (const Stmt& s : suffix) stmt(s);
    return;
  }
  if (unit == LoopKind::Serial) {
    refuse(effect + " after its GPU loops; a GPU kernel cannot order that after all of its threads");
  }
  line(unit == LoopKind::GpuBlock ? "if (threadIdx.x == 0) {" : "if ((threadIdx.x & 31) == 0) {");
  ++indent_;
  for (const Stmt& s : suffix) stmt(s);
  --indent_;
  line("}");
}

void CudaPrinter::gpuLoop(const ForNode& n) {
  LoopKind kind = n.schedule.kind;
  LoopKind parent = units_.empty() ? LoopKind::Serial : units_.back();
  std::string start, step;
  switch (kind) {
    case LoopKind::GpuBlock:
      if (parent != LoopKind::Serial) refuse("nests a gpu_block loop inside another GPU loop");
      start = "(int64_t)blockIdx.x";
      step = "(int64_t)gridDim.x";
      break;
    case LoopKind::GpuWarp:
      if (parent == LoopKind::GpuBlock) {
        start = "(int64_t)(threadIdx.x >> 5)";
        step = "(int64_t)(blockDim.x >> 5)";
      } else if (parent == LoopKind::Serial) {
        start = "(((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5)";
        step = "(((int64_t)gridDim.x * blockDim.x) >> 5)";
      } else {
        refuse("nests a gpu_warp loop inside a " + std::string(unitName(parent)) + " loop");
      }
      break;
    case LoopKind::GpuThread:
      if (parent == LoopKind::GpuWarp) {
        start = "(int64_t)(threadIdx.x & 31)";
        step = "32";
      } else if (parent == LoopKind::GpuBlock) {
        start = "(int64_t)threadIdx.x";
        step = "(int64_t)blockDim.x";
      } else if (parent == LoopKind::Serial) {
        start = "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)";
        step = "((int64_t)gridDim.x * blockDim.x)";
      } else {
        refuse("nests a gpu_thread loop inside another gpu_thread loop");
      }
      break;
    default: refuse("prints a loop that is not a GPU loop as one (a lowering bug)");
  }
  const std::string& v = n.var->name;
  std::string T = expr().type(n.var->type);
  std::string begin = freshName(v + "_begin"), end = freshName(v + "_end");
  line("const " + T + " " + begin + " = " + expr().print(n.begin) + ";");
  line("const " + T + " " + end + " = " + expr().print(n.end) + ";");
  line("// " + std::string(unitName(kind)) + " loop: each " +
       (kind == LoopKind::GpuBlock  ? "block"
        : kind == LoopKind::GpuWarp ? "warp"
                                    : "thread") +
       " takes every step-th iteration");
  line("for (" + T + " " + v + " = " + begin + " + (" + T + ")" + start + "; " + v + " < " + end + "; " + v + " += (" +
       T + ")" + step + ") {");
  units_.push_back(kind);
  ++indent_;
  if (kind == LoopKind::GpuThread) {
    for (const Stmt& s : statementsOf(n.body)) stmt(s);
  } else {
    unitStatements(statementsOf(n.body), kind);
  }
  --indent_;
  units_.pop_back();
  line("}");
  if (n.schedule.reduction) reduceAfter(n, parent);
}

void CudaPrinter::reduceAfter(const ForNode& loop, LoopKind parent) {
  if (loop.schedule.kind != LoopKind::GpuThread) {
    refuse("reduces across the iterations of a " + std::string(unitName(loop.schedule.kind)) +
           " loop; parallel_reduction applies to gpu_thread loops");
  }
  if (parent != LoopKind::GpuWarp && parent != LoopKind::GpuBlock) {
    refuse("reduces across a gpu_thread loop that is not inside a gpu_warp or gpu_block loop");
  }
  std::set<const VarNode*> declaredInside;
  std::map<const VarNode*, std::vector<const AssignNode*>> updates;
  std::vector<Var> order;
  forEachStmt(loop.body, [&](const Stmt& s) {
    if (s->kind == StmtKind::Declare) declaredInside.insert(as<DeclareNode>(s).var.get());
    if (s->kind == StmtKind::For) declaredInside.insert(as<ForNode>(s).var.get());
  });
  forEachStmt(loop.body, [&](const Stmt& s) {
    if (s->kind != StmtKind::Assign) return;
    const auto& a = as<AssignNode>(s);
    if (declaredInside.count(a.var.get())) return;
    if (!updates.count(a.var.get())) order.push_back(a.var);
    updates[a.var.get()].push_back(&a);
  });
  for (const Var& v : order) {
    const auto& assigns = updates[v.get()];
    std::string why;
    std::string op;
    for (const AssignNode* a : assigns) {
      const Expr& value = a->value;
      bool form = value->kind == ExprKind::Binary && as<BinaryNode>(value).a->kind == ExprKind::VarRef &&
                  as<VarRefNode>(as<BinaryNode>(value).a).var == v && countRefs(as<BinaryNode>(value).b, v.get()) == 0;
      std::string thisOp;
      if (form) {
        BinaryOp b = as<BinaryNode>(value).op;
        if (b == BinaryOp::Add) thisOp = "add";
        if (b == BinaryOp::Or) thisOp = "or";
      }
      if (thisOp.empty() || (!op.empty() && op != thisOp)) why = "is not updated as v = v + e or v = v | e";
      op = thisOp;
    }
    DType t = v->type.elem;
    if (why.empty() && op == "add" && (isComplex(t) || t == DType::Bool)) why = "has a type a sum cannot reduce";
    if (why.empty() && op == "or" && !isInteger(t) && t != DType::Bool) why = "is not an integer or bool";
    if (why.empty() && countRefs(loop.body, v.get()) != static_cast<int>(assigns.size())) {
      why = "is read inside the loop, where each thread holds only its part";
    }
    if (why.empty() && assignments_[v.get()] != static_cast<int>(assigns.size()))
      why = "is assigned outside the loop too";
    if (why.empty() && (!declarations_.count(v.get()) || !isZeroLiteral(declarations_[v.get()]))) {
      why = "does not start at the reduction's identity (zero)";
    }
    if (!why.empty()) {
      refuse("reduces '" + v->name + "' across the threads of a gpu_thread loop, but '" + v->name + "' " + why);
    }
    line(v->name + " = " + reductionHelper(op, t, parent) + "(" + v->name + ");");
  }
}

std::string CudaPrinter::reductionHelper(const std::string& op, DType t, LoopKind over) {
  std::string T = expr().type(scalar(t));
  std::string suffix = op + "_" + std::string(dtypeName(t));
  std::string warp = "coiter_warp_" + suffix;
  std::string combine = op == "add" ? " + " : " | ";
  if (!deviceHelperNames_.count(warp)) {
    deviceHelperNames_[warp] = true;
    std::string S = shuffleType(t);
    deviceHelpers_.push_back("// Every lane of the warp gets the " + std::string(op == "add" ? "sum" : "bitwise or") +
                             " of the lanes' values (butterfly shuffles).\n"
                             "static __device__ __forceinline__ " +
                             T + " " + warp + "(" + T + " v) {\n" +
                             "  for (int offset = 16; offset > 0; offset >>= 1)\n" + "    v = (" + T + ")(v" + combine +
                             "(" + T + ")__shfl_xor_sync(0xffffffffu, (" + S + ")v, offset));\n  return v;\n}\n");
  }
  if (over == LoopKind::GpuWarp) return warp;
  std::string block = "coiter_block_" + suffix;
  if (!deviceHelperNames_.count(block)) {
    deviceHelperNames_[block] = true;
    deviceHelpers_.push_back(
        "// Every thread of the block gets the total: warps reduce, their first lanes meet in\n"
        "// shared memory, and every warp reduces the warps' totals.\n"
        "static __device__ " +
        T + " " + block + "(" + T + " v) {\n" + "  __shared__ " + T + " partial[32];\n" + "  v = " + warp + "(v);\n" +
        "  __syncthreads();  // an earlier reduction may still read partial\n" +
        "  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;\n" + "  __syncthreads();\n" +
        "  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? partial[threadIdx.x & 31] : (" + T + ")0;\n" + "  return " +
        warp + "(v);\n}\n");
  }
  return block;
}

std::string CudaPrinter::warpAggregatedAdd(DType t) {
  std::string T = expr().type(scalar(t));
  std::string name = "coiter_atomic_add_" + std::string(dtypeName(t));
  if (deviceHelperNames_.count(name)) return name;
  deviceHelperNames_[name] = true;
  deviceHelpers_.push_back(
      "// *p += v, atomically. When every lane running this together adds to the same address (the\n"
      "// chunks of one long row, in a nonzero-balanced loop), the lanes' values are summed first\n"
      "// and one atomic is issued instead of up to 32 contending for that address.\n"
      "static __device__ __forceinline__ void " +
      name + "(" + T + "* p, " + T + " v) {\n" + "  const unsigned mask = __activemask();\n" +
      "  const int leader = __ffs(mask) - 1;\n" + "  const unsigned long long mine = (unsigned long long)p;\n" +
      "  if (__all_sync(mask, __shfl_sync(mask, mine, leader) == mine)) {\n" + "    " + T + " sum = 0;\n" +
      "    for (unsigned m = mask; m; m &= m - 1) sum += __shfl_sync(mask, v, __ffs(m) - 1);\n" +
      "    if ((int)(threadIdx.x & 31) == leader) atomicAdd(p, sum);\n" + "  } else {\n    atomicAdd(p, v);\n  }\n}\n");
  return name;
}

CPrinter::LoopPragma CudaPrinter::loopPragma(const ForNode& n) {
  if (n.schedule.kind == LoopKind::Parallel || n.schedule.kind == LoopKind::Vectorized) {
    refuse("has a CPU-parallel loop over '" + n.var->name + "' (a lowering bug: target='cuda' schedules GPU units)");
  }
  if (n.schedule.unroll > 0) return {"#pragma unroll " + std::to_string(n.schedule.unroll), false};
  return {"", false};
}

void CudaPrinter::forLoop(const ForNode& n) {
  if (isGpuLoop(n.schedule.kind)) return gpuLoop(n);
  CPrinter::forLoop(n);
}

void CudaPrinter::atomicUpdate(const AtomicUpdateNode& n) {
  DType t = n.buffer->type.elem;
  std::string target = "&" + n.buffer->name + "[" + expr().print(n.index) + "]";
  std::string value = expr().print(n.value);
  auto emit = [&](const std::string& fn, const std::string& T) {
    line(fn + "((" + T + "*)" + target + ", (" + T + ")(" + value + "));");
  };
  if (n.op == BinaryOp::Add && !isFlag(n.buffer) && (t == DType::Float32 || t == DType::Float64)) {
    return emit(warpAggregatedAdd(t), t == DType::Float32 ? "float" : "double");
  }
  if (n.op == BinaryOp::Add) {
    switch (t) {
      case DType::Float32: return emit("atomicAdd", "float");
      case DType::Float64: return emit("atomicAdd", "double");
      case DType::Int32: return emit("atomicAdd", "int");
      case DType::UInt32: return emit("atomicAdd", "unsigned");
      case DType::Int64:
      case DType::UInt64: return emit("atomicAdd", "unsigned long long");  // two's complement
      default: break;
    }
  } else if (n.op == BinaryOp::Min || n.op == BinaryOp::Max) {
    std::string fn = n.op == BinaryOp::Min ? "atomicMin" : "atomicMax";
    switch (t) {
      case DType::Int32: return emit(fn, "int");
      case DType::UInt32: return emit(fn, "unsigned");
      case DType::Int64: return emit(fn, "long long");
      case DType::UInt64: return emit(fn, "unsigned long long");
      default: break;
    }
  }
  refuse(std::string("updates ") + n.buffer->name + " with an atomic " + binaryOpName(n.op) + " of " + dtypeName(t) +
         " values, which the GPU printer does not support yet");
}

void CudaPrinter::runtimeCall(const CallNode&) {
  refuse("calls a runtime function (sorting or hashing for a sparse result or workspace), which runs on the host only");
}

void CudaPrinter::allocate(const AllocateNode& n) {
  refuse("allocates " + n.buffer->name +
         " (a workspace or a per-thread result copy); allocation runs on the "
         "host only");
}

void CudaPrinter::grow(const GrowNode& n) {
  refuse("grows " + n.buffer->name + " (sparse result assembly); growing arrays runs on the host only");
}

void CudaPrinter::writeBackAndReturn(int32_t status) {
  if (status != kOk) line("atomicExch(args.status, " + std::to_string(status) + ");");
  line("return;");
}

CudaSource printCuda(const Function& f) {
  CudaPrinter printer(f);
  std::string text = printer.print();
  return {text, printer.shape()};
}

}  // namespace coiter::codegen
