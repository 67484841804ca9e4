// What the tests of the asymptotic stage (src/autosched/) share: a failure counter, and
// product statements built from tensor names, formats and index variables.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "autosched/candidate_program.hpp"
#include "autosched/conjunctive_query.hpp"
#include "driver/compiler.hpp"
#include "notation/index_notation.hpp"
#include "notation/operators.hpp"

namespace autosched_test {

using namespace coiter;

inline int failures = 0;

inline void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::printf("FAILED: %s\n", what.c_str());
}

struct Term {
  std::string tensor, format;  // format in the letter syntax ("ds"; "" for a scalar)
  std::vector<std::string> indices;
};

// result = factor * factor * ..., summed over the variables the result lacks.
inline notation::Assignment statement(const Term& result, const std::vector<Term>& factors) {
  auto var = [](const Term& t) {
    return notation::makeTensorVar(t.tensor, t.format.empty() ? Format({}, {}) : Format::parse(t.format),
                                   DType::Float64);
  };
  notation::Expr rhs;
  for (const auto& f : factors) {
    notation::Expr a = notation::access(var(f), f.indices);
    rhs = rhs ? notation::binary(notation::mulOp(), rhs, a) : a;
  }
  return notation::assignment(notation::access(var(result), result.indices), rhs);
}

// The legality check the bindings pass: the driver's.
inline std::string legal(const notation::Assignment& a, const std::string& schedule) {
  return scheduleProblem(a, schedule);
}

// A conjunctive query in normal form.
inline autosched::Query query(std::vector<std::string> head, std::vector<autosched::Atom> atoms) {
  autosched::Query out{std::move(head), std::move(atoms)};
  out.normalize();
  return out;
}

// The item of `items` whose program prints as `program`, or null.
template <class Item>
const Item* withProgram(const std::vector<Item>& items, const std::string& program,
                        const autosched::Candidate& (*programOf)(const Item&)) {
  for (const auto& item : items) {
    if (programOf(item).toString() == program) return &item;
  }
  return nullptr;
}

inline int finish(const char* name) {
  std::printf("%s\n", failures ? "FAILED" : name);
  return failures ? 1 : 0;
}

}  // namespace autosched_test
