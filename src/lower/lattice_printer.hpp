// The iteration lattice the lowerer builds for a statement's outermost loop, as text
// ("[B1, c1] > [B1] > [c1]"), for inspection and tests of lattice construction.
#pragma once
#include <string>

#include "cin/concrete_notation.hpp"

namespace coiter::lower {

std::string outerLattice(const cin::Stmt& stmt);

}  // namespace coiter::lower
