// Software prefetch of rows reached through an index array (SpGEMM's B rows).
//
// In `for (p ...) { k = crd[p]; for (q = pos[k]; ...) ... B[q] ... }` each inner loop starts
// at a row chosen by a loaded coordinate: a random row of another tensor, whose first access
// misses the cache (Gustavson's SpGEMM spends most of its time waiting there on power-law
// and FEM matrices). The hardware prefetcher cannot guess the row; the loop can, a few
// iterations ahead. prefetchIndirectRows adds, at the top of such a loop's body, a prefetch
// of the row start (pos[k']) for p + 2d, and of the row's first elements for p + d, for the
// arrays the inner loop reads at its position. Prefetches never fault and change no result.
#pragma once
#include <functional>
#include <string>

#include "ir/ir.hpp"

namespace coiter::ir {

// Iterations ahead that the row's elements are prefetched (the row start: twice as far).
constexpr int64_t kPrefetchDistance = 4;

// A name for a new variable, unused in the function (from a base name).
using FreshName = std::function<std::string(const std::string&)>;

Stmt prefetchIndirectRows(const Stmt& s, const FreshName& fresh);

}  // namespace coiter::ir
