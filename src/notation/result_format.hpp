// The format coiter infers for a result when none is given (docs/reference.md, "Result
// formats"): dense unless every operand is sparse, or the expression is one product in which a
// sparse operand carries every result index and every summed index is dense-only; then the
// carriers' format when they share one the kernel can assemble, else compressed levels (a
// dense first level when some term reaches the first result index through a dense level).
// A quotient by a denominator that may be zero where nothing is stored makes it dense.
#pragma once
#include <string>
#include <vector>

#include "format/format.hpp"
#include "notation/index_notation.hpp"

namespace coiter::notation {

Format inferResultFormat(const std::vector<std::string>& resultIndices, const Expr& rhs);

}  // namespace coiter::notation
