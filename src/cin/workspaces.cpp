#include "cin/workspaces.hpp"

#include <algorithm>

namespace coiter::cin {

using namespace notation;

namespace {

bool isAppend(LevelKind k) { return k == LevelKind::Compressed || k == LevelKind::Singleton; }

// Workspaces are numbered per statement so the same statement always prints the same.
Stmt rewrite(const Stmt& s, int& workspaceCount) {
  switch (s->kind) {
    case StmtKind::Assign:
      return s;
    case StmtKind::Where:
      return where(rewrite(as<WhereNode>(s).consumer, workspaceCount), rewrite(as<WhereNode>(s).producer, workspaceCount));
    case StmtKind::Sequence:
      return sequence(rewrite(as<SequenceNode>(s).define, workspaceCount), rewrite(as<SequenceNode>(s).mutate, workspaceCount));
    case StmtKind::Forall:
      break;
  }
  auto [chain, body] = forallChain(s);
  if (body->kind != StmtKind::Assign) return nestForalls(chain, rewrite(body, workspaceCount));
  const auto& a = as<AssignNode>(body);
  const TensorVar& result = *a.lhs->tensor;
  if (result.temporary || !a.accumulate) return s;
  auto isFree = [&](const std::string& v) {
    return std::find(a.lhs->indices.begin(), a.lhs->indices.end(), v) != a.lhs->indices.end();
  };
  // The first reduction loop with an appended result level below it.
  const std::vector<std::string> resultLevels = levelIndices(*a.lhs);
  size_t split = chain.size();
  for (size_t n = 0; n < chain.size() && split == chain.size(); ++n) {
    if (isFree(chain[n])) continue;
    for (int k = 0; k < result.order(); ++k) {
      const std::string& v = resultLevels[k];
      auto at = std::find(chain.begin(), chain.end(), v);
      if (isAppend(result.format.levels()[k]->kind()) && at != chain.end() &&
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
  // A vector workspace holds one result index; more would need a tensor workspace.
  if (innerFree.size() != 1) return s;
  auto w = makeTensorVar("w" + std::to_string(workspaceCount++), Format::parse("d"), result.dtype,
                         DType::Int64, true);
  auto wAccess = access(w, innerFree);
  Stmt producer = nestForalls(inner, assign(wAccess, a.rhs, a.accumulate));
  Stmt consumer = forall(innerFree[0], assign(a.lhs, access(w, innerFree), nullptr));
  std::vector<std::string> outer(chain.begin(), chain.begin() + static_cast<long>(split));
  return nestForalls(outer, where(consumer, producer));
}

}  // namespace

Stmt insertWorkspaces(const Stmt& s) {
  int workspaceCount = 0;
  return rewrite(s, workspaceCount);
}

}  // namespace coiter::cin
