#include "cin/loop_order.hpp"

#include <algorithm>
#include <functional>
#include <limits>

namespace coiter::cin {

using namespace notation;

namespace {

// Accesses anywhere below s (assignments' left and right sides).
void collectAccesses(const Stmt& s, std::vector<const AccessNode*>& reads, std::vector<const AccessNode*>& writes) {
  forEachAssignment(s, [&](const AssignNode& a) {
    writes.push_back(a.lhs.get());
    forEachSubexpression(a.rhs, [&](const Expr& x) {
      if (x->kind == ExprKind::Access) reads.push_back(static_cast<const AccessNode*>(x.get()));
    });
  });
}

constexpr int64_t kInvalid = std::numeric_limits<int64_t>::max();

// Cost of a loop order (lower is better); kInvalid when an operand would be traversed
// bottom-up through a level without random access.
int64_t cost(const std::vector<std::string>& order, const std::vector<std::string>& original,
             const std::vector<const AccessNode*>& reads, const std::vector<const AccessNode*>& writes) {
  auto rank = [&](const std::string& v) -> int {
    auto it = std::find(order.begin(), order.end(), v);
    return it == order.end() ? -1 : static_cast<int>(it - order.begin());
  };
  int64_t total = 0;
  // Block numbers (BCSR) follow from the rows and columns they hold: a loop over one is no
  // sum above the result's rows.
  std::vector<std::string> blockNumbers;
  for (const AccessNode* a : reads) {
    const auto& map = a->tensor->format.levelMap();
    for (size_t k = 0; k < a->levelVars.size(); ++k) {
      if (map[k].kind == LevelCoordinate::Kind::BlockIndex) blockNumbers.push_back(a->levelVars[k]);
    }
  }
  for (const AccessNode* a : reads) {
    if (a->tensor->temporary) continue;
    auto vars = levelIndices(*a);
    const auto& levels = a->tensor->format.levels();
    for (size_t k = 1; k < vars.size(); ++k) {
      // A level is reached once every level above it is: the latest of their loops.
      int above = -1, below = rank(vars[k]);
      for (size_t m = 0; m < k; ++m) above = std::max(above, rank(vars[m]));
      if (above < 0 || below < 0 || above < below) continue;
      if (!levels[k]->capabilities().locate) return kInvalid;
      total += 10;  // a dense level visited against its storage order
    }
  }
  for (const AccessNode* w : writes) {
    if (w->tensor->temporary) continue;
    auto vars = levelIndices(*w);
    const auto& levels = w->tensor->format.levels();
    for (size_t k = 0; k < vars.size(); ++k) {
      if (!isAppended(levels[k]->assembly())) continue;
      int at = rank(vars[k]);
      if (at < 0) continue;
      // Appended levels need their parents first and no other loop above them: not a
      // reduction, nor the index of a deeper level of the result (both would revisit).
      if (k > 0 && rank(vars[k - 1]) > at) total += 100;
      // A summed loop above a result level that is not the last one: the workspace that
      // collects the sum holds one result index (workspaces.hpp), so this order cannot be
      // assembled (a block or diagonal number summed above the rows of a sparse result).
      for (size_t m = 0; m + 1 < vars.size(); ++m) {
        int row = rank(vars[m]);
        for (int n = 0; n < row; ++n) {
          if (std::find(vars.begin(), vars.end(), order[n]) == vars.end() &&
              std::find(blockNumbers.begin(), blockNumbers.end(), order[n]) == blockNumbers.end()) {
            total += 1000;
          }
        }
      }
      for (size_t n = 0; n < static_cast<size_t>(at); ++n) {
        if (std::find(vars.begin(), vars.begin() + static_cast<long>(k), order[n]) ==
            vars.begin() + static_cast<long>(k)) {
          total += 100;
        }
      }
    }
  }
  for (size_t x = 0; x < order.size(); ++x) {
    for (size_t y = x + 1; y < order.size(); ++y) {
      auto ox = std::find(original.begin(), original.end(), order[x]);
      auto oy = std::find(original.begin(), original.end(), order[y]);
      if (ox > oy) total += 1;
    }
  }
  return total;
}

Stmt reorderChains(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Assign: return s;
    case StmtKind::Where:
      return where(reorderChains(as<WhereNode>(s).consumer), reorderChains(as<WhereNode>(s).producer));
    case StmtKind::Sequence:
      return sequence(reorderChains(as<SequenceNode>(s).define), reorderChains(as<SequenceNode>(s).mutate));
    case StmtKind::Forall: break;
  }
  auto [chain, inner] = forallChain(s);
  Stmt body = reorderChains(inner);
  std::vector<const AccessNode*> reads, writes;
  collectAccesses(body, reads, writes);
  std::vector<std::string> best = chain;
  // Chains are short (the indices of one statement); beyond 7 loops keep concretize's order.
  if (chain.size() <= 7) {
    std::vector<std::string> candidate = chain;
    std::sort(candidate.begin(), candidate.end());
    int64_t bestCost = kInvalid;
    do {
      int64_t c = cost(candidate, chain, reads, writes);
      if (c < bestCost) {
        bestCost = c;
        best = candidate;
      }
    } while (std::next_permutation(candidate.begin(), candidate.end()));
  }
  return nestForalls(best, body);
}

}  // namespace

Stmt chooseLoopOrder(const Stmt& s) { return reorderChains(s); }

}  // namespace coiter::cin
