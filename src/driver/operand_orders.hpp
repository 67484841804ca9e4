// When no loop order traverses every operand in its storage order (A(k,i) * B(k,j) with both
// in CSR and a CSR result: some loop reads one of them against its order), coiter converts
// operands to other mode orders (transpositions, O(nnz) each) rather than fail, as a user
// expects an expression to just work. This chooses the conversions; the caller converts the
// data and compiles the statement with the formats chosen.
#pragma once
#include <map>
#include <string>

#include "format/format.hpp"
#include "notation/index_notation.hpp"

namespace coiter {

// The operands (by name) to give other formats (the same levels in another mode order; CSR or
// CSC for DIA, ELL and BCSR) so that `schedule` is legal for the statement (scheduleProblem
// finds nothing). Candidates, at most `maxTrials`: first the conversion that follows one loop
// order for every operand (the result's indices in its storage order, then the summed ones),
// then the fewest conversions, each subset of sparse operands in order of appearance with
// every combination of other orders. Empty when the statement is legal as it is; throws
// CompileError with the statement's own problem when no candidate is legal.
std::map<std::string, Format> operandOrdersThatTraverse(const notation::Assignment& a, const std::string& schedule,
                                                        const std::string& target, int maxTrials = 256);

}  // namespace coiter
