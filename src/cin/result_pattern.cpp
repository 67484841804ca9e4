#include "cin/result_pattern.hpp"

#include <algorithm>

namespace coiter::cin {

namespace nt = coiter::notation;
using nt::AccessNode;

namespace {

// `e` is zero wherever `access` is zero (absent): it is the access; or an operation whose
// operand that is so annihilates it (a product's factor, a quotient's numerator); or one that
// keeps zero (op(0, 0) = 0: a sum, a difference) of two operands that are both so.
bool annihilatedBy(const nt::Expr& e, const AccessNode& access) {
  switch (e->kind) {
    case nt::ExprKind::Access: return readsSameEntries(static_cast<const AccessNode&>(*e), access);
    case nt::ExprKind::Negate: return annihilatedBy(static_cast<const nt::NegateNode&>(*e).a, access);
    case nt::ExprKind::Binary: {
      const auto& b = static_cast<const nt::BinaryNode&>(*e);
      const bool left = annihilatedBy(b.a, access), right = annihilatedBy(b.b, access);
      return (b.op->leftZeroAnnihilates && left) || (b.op->rightZeroAnnihilates && right) ||
             (b.op->zeroPreserving && left && right);
    }
    default: return false;
  }
}

// The expressions whose value the result takes: the one store's right-hand side, or, where
// it stores a temporary (a scalar accumulator), what the temporary is assigned.
std::vector<nt::Expr> storedValues(const Stmt& root, const AssignNode& store) {
  if (store.rhs->kind != nt::ExprKind::Access) return {store.rhs};
  const auto& read = static_cast<const AccessNode&>(*store.rhs);
  if (!read.tensor->temporary) return {store.rhs};
  // (A workspace of one or more modes is iterated by its own coordinates, not the operand's.)
  if (read.tensor->order() > 0) return {};
  std::vector<nt::Expr> values;
  forEachAssignment(root, [&](const AssignNode& a) {
    if (a.lhs->tensor == read.tensor) values.push_back(a.rhs);
  });
  return values;
}

}  // namespace

bool readsSameEntries(const AccessNode& a, const AccessNode& b) {
  return a.tensor == b.tensor && a.indices == b.indices;
}

const AccessNode* resultPatternOperand(const Stmt& stmt) {
  const AssignNode* store = nullptr;
  int stores = 0;
  std::vector<const AccessNode*> operands;  // in order of appearance
  forEachAssignment(stmt, [&](const AssignNode& a) {
    nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
      if (e->kind != nt::ExprKind::Access) return;
      const auto* access = static_cast<const AccessNode*>(e.get());
      if (!access->tensor->temporary) operands.push_back(access);
    });
    if (!a.lhs->tensor->temporary) {
      store = &a;
      ++stores;
    }
  });
  if (stores != 1) return nullptr;
  const nt::TensorVar& result = *store->lhs->tensor;
  const Format& format = result.format;
  const auto& levels = format.levels();
  // Sparse levels that are appended (not a dense result, nor an inserted hashed level).
  bool sparse = false;
  for (size_t k = 0; k < levels.size(); ++k) {
    const LevelAssembly assembly = levels[k]->assembly();
    if (assembly == LevelAssembly::Located) continue;
    if (!isAppended(assembly) || format.insertsResultLevel(static_cast<int>(k))) return nullptr;
    sparse = true;
  }
  if (!sparse) return nullptr;
  std::vector<nt::Expr> values = storedValues(stmt, *store);
  if (values.empty()) return nullptr;
  // Along the result's indices, every operand but the pattern's must store every coordinate
  // (dense): a sparse one would make the result's pattern narrower than the operand's (whole
  // rows of explicit zeros where x(i) is sparse in A(i,j) * x(i)). Operands read only along
  // summed indices may be sparse: a sum that finds nothing is an explicit zero, as a zero of a
  // dense factor is.
  const std::vector<std::string>& resultVars = store->lhs->indices;
  auto readsSparsely = [&](const AccessNode& a) {
    const auto& aLevels = a.tensor->format.levels();
    bool dense =
        std::all_of(aLevels.begin(), aLevels.end(), [](const LevelTypePtr& l) { return l->locatesEveryCoordinate(); });
    return !dense && std::any_of(a.indices.begin(), a.indices.end(), [&](const std::string& v) {
      return std::find(resultVars.begin(), resultVars.end(), v) != resultVars.end();
    });
  };
  for (const AccessNode* candidate : operands) {
    const nt::TensorVar& operand = *candidate->tensor;
    // (A format with derived levels, whose accesses name one variable per level, is never a
    // result's: equal formats exclude it.)
    if (!(operand.format == format) || operand.indexType != result.indexType ||
        candidate->indices != store->lhs->indices) {
      continue;
    }
    bool annihilates =
        std::all_of(values.begin(), values.end(), [&](const nt::Expr& v) { return annihilatedBy(v, *candidate); });
    bool othersDense = std::none_of(operands.begin(), operands.end(), [&](const AccessNode* a) {
      return !readsSameEntries(*a, *candidate) && readsSparsely(*a);
    });
    if (annihilates && othersDense) return candidate;
  }
  return nullptr;
}

}  // namespace coiter::cin
