#include "cin/scalar_accumulators.hpp"

#include <algorithm>

namespace coiter::cin {

using namespace notation;

namespace {

struct Context {
  const LoopBinds& binds;
  const std::set<std::string>& parallelLoops;
};

Stmt rewrite(const Stmt& s, int& temporaries, const Context& c) {
  switch (s->kind) {
    case StmtKind::Assign: return s;
    case StmtKind::Where: {
      const auto& w = as<WhereNode>(s);
      return where(rewrite(w.consumer, temporaries, c), rewrite(w.producer, temporaries, c));
    }
    case StmtKind::Sequence: {
      const auto& q = as<SequenceNode>(s);
      return sequence(rewrite(q.define, temporaries, c), rewrite(q.mutate, temporaries, c));
    }
    case StmtKind::Forall: break;
  }
  const auto& f = as<ForallNode>(s);
  if (f.body->kind != StmtKind::Assign) return forall(f.var, rewrite(f.body, temporaries, c));
  const auto& a = as<AssignNode>(f.body);
  const auto& lhs = a.lhs->indices;
  bool invariant = true;
  for (const auto& b : c.binds(f.var)) invariant = invariant && std::find(lhs.begin(), lhs.end(), b) == lhs.end();
  if (!a.accumulate || a.lhs->tensor->temporary || !invariant || c.parallelLoops.count(f.var)) return s;
  auto t =
      makeTensorVar("acc" + std::to_string(temporaries++), Format({}, {}), a.lhs->tensor->dtype, DType::Int64, true);
  auto tAccess = access(t, {});
  return where(assign(a.lhs, tAccess, a.accumulate), forall(f.var, assign(tAccess, a.rhs, a.accumulate)));
}

}  // namespace

Stmt accumulateInScalars(const Stmt& s, const LoopBinds& binds, const std::set<std::string>& parallelLoops) {
  int temporaries = 0;
  return rewrite(s, temporaries, Context{binds, parallelLoops});
}

}  // namespace coiter::cin
