// Which coordinate loads of a loop over rows provably lie in the row's segment
// (ir/segment_positions.hpp), on hand-built merges: the ones a block's pass may check instead
// of the load, and the ones it must not.
#include <cstdio>

#include "ir/segment_positions.hpp"
#include "ir_test_support.hpp"

using namespace coiter_test;

namespace {

Expr lt(Expr a, Expr b) { return binary(BinaryOp::Lt, std::move(a), std::move(b)); }
Expr both(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }
Expr plus(const Var& v, int64_t c) { return add(use(v), intLit(c)); }

}  // namespace

int main() {
  Var pos = ptr("pos", DType::Int32), crd = ptr("crd", DType::Int32), other = ptr("other", DType::Int32);
  Var i = var("i"), n = var("n"), row = var("pA1"), p = var("p"), end = var("p_end"), q = var("q");
  Var step = var("step"), c = var("c", DType::Int32), back = var("back");

  // Each load of interest, kept to look it up in the answer.
  Expr atP = load(crd, use(p));                                       // in the while, under p < p_end
  Expr afterStep = load(crd, use(p));                                 // after p moved: the condition no longer says so
  Expr unguarded = load(crd, use(p));                                 // after the while: no condition
  Expr ahead = load(crd, plus(p, 4));                                 // under p + 4 < p_end
  Expr last = load(crd, binary(BinaryOp::Sub, use(end), intLit(1)));  // under p < p_end: not empty
  Expr inAnd = load(crd, use(p));                                     // right of `p < p_end &&`
  Expr galloped = load(crd, add(use(p), use(step)));                  // under p + step < p_end, step >= 0
  Expr inFor = load(crd, use(q));                                     // for q in [p, p_end)
  Expr otherArray = load(other, use(p));                              // not a guarded array: not reported
  Expr backwards = load(crd, use(back));                              // a position that moves back
  Expr shared = load(crd, use(p));                                    // one node in two places, one unguarded

  Stmt body = block({
      declare(row, use(i)),
      declare(p, cast(scalar(DType::Int64), load(pos, use(row)))),
      declare(end, cast(scalar(DType::Int64), load(pos, add(use(row), intLit(1))))),
      declare(back, cast(scalar(DType::Int64), load(pos, use(row)))),
      declare(step, intLit(1)),
      whileLoop(lt(use(p), use(end)),
                block({declare(c, atP), declare(c, shared), assign(p, plus(p, 1)), declare(c, afterStep)})),
      declare(c, unguarded),
      ifThen(lt(plus(p, 4), use(end)), declare(c, ahead)),
      ifThen(lt(use(p), use(end)), declare(c, last)),
      whileLoop(both(lt(use(p), use(end)), lt(cast(scalar(DType::Int64), inAnd), intLit(7))),
                block({assign(p, select(lt(use(p), use(end)), plus(p, 1), use(p))), declare(c, otherArray)})),
      whileLoop(lt(add(use(p), use(step)), use(end)), block({declare(c, galloped), assign(p, add(use(p), use(step))),
                                                             assign(step, mul(use(step), intLit(2)))})),
      forLoop(q, use(p), use(end), declare(c, inFor)),
      assign(back, binary(BinaryOp::Sub, use(back), intLit(1))),
      ifThen(lt(use(back), use(end)), declare(c, backwards)),
      declare(c, shared),
  });
  auto loop = std::make_shared<ForNode>(i, intLit(0), use(n), body);
  RowDefinitions definitions(loop->body, i.get());
  auto proven = loadsWithinRowSegments(*loop, definitions, {crd.get()});
  auto in = [&](const Expr& e) {
    auto found = proven.find(static_cast<const LoadNode*>(e.get()));
    return found != proven.end() && found->second == pos;
  };
  check(in(atP), "a load under the while's p < p_end");
  check(!in(afterStep), "not after p moved past the test");
  check(!in(unguarded), "not after the loop, where nothing bounds p");
  check(in(ahead), "p + 4 under p + 4 < p_end");
  check(in(last), "p_end - 1 where p < p_end says the segment is not empty");
  check(in(inAnd), "a load right of `p < p_end &&` in a while's condition");
  check(in(galloped), "p + step, a gallop's doubling step, under p + step < p_end");
  check(in(inFor), "a for loop's variable from p to p_end");
  check(!in(otherArray) && proven.count(static_cast<const LoadNode*>(otherArray.get())) == 0,
        "an array that is not guarded is not reported");
  check(!in(backwards), "not a position that moves back below pos[i]");
  check(!in(shared), "not a load node that also sits where nothing bounds it");

  if (failures == 0) std::printf("segment positions: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
