// The C printer: statements map one to one onto C statements, except that memory statements
// expand into their allocation-failure paths and a For whose bound could change inside the
// body evaluates the bound once, as ir.hpp requires. Loop schedules become OpenMP pragmas
// (c_loop_pragmas.hpp). Expressions go through CExprPrinter.
#include "codegen/c_codegen.hpp"

#include <algorithm>

#include "codegen/c_loop_pragmas.hpp"
#include "ir/parallel_rules.hpp"
#include "ir/visitor.hpp"
#include "runtime/runtime_functions.hpp"
#include "util/errors.hpp"

namespace coiter::codegen {

using namespace ir;

namespace {

bool isIdentifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool exprEqual(const Expr& x, const Expr& y) {
  if (x == y) return true;
  if (x->kind != y->kind || x->type != y->type) return false;
  switch (x->kind) {
    case ExprKind::Literal: {
      auto &a = as<LiteralNode>(x), &b = as<LiteralNode>(y);
      return a.intValue == b.intValue && a.real == b.real && a.imag == b.imag;
    }
    case ExprKind::VarRef: return as<VarRefNode>(x).var == as<VarRefNode>(y).var;
    case ExprKind::Load: {
      auto &a = as<LoadNode>(x), &b = as<LoadNode>(y);
      return a.buffer == b.buffer && exprEqual(a.index, b.index);
    }
    case ExprKind::Binary: {
      auto &a = as<BinaryNode>(x), &b = as<BinaryNode>(y);
      return a.op == b.op && exprEqual(a.a, b.a) && exprEqual(a.b, b.b);
    }
    case ExprKind::Unary: {
      auto &a = as<UnaryNode>(x), &b = as<UnaryNode>(y);
      return a.op == b.op && exprEqual(a.a, b.a);
    }
    case ExprKind::Cast: return exprEqual(as<CastNode>(x).a, as<CastNode>(y).a);
    case ExprKind::Select: {
      auto &a = as<SelectNode>(x), &b = as<SelectNode>(y);
      return exprEqual(a.cond, b.cond) && exprEqual(a.a, b.a) && exprEqual(a.b, b.b);
    }
    case ExprKind::ThreadId:
    case ExprKind::NumThreads:
    case ExprKind::InterruptRequested: return true;
  }
  return false;
}

// What a loop body may change: variables it assigns, and element types it stores (a store
// through one pointer may alias any other pointer of the same element type).
struct Effects {
  std::set<const VarNode*> vars;
  std::set<DType> stored;
};

void collectEffects(const Stmt& s, Effects& e) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Block:
      for (const Stmt& x : as<BlockNode>(s).stmts) collectEffects(x, e);
      break;
    case StmtKind::Assign: e.vars.insert(as<AssignNode>(s).var.get()); break;
    case StmtKind::Store: e.stored.insert(as<StoreNode>(s).buffer->type.elem); break;
    case StmtKind::AtomicUpdate: e.stored.insert(as<AtomicUpdateNode>(s).buffer->type.elem); break;
    case StmtKind::For:
      e.vars.insert(as<ForNode>(s).var.get());
      collectEffects(as<ForNode>(s).body, e);
      break;
    case StmtKind::While: collectEffects(as<WhileNode>(s).body, e); break;
    case StmtKind::If:
      collectEffects(as<IfNode>(s).then, e);
      collectEffects(as<IfNode>(s).otherwise, e);
      break;
    case StmtKind::Allocate: e.vars.insert(as<AllocateNode>(s).buffer.get()); break;
    case StmtKind::Free: e.vars.insert(as<FreeNode>(s).buffer.get()); break;
    case StmtKind::Grow:
      e.vars.insert(as<GrowNode>(s).buffer.get());
      e.vars.insert(as<GrowNode>(s).capacity.get());
      break;
    case StmtKind::Call:  // runtime functions write through their pointer arguments
      for (const Expr& a : as<CallNode>(s).args) {
        if (a->type.pointer) e.stored.insert(a->type.elem);
      }
      break;
    case StmtKind::Declare:
    case StmtKind::Break:
    case StmtKind::Comment:
    case StmtKind::Return:
    case StmtKind::Prefetch: break;
  }
}

