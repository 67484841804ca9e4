// Two-pass assembly of a sparse result (kernel_abi.hpp, TwoPassAssembly; TACO's "insert"
// assembly, with the counts taken by the kernel itself): the kernel runs twice. The counting
// pass iterates as the one-pass kernel does but stores nothing except, per row (a position of
// the dense levels above the result's compressed level), the number of entries the row
// appends, into pos[row + 1]. The caller turns the counts into offsets and allocates crd and
// vals exactly; the filling pass then appends each row's entries from its offset.
//   - Rows are independent, so the loop over them (or a loop above it) may run on parallel
//     threads: the row's counter is declared in the row, private to the thread that runs it.
//     A GPU has no other way to assemble (its threads cannot grow arrays).
//   - The filling pass writes only inside each row's room, from its offset to the next row's.
//   - Every entry the iteration produces is kept, zero or not (as cuSPARSE and TACO do): the
//     one-pass kernel drops entries whose value comes out zero, but the counting pass does
//     not compute values, and both passes must agree on the entries.
#include <optional>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;

void Lowerer::planTwoPassAssembly() {
  if (!assemble_ || groups_.empty() || !scheduled_.assemblesInTwoPasses(resultTensor_->name)) return;
  // (The schedule's legality check refuses the other formats with the reason.)
  if (!resultTensor_->format.fillsRowsInTwoPasses()) {
    throw CompileError("the sparse result " + resultTensor_->name + " (format " + resultTensor_->format.str() +
                       ") cannot be assembled in two passes (count, then fill by rows; on a GPU the only way): that "
                       "needs its one compressed level last and under dense levels only (e.g. CSR)");
  }
  twoPass_ = true;
  pass_ = makeVar(freshName("assembly_pass"), scalar(DType::Int64));
  rowEnd_ = makeVar(freshName(resultTensor_->name + "_row_end"), scalar(DType::Int64));
  abi_.twoPass = TwoPassAssembly{true, abi_.integerSlots, groups_.front().first};
  params_.push_back(Param{pass_, abi_.integerSlots++, false});
}

Stmt Lowerer::inFillPass(Stmt s) const {
  if (!twoPass_ || !s) return s;
  // (The row's end is 0 while counting, so one test says both: filling, and room left. The
  // room is exact when both passes see the same operands; a caller changing them between the
  // passes gets a row cut short, never a write past it.)
  return ifThen(binary(BinaryOp::Lt, ir::ref(groups_.front().count), ir::ref(rowEnd_)), std::move(s));
}

Stmt Lowerer::countRowInPasses(const AppendGroup& group, const std::vector<Stmt>& body) {
  const LevelKernelVars& level = result_.vars->levels[group.first];
  Expr row = result_.pos[group.first - 1];
  // After the counting pass the caller has turned pos into offsets: the row starts at pos[row].
  std::optional<PositionRange> room = levelOf(group.first).positionRange(level, LevelParent{row, nullptr, false});
  Expr filling = binary(BinaryOp::Ne, ir::ref(pass_), intLit(0));
  std::vector<Stmt> out{declare(group.count, select(filling, room->begin, intLit(0))),
                        declare(rowEnd_, select(filling, room->end, intLit(0)))};
  out.insert(out.end(), body.begin(), body.end());
  out.push_back(
      ifThen(logicalNot(filling),
             levelOf(group.first).countIntoSegment(level, row, ir::ref(group.count), resultTensor_->indexType)));
  return block(std::move(out));
}

}  // namespace coiter::lower
