// A candidate's asymptotic cost as a set of tasks (Ahrens et al., PLDI 2022): an
// abstract interpreter walks the candidate's loops with the bound variables Q, a guard G
// (which iterations run, in disjunctive normal form) and for every tensor a predicate of
// where it may be nonzero, and emits
//   - at a loop over i: for every access it walks at i, the coiteration tasks
//     {Q ∪ {i} | G ∧ ∃(unbound) state(access)}, or {Q ∪ {i} | G} when it walks none (a
//     dense loop); the body then runs under G ∧ every walked access nonzero (in a product
//     every other combination of zero and nonzero annihilates);
//   - at a where: {Q ∪ W | G} for a dense workspace's initialization, then the producer,
//     whose writes make the workspace's predicate, then the consumer;
//   - at an assignment: {Q | G}, the computation.
// Sunk costs are added (each patterned input's nonzeros, each dimension) and every patterned
// input is assumed nonempty (§3.4); the union is simplified once (§3.5).
#pragma once
#include "autosched/candidate_program.hpp"
#include "autosched/conjunctive_query.hpp"
#include "autosched/product_statement.hpp"

namespace coiter::autosched {

// The tasks the candidate's loops perform, without sunk costs or assumptions.
Union programTasks(const Candidate& c);

// The cost the frontier compares: the program's tasks with the statement's sunk costs, under
// its assumptions, simplified by `simplify` (one per statement).
Union asymptoticCost(const ProductStatement& s, const Candidate& c, Simplifier& simplify);

}  // namespace coiter::autosched
