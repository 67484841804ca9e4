// Containment of conjunctive queries (src/autosched/conjunctive_query.hpp) on pairs worked by
// hand: lazy tasks, projections, dimensions, unions, and the simplifier.
#include "autosched/conjunctive_query.hpp"
#include "autosched_test_support.hpp"

using namespace coiter;
using namespace coiter::autosched;
using autosched_test::check;

namespace {

const auto q = autosched_test::query;

void testCQ() {
  Query bij = q({"i", "j"}, {{"B", {"i", "j"}}});
  Query bijk = q({"i", "j", "k"}, {{"B", {"i", "j"}}});
  // Lazy tasks: (i, j) tuples are among the subsets of (i, j, k) tuples, not the other way.
  check(contained(bij, bijk), "{(i,j)|B(i,j)} ⊆ {(i,j,k)|B(i,j)}");
  check(!contained(bijk, bij), "{(i,j,k)|B(i,j)} ⊄ {(i,j)|B(i,j)}");
  // More atoms, fewer tasks.
  Query bc = q({"i", "j"}, {{"B", {"i", "j"}}, {"C", {"i", "j"}}});
  check(contained(bc, bij), "{(i,j)|B∧C} ⊆ {(i,j)|B}");
  check(!contained(bij, bc), "{(i,j)|B} ⊄ {(i,j)|B∧C}");
  // A projection: rows of B with a nonzero contain the nonzeros' rows, and equal them.
  Query rows = q({"i"}, {{"B", {"i", "$0"}}});
  Query rowsTwice = q({"i"}, {{"B", {"i", "$0"}}, {"B", {"i", "$1"}}});
  check(contained(rows, rowsTwice) && contained(rowsTwice, rows), "{(i)|∃a B(i,a)} = {(i)|∃a,b B(i,a)∧B(i,b)}");
  // Index variables have dimensions of their own.
  check(!contained(q({"i"}, {}), q({"j"}, {})), "{(i)} ⊄ {(j)}");
  check(contained(q({"i"}, {}), q({"i", "j"}, {})), "{(i)} ⊆ {(i,j)}");
  // A bound variable is not existential: B(i,k) ∧ C(k,j) does not contain B(i,k) ∧ C(k',j).
  Query join = q({"i", "j", "k"}, {{"B", {"i", "k"}}, {"C", {"k", "j"}}});
  Query loose = q({"i", "j", "k"}, {{"B", {"i", "k"}}, {"C", {"$0", "j"}}});
  check(contained(join, loose), "B(i,k)∧C(k,j) ⊆ B(i,k)∧∃a C(a,j)");
  check(!contained(loose, join), "B(i,k)∧∃a C(a,j) ⊄ B(i,k)∧C(k,j)");
  // Gustavson's multiplications among the inner products' coiteration tasks (§3.1).
  Query inner = q({"i", "j", "k"}, {{"B", {"i", "$0"}}, {"C", {"$1", "j"}}, {"B", {"i", "k"}}});
  check(contained(join, inner), "{(i,k,j)|B(i,k)∧C(k,j)} ⊆ inner products' {(i,j,k)|∃B(i,·)∧∃C(·,j)∧B(i,k)}");
  check(!contained(inner, join), "inner products' tasks ⊄ {(i,k,j)|B(i,k)∧C(k,j)}");
}

void testUnions() {
  Union gustavson{q({"i", "k"}, {{"B", {"i", "k"}}}), q({"i", "j", "k"}, {{"B", {"i", "k"}}, {"C", {"k", "j"}}})};
  Union dense{q({"i", "j", "k"}, {})};
  check(contained(gustavson, dense), "Gustavson's tasks ⊆ the dense triple loop");
  check(!contained(dense, gustavson), "the dense triple loop ⊄ Gustavson's tasks");
  // Every query of the left side needs a container: one missing fails the union.
  Union withOuter = gustavson;
  withOuter.push_back(q({"i", "l"}, {}));
  check(!contained(withOuter, dense), "a union with an uncovered query is not contained");
}

void testSimplify() {
  // The redundant atom goes; the contained query goes.
  Union u{q({"i", "k"}, {{"B", {"i", "k"}}, {"B", {"i", "$0"}}}), q({"i"}, {{"B", {"i", "$0"}}}),
          q({"i", "k"}, {{"B", {"i", "k"}}, {"C", {"k", "$0"}}})};
  Union s = simplify(u);
  check(s.size() == 1, "simplify keeps one query of three, got " + toString(s));
  check(!s.empty() && s[0].toString() == "{(i,k) | B(i,k)}",
        "the minimized query is {(i,k) | B(i,k)}, got " + toString(s));
  // Equivalent queries: the first stays.
  Union twins{q({"i"}, {{"B", {"i", "$0"}}}), q({"i"}, {{"B", {"i", "$0"}}, {"B", {"i", "$1"}}})};
  check(simplify(twins).size() == 1, "of two equivalent queries one stays");
}

}  // namespace

int main() {
  testCQ();
  testUnions();
  testSimplify();
  return autosched_test::finish("all containment tests passed");
}
