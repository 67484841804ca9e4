// The sum over a derived level's variable (DIA's diagonal, ELL's slot) that concretize binds
// to one term of an addition, as in C(i,j) = A(i,j) + B(i,j) with A in DIA:
//
//     ∀i ∀j (C(i,j) = t + B(i,j) where ∀d t += A(i,j))
//
// cannot be lowered as written: A's column level sits below its diagonal level, so the loop
// over j cannot run outside the loop over d. The sum is collected in a vector workspace over
// j instead, whose producer runs the diagonal loop outside j:
//
//     ∀i (∀j C(i,j) = w(j) + B(i,j) where ∀d ∀j w(j) += A(i,j))
//
// and the consumer merges the workspace's coordinates with B's (lower_workspaces.cpp).
#pragma once
#include "cin/concrete_notation.hpp"

namespace coiter::cin {

Stmt hoistDerivedLevelSums(const Stmt& s);

}  // namespace coiter::cin