// Whether `s` reads its thread's number anywhere.
bool usesThreadId(const Stmt& s) {
  class Finder : public IRVisitor {
   public:
    bool found = false;

   protected:
    void visitThreadId(const ThreadIdNode&) override { found = true; }
  } finder;
  finder.visit(s);
  return finder.found;
}

bool dependsOn(const Expr& x, const Effects& e) {
  switch (x->kind) {
    case ExprKind::Literal:
    case ExprKind::ThreadId:
    case ExprKind::NumThreads:
    case ExprKind::InterruptRequested: return false;
    case ExprKind::VarRef: return e.vars.count(as<VarRefNode>(x).var.get()) > 0;
    case ExprKind::Load: {
      auto& l = as<LoadNode>(x);
      return e.vars.count(l.buffer.get()) || e.stored.count(l.buffer->type.elem) || dependsOn(l.index, e);
    }
    case ExprKind::Binary: return dependsOn(as<BinaryNode>(x).a, e) || dependsOn(as<BinaryNode>(x).b, e);
    case ExprKind::Unary: return dependsOn(as<UnaryNode>(x).a, e);
    case ExprKind::Cast: return dependsOn(as<CastNode>(x).a, e);
    case ExprKind::Select: {
      auto& s = as<SelectNode>(x);
      return dependsOn(s.cond, e) || dependsOn(s.a, e) || dependsOn(s.b, e);
    }
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names.

void CPrinter::addName(const Var& v) {
  if (!isIdentifier(v->name)) throw CoiterError("C printer: '" + v->name + "' is not a C identifier");
  if (v->name.rfind("coiter_", 0) == 0 || v->name == "pointer_slots" || v->name == "integer_slots")
    throw CoiterError("C printer: variable name '" + v->name + "' is reserved for generated code");
  names_.insert(v->name);
}

void CPrinter::collectNames(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Block:
      for (const Stmt& x : as<BlockNode>(s).stmts) collectNames(x);
      break;
    case StmtKind::Declare: addName(as<DeclareNode>(s).var); break;
    case StmtKind::For:
      addName(as<ForNode>(s).var);
      collectNames(as<ForNode>(s).body);
      break;
    case StmtKind::While: collectNames(as<WhileNode>(s).body); break;
    case StmtKind::If:
      collectNames(as<IfNode>(s).then);
      collectNames(as<IfNode>(s).otherwise);
      break;
    default: break;  // other statements only use variables declared elsewhere
  }
}

const std::string* CPrinter::ownedName(const VarNode* buffer) const {
  for (const auto& [b, name] : owned_) {
    if (b == buffer) return &name;
  }
  return nullptr;
}

std::string CPrinter::freshName(const std::string& base) {
  std::string name = base;
  for (int i = 1; names_.count(name); i++) name = base + std::to_string(i);
  names_.insert(name);  // a name declared in a block must not be declared there again
  return name;
}

// ---------------------------------------------------------------------------------------------
// Statements.

void CPrinter::line(const std::string& text) { body_ << std::string(2 * indent_, ' ') << text << '\n'; }

void CPrinter::nested(const Stmt& s) {
  ++indent_;
  if (s->kind == StmtKind::Block) {
    for (const Stmt& x : as<BlockNode>(s).stmts) stmt(x);
  } else {
    stmt(s);
  }
  --indent_;
}

// target = value, printed as `target op= rhs` (or `target++`) when value is `target op rhs`.
void CPrinter::update(const std::string& target, const Expr& value, const std::function<bool(const Expr&)>& isTarget) {
  if (value->kind == ExprKind::Binary && isTarget(as<BinaryNode>(value).a)) {
    auto& b = as<BinaryNode>(value);
    DType t = b.type.elem;
    const char* op = nullptr;
    if (t != DType::Bool) {
      if (b.op == BinaryOp::Add) op = " += ";
      if (b.op == BinaryOp::Sub) op = " -= ";
      if (b.op == BinaryOp::Mul) op = " *= ";
      if (b.op == BinaryOp::Div && !isInteger(t)) op = " /= ";
    }
    if (op && b.op == BinaryOp::Add && isInteger(t) && b.b->kind == ExprKind::Literal &&
        as<LiteralNode>(b.b).intValue == 1) {
      return line(target + "++;");
    }
    if (op) return line(target + op + e_.print(b.b) + ";");
  }
  line(target + " = " + e_.print(value) + ";");
}

void CPrinter::stmt(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Block:
      line("{");
      nested(s);
      line("}");
      return;
    case StmtKind::Declare: {
      auto& d = as<DeclareNode>(s);
      std::string init = d.init ? e_.print(d.init) : d.var->type.pointer ? "NULL" : "0";
      return line(e_.type(d.var->type) + " " + d.var->name + " = " + init + ";");
    }
    case StmtKind::Assign: {
      auto& a = as<AssignNode>(s);
      return update(a.var->name, a.value,
                    [&](const Expr& e) { return e->kind == ExprKind::VarRef && as<VarRefNode>(e).var == a.var; });
    }
    case StmtKind::Store: {
      auto& st = as<StoreNode>(s);
      return update(st.buffer->name + "[" + e_.print(st.index) + "]", st.value, [&](const Expr& e) {
        return e->kind == ExprKind::Load && as<LoadNode>(e).buffer == st.buffer &&
               exprEqual(as<LoadNode>(e).index, st.index);
      });
    }
    case StmtKind::For: return forLoop(as<ForNode>(s));
    case StmtKind::While:
      line("while (" + e_.print(as<WhileNode>(s).cond) + ") {");
      nested(as<WhileNode>(s).body);
      return line("}");
    case StmtKind::If: return ifChain(as<IfNode>(s));
    case StmtKind::Break: return line("break;");
    case StmtKind::Comment: return comment(as<CommentNode>(s).text);
    case StmtKind::Allocate: return allocate(as<AllocateNode>(s));
    case StmtKind::Free: {
      const Var& buffer = as<FreeNode>(s).buffer;
      line("free(" + buffer->name + ");");
      if (const std::string* owned = ownedName(buffer.get())) line(*owned + " = NULL;");
      return;
    }
    case StmtKind::Grow: return grow(as<GrowNode>(s));
    case StmtKind::Return: {
      // A kernel that stops early (interrupted, a structure mismatch) frees what it owns.
      int32_t status = as<ReturnNode>(s).status;
      if (status != kOk) freeOwned();
      return writeBackAndReturn(status);
    }
    case StmtKind::Call: return runtimeCall(as<CallNode>(s));
    case StmtKind::AtomicUpdate: return atomicUpdate(as<AtomicUpdateNode>(s));
    case StmtKind::Prefetch: {
      auto& n = as<PrefetchNode>(s);
      return line("__builtin_prefetch(&" + n.buffer->name + "[" + e_.print(n.index) + "]);");
    }
  }
  throw CoiterError("C printer: unknown statement kind");
}

