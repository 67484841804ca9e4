// Software prefetch of rows reached through an index array (SpGEMM's B rows).
//
// In `for (p ...) { k = crd[p]; for (q = pos[k]; ...) ... B[q] ... }` each inner loop starts
// at a row chosen by a loaded coordinate: a random row of another tensor, whose first access
// misses the cache (Gustavson's SpGEMM spends most of its time waiting there on power-law
// and FEM matrices). The hardware prefetcher cannot guess the row; the loop can, a few
// iterations ahead. prefetchIndirectRows adds, at the top of such a loop's body, a prefetch
// of the row start (pos[k']) for p + 2d, and of the row's first elements for p + d, for the
// arrays the inner loop reads at its position. Prefetches never fault and change no result.
// The loop runs with them only where its rows lie far apart (checked where it starts: more
// than d iterations, whose first and last rows start kCloseRows positions apart or more);
// otherwise it runs as lowered.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace coiter::ir {

// Iterations ahead that the row's elements are prefetched (the row start: twice as far).
constexpr int64_t kPrefetchDistance = 4;
// Rows that start fewer positions apart than this (16 KiB of 32-bit coordinates) lie close
// together: they are not prefetched.
constexpr int64_t kCloseRows = 4096;

// A name for a new variable, unused in the function (from a base name).
using FreshName = std::function<std::string(const std::string&)>;

Stmt prefetchIndirectRows(const Stmt& s, const FreshName& fresh);

// Positions ahead that an element gathered through a coordinate is prefetched.
constexpr int64_t kGatherPrefetchDistance = 32;

// A loop over positions q whose coordinates crd[q] (for each array in `crd`) are read at every
// position below `limit`.
struct GatheringLoop {
  std::vector<Var> crd;
  Expr limit;  // Int64; greater than every q of the loop
  // Whether q + d < limit at every position of the loop (the caller tested it for a whole
  // block of rows): the loop then prefetches at every position, in one piece.
  bool aheadWithinLimit = false;
};

// Software prefetch of elements gathered through coordinates (x[j] with j = crd[q] in CSR
// SpMV): random reads, whose cache misses the out-of-order core overlaps only as far as its
// window reaches (a few rows of 4 entries). `s` with each loop in `loops` (by its variable)
// split in two: positions q with q + d < limit prefetch each such element at position q + d at
// the top of their iteration, the rest do not (not split where aheadWithinLimit). Only for
// coordinates known to be in range: the address is then within its array.
Stmt prefetchGathers(const Stmt& s, const std::map<const VarNode*, GatheringLoop>& loops, const FreshName& fresh);

}  // namespace coiter::ir
