// NumPy's type promotion for the value types coiter supports (NumPy 2 rules, NEP 50): two
// arrays promote as np.promote_types; a Python scalar ("weak" literal) never widens an array
// of its own kind or above. True division of integers or bools gives float64.
#pragma once
#include "memory/dtype.hpp"

namespace coiter::notation {

DType promoteTypes(DType a, DType b);
// Result of combining two operands, either of which may be a weak Python scalar.
DType promoteOperands(DType a, bool aWeak, DType b, bool bWeak);
// The type `/` computes in for operands of type t (already promoted).
DType trueDivisionType(DType t);

}  // namespace coiter::notation