void CPrinter::forLoop(const ForNode& n) {
  const std::string& v = n.var->name;
  LoopPragma pragma = loopPragma(n);
  std::string init = e_.type(n.var->type) + " " + v + " = " + e_.print(n.begin);
  std::string bound = e_.operand(n.end, kComparisonOperand);
  // C re-evaluates the condition every iteration; the IR evaluates `end` once. Keep it in the
  // condition only when the body cannot change it, which is the common (readable) case.
  // OpenMP loops must declare only their variable, so their bound goes before the pragma.
  Effects effects;
  effects.vars.insert(n.var.get());
  collectEffects(n.body, effects);
  if (dependsOn(n.end, effects)) {
    std::string name = freshName(v + "_end");
    if (pragma.openmp)
      line(e_.type(n.end->type) + " " + name + " = " + e_.print(n.end) + ";");
    else
      init += ", " + name + " = " + e_.print(n.end);
    bound = name;
  }
  if (pragma.openmp && n.schedule.kind == LoopKind::Parallel && n.schedule.dynamic && n.schedule.chunk == 0) {
    // OpenMP's dynamic default is one iteration per chunk; the runtime's choice (about 16
    // chunks per thread, runtime/parallel_runtime.cpp) keeps both engines alike.
    std::string chunk = freshName(v + "_chunk");
    line("int64_t " + chunk + " = ((int64_t)(" + bound + ") - (int64_t)(" + e_.print(n.begin) +
         ") - 1) / (16 * coiter_rt_num_threads()) + 1;");
    pragma.text = parallelForPragma(n.schedule, chunk);
  }
  if (!pragma.text.empty()) line(pragma.text);
  line("for (" + init + "; " + v + " < " + bound + "; " + v + "++) {");
  bool wasParallel = inParallelLoop_, wasSimd = inSimdLoop_;
  inParallelLoop_ = wasParallel || n.schedule.kind == LoopKind::Parallel;
  inSimdLoop_ = wasSimd || (pragma.openmp && n.schedule.kind == LoopKind::Vectorized);
  // The body of a parallel loop reads its thread's number once: C compilers do not move the
  // call out of an inner loop that may leave early (a row that stops at a bad coordinate),
  // and a transposed product's private copy is indexed by it at every entry.
  std::string outerThread = e_.threadVariable();
  bool threadOnce = pragma.openmp && n.schedule.kind == LoopKind::Parallel && !wasParallel && usesThreadId(n.body);
  if (threadOnce) {
    std::string thread = freshName("coiter_thread");
    line("  const int64_t " + thread + " = " + e_.print(threadId()) + ";");
    e_.setThreadVariable(thread);
  }
  nested(n.body);
  e_.setThreadVariable(outerThread);
  inParallelLoop_ = wasParallel;
  inSimdLoop_ = wasSimd;
  line("}");
}

