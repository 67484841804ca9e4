#include "autosched/asymptotic_cost.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace coiter::autosched {

namespace {

using Conjunction = std::vector<Atom>;
using Disjunction = std::vector<Conjunction>;  // false when empty

bool contains(const std::vector<std::string>& vs, const std::string& v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

// A tensor's predicate over its modes: variables "#0", "#1", ... stand for the modes.
std::string modeVar(size_t m) { return "#" + std::to_string(m); }

class Interpreter {
 public:
  Union tasks;

  void run(const Candidate& c) {
    for (const auto* nest : {&c.consumer, &c.producer}) {
      for (const auto& a : nest->factors) {
        if (a.tensor == c.workspace && c.grouped) continue;
        Conjunction p;
        if (a.patterned) {
          Atom atom{a.tensor, {}};
          for (size_t m = 0; m < a.indices.size(); ++m) atom.vars.push_back(modeVar(m));
          p.push_back(atom);
        }
        state_[a.tensor] = {p};
      }
    }
    candidate_ = &c;
    loops(c.outer, 0, {}, {{}}, [&](const std::vector<std::string>& q, const Disjunction& g) {
      if (!c.grouped) return nest(c.consumer, q, g);
      // The where: the workspace starts zero. A dense array is zeroed whole each time (a
      // precompute list is emptied as it is consumed, a sparse tensor starts empty).
      state_[c.workspace] = {};
      bool array = c.precomputed ? c.workspaceFormat.order() > 1
                                 : c.workspaceFormat.order() > 0 && !anyPatterned(c.workspaceFormat);
      if (array) {
        std::vector<std::string> head = q;
        head.insert(head.end(), c.workspaceVars.begin(), c.workspaceVars.end());
        emit(head, g);
      }
      outerOfWhere_ = q;
      nest(c.producer, q, g);
      nest(c.consumer, q, g);
    });
  }

 private:
  using Body = std::function<void(const std::vector<std::string>&, const Disjunction&)>;

  static bool anyPatterned(const Format& f) {
    return std::any_of(f.levels().begin(), f.levels().end(),
                       [](const auto& l) { return !l->locatesEveryCoordinate(); });
  }

  std::string fresh() { return "$" + std::to_string(fresh_++); }

  void emit(std::vector<std::string> head, const Disjunction& g) {
    for (const auto& c : g) {
      Query q{head, c};
      q.normalize();
      tasks.push_back(q);
    }
  }

  // The accesses of the loops' bodies: those of the nest, and of the other nest inside a
  // where when the loops enclose it.
  std::vector<const ProgramAccess*> readsUnder(const Nest* n) const {
    std::vector<const ProgramAccess*> out;
    auto add = [&](const Nest& nest) {
      for (const auto& a : nest.factors) out.push_back(&a);
    };
    if (n) {
      add(*n);
    } else {
      add(candidate_->consumer);
      if (candidate_->grouped) add(candidate_->producer);
    }
    return out;
  }

  // state(access) with its modes replaced by the access's variables, existential variables
  // renamed apart and variables not yet bound made existential.
  Disjunction instantiate(const ProgramAccess& a, const std::vector<std::string>& bound) {
    Disjunction out;
    for (const auto& conj : state_.at(a.tensor)) {
      std::map<std::string, std::string> names;
      for (size_t m = 0; m < a.indices.size(); ++m) {
        names[modeVar(m)] = contains(bound, a.indices[m]) ? a.indices[m] : fresh();
      }
      Conjunction c;
      for (Atom atom : conj) {
        for (auto& v : atom.vars) {
          auto it = names.find(v);
          if (it == names.end() && isExistential(v)) it = names.emplace(v, fresh()).first;
          if (it != names.end()) v = it->second;
        }
        c.push_back(atom);
      }
      out.push_back(c);
    }
    return out;
  }

  static Disjunction conjoin(const Disjunction& a, const Disjunction& b) {
    Disjunction out;
    for (const auto& x : a) {
      for (const auto& y : b) {
        Conjunction c = x;
        c.insert(c.end(), y.begin(), y.end());
        out.push_back(c);
      }
    }
    return out;
  }

  // The loops from `k` on, then `body`; `n` is the nest they belong to (null: the outer
  // loops, around the whole where).
  void loops(const std::vector<std::string>& vars, size_t k, std::vector<std::string> q, const Disjunction& g,
             const Body& body, const Nest* n = nullptr) {
    if (g.empty()) return;  // no iteration runs
    if (k == vars.size()) return body(q, g);
    const std::string& i = vars[k];
    q.push_back(i);
    Disjunction guard = g;
    bool walked = false;
    for (const ProgramAccess* a : readsUnder(n)) {
      std::vector<std::string> levelVars = a->levelVars();
      for (size_t l = 0; l < levelVars.size(); ++l) {
        if (levelVars[l] != i || a->protocols[l] != Protocol::Walk) continue;
        Disjunction p = instantiate(*a, q);
        emit(q, conjoin(g, p));
        guard = conjoin(guard, p);
        walked = true;
      }
    }
    if (!walked) emit(q, g);
    loops(vars, k + 1, q, guard, body, n);
  }

  void nest(const Nest& n, const std::vector<std::string>& q, const Disjunction& g) {
    loops(
        n.loops, 0, q, g,
        [&](const std::vector<std::string>& bound, const Disjunction& guard) {
          emit(bound, guard);
          if (n.lhs.tensor != candidate_->workspace || !candidate_->grouped) return;
          // The workspace may be nonzero where the guard held, for its own variables and those
          // bound around the where; the other variables are projected away.
          for (const auto& conj : guard) {
            std::map<std::string, std::string> names;
            for (size_t m = 0; m < n.lhs.indices.size(); ++m) names[n.lhs.indices[m]] = modeVar(m);
            Conjunction c;
            for (Atom atom : conj) {
              for (auto& v : atom.vars) {
                auto it = names.find(v);
                if (it == names.end() && !contains(outerOfWhere_, v)) it = names.emplace(v, fresh()).first;
                if (it != names.end()) v = it->second;
              }
              c.push_back(atom);
            }
            state_[candidate_->workspace].push_back(c);
          }
        },
        &n);
  }

  const Candidate* candidate_ = nullptr;
  std::map<std::string, Disjunction> state_;
  std::vector<std::string> outerOfWhere_;
  int fresh_ = 0;
};

}  // namespace

Union programTasks(const Candidate& c) {
  Interpreter in;
  in.run(c);
  return in.tasks;
}

Union asymptoticCost(const ProductStatement& s, const Candidate& c, Simplifier& simplify) {
  Union cost = programTasks(c);
  // Sunk costs: reading each patterned input, iterating each dimension.
  std::vector<Atom> nonempty;
  std::set<std::string> patterned;
  for (const auto& f : s.factors) {
    bool sparse = std::any_of(f.tensor->format.levels().begin(), f.tensor->format.levels().end(),
                              [](const auto& l) { return !l->locatesEveryCoordinate(); });
    if (!sparse) continue;
    cost.push_back(Query{f.indices, {Atom{f.tensor->name, f.indices}}});
    if (!patterned.insert(f.tensor->name).second) continue;
    Atom atom{f.tensor->name, {}};
    for (size_t m = 0; m < f.indices.size(); ++m) atom.vars.push_back("$nonempty" + f.tensor->name + std::to_string(m));
    nonempty.push_back(atom);
  }
  for (const auto& v : s.vars) cost.push_back(Query{{v}, {}});
  // Assumption: every patterned input is nonempty (implied where an atom of it is there).
  for (auto& q : cost) {
    std::set<std::string> present;
    for (const auto& atom : q.atoms) present.insert(atom.tensor);
    for (const auto& atom : nonempty) {
      if (!present.count(atom.tensor)) q.atoms.push_back(atom);
    }
  }
  return simplify(cost);
}

}  // namespace coiter::autosched
