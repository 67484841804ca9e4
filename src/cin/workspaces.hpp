// Automatic workspaces (Kjolstad's thesis, ch. 4 and ch. 5): a compressed result level can only be
// appended to in order, once per coordinate. When the chosen loop order puts a reduction
// loop above the loop of such a level (SpGEMM by rows: ∀i ∀k ∀j A(i,j) += B(i,k) C(k,j)),
// the reduction is computed into a dense workspace first and the workspace is then appended
// in order (Gustavson's algorithm):
//     ∀i (∀j A(i,j) = w(j) where ∀k ∀j w(j) += B(i,k) C(k,j))
// The lowerer keeps the workspace's touched coordinates in a list, so consuming it costs the
// number of entries, not the dimension.
#pragma once
#include <functional>

#include "cin/concrete_notation.hpp"

namespace coiter::cin {

// The index variables a loop binds: itself, or for a loop derived by scheduling the original
// variables it iterates (a split's loops iterate i; a fused loop iterates i and j).
using LoopBinds = std::function<std::vector<std::string>(const std::string&)>;
std::vector<std::string> bindsItself(const std::string& v);

Stmt insertWorkspaces(const Stmt& s, const LoopBinds& binds = bindsItself);

}  // namespace coiter::cin
