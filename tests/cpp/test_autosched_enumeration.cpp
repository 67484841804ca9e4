// The candidate universe (src/autosched/enumerate_candidates.hpp): counts worked by hand for
// small statements, the protocols the level types offer, and transposed reads.
#include <algorithm>

#include "autosched/enumerate_candidates.hpp"
#include "autosched_test_support.hpp"
#include "util/errors.hpp"

using namespace coiter;
using namespace coiter::autosched;
using autosched_test::check;
using autosched_test::statement;

namespace {

const Candidate* find(const Universe& u, const std::string& program) {
  return autosched_test::withProgram<Candidate>(u.candidates, program,
                                                [](const Candidate& c) -> const Candidate& { return c; });
}

void testProtocols() {
  auto offered = [](const char* letter) { return offeredProtocols(*Format::parse(letter).levels()[0]); };
  check(offered("d") == std::vector<Protocol>{Protocol::Locate}, "a dense level offers locate only");
  check(offered("s") == std::vector<Protocol>{Protocol::Walk}, "a compressed level offers walk only");
  check(offered("h") == (std::vector<Protocol>{Protocol::Walk, Protocol::Locate}), "a hashed level offers both");
}

// y(i) = A(i,j) * x(j), A CSR, x dense: two factors, so no grouping (a workspace for the
// whole right-hand side is coiter's automatic result workspace), and the two loop orders.
void testSpMV() {
  Universe u =
      enumerateCandidates(productStatement(statement({"y", "d", {"i"}}, {{"A", "ds", {"i", "j"}}, {"x", "d", {"j"}}})));
  check(u.minimumDepth == 2, "SpMV: minimum depth 2");
  check(u.candidates.size() == 2, "SpMV: 2 candidates, got " + std::to_string(u.candidates.size()));
  check(u.deeper == 0, "SpMV: nothing deeper");
  const Candidate* rows = find(u, "∀i ∀j y(i) = A(l(i),w(j)) * x(l(j))");
  check(rows && !rows->consumer.factors[0].transposed, "SpMV: row-wise, A read as stored");
  const Candidate* columns = find(u, "∀j ∀i y(i) = A(l(j),w(i)) * x(l(j))");
  check(columns && columns->consumer.factors[0].transposed, "SpMV: column-wise, A read transposed (CSC)");
}

// a(i) = B(i,j) * C(j,k) * d(k), B and C CSR. By hand: ungrouped, and grouping {B,C} or
// {B,d}, every placement nests 3 deep; grouping w = C·d nests 2 deep with the loops outside
// the where O = {} (producer j,k in 2 orders, consumer i,j in 2 orders, w over j dense,
// compressed or hashed: 12) or O = {j} (producer k, consumer i, w a scalar: 1). 13
// candidates of depth 2.
void testSpMV2() {
  Universe u = enumerateCandidates(productStatement(
      statement({"a", "d", {"i"}}, {{"B", "ds", {"i", "j"}}, {"C", "ds", {"j", "k"}}, {"d", "d", {"k"}}})));
  check(u.minimumDepth == 2, "SpMV2: minimum depth 2");
  check(u.candidates.size() == 13, "SpMV2: 13 candidates, got " + std::to_string(u.candidates.size()));
  check(u.deeper > 0, "SpMV2: the ungrouped nests are deeper");
  const Candidate* scalar =
      find(u, "∀j ((∀i a(i) = B(l(j),w(i)) * w()) where (∀k w() = C(l(j),w(k)) * d(l(k))))  [w: scalar]");
  check(scalar != nullptr, "SpMV2: the scalar workspace with j around the where");
  if (scalar) check(scalar->consumer.factors[0].transposed, "SpMV2: with j outermost B is read transposed");
}

// A(i,j) = B(i,k) * C(k,j) * D(l,j): the grouping of C and D can run with its own loops
// (k, l, j) beside the consumer's (i, k, j), so the where nests no deeper than 3, as the
// ungrouped nest of 4 loops cannot.
void testMinimumDepth() {
  Universe u = enumerateCandidates(productStatement(
      statement({"A", "dd", {"i", "j"}}, {{"B", "ds", {"i", "k"}}, {"C", "ds", {"k", "j"}}, {"D", "ds", {"l", "j"}}})));
  check(u.minimumDepth == 3,
        "a 4-variable product with a grouping nests 3 deep, got " + std::to_string(u.minimumDepth));
  check(u.deeper >= 24, "the 24 ungrouped orders are deeper");
  bool allGrouped = std::all_of(u.candidates.begin(), u.candidates.end(), [](const Candidate& c) { return c.grouped; });
  check(allGrouped && !u.candidates.empty(), "every minimum-depth candidate has a where");
  for (const auto& c : u.candidates) check(c.depth() == 3, "depth 3: " + c.toString());
}

// A hashed level's protocol is its loop's lattice's: located beside another iterator,
// walked alone.
void testHashedProtocol() {
  Universe u =
      enumerateCandidates(productStatement(statement({"a", "d", {"i"}}, {{"b", "s", {"i"}}, {"c", "h", {"i"}}})));
  const Candidate* c = find(u, "∀i a(i) = b(w(i)) * c(l(i))");
  check(c != nullptr, "b walked, hashed c located");
  Universe alone =
      enumerateCandidates(productStatement(statement({"a", "d", {"i"}}, {{"b", "d", {"i"}}, {"c", "h", {"i"}}})));
  check(find(alone, "∀i a(i) = b(l(i)) * c(w(i))") != nullptr, "hashed c walked beside a dense b");
  // Two hashed vectors: the lattice iterates one and locates the other ([c1 | b1]).
  Universe both =
      enumerateCandidates(productStatement(statement({"a", "d", {"i"}}, {{"b", "h", {"i"}}, {"c", "h", {"i"}}})));
  check(find(both, "∀i a(i) = b(l(i)) * c(w(i))") != nullptr, "of two hashed vectors one is walked");
}

void testRefusals() {
  bool refused = false;
  try {
    auto a = statement({"y", "d", {"i"}}, {{"A", "ds", {"i", "j"}}});
    notation::Assignment sum = notation::assignment(a.lhs, notation::binary(notation::addOp(), a.rhs, a.rhs));
    productStatement(sum);
  } catch (const ArgumentError& e) {
    refused = std::string(e.what()).find("applies 'add'") != std::string::npos;
  }
  check(refused, "a sum of terms is refused, naming the operator");
}

}  // namespace

int main() {
  testProtocols();
  testSpMV();
  testSpMV2();
  testMinimumDepth();
  testHashedProtocol();
  testRefusals();
  return autosched_test::finish("all enumeration tests passed");
}
