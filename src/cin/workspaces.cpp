#include "cin/workspaces.hpp"

#include <algorithm>

namespace coiter::cin {

using namespace notation;

namespace {

// Workspaces are numbered per statement so the same statement always prints the same.
Stmt rewrite(const Stmt& s, int& workspaceCount, const LoopBinds& binds) {
  switch (s->kind) {
    case StmtKind::Assign: return s;
    case StmtKind::Where:
      return where(rewrite(as<WhereNode>(s).consumer, workspaceCount, binds),
                   rewrite(as<WhereNode>(s).producer, workspaceCount, binds));
    case StmtKind::Sequence:
      return sequence(rewrite(as<SequenceNode>(s).define, workspaceCount, binds),
                      rewrite(as<SequenceNode>(s).mutate, workspaceCount, binds));
    case StmtKind::Forall: break;
  }
  auto [chain, body] = forallChain(s);
  if (body->kind != StmtKind::Assign) return nestForalls(chain, rewrite(body, workspaceCount, binds));
  const auto& a = as<AssignNode>(body);
  const TensorVar& result = *a.lhs->tensor;
  if (result.temporary || !a.accumulate) return s;
  auto isFree = [&](const std::string& v) {
    for (const auto& b : binds(v)) {
      if (std::find(a.lhs->indices.begin(), a.lhs->indices.end(), b) != a.lhs->indices.end()) return true;
    }
    return false;
  };
  // The first reduction loop with an appended result level below it.
  const std::vector<std::string> resultLevels = levelIndices(*a.lhs);
  size_t split = chain.size();
  for (size_t n = 0; n < chain.size() && split == chain.size(); ++n) {
    if (isFree(chain[n])) continue;
    for (int k = 0; k < result.order(); ++k) {
      const std::string& v = resultLevels[k];
      auto at = std::find_if(chain.begin(), chain.end(), [&](const std::string& c) {
        auto b = binds(c);
        return std::find(b.begin(), b.end(), v) != b.end();
      });
      if (isAppended(result.format.levels()[k]->assembly()) && at != chain.end() &&
          static_cast<size_t>(at - chain.begin()) > n) {
        split = n;
      }
    }
  }
  if (split == chain.size()) return s;
  std::vector<std::string> inner(chain.begin() + static_cast<long>(split), chain.end());
  std::vector<std::string> innerFree;
  for (const auto& v : inner) {
    if (isFree(v)) innerFree.push_back(v);
  }
  // A vector workspace holds one result index; more would need a tensor workspace (a split
  // result loop is several loops of one index: its blocks would need a workspace each).
  if (innerFree.size() != 1 || binds(innerFree[0]) != std::vector<std::string>{innerFree[0]}) return s;
  auto w = makeTensorVar("w" + std::to_string(workspaceCount++), Format::parse("d"), result.dtype, DType::Int64, true);
  auto wAccess = access(w, innerFree);
  Stmt producer = nestForalls(inner, assign(wAccess, a.rhs, a.accumulate));
  Stmt consumer = forall(innerFree[0], assign(a.lhs, access(w, innerFree), nullptr));
  std::vector<std::string> outer(chain.begin(), chain.begin() + static_cast<long>(split));
  return nestForalls(outer, where(consumer, producer));
}

}  // namespace

std::vector<std::string> bindsItself(const std::string& v) { return {v}; }

Stmt insertWorkspaces(const Stmt& s, const LoopBinds& binds) {
  int workspaceCount = 0;
  return rewrite(s, workspaceCount, binds);
}

}  // namespace coiter::cin
