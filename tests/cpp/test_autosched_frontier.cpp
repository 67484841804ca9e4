// Costs and frontier membership (src/autosched/asymptotic_cost.hpp, frontier.hpp), worked by
// hand for SpMV and SpGEMM over CSR operands; every member's kernels pass the legality check.
#include "autosched/asymptotic_cost.hpp"
#include "autosched/frontier.hpp"
#include "autosched_test_support.hpp"

using namespace coiter;
using namespace coiter::autosched;
using autosched_test::check;
using autosched_test::statement;

namespace {

const RankedCandidate* find(const Frontier& f, const std::string& program) {
  for (const auto& c : f.candidates) {
    if (c.program.toString() == program) return &c;
  }
  return nullptr;
}

Query q(std::vector<std::string> head, std::vector<Atom> atoms) {
  Query out{std::move(head), std::move(atoms)};
  out.normalize();
  return out;
}

// The tasks of the three SpGEMM orders (§1) over CSR operands, without sunk costs:
//   Gustavson (i,k,j):      {i} ∪ {(i,k) | B(i,k)} ∪ {(i,k,j) | B(i,k) ∧ C(k,j)}
//   inner products (i,j,k): C read as CSC; the dense levels make (i,j) a dense loop, and k
//                           walks both lists: {(i,j)} ∪ {(i,j,k) | B(i,k)} ∪ {(i,j,k) | C(k,j)}
void testSpGEMMTasks() {
  auto a = statement({"A", "ds", {"i", "j"}}, {{"B", "ds", {"i", "k"}}, {"C", "ds", {"k", "j"}}});
  Frontier f = asymptoticFrontier(a, autosched_test::legal);
  const RankedCandidate* gustavson = find(f, "∀i ∀k ∀j A(i,j) = B(l(i),w(k)) * C(l(k),w(j))");
  const RankedCandidate* inner = find(f, "∀i ∀j ∀k A(i,j) = B(l(i),w(k)) * C(l(j),w(k))");
  check(gustavson && inner, "SpGEMM: the Gustavson and inner-product orders are candidates");
  if (!gustavson || !inner) return;
  Union expected{q({"i"}, {}), q({"i", "k"}, {{"B", {"i", "k"}}}),
                 q({"i", "j", "k"}, {{"B", {"i", "k"}}, {"C", {"k", "j"}}})};
  Union tasks = programTasks(gustavson->program);
  check(contained(tasks, expected) && contained(expected, tasks), "Gustavson's tasks: " + toString(tasks));
  Union innerExpected{q({"i", "j"}, {}), q({"i", "j", "k"}, {{"B", {"i", "k"}}}),
                      q({"i", "j", "k"}, {{"C", {"k", "j"}}})};
  Union innerTasks = programTasks(inner->program);
  check(contained(innerTasks, innerExpected) && contained(innerExpected, innerTasks),
        "inner products' tasks: " + toString(innerTasks));
  // Gustavson is on the frontier, lowered as a reorder; the inner products are dominated.
  check(gustavson->onFrontier, "SpGEMM: Gustavson is on the frontier");
  check(gustavson->lowered() && gustavson->lowering.stages.size() == 1 &&
            gustavson->lowering.stages[0].schedule == "reorder(i,k,j)",
        "SpGEMM: Gustavson lowers to reorder(i,k,j)");
  check(!inner->onFrontier && inner->dominatedBy >= 0, "SpGEMM: the inner products are dominated");
  if (inner->dominatedBy >= 0) {
    check(strictlyCheaper(f.candidates[inner->dominatedBy].cost, inner->cost),
          "the inner products' dominator is strictly cheaper");
  }
}

// Every frontier member lowers and passes the legality check; no member is strictly cheaper
// than another; every dominated candidate has a strictly cheaper member.
void testFrontierInvariants(const notation::Assignment& a, const std::string& name) {
  Frontier f = asymptoticFrontier(a, autosched_test::legal);
  check(!f.members.empty(), name + ": a nonempty frontier");
  for (int m : f.members) {
    const RankedCandidate& c = f.candidates[m];
    check(c.lowered(), name + ": member lowers: " + c.program.toString());
    for (const auto& s : c.lowering.stages)
      check(scheduleProblem(s.statement, s.schedule).empty(), name + ": legal " + s.schedule);
    for (int other : f.members)
      check(!strictlyCheaper(f.candidates[other].cost, c.cost), name + ": members are incomparable");
  }
  for (const auto& c : f.candidates) {
    if (!c.lowered() || c.onFrontier) continue;
    check(c.dominatedBy >= 0 && strictlyCheaper(f.candidates[c.dominatedBy].cost, c.cost),
          name + ": a dominated candidate names a strictly cheaper member: " + c.program.toString());
  }
}

// SpMV2 a(i) = B(i,j) C(j,k) d(k): the where computing C·d first into a dense vector runs in
// two loops of depth 2 (§5's 82× over the default); it is on the frontier, as two kernels.
void testSpMV2() {
  auto a = statement({"a", "d", {"i"}}, {{"B", "ds", {"i", "j"}}, {"C", "ds", {"j", "k"}}, {"d", "d", {"k"}}});
  Frontier f = asymptoticFrontier(a, autosched_test::legal);
  check(f.minimumDepth == 2, "SpMV2: minimum depth 2");
  const RankedCandidate* twoPass =
      find(f, "((∀i ∀j a(i) = B(l(i),w(j)) * w(l(j))) where (∀j ∀k w(j) = C(l(j),w(k)) * d(l(k))))  [w: d]");
  check(twoPass && twoPass->onFrontier, "SpMV2: C·d into a dense w, then B·w, is on the frontier");
  if (twoPass) check(twoPass->lowering.stages.size() == 2, "SpMV2: it lowers to two kernels");
  testFrontierInvariants(a, "SpMV2");
}

}  // namespace

int main() {
  testSpGEMMTasks();
  testSpMV2();
  testFrontierInvariants(statement({"y", "d", {"i"}}, {{"A", "ds", {"i", "j"}}, {"x", "d", {"j"}}}), "SpMV");
  testFrontierInvariants(
      statement({"A", "ds", {"i", "j"}}, {{"B", "ds", {"i", "k"}}, {"C", "ds", {"k", "j"}}, {"D", "ds", {"k", "j"}}}),
      "SpGEMMH");
  return autosched_test::finish("all frontier tests passed");
}
