#include "codegen/c_expr.hpp"

#include <charconv>
#include <cmath>

#include "util/errors.hpp"

namespace coiter::codegen {

using namespace ir;

namespace {

const char* cTypeName(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::Int16: return "int16_t";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt8: return "uint8_t";
    case DType::UInt16: return "uint16_t";
    case DType::UInt32: return "uint32_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Complex64: return "float _Complex";
    case DType::Complex128: return "double _Complex";
  }
  throw CoiterError("C printer: unknown dtype");
}

// Suffix of helper names: coiter_min_f64, coiter_div_i32, coiter_rem_u8, ...
std::string helperSuffix(DType t) {
  switch (t) {
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
    case DType::Complex64: return "c64";
    case DType::Complex128: return "c128";
    default: {
      std::string name = dtypeName(t);  // "int32", "uint8"
      bool u = name[0] == 'u';
      return (u ? "u" : "i") + name.substr(u ? 4 : 3);
    }
  }
}

bool isUnsigned(DType t) { return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64; }

// C promotes these to int before arithmetic, so results are cast back to wrap like the IR
// type (the C engine compiles with -fwrapv, which makes the int arithmetic itself wrap).
bool isNarrowInteger(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::UInt8 || t == DType::UInt16;
}

// The value of an integer literal reduced to its type's range.
uint64_t unsignedValue(const LiteralNode& l) {
  size_t bits = dtypeSize(l.type.elem) * 8;
  auto v = static_cast<uint64_t>(l.intValue);
  return bits == 64 ? v : v & ((uint64_t{1} << bits) - 1);
}
int64_t signedValue(const LiteralNode& l) {
  size_t bits = dtypeSize(l.type.elem) * 8;
  if (bits == 64) return l.intValue;
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((unsignedValue(l) ^ sign) - sign);
}

}  // namespace

std::string CExprPrinter::type(Type t) {
  if (isComplex(t.elem)) usesComplex_ = true;
  return std::string(cTypeName(t.elem)) + (t.pointer ? "*" : "");
}

std::string CExprPrinter::operand(const Expr& e, int minPrec) {
  Code c = code(e);
  return c.prec < minPrec ? "(" + c.text + ")" : c.text;
}

CExprPrinter::Code CExprPrinter::code(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Literal: return literal(as<LiteralNode>(e));
    case ExprKind::VarRef: return {as<VarRefNode>(e).var->name, kPrimary};
    case ExprKind::Load: {
      auto& l = as<LoadNode>(e);
      return {l.buffer->name + "[" + print(l.index) + "]", kPrimary};
    }
    case ExprKind::Binary: return binary(as<BinaryNode>(e));
    case ExprKind::Unary: return unary(as<UnaryNode>(e));
    case ExprKind::Cast: return {"(" + type(e->type) + ")" + operand(as<CastNode>(e).a, kUnary), kUnary};
    case ExprKind::Select: {
      auto& s = as<SelectNode>(e);
      return {operand(s.cond, kOr) + " ? " + operand(s.a, kOr) + " : " + operand(s.b, kConditional), kConditional};
    }
    case ExprKind::ThreadId:
      // 0 outside a parallel region; a parallel loop nested in another is printed serially,
      // so inside it this is still the outer loop's thread.
      if (!threadVariable_.empty()) return {threadVariable_, kPrimary};
      usesOpenmp_ = true;
      return {"(int64_t)omp_get_thread_num()", kUnary};
    case ExprKind::NumThreads: useRuntime("coiter_rt_num_threads"); return {"coiter_rt_num_threads()", kPrimary};
    case ExprKind::InterruptRequested:
      // The library's pointer to the runtime's flag (set when it is loaded), read volatile.
      useRuntime("coiter_rt_interrupt_flag");
      return {"(*coiter_rt_interrupt_flag != 0)", kPrimary};
  }
  throw CoiterError("C printer: unknown expression kind");
}

