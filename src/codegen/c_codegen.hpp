// Prints an IR function as self-contained C source: the text the C engine compiles and what
// users read through `kern.source("c")`. The output needs only the C standard headers and the
// GNU/Clang dialect accepted by `cc` (visibility attribute, CMPLX or __builtin_complex).
//
// CPrinter is a class so that printers of C dialects (CUDA C) can reuse its statements and
// expressions and replace what differs on their target: the entry point's declaration, the
// headers and declarations before it, how loop schedules and atomic updates are spelled, how
// runtime functions and memory statements are reached. Those are its virtual hooks.
#pragma once
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "codegen/c_expr.hpp"
#include "ir/ir.hpp"

namespace coiter::codegen {

class CPrinter {
 public:
  explicit CPrinter(const ir::Function& f) : f_(f) {}
  virtual ~CPrinter() = default;

  // The translation unit: preamble(), then signature() and the body. Throws CoiterError for
  // IR that breaks the contract of ir.hpp (a lowering bug).
  std::string print();

 protected:
  // Includes, helpers and runtime declarations the body needs; called after the body is
  // printed, so it knows what the body used (expr()).
  virtual std::string preamble();
  // The entry point's declaration, without the brace: by default the exported
  //     int32_t NAME(void** pointer_slots, int64_t* integer_slots)
  virtual std::string signature();
  // The pragma line before a loop (empty for none); OpenMP loops must be in canonical form.
  struct LoopPragma {
    std::string text;
    bool openmp;
  };
  virtual LoopPragma loopPragma(const ir::ForNode& n);
  virtual void forLoop(const ir::ForNode& n);
  virtual void atomicUpdate(const ir::AtomicUpdateNode& n);
  virtual void runtimeCall(const ir::CallNode& n);
  virtual void allocate(const ir::AllocateNode& n);
  virtual void grow(const ir::GrowNode& n);
  // Stores the written-back parameters into their slots and returns `status`.
  virtual void writeBackAndReturn(int32_t status);
  // Lines at the start of the body, before the parameters are loaded from their slots.
  virtual void bodyPrologue() {}
  // The body's statements (after the prologue): by default each one in order.
  virtual void functionBody(const ir::BlockNode& body);

  // For the hooks: one line of the body at the current indentation, a statement, the
  // statements of a block one level in, and a name no variable of the kernel has.
  void line(const std::string& text);
  void stmt(const ir::Stmt& s);
  void nested(const ir::Stmt& s);
  std::string freshName(const std::string& base);
  void failIfNull(const std::string& pointer);
  void freeOwned();  // frees every buffer the kernel still owns (before an early return)
  CExprPrinter& expr() { return e_; }
  const ir::Function& function() const { return f_; }
  int indent_ = 1;

 private:
  void collectNames(const ir::Stmt& s);
  void addName(const ir::Var& v);
  void update(const std::string& target, const ir::Expr& value, const std::function<bool(const ir::Expr&)>& isTarget);
  void ifChain(const ir::IfNode& n);
  void comment(const std::string& text);

  const ir::Function& f_;
  CExprPrinter e_;
  std::ostringstream body_;
  std::set<std::string> names_;
  // Each allocated buffer and the variable holding its block while the kernel owns it, in the
  // order of the Allocates (the printed text must not depend on addresses).
  std::vector<std::pair<const ir::VarNode*, std::string>> owned_;
  const std::string* ownedName(const ir::VarNode* buffer) const;
  // Parallel loops do not nest (an inner one runs serially), and neither do simd loops.
  bool inParallelLoop_ = false;
  bool inSimdLoop_ = false;
};

// CPrinter(f).print(): the C translation unit for `f`, with the small static helpers it uses
// (NaN-propagating min/max, division guarded against zero divisors).
std::string printC(const ir::Function& f);

}  // namespace coiter::codegen
