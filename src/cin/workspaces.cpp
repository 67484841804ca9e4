#include "cin/workspaces.hpp"

#include <algorithm>

namespace coiter::cin {

using namespace notation;

namespace {

bool isAppend(LevelKind k) { return k == LevelKind::Compressed || k == LevelKind::Singleton; }

// Workspaces are numbered per statement so the same statement always prints the same.
Stmt rewrite(const Stmt& s, int& workspaceCount, const RootOf& rootOf) {
  switch (s->kind) {
    case StmtKind::Assign:
      return s;
    case StmtKind::Where:
      return where(rewrite(as<WhereNode>(s).consumer, workspaceCount, rootOf), rewrite(as<WhereNode>(s).producer, workspaceCount, rootOf));
    case StmtKind::Sequence:
      return sequence(rewrite(as<SequenceNode>(s).define, workspaceCount, rootOf), rewrite(as<SequenceNode>(s).mutate, workspaceCount, rootOf));
    case StmtKind::Forall:
      break;
  }
  auto [chain, body] = forallChain(s);
  if (body->kind != StmtKind::Assign) return nestForalls(chain, rewrite(body, workspaceCount, rootOf));
  const auto& a = as<AssignNode>(body);
  const TensorVar& result = *a.lhs->tensor;
  if (result.temporary || !a.accumulate) return s;
  auto isFree = [&](const std::string& v) {
    return std::find(a.lhs->indices.begin(), a.lhs->indices.end(), rootOf(v)) != a.lhs->indices.end();
  };
  // The first reduction loop with an appended result level below it.
  const std::vector<std::string> resultLevels = levelIndices(*a.lhs);
  size_t split = chain.size();
  for (size_t n = 0; n < chain.size() && split == chain.size(); ++n) {
    if (isFree(chain[n])) continue;
    for (int k = 0; k < result.order(); ++k) {
      const std::string& v = resultLevels[k];
      auto at = std::find_if(chain.begin(), chain.end(), [&](const std::string& c) { return rootOf(c) == v; });
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
  // A vector workspace holds one result index; more would need a tensor workspace (a split
  // result loop is several loops of one index: its blocks would need a workspace each).
  if (innerFree.size() != 1 || innerFree[0] != rootOf(innerFree[0])) return s;
  auto w = makeTensorVar("w" + std::to_string(workspaceCount++), Format::parse("d"), result.dtype,
                         DType::Int64, true);
  auto wAccess = access(w, innerFree);
  Stmt producer = nestForalls(inner, assign(wAccess, a.rhs, a.accumulate));
  Stmt consumer = forall(innerFree[0], assign(a.lhs, access(w, innerFree), nullptr));
  std::vector<std::string> outer(chain.begin(), chain.begin() + static_cast<long>(split));
  return nestForalls(outer, where(consumer, producer));
}

}  // namespace

std::string sameVariable(const std::string& v) { return v; }

Stmt insertWorkspaces(const Stmt& s, const RootOf& rootOf) {
  int workspaceCount = 0;
  return rewrite(s, workspaceCount, rootOf);
}

}  // namespace coiter::cin
