#include "autosched/frontier.hpp"

#include <algorithm>

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
  for (auto& c : u.candidates) {
    RankedCandidate r;
    r.cost = asymptoticCost(f.statement, c);
    r.lowering = lowerCandidate(f.statement, c, legal);
    r.program = std::move(c);
    f.candidates.push_back(std::move(r));
  }
  // The online Pareto filter (§3.5) over the candidates that lower: a candidate joins unless
  // a member is strictly cheaper, and pushes out the members it is strictly cheaper than.
  std::vector<int> members;
  for (int k = 0; k < static_cast<int>(f.candidates.size()); ++k) {
    if (!f.candidates[k].lowered()) continue;
    const Union& cost = f.candidates[k].cost;
    bool dominated = false;
    for (int m : members) dominated = dominated || strictlyCheaper(f.candidates[m].cost, cost);
    if (dominated) continue;
    std::vector<int> kept;
    for (int m : members) {
      if (!strictlyCheaper(cost, f.candidates[m].cost)) kept.push_back(m);
    }
    kept.push_back(k);
    members = kept;
  }
  f.members = members;
  for (int m : members) {
    auto equal = [&](const std::vector<int>& cls) {
      const Union& other = f.candidates[cls.front()].cost;
      return contained(other, f.candidates[m].cost) && contained(f.candidates[m].cost, other);
    };
    auto it = std::find_if(f.costClasses.begin(), f.costClasses.end(), equal);
    if (it == f.costClasses.end())
      f.costClasses.push_back({m});
    else
      it->push_back(m);
  }
  for (int m : members) f.candidates[m].onFrontier = true;
  // Containment is transitive, so every candidate left out is dominated by a member.
  for (auto& c : f.candidates) {
    if (!c.lowered() || c.onFrontier) continue;
    for (int m : members) {
      if (strictlyCheaper(f.candidates[m].cost, c.cost)) {
        c.dominatedBy = m;
        break;
      }
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
