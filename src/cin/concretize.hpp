// Concretize (Kjolstad's thesis, ch. 4): index notation -> concrete index notation.
//   1. implicit (Einstein) sums become explicit reductions, bound to the smallest term (a
//      whole product, possibly inside parentheses) that holds every use of the index;
//   2. each reduction becomes a where statement with a scalar temporary, simplified to a
//      compound assignment when the consumer only forwards the temporary;
//   3. one forall per result index wraps the statement, in the result's level order.
// Loop order and workspaces are decided afterwards (loop_order.hpp, workspaces.hpp).
#pragma once
#include "cin/concrete_notation.hpp"

namespace coiter::cin {

// Wraps every index used on the right only in a sum, per docs/reference.md, "Index notation".
notation::Assignment makeReductionsExplicit(const notation::Assignment& a);

Stmt concretize(const notation::Assignment& a);

}  // namespace coiter::cin
