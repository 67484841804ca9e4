// An allocation that fails frees what the kernel allocated before it (one cleanup for every
// failure), on both engines: a kernel allocates a 100 KiB workspace, then asks for 2^50
// doubles. It must return kOutOfMemory, write back its parameters, and leave no block behind
// (malloc's bytes in use are the same before and after, over many calls). The failing
// buffer is a written-back parameter, so that no compiler may remove its allocation.
#include <malloc.h>

#include <cstdio>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "ir_test_support.hpp"
#include "jit/engine.hpp"

using namespace coiter;
using namespace coiter::ir;
using namespace coiter_test;

namespace {

Function failingSecondAllocation() {
  Var first = ptr("first", DType::Float64), second = ptr("second", DType::Float64), out = var("out");
  // 12800 doubles: below malloc's mmap threshold, so a leak shows in its bytes in use.
  return Function{
      "second_allocation_fails",
      {arg(out, 0, /*writeBack=*/true), arg(second, 0, true)},
      block({declare(first, nullptr), allocate(first, intLit(12800), true), store(first, intLit(0), f64(1.0)),
             assign(out, intLit(7)), allocate(second, intLit(int64_t{1} << 50), false), freeBuffer(first), ret()})};
}

// The same buffer allocated and freed twice, then a failure: nothing is freed twice.
Function failingAfterFrees() {
  Var w = ptr("w", DType::Int32), huge = ptr("huge", DType::Int32), out = var("out");
  return Function{
      "fails_after_frees",
      {arg(out, 0, true), arg(huge, 0, true)},
      block({declare(w, nullptr), allocate(w, intLit(100), false), freeBuffer(w), allocate(w, intLit(100), false),
             freeBuffer(w), allocate(huge, intLit(int64_t{1} << 50), false), ret()})};
}

// A kernel that stops early (interrupted by Ctrl-C, ir/interrupt_points.hpp) with a workspace
// allocated: the early return frees it, as an allocation failure does.
Function returningEarly() {
  Var w = ptr("w", DType::Float64), out = var("out");
  return Function{"returns_early",
                  {arg(out, 0, /*writeBack=*/true)},
                  block({declare(w, nullptr), allocate(w, intLit(12800), true), store(w, intLit(0), f64(1.0)),
                         assign(out, intLit(7)), ifThen(binary(BinaryOp::Gt, use(out), intLit(0)), ret(kInterrupted)),
                         freeBuffer(w), ret()})};
}

void testEngine(const std::string& name, const Engine& engine) {
  for (const Function& f : {failingSecondAllocation(), failingAfterFrees(), returningEarly()}) {
    auto kernel = engine.load(engine.compile(f), f.name);
    int64_t integers[] = {0};
    void* pointers[] = {nullptr};
    int32_t expected = f.name == "returns_early" ? kInterrupted : kOutOfMemory;
    check(kernel->entry()(pointers, integers) == expected, name + " " + f.name + ": returns its status");
    size_t before = mallinfo2().uordblks;
    for (int k = 0; k < 50; ++k) kernel->entry()(pointers, integers);
    size_t after = mallinfo2().uordblks;
    check(after < before + 100 * 1024, name + " " + f.name + ": no block left behind (" +
                                           std::to_string(after - before) + " bytes more in use after 50 calls)");
    if (f.name != "fails_after_frees") check(integers[0] == 7, name + " " + f.name + ": parameters written back");
  }
  std::string c = cEngine().source(failingSecondAllocation());
  check(c.find("free(coiter_owned_first);") != std::string::npos, "the C source frees the first block on failure");
}

}  // namespace

int main() {
  testEngine("c", cEngine());
  if (const Engine* llvm = llvmEngine()) testEngine("llvm", *llvm);
  std::printf("%s\n", failures ? "FAILED" : "all allocation failure tests passed");
  return failures ? 1 : 0;
}
