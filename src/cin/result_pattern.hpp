// Sparse results that keep an operand's pattern. In S(i,j) = A(i,j) * M(i,k) * N(k,j) (SDDMM),
// A(i,j) * x(j), A(i,j) * 2 or A(i,j) / D(i,j), the result is zero wherever A is, and A is
// the only operand stored sparsely along the result's sparse levels: every entry of A makes an
// entry of S at the same coordinates, so S has A's pattern (as SciPy's A.multiply(dense)
// keeps A's, explicit zeros included) and entry p of A is entry p of S. Nothing then needs
// appending: lowering stores each value at A's position (lower/lower_result_pattern.cpp),
// and legality lets any loop over A's entries fill the result in parallel.
#pragma once
#include "cin/concrete_notation.hpp"

namespace coiter::cin {

// The access (in `stmt`) of the operand whose pattern the result of `stmt` keeps, or null.
// It holds when the result has appended (compressed, singleton) levels and no inserted one;
// the operand has the result's format, index width and indices (in order); the one store to
// the result stores an expression, or a scalar temporary assigned expressions, that a zero of
// the operand makes zero (through products, quotients' numerators, negations, and sums whose
// terms all are so); and every other operand read along the result's indices stores every
// coordinate (dense).
const notation::AccessNode* resultPatternOperand(const Stmt& stmt);
// Whether `a` and `b` read the same tensor at the same indices (the entries of one operand,
// however often the statement reads it).
bool readsSameEntries(const notation::AccessNode& a, const notation::AccessNode& b);

}  // namespace coiter::cin
