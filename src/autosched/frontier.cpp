#include "autosched/frontier.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "autosched/asymptotic_cost.hpp"
#include "autosched/enumerate_candidates.hpp"
#include "notation/index_notation.hpp"

namespace coiter::autosched {

bool strictlyCheaper(const Union& a, const Union& b) { return contained(a, b) && !contained(b, a); }

namespace {

bool kindsAllowDomination(bool twoKernels, bool otherTwoKernels) { return !twoKernels || otherTwoKernels; }

bool twoKernels(const RankedCandidate& c) { return c.lowering.stages.size() > 1; }

}  // namespace

bool dominates(const RankedCandidate& a, const RankedCandidate& b) {
  return kindsAllowDomination(twoKernels(a), twoKernels(b)) && strictlyCheaper(a.cost, b.cost);
}

namespace {

// Containment between the costs of one statement's candidates, each query pair decided once.
// The Pareto filter compares every new cost with every member, and the costs share most of
// their queries (a sunk cost, a loop's tasks that many programs emit), so the homomorphism
// searches are repeated far more often than there are distinct pairs. A cost is held as the
// ids of its queries; contained() answers as the free function does, query by query.
class ContainmentTable {
 public:
  std::vector<int> intern(const Union& u) {
    std::vector<int> ids;
    for (const Query& q : u) {
      auto [it, fresh] = ids_.try_emplace(std::make_pair(q.head, q.atoms), static_cast<int>(queries_.size()));
      if (fresh) queries_.push_back(q);
      ids.push_back(it->second);
    }
    return ids;
  }

  // Every query of s is contained in some query of t.
  bool contained(const std::vector<int>& s, const std::vector<int>& t) {
    return std::all_of(s.begin(), s.end(), [&](int q) {
      return std::any_of(t.begin(), t.end(), [&](int p) { return queryContained(q, p); });
    });
  }

 private:
  bool queryContained(int s, int t) {
    auto& row = memo_[s];
    if (row.size() <= static_cast<size_t>(t)) row.resize(queries_.size(), kUnknown);
    signed char& known = row[static_cast<size_t>(t)];
    if (known == kUnknown)
      known = autosched::contained(queries_[static_cast<size_t>(s)], queries_[static_cast<size_t>(t)]);
    return known;
  }
  static constexpr signed char kUnknown = -1;
  std::map<std::pair<std::vector<std::string>, std::vector<Atom>>, int> ids_;
  std::vector<Query> queries_;
  std::map<int, std::vector<signed char>> memo_;  // by s, indexed by t
};

// Candidates of equal cost (printed alike) and of one kind (one kernel or two), ranked once as
// one group.
struct CostGroup {
  std::vector<int> candidates;  // in enumeration order
  std::vector<int> queries;     // the cost, as ContainmentTable ids
  bool twoKernels = false;      // its candidates lower to two kernels (their workspace a tensor)
};

}  // namespace

Frontier asymptoticFrontier(const notation::Assignment& a, const LegalityCheck& legal, std::optional<double> seconds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  Frontier f;
  f.statement = productStatement(a);
  Simplifier simplify;
  ContainmentTable table;
  std::map<std::string, int> groupOf;  // by the cost printed
  std::vector<CostGroup> groups;       // in order of first appearance
  // A two-kernel candidate never pushes a one-kernel candidate off the frontier. Its task set
  // counts the intermediate's entries as they are computed, but not what writing them out and
  // converting them for the second kernel costs, which the model's tasks cannot tell from a
  // loop's steps: SpMTTKRP's B(i,k,l) * C(k,j) computed first, 6.9 M entries converted in
  // 3.3 s a call, contained the fused kernel's tasks, which ran in 0.16-0.2 s. Both stay, and
  // the estimate that charges intermediates picks between them (python/coiter/autosched).
  // (The relation stays transitive: a two-kernel x cheaper than y cheaper than a one-kernel z
  // would need y, which x may dominate only as a two-kernel candidate, to dominate z.)
  auto cheaper = [&](int x, int y) {
    if (!kindsAllowDomination(groups[x].twoKernels, groups[y].twoKernels)) return false;
    return table.contained(groups[x].queries, groups[y].queries) &&
           !table.contained(groups[y].queries, groups[x].queries);
  };
  // The online Pareto filter (§3.5) over the candidates that lower, as they are enumerated: a
  // new cost joins unless a member is strictly cheaper, and pushes out the members it is
  // strictly cheaper than; a cost seen before joins its group, whose standing it shares.
  std::vector<int> kept;  // groups on the frontier, in order of joining
  auto rank = [&](int k) {
    const bool two = twoKernels(f.candidates[k]);
    auto [it, fresh] = groupOf.try_emplace(toString(f.candidates[k].cost) + (two ? " | two kernels" : ""),
                                           static_cast<int>(groups.size()));
    if (!fresh) return groups[it->second].candidates.push_back(k);
    int g = it->second;
    groups.push_back({{k}, table.intern(f.candidates[k].cost), two});
    bool dominated = false;
    for (int m : kept) dominated = dominated || cheaper(m, g);
    if (dominated) return;
    std::vector<int> next;
    for (int m : kept) {
      if (!cheaper(g, m)) next.push_back(m);
    }
    next.push_back(g);
    kept = std::move(next);
  };
  // Candidates share kernels (a producer over the same loops into the same workspace, with
  // consumers that differ): each distinct kernel is judged once.
  std::map<std::string, std::string> judged;
  LegalityCheck judgedOnce = [&](const notation::Assignment& stage, const std::string& schedule) {
    std::string key = notation::toString(stage) + " | " + schedule;
    for (const auto& [name, format] : KernelStage{stage, schedule}.formats()) key += " " + name + ":" + format;
    auto [it, fresh] = judged.try_emplace(std::move(key));
    if (fresh) it->second = legal(stage, schedule);
    return it->second;
  };
  Universe u = enumerateCandidates(f.statement, [&](Candidate&& c) {
    // (Not before a candidate lowers: a frontier cut short still has a member.)
    if (seconds && !groups.empty() && std::chrono::duration<double>(Clock::now() - start).count() > *seconds) {
      f.complete = false;
      return false;
    }
    RankedCandidate r;
    r.lowering = lowerCandidate(f.statement, c, judgedOnce);
    if (r.lowered()) r.cost = asymptoticCost(f.statement, c, simplify);  // only these are ranked
    r.program = std::move(c);
    f.candidates.push_back(std::move(r));
    if (f.candidates.back().lowered()) rank(static_cast<int>(f.candidates.size()) - 1);
    return true;
  });
  f.minimumDepth = u.minimumDepth;
  f.deeper = u.deeper;
  std::vector<int> classFirst;  // the first group of each cost class
  for (int g : kept) {
    const CostGroup& group = groups[static_cast<size_t>(g)];
    f.members.insert(f.members.end(), group.candidates.begin(), group.candidates.end());
    auto equal = [&](int other) {
      return table.contained(groups[other].queries, group.queries) &&
             table.contained(group.queries, groups[other].queries);
    };
    auto it = std::find_if(classFirst.begin(), classFirst.end(), equal);
    if (it == classFirst.end()) {
      classFirst.push_back(g);
      f.costClasses.push_back(group.candidates);
    } else {
      auto& cls = f.costClasses[static_cast<size_t>(it - classFirst.begin())];
      cls.insert(cls.end(), group.candidates.begin(), group.candidates.end());
    }
  }
  std::sort(f.members.begin(), f.members.end());
  for (int m : f.members) f.candidates[m].onFrontier = true;
  // Containment is transitive, so every candidate left out is dominated by a member.
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    if (f.candidates[groups[g].candidates.front()].onFrontier) continue;
    for (int m : kept) {
      if (!cheaper(m, g)) continue;
      for (int k : groups[g].candidates) f.candidates[k].dominatedBy = groups[m].candidates.front();
      break;
    }
  }
  return f;
}

