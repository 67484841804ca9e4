// The statements the asymptotic stage schedules: a result access assigned a product of
// accesses, summed over the index variables the result does not have (einsum form), as the
// paper's six kernels are. Sums of terms, literals, negation, explicit reductions and
// accumulating assignments are refused with an ArgumentError naming what is not supported.
#pragma once
#include <string>
#include <vector>

#include "notation/index_notation.hpp"

namespace coiter::autosched {

struct Factor {
  notation::TensorVarPtr tensor;
  std::vector<std::string> indices;
};

struct ProductStatement {
  notation::TensorVarPtr result;
  std::vector<std::string> resultIndices;
  std::vector<Factor> factors;    // left to right
  std::vector<std::string> vars;  // every index variable, in order of first appearance
  // Index variables of the given factors (by position in `factors`), in `vars` order.
  std::vector<std::string> varsOf(const std::vector<int>& factorIndices) const;
};

ProductStatement productStatement(const notation::Assignment& a);

}  // namespace coiter::autosched
