// A candidate as programs the existing compiler runs: one kernel (the statement, rewritten
// so the grouped factors form one subexpression, with a schedule of reorder and precompute
// commands), or two kernels for a where around which no loop runs and that precompute cannot
// express (the workspace becomes a tensor the first kernel computes and the second reads).
// Operands whose format would be traversed out of order are read transposed (their stage's
// format reorders the modes: a conversion, linear in the operand, outside the asymptotic
// cost); so is a sparse workspace the second kernel reads out of order, which the first then
// writes as dense rows of compressed lists. Every stage is judged by the caller's legality
// check before it is emitted.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autosched/candidate_program.hpp"
#include "autosched/product_statement.hpp"
#include "notation/index_notation.hpp"

namespace coiter::autosched {

struct KernelStage {
  notation::Assignment statement;  // its tensors carry the formats the stage reads and writes
  std::string schedule;            // schedule text
  // Each tensor's name and format (letter syntax), the result first; scalars have none.
  std::vector<std::pair<std::string, std::string>> formats() const;
};

struct Lowering {
  std::vector<KernelStage> stages;  // in order; empty when the candidate does not lower
  std::string problem;              // why it does not: not expressible, or the legality check's reason
};

// "" when the schedule is legal for the statement, else the reason (coiter::scheduleProblem).
using LegalityCheck = std::function<std::string(const notation::Assignment&, const std::string& schedule)>;

// Why the candidate's where is not one precompute command ("" when it is, or when it has no
// where): then it lowers as two kernels, or not at all.
std::string precomputeProblem(const ProductStatement& s, const Candidate& c);

Lowering lowerCandidate(const ProductStatement& s, const Candidate& c, const LegalityCheck& legal);

}  // namespace coiter::autosched