CPrinter::LoopPragma CPrinter::loopPragma(const ForNode& n) {
  const LoopSchedule& schedule = n.schedule;
  if (schedule.kind == LoopKind::Parallel && !inParallelLoop_) {
    e_.useRuntime(runtimeFunction(RuntimeFunction::NumThreads).name);
    return {parallelForPragma(schedule), true};
  }
  if (schedule.kind == LoopKind::Vectorized && !inSimdLoop_) {
    if (std::optional<std::string> simd = simdPragma(n)) return {*simd, true};
  }
  // Unrolling is a hint for serial and vectorized loops only.
  if (schedule.unroll > 0 && schedule.kind != LoopKind::Parallel) return {unrollPragma(schedule.unroll), false};
  return {"", false};
}

void CPrinter::atomicUpdate(const AtomicUpdateNode& n) {
  DType t = n.buffer->type.elem;
  std::string target = n.buffer->name + "[" + e_.print(n.index) + "]";
  if (n.op == BinaryOp::Add && !isComplex(t)) {
    line("#pragma omp atomic");
    return line(target + " += " + e_.print(n.value) + ";");
  }
  line(e_.atomicHelper(n.op, t) + "(&" + target + ", " + e_.print(n.value) + ");");
}

void CPrinter::ifChain(const IfNode& first) {
  const IfNode* n = &first;
  line("if (" + e_.print(n->cond) + ") {");
  while (true) {
    nested(n->then);
    if (!n->otherwise) break;
    Stmt e = n->otherwise;
    if (e->kind == StmtKind::Block && as<BlockNode>(e).stmts.size() == 1) e = as<BlockNode>(e).stmts[0];
    if (e->kind != StmtKind::If) {
      line("} else {");
      nested(n->otherwise);
      break;
    }
    n = &as<IfNode>(e);
    line("} else if (" + e_.print(n->cond) + ") {");
  }
  line("}");
}