std::string Frontier::report(bool all) const {
  size_t lowered = 0;
  for (const auto& c : candidates) lowered += c.lowered();
  std::string out = "asymptotic frontier of " + statement.result->name + "(";
  for (size_t k = 0; k < statement.resultIndices.size(); ++k) out += (k ? "," : "") + statement.resultIndices[k];
  out += ")\n";
  out += "  minimum loop depth " + std::to_string(minimumDepth) + ": " + std::to_string(candidates.size()) +
         " candidates (" + std::to_string(deeper) + " deeper ones left out), " + std::to_string(lowered) +
         " lower to coiter schedules, " + std::to_string(members.size()) + " on the frontier (" +
         std::to_string(costClasses.size()) + " distinct costs)\n";
  if (!complete) out += "  incomplete: the deadline cut the enumeration after these candidates\n";
  out += "  costs: unions of task sets, sunk costs included, every sparse input assumed nonempty (not printed)\n";
  auto describe = [&](size_t k) {
    const RankedCandidate& c = candidates[k];
    std::string s = "  #" + std::to_string(k) + "  " + c.program.toString() + "\n";
    s += "       cost: " + toString(c.cost, false) + "\n";
    for (const auto& stage : c.lowering.stages) {
      std::string formats;
      for (const auto& [name, format] : stage.formats()) formats += (formats.empty() ? "" : " ") + name + ":" + format;
      s += "       kernel: " + notation::toString(stage.statement) + "   formats " + formats +
           "   schedule: " + (stage.schedule.empty() ? "(default)" : stage.schedule) + "\n";
    }
    return s;
  };
  out += "frontier:\n";
  for (int m : members) out += describe(static_cast<size_t>(m));
  out += "dominated (a frontier candidate's tasks are strictly contained in its own):\n";
  for (size_t k = 0; k < candidates.size(); ++k) {
    const RankedCandidate& c = candidates[k];
    if (!c.lowered() || c.onFrontier) continue;
    out += describe(k) + "       dominated by #" + std::to_string(c.dominatedBy) + "\n";
  }
  if (all) {
    out += "not lowered:\n";
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (candidates[k].lowered()) continue;
      out += "  #" + std::to_string(k) + "  " + candidates[k].program.toString() + "\n       " +
             candidates[k].lowering.problem + "\n";
    }
  }
  return out;
}

}  // namespace coiter::autosched
