// Merges lowered with selects instead of an if-chain of regions. In a while loop that
// coiterates several operands, the regions (which operands are at the coordinate) are
// normally an if-chain, one branch per region, each with the body simplified for its absent
// operands (lower_forall.cpp). When every region's body is the full body with its absent
// operands read as zero, one body does for all: each operand's value is
// select(its coordinate == v, value, 0). A sparse sum of two random matrices then runs without
// the branch that mispredicts on about every other entry.
//
// That holds when no operator meets a possibly absent operand on a side where zero
// annihilates: x * 0 would be computed (NaN for an infinite x, where the region has no
// entry at all), and a region whose body is zero must append nothing. The operators where
// zero is the identity (x + 0, x - 0, 0 - x) give the simplified body's value exactly, up to
// the sign of a zero sum (-0.0 + 0.0 is +0.0); others compute with an explicit zero in both
// forms (x / 0, max(x, 0)). The loads are safe: inside the loop every iterator is in range.
//
// Measured against the alternative that keeps the if-chain and moves each iterator's advance
// into the branches of the regions it is present in (so no select chains one step's positions
// to the next; 2026-11-27, the compiled A + B of two CSR matrices, old and new objects linked
// into one C harness, thread CPU time): the branches won on a block matrix plus its transpose
// (2.48 -> 2.03 ms) and on a disjoint pattern beside it (3.23 -> 2.81 ms), and lost on a
// half-overlapping one (2.04 -> 2.89), on a banded matrix's transpose, half-overlapping and
// disjoint patterns (1.58 -> 2.95, 1.35 -> 2.21, 2.08 -> 2.89) and on two uniform random
// matrices (18.5 -> 25.6 ms): the selects stay.
//
// Also measured and not kept (2026-11-27, the JIT's kernels in one process, interleaved,
// one thread, thread CPU time): both forms in every kernel, the form chosen as it runs from
// the branch form's rate of region changes in windows of 32 rows (block patterns change
// region at 14-21% of steps, random, banded and half-overlapping ones at 37-81%). On the
// block matrix in cache (0.42 M entries) it took A + A' 2.16 -> 2.05 ms, the elementwise
// products with A' and a disjoint pattern 2.20 -> 1.94 and 2.84 -> 2.56, and kept the selects'
// time on half-overlapping patterns (where branches alone took 1.97 -> 3.01); at the sizes of
// shipsec1 and pdb1HYS (3.6-4.3 M entries) selects and branches ran at the same speed, the
// merge being bound by memory there (about 13 GB/s with the stores' reads of their lines).
// It doubled the compile time of the elementwise product (70 -> 136 ms) and of a three-way
// sum (156 -> 365 ms). Non-temporal stores of the result, which would save those reads,
// made the merge 1.6-1.9x slower on this (virtual) machine, scalar or by whole lines.
#include <algorithm>

#include "lower/lowerer.hpp"

namespace coiter::lower {

namespace nt = coiter::notation;

namespace {

// Whether e may be zero because an access in `absent` is, and no annihilating operator meets
// such a subexpression (then `safe` stays true).
bool mayBeAbsent(const nt::Expr& e, const std::set<const AccessNode*>& absent, bool& safe) {
  switch (e->kind) {
    case nt::ExprKind::Access: return absent.count(static_cast<const AccessNode*>(e.get())) > 0;
    case nt::ExprKind::Negate: return mayBeAbsent(static_cast<const nt::NegateNode&>(*e).a, absent, safe);
    case nt::ExprKind::Binary: {
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      bool x = mayBeAbsent(b.a, absent, safe), y = mayBeAbsent(b.b, absent, safe);
      if ((x && b.op->leftZeroAnnihilates) || (y && b.op->rightZeroAnnihilates)) safe = false;
      return x || y;
    }
    default: return false;
  }
}

}  // namespace

bool Lowerer::mergesWithSelects(const cin::ForallNode& f, const std::vector<int>& testable,
                                const std::vector<SegmentInfo>& info) {
  if (testable.size() < 2 || f.body->kind != cin::StmtKind::Assign) return false;
  std::set<const AccessNode*> absent;
  for (int s : testable) {
    const AccessNode* access = info[s].access;
    // Workspaces are read by coordinate, and runs of a non-unique level need their own loop.
    if (access->tensor->temporary) return false;
    if (!access->tensor->format.levels()[info[s].level]->properties().unique) return false;
    absent.insert(access);
  }
  const auto& a = cin::as<cin::AssignNode>(f.body);
  bool safe = true;
  mayBeAbsent(a.rhs, absent, safe);
  return safe;
}

}  // namespace coiter::lower
