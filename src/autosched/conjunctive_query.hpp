// Task sets as unions of conjunctive queries (Ahrens et al., PLDI 2022), and their
// containment. A task is a tuple of index values; a conjunctive query
//     {(i, k) | ∃$1: B(i, k) ∧ C(k, $1)}
// names the set of tasks whose head variables satisfy every atom ("B(i,k) is nonzero").
// Head variables are index variables of the statement, each with the dimension of its own
// name (no two index variables are assumed to have equal extents); every other variable of
// an atom is existential. The cost of a candidate program is a union of such queries.
//
// Containment (Chandra-Merlin): S ⊆ T when a homomorphism maps T's variables onto S's,
// fixing S's head variables, and sends every atom of T to an atom of S. Tasks are lazy (a
// task (i, j, k) stands for all tuples over subsets of its indices), so T's head may be
// larger than S's: T's extra head variables map like existential ones.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace coiter::autosched {

// tensor(vars...): "the tensor is nonzero at these coordinates", one variable per mode.
struct Atom {
  std::string tensor;
  std::vector<std::string> vars;
  bool operator==(const Atom& o) const { return tensor == o.tensor && vars == o.vars; }
  bool operator<(const Atom& o) const { return tensor != o.tensor ? tensor < o.tensor : vars < o.vars; }
};

struct Query {
  std::vector<std::string> head;  // sorted index variables
  std::vector<Atom> atoms;        // sorted, without repeats
  // Sorts and deduplicates head and atoms, and renames the existential variables
  // canonically ($0, $1, ... in order of first appearance), so equal queries print equally.
  void normalize();
  // "{(i,k) | B(i,k) ∧ C(k,$0)}". `withAssumptions` false: without the atoms that only
  // assume a tensor nonempty (all variables existential, shared with no other atom).
  std::string toString(bool withAssumptions = true) const;
};

using Union = std::vector<Query>;

// Whether a variable is existential (named "$...") rather than an index variable.
bool isExistential(const std::string& var);

// S ⊆ T for conjunctive queries (the tasks of S are among the lazy tasks of T).
bool contained(const Query& s, const Query& t);
// Every query of `s` is contained in some query of `t`.
bool contained(const Union& s, const Union& t);

// Minimizes each query (drops atoms while the query stays equivalent) and drops queries
// contained in another one (of two equivalent queries the first is kept): the normal form
// the frontier compares, computed once per candidate.
Union simplify(const Union& u);

// simplify() remembering what it computed: candidates of one statement often emit the same
// tasks (they differ in a workspace's format, a loop order that walks the same levels).
class Simplifier {
 public:
  Union operator()(const Union& u);

 private:
  Union minimize(const Union& distinct);         // `distinct`: normalized, sorted, without repeats
  std::map<std::string, Union> memo_;            // by the distinct queries, printed
  std::map<std::string, Query> minimalQueries_;  // each query minimized, by the query printed
};

std::string toString(const Union& u, bool withAssumptions = true);  // queries joined by " ∪ "

}  // namespace coiter::autosched
