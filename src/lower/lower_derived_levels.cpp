// Levels whose coordinates derive from the modes' (format.hpp's level map): DIA's diagonals,
// ELL's slots, BCSR's block numbers and offsets inside a block. Concretize indexes each such
// level by its own variable (cin/concretize.cpp): a new summed variable for a diagonal, a
// slot or a block number, the mode's variable for a row, a column, or an offset inside a
// block. The loops then run in any order the levels allow, and this file supplies what the
// variables' relations need:
//   - a block's rows (columns): once the block number I is bound, the loop over the mode's
//     variable i visits [I*b, I*b + b) only, and the offset level is located at i - I*b;
//     once i is bound, the loop over I visits i / b only;
//   - a diagonal's rows: once the diagonal d is bound, the loop over rows visits those whose
//     column i + offset[d] lies in the matrix (elsewhere the range level stores padding);
//     when rows are bound first, the padding is skipped by its column instead;
//   - computed coordinates: the offset level's column is i + offset[d], not loaded;
//   - padding: ELL's empty slots hold column -1 and are skipped, like a hashed level's
//     empty buckets.
#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;

Expr Lowerer::levelExtentOf(const TensorVars& vars, int level) const {
  // Tensors of the statement record each level's extent (addTensor); workspaces, built by the
  // lowerer with dense levels in mode order, take their mode's.
  if (static_cast<size_t>(level) < vars.levels.size() && vars.levels[level].extent) return vars.levels[level].extent;
  return ir::ref(vars.extents[vars.tensor->format.modeOrder()[level]]);
}

Expr Lowerer::storedCoordinate(const AccessState& state, int level, const Expr& position) {
  const TensorVars& vars = *state.vars;
  if (vars.crd(level)) return cast(kIndex, load(vars.crd(level), position));
  if (vars.array(level, "offset") && level >= 2) {
    // Column = row + offset of the diagonal (the position of the level two above).
    auto row = coords_.find(state.levelVars[level - 1]);
    if (row == coords_.end()) throw CompileError("lowering: the rows of " + vars.tensor->name + " are not bound");
    Expr diagonal = cast(kIndex, load(vars.array(level, "offset"), state.pos[level - 2]));
    for (const auto& [access, offset] : diagonalOffset_) {
      if (&accesses_.at(access) == &state) diagonal = offset;  // loaded once per diagonal
    }
    return binary(BinaryOp::Add, row->second, diagonal);
  }
  throw CompileError("lowering: level " + std::to_string(level + 1) + " of " + vars.tensor->name +
                     " has no coordinates to iterate");
}

Expr Lowerer::entryCondition(const AccessState& state, int level, const Expr& coord) {
  const TensorVars& vars = *state.vars;
  const LevelType& type = *vars.tensor->format.levels()[level];
  if (type.smallestStoredCoordinate() < 0) return binary(BinaryOp::Ge, coord, intLit(0));
  if (vars.array(level, "offset")) {
    for (const auto& [access, st] : accesses_) {
      if (&st == &state && paddingExcluded_.count(access)) return nullptr;
    }
    return binary(BinaryOp::And, binary(BinaryOp::Ge, coord, intLit(0)),
                  binary(BinaryOp::Lt, coord, levelExtentOf(vars, level)));
  }
  return nullptr;
}

Expr Lowerer::levelCoordinate(const AccessState& state, int level, const Expr& coord) const {
  const Format& format = state.vars->tensor->format;
  const LevelCoordinate& lc = format.levelMap()[level];
  if (lc.kind != LevelCoordinate::Kind::BlockOffset) return coord;
  int blockLevel = format.partnerLevel(level, LevelCoordinate::Kind::BlockIndex);
  auto block = blockLevel >= 0 ? coords_.find(state.levelVars[blockLevel]) : coords_.end();
  if (block == coords_.end()) return binary(BinaryOp::Rem, coord, intLit(lc.factor));
  return binary(BinaryOp::Sub, coord, binary(BinaryOp::Mul, block->second, intLit(lc.factor)));
}

void Lowerer::restrictToLevels(const std::string& var, Interval& interval, std::vector<Stmt>& out) {
  auto narrow = [&](Expr lo, Expr hi) {
    // Blocks and a diagonal's rows lie within the dimension: they replace a whole extent.
    interval.lo = interval.restricted ? binary(BinaryOp::Max, interval.lo, lo) : lo;
    interval.hi = interval.restricted ? binary(BinaryOp::Min, interval.hi, hi) : hi;
    interval.restricted = true;
  };
  for (const AccessNode* access : accessOrder_) {
    if (access->levelVars.empty() || zeroed_.count(access)) continue;
    AccessState& state = accesses_.at(access);
    const Format& format = access->tensor->format;
    const auto& map = format.levelMap();
    for (size_t k = 0; k < map.size(); ++k) {
      if (state.levelVars[k] != var) continue;
      const int64_t b = map[k].factor;
      Format::Restriction r = format.restrictionAt(static_cast<int>(k), state.entered);
      using R = Format::Restriction::Kind;
      if (r.kind == R::ToKnownBlock) {
        auto block = coords_.find(state.levelVars[r.partner]);
        if (block == coords_.end()) continue;
        Expr lo = binary(BinaryOp::Mul, block->second, intLit(b));
        narrow(lo, binary(BinaryOp::Add, lo, intLit(b)));
      } else if (r.kind == R::ToBlockOfKnownOffset) {
        auto inner = coords_.find(state.levelVars[r.partner]);
        if (inner == coords_.end()) continue;
        Expr lo = binary(BinaryOp::Div, inner->second, intLit(b));
        narrow(lo, binary(BinaryOp::Add, lo, intLit(1)));
      } else if (r.kind == R::ToDiagonalRows) {
        // The rows of diagonal d: those whose column i + offset[d] is in [0, cols).
        Var offset = makeVar(freshName(access->tensor->name + "_offset"), kIndex);
        out.push_back(declare(offset, cast(kIndex, load(state.vars->array(k + 1, "offset"), state.pos[k - 1]))));
        Expr lo = binary(BinaryOp::Max, intLit(0), binary(BinaryOp::Sub, intLit(0), ir::ref(offset)));
        Expr hi = binary(BinaryOp::Min, levelExtentOf(*state.vars, static_cast<int>(k)),
                         binary(BinaryOp::Sub, levelExtentOf(*state.vars, static_cast<int>(k + 1)), ir::ref(offset)));
        narrow(lo, hi);
        paddingExcluded_.insert(access);
        diagonalOffset_[access] = ir::ref(offset);
      }
    }
  }
}

}  // namespace coiter::lower
