#include "ir/ir_printer.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "util/errors.hpp"

namespace coiter::ir {
namespace {

std::string typeName(const Type& t) { return dtypeName(t.elem) + (t.pointer ? "*" : ""); }

// Shortest text that reads back as the same double ("%.17g" always does; shorter when it can).
std::string realText(double v) {
  char buffer[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  std::string text = buffer;
  // A float that prints like an integer still reads as a float.
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

std::string literal(const LiteralNode& n) {
  DType t = n.type.elem;
  if (t == DType::Bool) return n.intValue ? "true" : "false";
  std::string text;
  if (isComplex(t))
    text = "(" + realText(n.real) + (n.imag < 0 ? "" : "+") + realText(n.imag) + "j)";
  else if (isFloat(t))
    text = realText(n.real);
  else
    text = std::to_string(n.intValue);
  bool usual = t == DType::Int64 || t == DType::Float64;
  return usual ? text : text + ":" + dtypeName(t);
}

const char* infix(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return " + ";
    case BinaryOp::Sub: return " - ";
    case BinaryOp::Mul: return " * ";
    case BinaryOp::Div: return " / ";
    case BinaryOp::Rem: return " % ";
    case BinaryOp::Eq: return " == ";
    case BinaryOp::Ne: return " != ";
    case BinaryOp::Lt: return " < ";
    case BinaryOp::Le: return " <= ";
    case BinaryOp::Gt: return " > ";
    case BinaryOp::Ge: return " >= ";
    case BinaryOp::And: return " && ";
    case BinaryOp::Or: return " || ";
    case BinaryOp::Min:
    case BinaryOp::Max: return nullptr;  // printed as calls
  }
  return nullptr;
}

// How variables are printed: by their names, or (IRNames::Numbered) as v0, v1, ... in order of
// first appearance. Names are unique within a function, so numbering them keeps them apart.
class Names {
 public:
  explicit Names(IRNames style) : numbered_(style == IRNames::Numbered) {}
  std::string operator()(const std::string& name) {
    if (!numbered_) return name;
    auto [it, added] = numbers_.emplace(name, "v" + std::to_string(numbers_.size()));
    return it->second;
  }
  bool numbered() const { return numbered_; }

 private:
  bool numbered_;
  std::map<std::string, std::string> numbers_;
};

std::string expr(const Expr& e, Names& names);

// An operand of an operator: parenthesized when it is an operator itself.
std::string operand(const Expr& e, Names& names) {
  bool isOperator = (e->kind == ExprKind::Binary && infix(as<BinaryNode>(e).op)) || e->kind == ExprKind::Unary;
  return isOperator ? "(" + expr(e, names) + ")" : expr(e, names);
}

std::string expr(const Expr& e, Names& names) {
  switch (e->kind) {
    case ExprKind::Literal: return literal(as<LiteralNode>(e));
    case ExprKind::VarRef: return names(as<VarRefNode>(e).var->name);
    case ExprKind::Load: return names(as<LoadNode>(e).buffer->name) + "[" + expr(as<LoadNode>(e).index, names) + "]";
    case ExprKind::Binary: {
      const auto& b = as<BinaryNode>(e);
      if (const char* op = infix(b.op)) return operand(b.a, names) + op + operand(b.b, names);
      return std::string(binaryOpName(b.op)) + "(" + expr(b.a, names) + ", " + expr(b.b, names) + ")";
    }
    case ExprKind::Unary: {
      const auto& u = as<UnaryNode>(e);
      return (u.op == UnaryOp::Neg ? "-" : "!") + operand(u.a, names);
    }
    case ExprKind::Cast: return dtypeName(e->type.elem) + "(" + expr(as<CastNode>(e).a, names) + ")";
    case ExprKind::Select: {
      const auto& s = as<SelectNode>(e);
      return "select(" + expr(s.cond, names) + ", " + expr(s.a, names) + ", " + expr(s.b, names) + ")";
    }
    case ExprKind::ThreadId: return "thread_id()";
    case ExprKind::NumThreads: return "num_threads()";
    case ExprKind::InterruptRequested: return "interrupt_requested()";
  }
  throw CoiterError("IR printer: unknown expression kind");
}

std::string scheduleText(const LoopSchedule& s) {
  std::string text;
  if (s.kind == LoopKind::Parallel) {
    text = std::string(" parallel(") + (s.dynamic ? "dynamic" : "static");
    if (s.chunk) text += ", chunk " + std::to_string(s.chunk);
    text += ")";
  }
  if (s.kind == LoopKind::Vectorized) text = " vectorized";
  if (s.kind == LoopKind::GpuBlock) text = " gpu_block";
  if (s.kind == LoopKind::GpuWarp) text = " gpu_warp";
  if (s.kind == LoopKind::GpuThread) text = " gpu_thread";
  if (s.reduction) text += " reduction";
  if (s.unroll) text += " unroll(" + std::to_string(s.unroll) + ")";
  return text;
}

class Printer {
 public:
  Printer(int indent, IRNames style) : indent_(indent), names_(style) {}

  std::string name(const std::string& n) { return names_(n); }
  std::string expr(const Expr& e) { return coiter::ir::expr(e, names_); }

  void stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block:
        line("{");
        nested(s);
        return line("}");
      case StmtKind::Declare: {
        const auto& d = as<DeclareNode>(s);
        return line("let " + name(d.var->name) + ": " + typeName(d.var->type) + " = " +
                    (d.init ? expr(d.init) : "null"));
      }
      case StmtKind::Assign: return line(name(as<AssignNode>(s).var->name) + " = " + expr(as<AssignNode>(s).value));
      case StmtKind::Store: {
        const auto& n = as<StoreNode>(s);
        return line(name(n.buffer->name) + "[" + expr(n.index) + "] = " + expr(n.value));
      }
      case StmtKind::For: {
        const auto& f = as<ForNode>(s);
        line("for " + name(f.var->name) + ": " + typeName(f.var->type) + " in [" + expr(f.begin) + ", " + expr(f.end) +
             ")" + scheduleText(f.schedule) + " {");
        nested(f.body);
        return line("}");
      }
      case StmtKind::While:
        line("while " + expr(as<WhileNode>(s).cond) + " {");
        nested(as<WhileNode>(s).body);
        return line("}");
      case StmtKind::If: {
        const auto& n = as<IfNode>(s);
        line("if " + expr(n.cond) + " {");
        nested(n.then);
        if (n.otherwise) {
          line("} else {");
          nested(n.otherwise);
        }
        return line("}");
      }
      case StmtKind::Break: return line("break");
      case StmtKind::Comment: {
        if (names_.numbered()) return;  // comments name things; they are not code
        std::istringstream lines(as<CommentNode>(s).text);
        for (std::string l; std::getline(lines, l);) line("// " + l);
        return;
      }
      case StmtKind::Allocate: {
        const auto& n = as<AllocateNode>(s);
        return line(name(n.buffer->name) + " = " + (n.zero ? "calloc(" : "malloc(") + expr(n.count) + ")");
      }
      case StmtKind::Free: return line("free(" + name(as<FreeNode>(s).buffer->name) + ")");
      case StmtKind::Grow: {
        const auto& n = as<GrowNode>(s);
        return line("grow(" + name(n.buffer->name) + ", " + name(n.capacity->name) + ", " + expr(n.needed) + ")");
      }
      case StmtKind::Return: return line("return " + std::to_string(as<ReturnNode>(s).status));
      case StmtKind::Call: {
        const auto& n = as<CallNode>(s);
        std::string args;
        for (const Expr& a : n.args) args += (args.empty() ? "" : ", ") + expr(a);
        return line("call " + std::string(runtimeSymbol(n.function)) + "(" + args + ")");
      }
      case StmtKind::AtomicUpdate: {
        const auto& n = as<AtomicUpdateNode>(s);
        return line("atomic " + std::string(binaryOpName(n.op)) + " " + name(n.buffer->name) + "[" + expr(n.index) +
                    "], " + expr(n.value));
      }
      case StmtKind::Prefetch: {
        const auto& n = as<PrefetchNode>(s);
        return line("prefetch " + name(n.buffer->name) + "[" + expr(n.index) + "]");
      }
    }
    throw CoiterError("IR printer: unknown statement kind");
  }

  // A block's statements one level in, without braces of their own.
  void nested(const Stmt& s) {
    ++indent_;
    if (s->kind == StmtKind::Block) {
      for (const Stmt& x : as<BlockNode>(s).stmts) stmt(x);
    } else {
      stmt(s);
    }
    --indent_;
  }

  void line(const std::string& text) { out_ << std::string(2 * indent_, ' ') << text << '\n'; }

  std::string text() const { return out_.str(); }

 private:
  int indent_;
  Names names_;
  std::ostringstream out_;
};

}  // namespace

std::string printIR(const Function& f, IRNames names) {
  Printer p(0, names);
  p.line("kernel " + f.name);
  for (const Param& param : f.params) {
    std::string slot = param.var->type.pointer ? "pointer_slots[" : "integer_slots[";
    p.line("  param " + p.name(param.var->name) + ": " + typeName(param.var->type) + " = " + slot +
           std::to_string(param.slot) + "]" + (param.writeBack ? " (written back)" : ""));
  }
  if (f.body) p.nested(f.body);
  return p.text();
}

}  // namespace coiter::ir
