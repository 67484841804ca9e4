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

#include "cin/concrete_notation.hpp"

namespace coiter::schedule {

// Schedule text for `stmt` (concretized, in its default loop order), or "" for none.
std::string defaultSchedule(const cin::Stmt& stmt);

}  // namespace coiter::schedule
