#include "schedule/scheduled_statement.hpp"

namespace coiter::schedule {

std::string IndexRelation::toString() const {
  switch (kind) {
    case RelationKind::Split: return parent + " →split(" + std::to_string(size) + ") " + outer + " " + inner;
    case RelationKind::Divide: return parent + " →divide(" + std::to_string(size) + ") " + outer + " " + inner;
    case RelationKind::Bound:
      return parent + " →bound(" + std::to_string(size) + (exact ? ",max_exact) " : ",max_constraint) ") + bounded;
    case RelationKind::Fuse: return parent + " " + second + " →fuse " + bounded;
    case RelationKind::Pos: return parent + " →pos(" + access + ") " + bounded;
    case RelationKind::Precompute: return parent + " →precompute " + bounded;
  }
  return "?";
}

const char* raceStrategyName(RaceStrategy r) {
  switch (r) {
    case RaceStrategy::NoRaces: return "no_races";
    case RaceStrategy::IgnoreRaces: return "ignore_races";
    case RaceStrategy::Atomics: return "atomics";
    case RaceStrategy::Temporary: return "temporary";
    case RaceStrategy::ParallelReduction: return "parallel_reduction";
  }
  return "?";
}

const char* parallelUnitName(ParallelUnit u) {
  switch (u) {
    case ParallelUnit::None: return "none";
    case ParallelUnit::CpuThread: return "cpu_thread";
    case ParallelUnit::CpuVector: return "cpu_vector";
    case ParallelUnit::GpuBlock: return "gpu_block";
    case ParallelUnit::GpuWarp: return "gpu_warp";
    case ParallelUnit::GpuThread: return "gpu_thread";
  }
  return "?";
}

std::string LoopTags::toString() const {
  std::string out;
  if (unit == ParallelUnit::GpuBlock || unit == ParallelUnit::GpuWarp || unit == ParallelUnit::GpuThread) {
    out += std::string("parallel(") + parallelUnitName(unit) + "," + raceStrategyName(races) + ")";
  } else if (unit == ParallelUnit::CpuThread) {
    out += std::string("parallel(cpu_thread,") + raceStrategyName(races) + (dynamic ? ",dynamic" : ",static") +
           (chunk ? "," + std::to_string(chunk) : "") + ")";
  } else if (unit == ParallelUnit::CpuVector) {
    out += std::string("parallel(cpu_vector,") + raceStrategyName(races) + ")";
  }
  if (unroll) out += (out.empty() ? "" : " ") + std::string("unroll(") + std::to_string(unroll) + ")";
  return out;
}

bool ScheduledStatement::assemblesInTwoPasses(const std::string& result) const {
  auto asked = assembly.find(result);
  return asked != assembly.end() ? asked->second == "two_pass" : target == Target::Cuda;
}

const IndexRelation* ScheduledStatement::relationOf(const std::string& var) const {
  for (const auto& r : relations) {
    if (r.outer == var || r.inner == var || r.bounded == var) return &r;
  }
  return nullptr;
}

std::string ScheduledStatement::loopOf(const std::string& var) const {
  std::string v = var;
  auto renames = [](const IndexRelation* r) {
    return r && (r->kind == RelationKind::Bound || r->kind == RelationKind::Precompute);
  };
  for (const IndexRelation* r = relationOf(v); renames(r); r = relationOf(v)) v = r->parent;
  return v;
}

const IndexRelation* ScheduledStatement::blocksOf(const std::string& var) const {
  std::string v = loopOf(var);
  const IndexRelation* r = relationOf(v);
  bool blocks = r && (r->kind == RelationKind::Split || r->kind == RelationKind::Divide) && r->outer == v;
  return blocks ? r : nullptr;
}

std::string ScheduledStatement::rootOf(const std::string& var) const {
  std::string v = var;
  while (const IndexRelation* r = relationOf(v)) {
    if (r->kind == RelationKind::Fuse || r->kind == RelationKind::Pos) return v;
    v = r->parent;
  }
  return v;
}

std::vector<std::string> ScheduledStatement::boundVariables(const std::string& var) const {
  const IndexRelation* r = relationOf(var);
  if (!r) return {var};
  std::vector<std::string> out = boundVariables(r->parent);
  if (r->kind == RelationKind::Fuse) {
    for (const auto& v : boundVariables(r->second)) out.push_back(v);
  }
  return out;
}

const LoopTags* ScheduledStatement::tagsOf(const std::string& var) const {
  auto it = tags.find(var);
  return it == tags.end() ? nullptr : &it->second;
}

bool ScheduledStatement::hasGpuAtomicsInside(const cin::Stmt& s) const {
  switch (s->kind) {
    case cin::StmtKind::Assign: return false;
    case cin::StmtKind::Forall: {
      const auto& f = cin::as<cin::ForallNode>(s);
      const LoopTags* t = tagsOf(f.var);
      return (t && isGpuUnit(t->unit) && t->races == RaceStrategy::Atomics) || hasGpuAtomicsInside(f.body);
    }
    case cin::StmtKind::Where:
      return hasGpuAtomicsInside(cin::as<cin::WhereNode>(s).consumer) ||
             hasGpuAtomicsInside(cin::as<cin::WhereNode>(s).producer);
    case cin::StmtKind::Sequence:
      return hasGpuAtomicsInside(cin::as<cin::SequenceNode>(s).define) ||
             hasGpuAtomicsInside(cin::as<cin::SequenceNode>(s).mutate);
  }
  return false;
}

std::string ScheduledStatement::toString() const {
  std::string out = cin::toString(stmt);
  for (size_t k = 0; k < relations.size(); ++k) out += (k ? ", " : " : ") + relations[k].toString();
  for (const auto& [var, t] : tags) {
    std::string text = t.toString();
    if (!text.empty()) out += " | " + var + ": " + text;
  }
  for (const auto& [tensor, how] : assembly) out += " | assemble(" + tensor + "," + how + ")";
  return out;
}

}  // namespace coiter::schedule
