// The default loop order (an automatic `reorder`, Kjolstad's thesis, ch. 3 and ch. 4). Concretize
// nests the result's indices outermost in their order; that traverses operands against their
// storage order whenever they are stored differently (CSC SpMV, SpGEMM by rows). For every
// chain of directly nested foralls this pass picks the permutation that
//   1. traverses every operand level without random access top-down (a hard constraint),
//   2. appends to compressed result levels in order without revisiting them,
//   3. visits dense operand levels in storage order (locality),
//   4. otherwise stays closest to concretize's order.
// Reordering foralls of one chain never changes results: the chain's body is an assignment
// or compound assignment with an associative operator (or a where nested inside all of them).
#pragma once
#include "cin/concrete_notation.hpp"

namespace coiter::cin {

Stmt chooseLoopOrder(const Stmt& s);

}  // namespace coiter::cin
