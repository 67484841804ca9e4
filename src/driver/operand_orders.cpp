#include "driver/operand_orders.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

#include "driver/compiler.hpp"
#include "util/errors.hpp"

namespace coiter {

using namespace notation;

namespace {

// The same levels in every other mode order; DIA, ELL and BCSR (levels that follow the rows)
// become CSR or CSC.
std::vector<Format> otherOrders(const Format& f) {
  if (f.hasDerivedLevels()) return {Format::named("csr", 2), Format::named("csc", 2)};
  std::vector<int> order(f.order());
  std::iota(order.begin(), order.end(), 0);
  std::vector<Format> out;
  do {
    if (order != f.modeOrder()) out.emplace_back(f.levels(), order);
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

// `e` with the tensors named in `replaced` swapped for their replacements.
Expr withTensors(const Expr& e, const std::map<std::string, TensorVarPtr>& replaced) {
  switch (e->kind) {
    case ExprKind::Access: {
      const auto& a = static_cast<const AccessNode&>(*e);
      auto it = replaced.find(a.tensor->name);
      return it == replaced.end() ? e : Expr(access(it->second, a.indices));
    }
    case ExprKind::Literal: return e;
    case ExprKind::Negate: return negate(withTensors(static_cast<const NegateNode&>(*e).a, replaced));
    case ExprKind::Binary: {
      const auto& b = static_cast<const BinaryNode&>(*e);
      return binary(*b.op, withTensors(b.a, replaced), withTensors(b.b, replaced));
    }
    case ExprKind::Reduce: {
      const auto& r = static_cast<const ReduceNode&>(*e);
      return reduce(*r.op, r.var, withTensors(r.body, replaced));
    }
  }
  return e;
}

// The conversion that follows one loop order for every operand: the result's indices in its
// storage order, then the others in order of appearance; each sparse operand's modes sorted by
// it. (It fits most statements at once.)
std::map<std::string, Format> followingOneLoopOrder(const Assignment& a) {
  std::vector<std::string> order;
  for (int mode : a.lhs->tensor->format.modeOrder()) order.push_back(a.lhs->indices[mode]);
  std::vector<const AccessNode*> reads;
  forEachSubexpression(a.rhs, [&](const Expr& e) {
    if (e->kind == ExprKind::Access) reads.push_back(static_cast<const AccessNode*>(e.get()));
  });
  for (const auto* r : reads)
    for (const auto& v : r->indices)
      if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
  auto rank = [&](const std::string& v) { return std::find(order.begin(), order.end(), v) - order.begin(); };
  std::map<std::string, Format> preferred;
  for (const auto* r : reads) {
    const Format& f = r->tensor->format;
    if (f.order() < 2 || f.isAllDense()) continue;
    if (f.hasDerivedLevels()) {
      // DIA, ELL and BCSR follow their stored order; read against it, one becomes CSR or CSC
      // (otherOrders). Left as they were, such an operand's order stood against the loop
      // order's, and the search for other conversions could run out of trials before it met
      // the several it then needed (a sum of five operands in five formats, one of them ELL).
      const std::vector<int>& stored = f.modeOrder();
      if (f.order() == 2 && rank(r->indices[stored[1]]) < rank(r->indices[stored[0]])) {
        preferred.erase(r->tensor->name);
        preferred.emplace(r->tensor->name, Format::named(stored[1] == 0 ? "csr" : "csc", 2));
      }
      continue;
    }
    std::vector<int> modes(f.order());
    std::iota(modes.begin(), modes.end(), 0);
    std::stable_sort(modes.begin(), modes.end(),
                     [&](int x, int y) { return rank(r->indices[x]) < rank(r->indices[y]); });
    Format sorted(f.levels(), modes);
    if (!(sorted == f)) {
      preferred.erase(r->tensor->name);
      preferred.emplace(r->tensor->name, sorted);
    }
  }
  return preferred;
}

}  // namespace

std::vector<std::map<std::string, Format>> operandOrdersThatTraverse(const Assignment& a, const std::string& schedule,
                                                                     const std::string& target, int maxTrials) {
  std::vector<TensorVarPtr> sparse;
  for (const auto& t : operandsOf(a.rhs))
    if (t->order() >= 2 && !t->format.isAllDense()) sparse.push_back(t);
  std::vector<std::map<std::string, Format>> legal;
  int trials = 0;
  // Judges a candidate: kept when the statement with these operands' formats is legal.
  auto judge = [&](const std::map<std::string, Format>& formats) {
    std::map<std::string, TensorVarPtr> replaced;
    for (const auto& t : sparse) {
      auto f = formats.find(t->name);
      if (f != formats.end()) replaced[t->name] = makeTensorVar(t->name, f->second, t->dtype, t->indexType);
    }
    ++trials;
    try {
      if (scheduleProblem(assignment(a.lhs, withTensors(a.rhs, replaced), a.accumulate), schedule, target).empty())
        legal.push_back(formats);
    } catch (const CompileError&) {
      // (a candidate the compiler refuses for another reason: not kept)
    }
  };
  std::map<std::string, Format> preferred = followingOneLoopOrder(a);
  if (!preferred.empty() && trials < maxTrials) judge(preferred);
  // The fewest conversions first: subsets of the sparse operands by size, each with every
  // combination of their other orders.
  const int n = static_cast<int>(sparse.size());
  std::vector<std::vector<Format>> orders;
  for (const auto& t : sparse) orders.push_back(otherOrders(t->format));
  for (int size = 1; size <= n; ++size) {
    std::vector<bool> chosen(n, false);
    std::fill(chosen.begin(), chosen.begin() + size, true);
    do {  // subsets in lexicographic order of their members
      std::vector<int> members;
      for (int k = 0; k < n; ++k)
        if (chosen[k]) members.push_back(k);
      std::vector<size_t> pick(members.size(), 0);
      bool more = std::none_of(members.begin(), members.end(), [&](int k) { return orders[k].empty(); });
      while (more) {
        if (trials >= maxTrials) return legal;
        std::map<std::string, Format> formats;
        for (size_t m = 0; m < members.size(); ++m)
          formats.emplace(sparse[members[m]]->name, orders[members[m]][pick[m]]);
        if (formats != preferred) judge(formats);
        // The next combination (the last member's order changing fastest).
        more = false;
        for (size_t m = members.size(); m-- > 0;) {
          if (++pick[m] < orders[members[m]].size()) {
            more = true;
            break;
          }
          pick[m] = 0;
        }
      }
    } while (std::prev_permutation(chosen.begin(), chosen.end()));
  }
  return legal;
}

}  // namespace coiter