void CPrinter::comment(const std::string& text) {
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    for (char& c : l) {
      if (static_cast<unsigned char>(c) < ' ') c = ' ';
    }
    // A trailing backslash would splice the next source line into a // comment.
    if (!l.empty() && l.back() == '\\') l += '.';
    line(l.empty() ? "//" : "// " + l);
  }
}

void CPrinter::allocate(const AllocateNode& n) {
  std::string T = e_.type(scalar(n.buffer->type.elem));
  std::string count;
  if (n.count->kind == ExprKind::Literal) {  // malloc(0) may return NULL: ask for one element
    count = std::to_string(std::max<int64_t>(as<LiteralNode>(n.count).intValue, 1));
  } else {
    std::string c = e_.operand(n.count, kComparisonOperand);
    count = c + " > 0 ? " + c + " : 1";
  }
  const std::string& p = n.buffer->name;
  if (n.zero) {
    line(p + " = (" + T + "*)calloc(" + count + ", sizeof(" + T + "));");
  } else {
    if (n.count->kind != ExprKind::Literal) count = "(" + count + ")";
    line(p + " = (" + T + "*)malloc(" + count + " * sizeof(" + T + "));");
  }
  failIfNull(p);
  if (const std::string* owned = ownedName(n.buffer.get())) line(*owned + " = " + p + ";");
}

void CPrinter::grow(const GrowNode& n) {
  // Grown by the runtime (result_memory.hpp) into a temporary: on failure the old buffer and
  // capacity stay valid and are what the caller gets back (and frees).
  std::string T = e_.type(scalar(n.buffer->type.elem));
  std::string needed = e_.operand(n.needed, kComparisonOperand);
  const std::string& cap = n.capacity->name;
  const std::string& p = n.buffer->name;
  line("if (" + needed + " > " + cap + ") {");
  ++indent_;
  line("int64_t coiter_capacity = 2 * " + cap + " > " + needed + " ? 2 * " + cap + " : " + needed + ";");
  const std::string& growArray = runtimeFunction(RuntimeFunction::GrowArray).name;
  e_.useRuntime(growArray);
  line(T + "* coiter_grown = (" + T + "*)" + growArray + "(" + p + ", " + cap + " * (int64_t)sizeof(" + T +
       "), coiter_capacity * (int64_t)sizeof(" + T + "));");
  failIfNull("coiter_grown");
  line(p + " = coiter_grown;");
  line(cap + " = coiter_capacity;");
  --indent_;
  line("}");
}

void CPrinter::failIfNull(const std::string& pointer) {
  line("if (" + pointer + " == NULL) {");
  ++indent_;
  freeOwned();
  writeBackAndReturn(kOutOfMemory);
  --indent_;
  line("}");
}

void CPrinter::freeOwned() {
  // One cleanup for every early return: the buffers the kernel allocated and still owns.
  for (const auto& [buffer, owned] : owned_) line("free(" + owned + ");");
}

void CPrinter::runtimeCall(const CallNode& n) {
  const RuntimeFunctionInfo& f = runtimeFunction(n.function);
  e_.useRuntime(f.name);
  std::string args;
  for (const Expr& a : n.args) args += (args.empty() ? "" : ", ") + e_.print(a);
  line(f.name + "(" + args + ");");
}

void CPrinter::writeBackAndReturn(int32_t status) {
  for (const Param& p : f_.params) {
    if (!p.writeBack) continue;
    line(std::string(p.var->type.pointer ? "pointer_slots[" : "integer_slots[") + std::to_string(p.slot) +
         "] = " + p.var->name + ";");
  }
  line("return " + std::to_string(status) + ";");
}

