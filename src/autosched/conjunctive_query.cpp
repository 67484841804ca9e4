#include "autosched/conjunctive_query.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace coiter::autosched {

bool isExistential(const std::string& var) { return !var.empty() && var[0] == '$'; }

namespace {

// Renames existential variables $0, $1, ... in order of first appearance.
void renameExistentials(std::vector<Atom>& atoms) {
  std::map<std::string, std::string> names;
  for (auto& a : atoms) {
    for (auto& v : a.vars) {
      if (!isExistential(v)) continue;
      auto it = names.find(v);
      if (it == names.end()) it = names.emplace(v, "$" + std::to_string(names.size())).first;
      v = it->second;
    }
  }
}

// Backtracking search for a homomorphism from t's atoms into s's atoms: t's variables are
// bound to s's as atoms are matched; t's variables that are s's head variables are fixed.
class Homomorphism {
 public:
  Homomorphism(const Query& s, const Query& t) : s_(s) {
    // Fewest candidates first: the search fails fast where it must fail.
    for (const auto& a : t.atoms) {
      size_t candidates = 0;
      for (const auto& b : s.atoms) candidates += b.tensor == a.tensor && b.vars.size() == a.vars.size();
      order_.push_back({candidates, &a});
    }
    std::sort(order_.begin(), order_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  }
  bool exists() { return (order_.empty() || order_.front().first > 0) && search(0); }

 private:
  // What t's variable is bound to, or null.
  const std::string* image(const std::string& var) const {
    for (const auto& [from, to] : map_) {
      if (*from == var) return to;
    }
    if (std::binary_search(s_.head.begin(), s_.head.end(), var)) return &var;
    return nullptr;
  }
  bool search(size_t next) {
    if (next == order_.size()) return true;
    const Atom& a = *order_[next].second;
    for (const auto& b : s_.atoms) {
      if (b.tensor != a.tensor || b.vars.size() != a.vars.size()) continue;
      if (++steps_ > kMaxSteps) return false;  // undecided: counted as not contained
      size_t mark = map_.size();               // bindings made by this choice are undone on backtracking
      bool ok = true;
      for (size_t k = 0; k < a.vars.size() && ok; ++k) {
        const std::string* to = image(a.vars[k]);
        if (to)
          ok = *to == b.vars[k];
        else
          map_.emplace_back(&a.vars[k], &b.vars[k]);
      }
      if (ok && search(next + 1)) return true;
      map_.resize(mark);
    }
    return false;
  }
  // The search is exponential in the worst case (queries with many atoms of one tensor). A
  // search that takes longer gives up and answers "not contained", which is sound: a
  // candidate that cannot be shown cheaper or dearer stays on the frontier, an atom or query
  // that cannot be shown redundant stays in its cost.
  static constexpr size_t kMaxSteps = 20000;
  size_t steps_ = 0;
  const Query& s_;
  std::vector<std::pair<size_t, const Atom*>> order_;
  std::vector<std::pair<const std::string*, const std::string*>> map_;
};

}  // namespace

void Query::normalize() {
  std::sort(head.begin(), head.end());
  head.erase(std::unique(head.begin(), head.end()), head.end());
  renameExistentials(atoms);
  std::sort(atoms.begin(), atoms.end());
  atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
  renameExistentials(atoms);
  std::sort(atoms.begin(), atoms.end());
  atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
}

namespace {

bool onlyAssumes(const Atom& a, const std::vector<Atom>& atoms) {
  std::map<std::string, int> uses;
  for (const auto& b : atoms) {
    for (const auto& v : b.vars) ++uses[v];
  }
  return std::all_of(a.vars.begin(), a.vars.end(),
                     [&](const std::string& v) { return isExistential(v) && uses[v] == 1; });
}

}  // namespace

std::string Query::toString(bool withAssumptions) const {
  std::string out = "{(";
  for (size_t k = 0; k < head.size(); ++k) out += (k ? "," : "") + head[k];
  out += ")";
  std::string body;
  for (const auto& a : atoms) {
    if (!withAssumptions && onlyAssumes(a, atoms)) continue;
    body += (body.empty() ? "" : " ∧ ") + a.tensor + "(";
    for (size_t m = 0; m < a.vars.size(); ++m) body += (m ? "," : "") + a.vars[m];
    body += ")";
  }
  return out + (body.empty() ? "" : " | " + body) + "}";
}

bool contained(const Query& s, const Query& t) {
  // Head variables have dimensions of their own, so S's tasks can only be among T's lazy
  // tasks when T's head holds every one of S's head variables.
  for (const auto& v : s.head) {
    if (!std::binary_search(t.head.begin(), t.head.end(), v)) return false;
  }
  return Homomorphism(s, t).exists();
}

bool contained(const Union& s, const Union& t) {
  return std::all_of(s.begin(), s.end(), [&](const Query& q) {
    return std::any_of(t.begin(), t.end(), [&](const Query& p) { return contained(q, p); });
  });
}

Union Simplifier::operator()(const Union& u) {
  // Equal queries once (a loop emits the same tasks for several accesses).
  Union distinct = u;
  for (auto& q : distinct) q.normalize();
  auto key = [](const Query& q) { return std::tie(q.head, q.atoms); };
  std::sort(distinct.begin(), distinct.end(), [&](const Query& a, const Query& b) { return key(a) < key(b); });
  distinct.erase(
      std::unique(distinct.begin(), distinct.end(), [&](const Query& a, const Query& b) { return key(a) == key(b); }),
      distinct.end());
  auto [it, fresh] = memo_.try_emplace(toString(distinct));
  if (fresh) it->second = minimize(distinct);
  return it->second;
}

Union simplify(const Union& u) { return Simplifier()(u); }

Union Simplifier::minimize(const Union& distinct) {
  Union minimized;
  for (const Query& original : distinct) {
    auto [it, fresh] = minimalQueries_.try_emplace(original.toString(), original);
    Query& q = it->second;
    // Dropping an atom only adds tasks, so the smaller query is equivalent when it is
    // still contained in the original.
    for (size_t k = 0; fresh && k < q.atoms.size();) {
      Query smaller = q;
      smaller.atoms.erase(smaller.atoms.begin() + static_cast<std::ptrdiff_t>(k));
      if (contained(smaller, q))
        q = smaller;
      else
        ++k;
    }
    if (fresh) q.normalize();
    minimized.push_back(q);
  }
  Union kept;
  for (size_t i = 0; i < minimized.size(); ++i) {
    bool drop = false;
    for (size_t j = 0; j < minimized.size() && !drop; ++j) {
      if (i == j || !contained(minimized[i], minimized[j])) continue;
      // Of equivalent queries the first stays.
      drop = !contained(minimized[j], minimized[i]) || j < i;
    }
    if (!drop) kept.push_back(minimized[i]);
  }
  return kept;
}

std::string toString(const Union& u, bool withAssumptions) {
  if (u.empty()) return "∅";
  std::string out;
  for (size_t k = 0; k < u.size(); ++k) out += (k ? " ∪ " : "") + u[k].toString(withAssumptions);
  return out;
}

}  // namespace coiter::autosched
