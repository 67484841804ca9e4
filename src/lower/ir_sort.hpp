// Sorting emitted as IR (see ir_sort.cpp).
#pragma once
#include <functional>
#include <string>

#include "ir/ir.hpp"

namespace coiter::lower {

// Sorts array[0, count) (int64) ascending in place. `name` makes fresh variable names.
ir::Stmt sortIndices(const ir::Var& array, const ir::Expr& count,
                     const std::function<std::string(const std::string&)>& name);

}  // namespace coiter::lower