std::string CPrinter::print() {
  if (!isIdentifier(f_.name)) throw CoiterError("C printer: kernel name '" + f_.name + "' is not a C identifier");
  bool isBlock = f_.body && f_.body->kind == StmtKind::Block;
  const auto* body = isBlock ? &as<BlockNode>(f_.body) : nullptr;
  if (!body || body->stmts.empty() || body->stmts.back()->kind != StmtKind::Return) {
    throw CoiterError("C printer: the body of kernel " + f_.name + " must be a block ending with a Return");
  }
  checkParallelRules(f_);
  for (const Param& p : f_.params) addName(p.var);
  collectNames(f_.body);

  bodyPrologue();
  for (const Var& buffer : allocatedBuffers(f_.body)) {
    owned_.emplace_back(buffer.get(), freshName("coiter_owned_" + buffer->name));
  }
  for (const Param& p : f_.params) {  // the prologue: load every parameter from its slot
    std::string type = e_.type(p.var->type);
    std::string slot = std::to_string(p.slot);
    std::string value;
    if (p.var->type.pointer)
      value = "(" + type + ")pointer_slots[" + slot + "]";
    else if (p.var->type.elem == DType::Int64)
      value = "integer_slots[" + slot + "]";
    else
      value = "(" + type + ")integer_slots[" + slot + "]";
    line(type + " " + p.var->name + " = " + value + ";");
  }
  // Each allocated buffer's block while the kernel owns it (null before its Allocate and after
  // its Free): an allocation failure frees them all, wherever it happens.
  for (const auto& [buffer, owned] : owned_) line("void* " + owned + " = NULL;");
  functionBody(*body);
  return preamble() + "\n" + signature() + " {\n" + body_.str() + "}\n";
}

void CPrinter::functionBody(const BlockNode& body) {
  for (const Stmt& s : body.stmts) stmt(s);
}

std::string CPrinter::preamble() {
  std::ostringstream out;
  out << "#include <stdint.h>\n#include <stdlib.h>\n#include <stdbool.h>\n";
  if (e_.usesComplex()) {
    // complex.h's `I` and `complex` macros would clash with kernel variables of those names;
    // literals use CMPLX, which predates C11 in GCC and Clang only as __builtin_complex.
    out << "#include <complex.h>\n#undef I\n#undef complex\n#ifndef CMPLX\n"
        << "#define CMPLX(re, im) __builtin_complex((double)(re), (double)(im))\n"
        << "#define CMPLXF(re, im) __builtin_complex((float)(re), (float)(im))\n#endif\n";
  }
  if (e_.usesMath()) out << "#include <math.h>\n";
  if (e_.usesOpenmp()) {
    // The C engine retries without -fopenmp when the compiler has no OpenMP; the pragmas are
    // then ignored and every loop runs on the calling thread, thread 0.
    out << "#ifdef _OPENMP\n#include <omp.h>\n#else\n"
        << "static inline int omp_get_thread_num(void) { return 0; }\n#endif\n";
  }
  for (const std::string& helper : e_.helpers()) out << '\n' << helper;
  // Runtime functions are reached through pointers the C engine sets after loading.
  for (const auto& f : runtimeFunctions()) {
    if (!e_.runtimeUsed().count(f.name)) continue;
    std::string declarator = f.cPointerType;
    declarator.replace(declarator.find("%s"), 2, f.name);
    out << "\n__attribute__((visibility(\"default\"))) " << declarator << ";\n";
  }
  return out.str();
}

std::string CPrinter::signature() {
  return "__attribute__((visibility(\"default\")))\nint32_t " + f_.name +
         "(void** pointer_slots, int64_t* integer_slots)";
}

std::string printC(const ir::Function& f) { return CPrinter(f).print(); }

}  // namespace coiter::codegen
