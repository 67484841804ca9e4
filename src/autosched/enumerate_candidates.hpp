// The candidate universe of a product statement (Ahrens et al., PLDI 2022 §4, steps 6.2-6.6
// as far as coiter can express them): every where-grouping of two or more factors, not all
// of them (or none), every placement of the loops (outside the where, in its consumer, in its producer) and
// every order of each group of loops, every workspace format coiter offers for the
// workspace's variables, and for every read level the protocol its level type offers. Only
// the candidates of minimum loop depth are kept (§6.4), and equal programs once.
#pragma once
#include <functional>
#include <vector>

#include "autosched/candidate_program.hpp"
#include "autosched/product_statement.hpp"

namespace coiter::autosched {

struct Universe {
  std::vector<Candidate> candidates;  // of minimum depth, each program once (none when visited)
  int minimumDepth = 0;
  size_t deeper = 0;  // candidates left out for being deeper than the minimum (equal programs not merged)
};

// Hands each candidate of minimum depth to `visit` as it is built, in the universe's order,
// until `visit` returns false (the frontier's deadline): the rest are not built. The universe
// returned holds the minimum depth and the deeper count, not the candidates.
using CandidateVisitor = std::function<bool(Candidate&&)>;
Universe enumerateCandidates(const ProductStatement& s, const CandidateVisitor& visit);

// The whole universe.
Universe enumerateCandidates(const ProductStatement& s);

}  // namespace coiter::autosched