// The shortest text that reads back as exactly `v` (std::to_chars is locale-independent,
// unlike printf); infinities and NaN use <math.h>'s macros.
std::string CExprPrinter::realLiteral(double v, bool single) {
  if (single) v = static_cast<float>(v);
  if (std::isnan(v) || std::isinf(v)) {
    usesMath_ = true;
    return std::isnan(v) ? "NAN" : v > 0 ? "INFINITY" : "-INFINITY";
  }
  char buf[64];
  char* end = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v)).ptr
                     : std::to_chars(buf, buf + sizeof buf, v).ptr;
  std::string s(buf, end);
  if (size_t plus = s.find("e+"); plus != std::string::npos) s.erase(plus + 1, 1);  // 1e300
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

CExprPrinter::Code CExprPrinter::literal(const LiteralNode& l) {
  DType t = l.type.elem;
  std::string s;
  if (t == DType::Bool) {
    s = l.intValue ? "true" : "false";
  } else if (isUnsigned(t)) {
    uint64_t v = unsignedValue(l);
    s = std::to_string(v) + (v > INT32_MAX ? "u" : "");
  } else if (isInteger(t)) {
    int64_t v = signedValue(l);
    if (t == DType::Int64 && v == INT64_MIN)
      s = "INT64_MIN";  // no literal spells these
    else if (t == DType::Int32 && v == INT32_MIN)
      s = "INT32_MIN";
    else
      s = std::to_string(v);
  } else if (isFloat(t)) {
    s = realLiteral(l.real, t == DType::Float32);
  } else {
    // CMPLX, not re + im * I: the latter turns an infinite imaginary part into NaN and loses
    // the sign of a zero real part.
    bool single = t == DType::Complex64;
    usesComplex_ = true;
    s = std::string(single ? "CMPLXF(" : "CMPLX(") + realLiteral(l.real, single) + ", " + realLiteral(l.imag, single) +
        ")";
  }
  return {s, s[0] == '-' ? kUnary : kPrimary};
}

CExprPrinter::Code CExprPrinter::logical(const BinaryNode& b, const char* op, int prec) {
  // `a && b || c` is correct C but reads ambiguously: parenthesize && under ||.
  auto side = [&](const Expr& e, bool right) {
    Code c = code(e);
    bool wrap = c.prec < prec || (right && c.prec == prec) || (prec == kOr && c.prec == kAnd);
    return wrap ? "(" + c.text + ")" : c.text;
  };
  return {side(b.a, false) + op + side(b.b, true), prec};
}

CExprPrinter::Code CExprPrinter::binary(const BinaryNode& b) {
  DType t = b.a->type.elem;
  auto arithmetic = [&](const char* op, int prec) -> Code {
    std::string text = operand(b.a, prec) + op + operand(b.b, prec + 1);
    if (isNarrowInteger(t)) return {"(" + type(b.type) + ")(" + text + ")", kUnary};
    return {text, prec};
  };
  auto comparison = [&](const char* op, int prec) -> Code {
    return {operand(b.a, kComparisonOperand) + op + operand(b.b, kComparisonOperand), prec};
  };
  auto call = [&](const std::string& fn) -> Code {
    return {fn + "(" + print(b.a) + ", " + print(b.b) + ")", kPrimary};
  };
  if (t == DType::Bool) {  // NumPy's bool arithmetic: add and max are or, mul and min are and
    switch (b.op) {
      case BinaryOp::Add:
      case BinaryOp::Max:
      case BinaryOp::Or: return logical(b, " || ", kOr);
      case BinaryOp::Mul:
      case BinaryOp::Min:
      case BinaryOp::And: return logical(b, " && ", kAnd);
      case BinaryOp::Sub:
      case BinaryOp::Div:
      case BinaryOp::Rem: throw CoiterError(std::string("C printer: ") + binaryOpName(b.op) + " on bool");
      default: break;  // comparisons below
    }
  }
  switch (b.op) {
    case BinaryOp::Add: return arithmetic(" + ", kAdditive);
    case BinaryOp::Sub: return arithmetic(" - ", kAdditive);
    case BinaryOp::Mul: return arithmetic(" * ", kMultiplicative);
    case BinaryOp::Div:
      if (isInteger(t)) return integerDivision(b);
      return arithmetic(" / ", kMultiplicative);
    case BinaryOp::Rem:
      if (isInteger(t)) return integerDivision(b);
      if (isComplex(t)) throw CoiterError("C printer: rem on complex");
      usesMath_ = true;
      return call(t == DType::Float32 ? "fmodf" : "fmod");
    case BinaryOp::Min:
    case BinaryOp::Max: return call(minMaxHelper(b.op, t));
    case BinaryOp::Eq: return comparison(" == ", kEquality);
    case BinaryOp::Ne: return comparison(" != ", kEquality);
    case BinaryOp::Lt: return comparison(" < ", kRelational);
    case BinaryOp::Le: return comparison(" <= ", kRelational);
    case BinaryOp::Gt: return comparison(" > ", kRelational);
    case BinaryOp::Ge: return comparison(" >= ", kRelational);
    case BinaryOp::And:
    case BinaryOp::Or:
      if (isInteger(t)) {  // bitwise; operands parenthesized unless primary (C's & binds below ==)
        const bool isOr = b.op == BinaryOp::Or;
        return {operand(b.a, kUnary) + (isOr ? " | " : " & ") + operand(b.b, kUnary), isOr ? kBitOr : kBitAnd};
      }
      return b.op == BinaryOp::And ? logical(b, " && ", kAnd) : logical(b, " || ", kOr);
  }
  throw CoiterError("C printer: unknown binary operator");
}

