// Printing IR expressions and types as C, for the C printer (c_codegen.cpp). Expressions are
// printed with C's operator precedence so that only the parentheses that matter appear. The
// printer remembers what the printed code needs: headers and the small static helpers that
// give IR operations their exact semantics in C.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace coiter::codegen {

// C operator precedence; higher binds tighter.
enum CPrec : int {
  kLowest = 0,
  kConditional = 3,
  kOr = 4,
  kAnd = 5,
  kBitOr = 6,
  kBitAnd = 8,
  kEquality = 9,
  kRelational = 10,
  kAdditive = 12,
  kMultiplicative = 13,
  kUnary = 15,
  kPrimary = 16
};
// Operands of comparisons are parenthesized unless they bind tighter than any comparison.
constexpr int kComparisonOperand = kRelational + 1;

class CExprPrinter {
 public:
  // The C spelling of `t`: "int32_t", "double*", "double _Complex".
  std::string type(ir::Type t);
  // `e` as a full expression (no enclosing parentheses).
  std::string print(const ir::Expr& e) { return code(e).text; }
  // `e` parenthesized when its outermost operator binds looser than `minPrec`.
  std::string operand(const ir::Expr& e, int minPrec);

  // The helper that performs `buffer[index] = buffer[index] op value` atomically where
  // `#pragma omp atomic` cannot: complex Add (two atomic adds), Min and Max (NumPy's NaN
  // rules, in a compare-and-swap loop). It takes (pointer to the element, value).
  std::string atomicHelper(ir::BinaryOp op, DType t);

  // How helper functions are declared: "static inline" in C; a CUDA printer makes them
  // device functions.
  void setFunctionQualifier(std::string q) { functionQualifier_ = std::move(q); }

  // ThreadId is printed as the variable `name` (the thread's number, read once where a
  // parallel loop's body starts), or as `omp_get_thread_num()` when `name` is empty.
  void setThreadVariable(std::string name) { threadVariable_ = std::move(name); }
  const std::string& threadVariable() const { return threadVariable_; }

  // Records that the printed code calls runtime function `name` (runtime_functions.hpp).
  void useRuntime(const std::string& name) { runtimeUsed_.insert(name); }

  bool usesMath() const { return usesMath_; }        // <math.h>: isnan, fmod, INFINITY, NAN
  bool usesComplex() const { return usesComplex_; }  // <complex.h>
  bool usesOpenmp() const { return usesOpenmp_; }    // <omp.h>: omp_get_thread_num
  const std::set<std::string>& runtimeUsed() const { return runtimeUsed_; }
  // Definitions of the helpers the printed code calls, in an order in which each helper
  // follows the helpers it calls.
  const std::vector<std::string>& helpers() const { return helpers_; }

 private:
  // A printed expression and the precedence of its outermost operator.
  struct Code {
    std::string text;
    int prec;
  };
  Code code(const ir::Expr& e);
  Code literal(const ir::LiteralNode& l);
  std::string realLiteral(double v, bool single);
  Code binary(const ir::BinaryNode& b);
  Code logical(const ir::BinaryNode& b, const char* op, int prec);
  Code integerDivision(const ir::BinaryNode& b);
  Code unary(const ir::UnaryNode& u);
  std::string minMaxHelper(ir::BinaryOp op, DType t);
  std::string divisionHelper(ir::BinaryOp op, DType t);

  bool hasHelper(const std::string& name) const { return helperNames_.count(name) > 0; }
  void defineHelper(const std::string& name, const std::string& definition);

  std::set<std::string> helperNames_;
  std::vector<std::string> helpers_;
  std::set<std::string> runtimeUsed_;
  bool usesMath_ = false;
  bool usesComplex_ = false;
  bool usesOpenmp_ = false;
  std::string functionQualifier_ = "static inline";
  std::string threadVariable_;
};

}  // namespace coiter::codegen
