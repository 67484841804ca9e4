// When no loop order traverses every operand in its storage order (A(k,i) * B(k,j) with both
// in CSR and a CSR result: some loop reads one of them against its order), coiter converts
// operands to other mode orders (transpositions, O(nnz) each) rather than fail, as a user
// expects an expression to just work. This chooses the conversions; the caller converts the
// data and compiles the statement with the formats chosen.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "notation/index_notation.hpp"

namespace coiter {

// Candidate conversions, each the operands (by name) to give other formats (the same levels in
// another mode order; CSR or CSC for DIA, ELL and BCSR), kept when `schedule` is legal for the
// statement with them (scheduleProblem finds nothing), in the order to try them: first the
// conversion that follows one loop order for every operand (the result's indices in its
// storage order, then the summed ones), then the fewest conversions, each subset of sparse
// operands in order of appearance with every combination of other orders; at most `maxTrials`
// candidates are judged. Lowering compiles every candidate the legality check passes: the
// caller uses the first; the others are the alternatives, in order, for a search.
std::vector<std::map<std::string, Format>> operandOrdersThatTraverse(const notation::Assignment& a,
                                                                     const std::string& schedule,
                                                                     const std::string& target, int maxTrials = 256);

}  // namespace coiter