CExprPrinter::Code CExprPrinter::integerDivision(const BinaryNode& b) {
  DType t = b.type.elem;
  // A literal divisor that cannot trap (not 0, and not -1 on signed types) needs no guard.
  if (b.b->kind == ExprKind::Literal) {
    const auto& d = as<LiteralNode>(b.b);
    if (unsignedValue(d) != 0 && (isUnsigned(t) || signedValue(d) != -1)) {
      const char* op = b.op == BinaryOp::Div ? " / " : " % ";
      return {operand(b.a, kMultiplicative) + op + operand(b.b, kMultiplicative + 1), kMultiplicative};
    }
  }
  return {divisionHelper(b.op, t) + "(" + print(b.a) + ", " + print(b.b) + ")", kPrimary};
}

CExprPrinter::Code CExprPrinter::unary(const UnaryNode& u) {
  DType t = u.type.elem;
  std::string a = operand(u.a, kUnary);
  if (u.op == UnaryOp::Not) return {"!" + a, kUnary};
  if (t == DType::Bool) throw CoiterError("C printer: neg on bool");
  std::string text = a[0] == '-' ? "-(" + a + ")" : "-" + a;  // never the `--` token
  if (isNarrowInteger(t)) text = "(" + type(u.type) + ")" + text;
  return {text, kUnary};
}

std::string CExprPrinter::minMaxHelper(BinaryOp op, DType t) {
  bool isMin = op == BinaryOp::Min;
  std::string name = std::string("coiter_") + (isMin ? "min_" : "max_") + helperSuffix(t);
  if (hasHelper(name)) return name;
  std::string T = type(scalar(t));
  std::string head = functionQualifier_ + " " + T + " " + name + "(" + T + " a, " + T + " b) {\n";
  std::string numpyName = isMin ? "minimum" : "maximum";
  std::string cmp = isMin ? " < " : " > ";
  std::string text;
  if (isComplex(t)) {
    usesMath_ = true;
    std::string re = t == DType::Complex64 ? "crealf" : "creal";
    std::string im = t == DType::Complex64 ? "cimagf" : "cimag";
    auto hasNan = [&](const char* x) { return "isnan(" + re + "(" + x + ")) || isnan(" + im + "(" + x + "))"; };
    text = "// NumPy's " + numpyName + " on complex: a NaN operand propagates, else lexicographic order.\n" + head +
           "  if (" + hasNan("a") + ") {\n    return a;\n  }\n" + "  if (" + hasNan("b") + ") {\n    return b;\n  }\n" +
           "  return " + re + "(a)" + cmp + re + "(b) || (" + re + "(a) == " + re + "(b) && " + im + "(a)" +
           (isMin ? " <= " : " >= ") + im + "(b)) ? a : b;\n}\n";
  } else if (isFloat(t)) {
    usesMath_ = true;
    text = "// NumPy's " + numpyName + ": a NaN operand propagates.\n" + head + "  return (a" + cmp +
           "b || isnan(a)) ? a : b;\n}\n";
  } else {
    text = head + "  return a" + cmp + "b ? a : b;\n}\n";
  }
  defineHelper(name, text);
  return name;
}

