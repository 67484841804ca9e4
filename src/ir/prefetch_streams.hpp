// Software prefetch of arrays that a loop over positions reads at its position only in some
// of its iterations.
//
// In `for (q = pos[p]; q < pos[p + 1]; q++) { l = crd[q]; for (r = row[l]; r < row[l + 1]; r++)
// ... vals[q] ... }` the value of entry q is read only by the iterations whose inner loop
// runs: in SpMTTKRP's second kernel, `A(i,j) = B(i,k,l) * w(k,j,l)` located at each nonzero of
// B, B's value is read at the 5% of B's nonzeros whose list w(k,:,l) is not empty. Such reads
// skip through the array, one at a scattered position now and then, and each misses the
// cache: the hardware prefetcher follows a stream, not them. LLVM moves a load of the value
// at the top of the body back to where it is used, so prefetchSkippedReads adds at the top of
// such a loop's body a prefetch of each such array kStreamPrefetchDistance positions ahead,
// which every iteration runs: the array is fetched as a stream. Prefetches never fault (the
// position ahead may be past the array) and change no result.
#pragma once
#include "ir/ir.hpp"

namespace coiter::ir {

// Positions ahead that an array read at a loop's position is prefetched.
constexpr int64_t kStreamPrefetchDistance = 16;

// `s` with the prefetches above added to every loop over positions (a loop whose start is
// loaded: a segment of a pos array) that holds an inner loop and loads some array at exactly
// its position only inside a branch, a while loop or an inner loop over positions (not where
// every iteration loads it: in a statement directly in the body, or in an inner loop over a
// dimension, whose load LLVM moves before that loop).
Stmt prefetchSkippedReads(const Stmt& s);

}  // namespace coiter::ir
