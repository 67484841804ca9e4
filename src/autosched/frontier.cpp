#include "autosched/frontier.hpp"

#include <algorithm>
#include <map>

#include "autosched/asymptotic_cost.hpp"
#include "autosched/enumerate_candidates.hpp"
#include "notation/index_notation.hpp"

namespace coiter::autosched {

bool strictlyCheaper(const Union& a, const Union& b) { return contained(a, b) && !contained(b, a); }

Frontier asymptoticFrontier(const notation::Assignment& a, const LegalityCheck& legal) {
  Frontier f;
  f.statement = productStatement(a);
  Universe u = enumerateCandidates(f.statement);
  f.minimumDepth = u.minimumDepth;
  f.deeper = u.deeper;
  Simplifier simplify;
  for (auto& c : u.candidates) {
    RankedCandidate r;
    r.lowering = lowerCandidate(f.statement, c, legal);
    if (r.lowered()) r.cost = asymptoticCost(f.statement, c, simplify);  // only these are ranked
    r.program = std::move(c);
    f.candidates.push_back(std::move(r));
  }
  // Candidates with the same cost (printed alike) are ranked once, through the first of them.
  std::map<std::string, std::vector<int>> byCost;
  std::vector<std::vector<int>*> groups;  // in order of first appearance
  for (int k = 0; k < static_cast<int>(f.candidates.size()); ++k) {
    if (!f.candidates[k].lowered()) continue;
    auto [it, fresh] = byCost.try_emplace(toString(f.candidates[k].cost));
    if (fresh) groups.push_back(&it->second);
    it->second.push_back(k);
  }
  auto costOf = [&](const std::vector<int>* g) -> const Union& { return f.candidates[g->front()].cost; };
  // The online Pareto filter (§3.5) over the candidates that lower: a candidate joins unless
  // a member is strictly cheaper, and pushes out the members it is strictly cheaper than.
  std::vector<const std::vector<int>*> kept;
  for (const auto* g : groups) {
    bool dominated = false;
    for (const auto* m : kept) dominated = dominated || strictlyCheaper(costOf(m), costOf(g));
    if (dominated) continue;
    std::vector<const std::vector<int>*> next;
    for (const auto* m : kept) {
      if (!strictlyCheaper(costOf(g), costOf(m))) next.push_back(m);
    }
    next.push_back(g);
    kept = next;
  }
  for (const auto* g : kept) {
    f.members.insert(f.members.end(), g->begin(), g->end());
    auto equal = [&](const std::vector<int>& cls) {
      const Union& other = f.candidates[cls.front()].cost;
      return contained(other, costOf(g)) && contained(costOf(g), other);
    };
    auto it = std::find_if(f.costClasses.begin(), f.costClasses.end(), equal);
    if (it == f.costClasses.end())
      f.costClasses.push_back(*g);
    else
      it->insert(it->end(), g->begin(), g->end());
  }
  std::sort(f.members.begin(), f.members.end());
  for (int m : f.members) f.candidates[m].onFrontier = true;
  // Containment is transitive, so every candidate left out is dominated by a member.
  for (const auto* g : groups) {
    if (f.candidates[g->front()].onFrontier) continue;
    for (const auto* m : kept) {
      if (!strictlyCheaper(costOf(m), costOf(g))) continue;
      for (int k : *g) f.candidates[k].dominatedBy = m->front();
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
