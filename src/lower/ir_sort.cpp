// An in-place heapsort of int64 values, emitted as IR (O(n log n), no recursion, no library
// call), used to order a workspace's touched coordinates before they are appended.
#include "lower/ir_sort.hpp"

namespace coiter::lower {

using namespace ir;

namespace {

Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(BinaryOp::Lt, std::move(a), std::move(b)); }

}  // namespace

Stmt sortIndices(const Var& array, const Expr& count, const std::function<std::string(const std::string&)>& name) {
  const Type i64 = scalar(DType::Int64);
  Var n = makeVar(name("sort_n"), i64);
  Var start = makeVar(name("sort_start"), i64);
  Var end = makeVar(name("sort_end"), i64);
  Var root = makeVar(name("sort_root"), i64);
  Var child = makeVar(name("sort_child"), i64);
  Var last = makeVar(name("sort_last"), i64);
  auto at = [&](const Var& v) { return load(array, ir::ref(v)); };
  // Moves the value at `root` down the heap [0, end). Each copy has its own temporary.
  auto siftDown = [&]() {
    Var top = makeVar(name("sort_top"), i64);
    auto swap = [&](const Var& x, const Var& y) {
      return block({declare(top, at(x)), store(array, ir::ref(x), at(y)), store(array, ir::ref(y), ir::ref(top))});
    };
    Stmt pickChild = block({
        assign(child, add(mul(ir::ref(root), intLit(2)), intLit(1))),
        ifThen(binary(BinaryOp::And, lt(add(ir::ref(child), intLit(1)), ir::ref(end)),
                      lt(at(child), load(array, add(ir::ref(child), intLit(1))))),
               assign(child, add(ir::ref(child), intLit(1)))),
        ifThen(lt(at(root), at(child)), block({swap(root, child), assign(root, ir::ref(child))}), breakLoop()),
    });
    return whileLoop(lt(add(mul(ir::ref(root), intLit(2)), intLit(1)), ir::ref(end)), pickChild);
  };
  return block({
      declare(n, count),
      declare(child, intLit(0)),
      declare(end, ir::ref(n)),
      declare(root, intLit(0)),
      // Heapify: sift down every inner node, last first.
      declare(start, binary(BinaryOp::Sub, binary(BinaryOp::Div, ir::ref(n), intLit(2)), intLit(1))),
      whileLoop(binary(BinaryOp::Ge, ir::ref(start), intLit(0)),
                block({assign(root, ir::ref(start)), siftDown(), assign(start, binary(BinaryOp::Sub, ir::ref(start), intLit(1)))})),
      // Move the largest to the end, shrink the heap, repeat.
      assign(end, binary(BinaryOp::Sub, ir::ref(n), intLit(1))),
      whileLoop(binary(BinaryOp::Gt, ir::ref(end), intLit(0)),
                block({declare(last, load(array, intLit(0))), store(array, intLit(0), at(end)),
                       store(array, ir::ref(end), ir::ref(last)), assign(root, intLit(0)), siftDown(),
                       assign(end, binary(BinaryOp::Sub, ir::ref(end), intLit(1)))})),
  });
}

}  // namespace coiter::lower
