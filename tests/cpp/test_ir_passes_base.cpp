// IRVisitor and IRMutator (ir/visitor.hpp), and a pass built on each.
#include <cstdio>

#include "ir/free_variables.hpp"
#include "ir/visitor.hpp"
#include "ir_test_support.hpp"

using namespace coiter_test;

namespace {

// Renames nothing: replaces loads from `from` by loads from `to`.
class SwapBuffer : public IRMutator {
 public:
  SwapBuffer(Var from, Var to) : from_(std::move(from)), to_(std::move(to)) {}

 private:
  Expr mutateLoad(const LoadNode& n, const Expr& e) override {
    Expr rewritten = IRMutator::mutateLoad(n, e);
    const auto& l = as<LoadNode>(rewritten);
    return l.buffer == from_ ? load(to_, l.index) : rewritten;
  }
  Var from_, to_;
};

class CountLoads : public IRVisitor {
 public:
  int loads = 0;

 private:
  void visitLoad(const LoadNode& n) override {
    ++loads;
    IRVisitor::visitLoad(n);
  }
};

}  // namespace

int main() {
  Var a = ptr("a", DType::Float64), b = ptr("b", DType::Float64), c = ptr("c", DType::Float64);
  Var i = var("i"), n = var("n"), s = var("s", DType::Float64);
  Stmt untouched = store(c, intLit(0), f64(1.0));
  Stmt loop = forLoop(i, intLit(0), use(n), assign(s, add(use(s), load(a, load(b, use(i))))));
  Stmt body = block({declare(s, f64(0.0)), loop, untouched});

  CountLoads counter;
  counter.visit(body);
  check(counter.loads == 2, "the visitor reaches a load inside another load's index");

  Stmt swapped = SwapBuffer(a, c).mutate(body);
  const auto& stmts = as<BlockNode>(swapped).stmts;
  check(swapped != body, "a changed tree is rebuilt");
  check(stmts[2] == untouched, "an unchanged statement is shared, not copied");
  check(stmts[0] == as<BlockNode>(body).stmts[0], "an unchanged declaration is shared");
  std::vector<Var> free = freeVariables(swapped);
  std::vector<Var> expected{n, c, b};
  check(free == expected, "free variables after the rewrite: n, c, b in order of first use");
  check(SwapBuffer(b, c).mutate(untouched) == untouched, "a tree without the buffer is returned as is");

  if (failures == 0) std::printf("ir visitor and mutator: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
