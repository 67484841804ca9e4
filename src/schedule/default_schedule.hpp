// The schedule a kernel gets when its caller gives none (issue: default schedule): the
// outermost loop runs on all CPU threads when that is legal.
//   - A sparse result built by rows (CSR-like) is assembled in parallel by chunks of rows.
//   - A dense result indexed by the loop's variable needs no race strategy, unless an operand
//     stores that variable in a non-unique level (COO's rows), whose coordinates repeat.
//   - A reduction into a scalar or a vector result gets per-thread copies (temporary); into a
//     larger dense result, atomic updates.
// Chunks are dynamic, for rows of skewed lengths. Whether the loop can run in parallel at all
// (it may merge several operands, or use a workspace) is only known when it is lowered: the
// compiler then falls back to the serial kernel, which computes the same result.
#pragma once
#include <string>
#include <vector>

#include "cin/concrete_notation.hpp"

namespace coiter::schedule {

// Schedule text for `stmt` (concretized, in its default loop order), or "" for none.
std::string defaultSchedule(const cin::Stmt& stmt);

// With target='cuda': schedules to try in order (the first that lowers and prints wins).
//   0. When a CSR-like operand drives the two outer loops and the result is dense: its
//      nonzeros split evenly, 4 per thread (two loops) or 32 per warp (lanes over the third
//      loop),
//      rows shared by chunks updated atomically. Robust to skewed rows.
//   1. A warp per iteration of the outer loop, its lanes splitting the next loop and reducing
//      into a scalar (SpMV's warp per row: coalesced reads of the row).
//   2. A warp per outer iteration, its lanes splitting the innermost loop (SpMM: each lane owns
//      result columns).
//   3. A thread per outer iteration.
// The outer loop's race strategy is the CPU default's, with atomics for every race (per-thread
// result copies do not fit a GPU).
std::vector<std::string> defaultGpuSchedules(const cin::Stmt& stmt);

}  // namespace coiter::schedule