void CExprPrinter::defineHelper(const std::string& name, const std::string& definition) {
  helperNames_.insert(name);
  helpers_.push_back(definition);
}

std::string CExprPrinter::atomicHelper(BinaryOp op, DType t) {
  std::string name = std::string("coiter_atomic_") + binaryOpName(op) + "_" + helperSuffix(t);
  if (hasHelper(name)) return name;
  std::string T = type(scalar(t));
  std::string head = functionQualifier_ + " void " + name + "(" + T + "* target, " + T + " value) {\n";
  if (op == BinaryOp::Add) {  // complex: OpenMP has no atomic complex add
    bool single = t == DType::Complex64;
    std::string part = single ? "float" : "double";
    std::string re = single ? "crealf" : "creal", im = single ? "cimagf" : "cimag";
    defineHelper(name,
                 "// *target += value, one atomic add per part (a complex is an array "
                 "of its two parts).\n" +
                     head + "  " + part + "* parts = (" + part + "*)target;\n" + "#pragma omp atomic\n  parts[0] += " +
                     re + "(value);\n" + "#pragma omp atomic\n  parts[1] += " + im + "(value);\n}\n");
    return name;
  }
  // A complex value is two words: no compare-and-swap covers it without libatomic (the LLVM
  // engine refuses it too). No default schedule makes one: maxima of complex values are
  // computed into a temporary per thread, or by a loop that owns its output.
  if (isComplex(t)) throw CompileError(std::string("atomic ") + binaryOpName(op) + " of complex values");
  std::string update = minMaxHelper(op, t);  // defined first: the atomic helper calls it
  defineHelper(name, "// *target = " + update + "(*target, value), atomically: C has no atomic " +
                         (op == BinaryOp::Min ? "minimum" : "maximum") + ",\n// so a compare-and-swap loop.\n" + head +
                         "  " + T + " old, desired;\n" + "  __atomic_load(target, &old, __ATOMIC_RELAXED);\n" +
                         "  do {\n    desired = " + update + "(old, value);\n" +
                         "  } while (!__atomic_compare_exchange(target, &old, &desired, false,\n" +
                         "                                      __ATOMIC_RELAXED, "
                         "__ATOMIC_RELAXED));\n}\n");
  return name;
}

std::string CExprPrinter::divisionHelper(BinaryOp op, DType t) {
  bool isDiv = op == BinaryOp::Div;
  std::string name = std::string("coiter_") + (isDiv ? "div_" : "rem_") + helperSuffix(t);
  if (hasHelper(name)) return name;
  std::string T = type(scalar(t));
  std::string result;
  if (isUnsigned(t)) {
    result = isDiv ? "b == 0 ? 0 : a / b" : "b == 0 ? 0 : a % b";
  } else {
    // Negating through the unsigned type wraps MIN / -1 to MIN instead of trapping.
    result = isDiv ? "b == 0 ? 0 : b == -1 ? (" + T + ")-(u" + T + ")a : a / b" : "b == 0 || b == -1 ? 0 : a % b";
  }
  defineHelper(name, std::string("// C's truncating ") + (isDiv ? "division" : "remainder") +
                         "; a zero divisor gives 0 (NumPy's result) instead of trapping.\n" + functionQualifier_ + " " +
                         T + " " + name + "(" + T + " a, " + T + " b) {\n" + "  return " + result + ";\n}\n");
  return name;
}

}  // namespace coiter::codegen
