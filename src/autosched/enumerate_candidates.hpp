// The candidate universe of a product statement (Ahrens et al., PLDI 2022 §4, steps 6.2-6.6
// as far as coiter can express them): every where-grouping of two or more factors, not all
// of them (or none), every placement of the loops (outside the where, in its consumer, in its producer) and
// every order of each group of loops, every workspace format coiter offers for the
// workspace's variables, and for every read level the protocol its level type offers. Only
// the candidates of minimum loop depth are kept (§6.4), and equal programs once.
#pragma once
#include <vector>

#include "autosched/candidate_program.hpp"
#include "autosched/product_statement.hpp"

namespace coiter::autosched {

struct Universe {
  std::vector<Candidate> candidates;  // of minimum depth, each program once
  int minimumDepth = 0;
  size_t deeper = 0;  // candidates left out for being deeper than the minimum (equal programs not merged)
};

Universe enumerateCandidates(const ProductStatement& s);

}  // namespace coiter::autosched
