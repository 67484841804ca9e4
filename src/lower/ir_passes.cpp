// See runIRPasses in lower.hpp. The passes run on the whole function body: the prefetch
// patterns (a loop whose body starts an inner loop at a loaded row, or reads an array at its
// position only in some iterations) appear only in the computation, and the coordinate guards
// must see every load, prefetched rows' included. Skipped reads are prefetched first: the
// rows' pattern looks past prefetches, the skipped reads' needs the loop's loaded start.
// Interrupt points go last, so that the guards' versioned loops check too.
#include "ir/guard_coordinates.hpp"
#include "ir/interrupt_points.hpp"
#include "ir/prefetch_rows.hpp"
#include "ir/prefetch_streams.hpp"
#include "lower/lower.hpp"

namespace coiter::lower {

LoweredKernel runIRPasses(LoweredKernel k) {
  ir::FreshName fresh = [&k](const std::string& base) { return freshName(k.names, base); };
  ir::Stmt body = k.function.body;
  if (k.target == Target::Cpu) body = ir::prefetchIndirectRows(ir::prefetchSkippedReads(body), fresh);
  // Host kernels check the coordinates they load (so that a call need not scan its operands
  // first). A GPU kernel's operands are checked whole where they are copied to the device
  // (once for a device tensor, per call for a host operand: call/kernel_call.cpp), a scan no
  // dearer than the copy itself, so its loads go unchecked: a thread per row of a sparse sum
  // spent a third of its instructions on the checks.
  ir::Var violations = ir::makeVar(fresh("coordinate_violations"), ir::pointerTo(DType::Int64));
  ir::GuardedFunctionBody guarded{body, false};
  if (k.target == Target::Cpu) guarded = ir::guardCoordinates(body, k.coordinateRanges, violations, fresh);
  k.function.body = guarded.body;
  // Ctrl-C: host kernels check the runtime's flag in their outer loops.
  if (k.target == Target::Cpu) k.function.body = ir::addInterruptPoints(k.function.body).body;
  if (guarded.guarded) {
    k.function.params.push_back(ir::Param{violations, k.abi.pointerSlots++, false, /*flag=*/true});
    k.abi.violationSlot = k.function.params.back().slot;
  }
  return k;
}

}  // namespace coiter::lower
