// Coordinates loaded from operands are checked where they are loaded.
//
// An operand's index arrays are NumPy memory: a user may change them after coiter checked
// them, and SciPy operands are passed on every call without a scan of their coordinates
// (that scan would cost as much as SpMV itself). A coordinate is used as an address (x[j],
// a dense result row, a workspace slot), so a kernel must not trust it. guardCoordinates
// rewrites every load from a guarded crd array into
//
//     select(outside(c), lo, c)      with outside(c) = (uint64)(c - lo) >= (uint64)(extent - lo)
//
// (32-bit coordinates from 0: min((uint32)c, extent - 1), one vector instruction per eight)
// and records `invalid |= (uint32)c - min((uint32)c, extent - 1)` (or `invalid |= outside(c)`)
// in a local flag, an unsigned integer nonzero once a coordinate was bad, just before the
// statement that loads it. The clamp keeps every address within its array whatever the coordinate holds; the flag
// makes the kernel report the bad coordinate instead of returning a wrong result. A load
// whose value never reaches an address (followed through variables and arrays: a union's
// coordinate stored into the result's crd array, a merge's comparison) gets the flag only.
// Both are
// branch-free, so loops still vectorize (the flag is an or-reduction); a loop pays two
// compares and a select per coordinate, against a memory pass over crd for a separate check.
//
// The flag lives in the function's top scope and, inside a parallel loop, in the loop's body
// (whose iterations may not assign variables declared outside it). A parallel body whose flag
// is nonzero adds 1 to violations[0] (atomically) as it ends; the function does the same
// before each Return when its own flag is. The caller zeroes violations[0] before the call and
// reports the operands (their arrays re-checked to name the bad entry) when it is not zero.
//
// A loop over rows whose coordinates are all loaded by row loops `for q in [pos[i],
// pos[i + 1])` of its own rows (CSR SpMV, SpMM) is versioned per block of rows instead: a
// vectorizable pass checks the block's coordinates (crd[pos[first]] .. crd[pos[stop] - 1]),
// and its rows run as lowered when all are in range, guarded otherwise. Where the block's
// coordinates lie far apart, its rows also prefetch what they gather through them
// (prefetchGathers); where they lie close together and rows are long, each row is checked
// before it runs instead. So is any other innermost serial loop whose only coordinate loads
// are crd[q] of its own variable q. The arrays are then read twice; a writer changing them
// between the reads, during the call, is outside the guarantee (as is any writer racing a
// running kernel). Such rows that store through their coordinates instead (a scatter:
// `y[crd[q]] += A[q] * x[i]`) check each coordinate where the row loop loads it, a compare
// and a branch that stops the row and sets the flag, and the loads every entry of the row
// repeats (x[i]) are moved before the row loop (invariant_loads.hpp). So do rows that
// gather from far apart when most rows of the call do (sampled once per call): their blocks
// skip the pass, every row prefetching its gathers. A merge's rows (a sum or elementwise
// product of CSR matrices: positions in while loops) go by blocks too, when every coordinate
// they load provably lies in its row's segment (segment_positions.hpp); they take neither
// the row-by-row nor the far-rows version, whose checks are per row loop.
//
// Positions (pos arrays) are not rewritten: the caller checks them before every call
// (ValidationScope::Structure, O(rows)), which bounds every loop over positions.
//
// Loads in a while loop's condition are only compared (a run of equal coordinates), so they
// are left as they are; one used there as an address is a lowering bug and throws.
#pragma once
#include <map>

#include "ir/ir.hpp"
#include "ir/prefetch_rows.hpp"

namespace coiter::ir {

// The coordinates a crd array may hold: [lo, extent).
struct CoordinateRange {
  int64_t lo = 0;  // 0, or -1 where the level stores unlabeled slots as -1
  Expr extent;     // Int64
};
using CoordinateRanges = std::map<const VarNode*, CoordinateRange>;

struct GuardedFunctionBody {
  Stmt body;
  bool guarded = false;  // some load was rewritten (the kernel needs `violations`)
};

// `body` is a whole function body (its Returns flush the top-level flag); `violations` a
// pointer to Int64, a parameter the caller adds when `guarded`.
GuardedFunctionBody guardCoordinates(const Stmt& body, const CoordinateRanges& ranges, const Var& violations,
                                     const FreshName& fresh);

}  // namespace coiter::ir
