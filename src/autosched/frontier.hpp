// The asymptotic stage of the autoscheduler (Ahrens et al., PLDI 2022; docs/
// autoscheduling-asymptotic.md): a statement's candidate programs of minimum loop depth, each
// with its cost as a union of conjunctive queries, lowered to schedules the compiler runs,
// and the Pareto frontier of the lowered candidates under asymptotic domination (a candidate
// is dominated when another's task set is strictly contained in its own).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "autosched/candidate_program.hpp"
#include "autosched/conjunctive_query.hpp"
#include "autosched/lower_candidate.hpp"
#include "autosched/product_statement.hpp"

namespace coiter::autosched {

struct RankedCandidate {
  Candidate program;
  Union cost;            // computed for the candidates that lower (the others are not ranked)
  Lowering lowering;     // no stages: not lowered (lowering.problem says why), not ranked
  int dominatedBy = -1;  // index of a frontier candidate whose cost is strictly contained in this one's
  bool onFrontier = false;
  bool lowered() const { return !lowering.stages.empty(); }
};

struct Frontier {
  ProductStatement statement;
  int minimumDepth = 0;
  size_t deeper = 0;                        // candidates the minimum-depth filter left out
  std::vector<RankedCandidate> candidates;  // the minimum-depth universe, in enumeration order
  // False when the deadline cut the enumeration: `candidates` are the universe's first ones,
  // and the frontier is theirs (every member lowers; a candidate not enumerated may be
  // cheaper than some).
  bool complete = true;
  std::vector<int> members;  // indices of the frontier's candidates
  // The members grouped by equal cost (each one's costs contain each other's): candidates the
  // model cannot tell apart, left to the empirical stage.
  std::vector<std::vector<int>> costClasses;
  // Candidates, their costs and schedules, and for each dominated one the candidate that
  // dominates it; `all`: also the candidates that do not lower, with the reason.
  std::string report(bool all = false) const;
};

// a's cost strictly contained in b's: a does asymptotically less work on some inputs and
// never more, so b is dominated (the paper says b "dominates" a: it does more work).
bool strictlyCheaper(const Union& a, const Union& b);

// Whether a dominates b on the frontier: a is strictly cheaper, and is not two kernels where b
// is one (a two-kernel candidate's tasks leave out writing and converting its intermediate:
// frontier.cpp).
bool dominates(const RankedCandidate& a, const RankedCandidate& b);

// `seconds`: a deadline, checked before each candidate is lowered and ranked once one has
// lowered; when it passes, the frontier of the candidates ranked so far is returned, not
// complete (and not empty when any candidate lowers).
Frontier asymptoticFrontier(const notation::Assignment& a, const LegalityCheck& legal,
                            std::optional<double> seconds = std::nullopt);

}  // namespace coiter::autosched
