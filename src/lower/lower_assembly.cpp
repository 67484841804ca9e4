// Result assembly fused with compute (Kjolstad's thesis, ch. 5). Dense result levels are located;
// a compressed level and the singleton levels below it form an append group that shares a
// position counter. An entry is appended when the loop of the group's deepest index
// variable has produced it: the leaf group appends every computed entry; a group above
// another appends only when its child group appended something. Arrays grow geometrically
// (ir::GrowNode). Under a dense parent (or at the top) a group counts entries per parent in
// pos[parent+1] and the caller turns the counts into offsets; under another group the parent
// writes the child's pos entries directly.
#include <algorithm>

#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;

const LevelType& Lowerer::levelOf(int resultLevel) const { return *resultTensor_->format.levels()[resultLevel]; }

namespace {

int groupEndingAt(const std::vector<AppendGroup>& groups, const std::vector<std::string>& levelVars,
                  const std::string& var) {
  for (size_t g = 0; g < groups.size(); ++g) {
    if (levelVars[groups[g].last] == var) return static_cast<int>(g);
  }
  return -1;
}

}  // namespace

void Lowerer::enterResultLevels(std::vector<Stmt>& out) {
  int order = resultTensor_->order();
  while (result_.entered < order) {
    int k = result_.entered;
    auto bound = coords_.find(result_.levelVars[k]);
    if (bound == coords_.end()) break;
    if (patternAccess_) {
      result_.pos[k] = patternPosition(k);
    } else if (groupOfLevel_[k] >= 0) {
      result_.pos[k] = ir::ref(groups_[groupOfLevel_[k]].count);
    } else if (k == insertedLevel_) {
      result_.pos[k] = nullptr;  // found (and claimed) by each store: updateResultEntry
    } else {
      result_.pos[k] = locatePosition(result_, k, bound->second, out);
    }
    result_.entered++;
  }
}

Stmt Lowerer::countEntries(const std::string& var, const std::vector<Stmt>& body, bool writesResult) {
  // A group under a dense level counts its entries per parent position in pos[parent + 1]
  // (the caller turns the counts into offsets): once per visit of the parent, not per entry.
  for (const auto& g : groups_) {
    if (!assemble_ || !writesResult || g.parent >= 0 || g.first == 0 || result_.levelVars[g.first - 1] != var) continue;
    if (result_.entered < g.first) continue;
    if (twoPass_) return countRowInPasses(g, body);
    Var start = makeVar(freshName(resultTensor_->name + std::to_string(g.first + 1) + "_row_start"), kIndex);
    Expr added = binary(BinaryOp::Sub, ir::ref(g.count), ir::ref(start));
    std::vector<Stmt> out{declare(start, ir::ref(g.count))};
    out.insert(out.end(), body.begin(), body.end());
    out.push_back(levelOf(g.first).countIntoSegment(result_.vars->levels[g.first], result_.pos[g.first - 1], added,
                                                    resultTensor_->indexType));
    return block(std::move(out));
  }
  return block(body);
}

// Not only the group's own loop: a group below dense levels (CSR's rows) appends row after
// row into one array and counts each row's entries at its coordinate, so the rows must come
// in order too. A loop over such a level driven by a hashed operand's buckets would lay the
// rows out in bucket order under offsets that assume coordinate order.
bool Lowerer::appendsInOrderOf(const std::string& var) const {
  for (const AppendGroup& group : groups_) {
    for (int k = 0; k <= group.last; ++k) {
      if (result_.levelVars[k] == var) return true;
    }
  }
  return false;
}

void Lowerer::checkAppendOrder(const std::string& var, const lattice::IterationLattice& lattice) const {
  if (!assemble_ || groups_.empty()) return;
  bool needsOrder = false;
  for (size_t k = 0; k < result_.levelVars.size(); ++k) {
    if (result_.levelVars[k] != var) continue;
    if (groupOfLevel_[k] >= 0) {
      needsOrder = needsOrder || levelOf(static_cast<int>(k)).properties().ordered;
    } else if (!twoPass_) {
      needsOrder = needsOrder || std::any_of(groups_.begin(), groups_.end(), [&](const AppendGroup& group) {
                     return group.first > static_cast<int>(k);
                   });
    }
  }
  if (!needsOrder) return;
  for (const auto& point : lattice.points()) {
    for (int s : point.iterators) {
      const lattice::Segment& segment = lattice.segments()[s];
      if (segment.dimension || segment.ordered) continue;
      throw FormatError("result " + resultTensor_->name + " (format " + resultTensor_->format.str() +
                        "): its entries are appended in the order loop '" + var + "' visits them, but that loop " +
                        "iterates " + segment.name + ", an unordered level that cannot be looked up; store that " +
                        "operand in an ordered format (asformat), or compute the result in a dense format");
    }
  }
}

Expr Lowerer::resultPosition() const {
  int order = resultTensor_->order();
  if (order == 0) return intLit(0);
  if (result_.entered != order) {
    throw CompileError("lowering: the result " + resultTensor_->name + " is written before all its indices are bound");
  }
  return result_.pos[order - 1];
}

Stmt Lowerer::updateResultEntry(const notation::Operator* op, const Expr& value) {
  if (insertedLevel_ < 0) return updateResult(op, resultPosition(), value);
  // An inserted last level (hashed): each store finds the entry's position in its parent's
  // table, claiming an empty bucket when the entry is new, so the loops may visit the
  // result's coordinates in any order and revisit them (sums accumulate in place).
  resultPosition();  // (checks that every index is bound)
  const int k = insertedLevel_;
  const LevelType& type = levelOf(k);
  const LevelKernelVars& vars = result_.vars->levels[k];
  Expr parent = k > 0 ? result_.pos[k - 1] : intLit(0);
  Expr coord = coords_.at(result_.levelVars[k]);
  std::vector<Stmt> out;
  LevelCode code{"p" + resultTensor_->name + std::to_string(k + 1),
                 [this](const std::string& base) { return freshName(base); }, out};
  if (!assemble_) {
    // Compute-only: the entry must be in the given tables.
    Expr at = type.locate(vars, parent, coord, code);
    out.push_back(ifThen(binary(BinaryOp::Lt, at, intLit(0)), ret(kStructureMismatch)));
    out.push_back(updateResult(op, at, value));
    return block(std::move(out));
  }
  // A store of zero where zero changes nothing (the values start at zero; a plain store
  // writes an entry once) inserts no entry: what SciPy stores, except for sums that cancel.
  const DType dtype = resultTensor_->dtype;
  Var v = makeVar(freshName(resultTensor_->name + "_value"), scalar(dtype));
  Expr at = type.insert(vars, parent, coord, code);
  Expr full = binary(BinaryOp::Lt, at, intLit(0));
  if (parallelDepth_ == 0) {
    out.push_back(ifThen(full, ret(kTableFull)));
    out.push_back(updateResult(op, at, ir::ref(v)));
  } else {
    // (A parallel loop cannot return: the kernel checks the level after the loop.)
    out.push_back(ifThen(logicalNot(full), updateResult(op, at, ir::ref(v))));
  }
  Stmt insert = block(std::move(out));
  if (!op || op->zeroIsIdentity) insert = ifThen(binary(BinaryOp::Ne, ir::ref(v), zeroOf(dtype)), insert);
  return block({declare(v, value), insert});
}

Stmt Lowerer::beginResultEntry(const std::string& var, bool writesResult, bool accumulates, Var& startVar) {
  int g = groupEndingAt(groups_, result_.levelVars, var);
  if (g < 0 || !writesResult) return nullptr;
  const AppendGroup& group = groups_[g];
  TensorVars& vars = *result_.vars;
  if (group.child >= 0) {
    const AppendGroup& child = groups_[group.child];
    startVar = makeVar(freshName(resultTensor_->name + std::to_string(group.last + 1) + "_start"), kIndex);
    Stmt start = declare(startVar, ir::ref(child.count));
    if (child.parent >= 0 || !assemble_) return start;
    // Dense levels lie between this group and the child: the entry brings a dense block of
    // parents for the child's segments, whose counts start at zero. (An entry that is not
    // kept leaves them zero for the next one.)
    Expr parents = intLit(1);
    for (int k = group.last + 1; k < child.first; ++k) parents = binary(BinaryOp::Mul, parents, vars.levels[k].extent);
    std::vector<Stmt> out;
    LevelCode code{resultTensor_->name + std::to_string(child.first + 1),
                   [this](const std::string& base) { return freshName(base); }, out};
    Expr first = binary(BinaryOp::Mul, ir::ref(group.count), parents);
    out.push_back(levelOf(child.first).openSegments(vars.levels[child.first], first, parents, code));
    out.push_back(start);
    return block(std::move(out));
  }
  // The leaf group: room for the entry's value, which starts at zero (compound assignments
  // below accumulate into it). Compute-only kernels instead check that the given structure
  // has an entry here.
  Expr count = ir::ref(group.count);
  Expr zero = zeroOf(resultTensor_->dtype);
  if (trailingDense_ >= 0) {
    // Each entry owns a dense block of values, written anywhere in it: zero it first.
    Expr size = blockSize();
    Expr start = binary(BinaryOp::Mul, count, size);
    Var b = makeVar(freshName(resultTensor_->name + "_block"), kIndex);
    return block({grow(vars.vals, vars.valsCap, binary(BinaryOp::Add, start, size)),
                  forLoop(b, intLit(0), size, store(vars.vals, binary(BinaryOp::Add, start, ir::ref(b)), zero))});
  }
  // (A filling pass has exact room: the counting pass sized the arrays.)
  Stmt room = !assemble_ ? ifThen(binary(BinaryOp::Ge, count, ir::ref(vars.valsCap)), ret(kStructureMismatch))
              : reservedGroup_ == g || twoPass_ ? nullptr
                                                : grow(vars.vals, vars.valsCap, plusOne(count));
  return block({room, accumulates ? inFillPass(store(vars.vals, count, zero)) : nullptr});
}

Stmt Lowerer::commitResultEntry(const std::string& var, bool writesResult, const Var& startVar) {
  int g = groupEndingAt(groups_, result_.levelVars, var);
  if (g < 0 || !writesResult) return nullptr;
  const AppendGroup& group = groups_[g];
  TensorVars& vars = *result_.vars;
  if (result_.entered <= group.last) {
    throw CompileError("lowering: the result " + resultTensor_->name +
                       " would be appended out of order (its levels are iterated in a different order "
                       "than they are stored); a workspace is needed");
  }
  // Entries are appended in loop order, so the loops of the result's levels must nest in
  // level order (a COO result iterated l, k, i would come out unsorted).
  std::vector<std::string> nest = openLoops_;
  nest.push_back(var);
  int previous = -1;
  for (int k = 0; k <= group.last; ++k) {
    auto at = std::find(nest.begin(), nest.end(), result_.levelVars[k]);
    if (at == nest.end()) continue;
    int position = static_cast<int>(at - nest.begin());
    if (position < previous) {
      throw CompileError("lowering: the result " + resultTensor_->name +
                         " would be appended out of order (its levels are iterated in a different order "
                         "than they are stored)");
    }
    previous = position;
  }
  // Every enclosing loop must be a result index: a reduction loop around this one would
  // append the same coordinates again (or revisit the parent's segment).
  // (Indices of the result's own deeper levels count as reductions here: they revisit too.)
  auto above = result_.levelVars.begin() + group.last;
  for (auto it = openLoops_.begin(); it != openLoops_.end(); ++it) {
    if (std::find(result_.levelVars.begin(), above, *it) == above) {
      throw CompileError("lowering: level " + std::to_string(group.first + 1) + " of the result " +
                         resultTensor_->name + " would be appended to once per value of the index '" + *it +
                         "'; this loop order needs a workspace or a result format with random insert");
    }
  }
  DType indexType = resultTensor_->indexType;
  Expr count = ir::ref(group.count);
  std::vector<Stmt> append;
  if (!assemble_) {
    append.push_back(checkResultEntry(group));
    append.push_back(assign(group.count, plusOne(count)));
    if (group.child >= 0) {
      return ifThen(binary(BinaryOp::Gt, ir::ref(groups_[group.child].count), ir::ref(startVar)),
                    block(std::move(append)));
    }
    return block(std::move(append));
  }
  if (twoPass_) {
    // Both passes count every entry; the filling pass stores its coordinates (into exact room).
    for (int k = group.first; k <= group.last; ++k)
      append.push_back(levelOf(k).appendCoordinate(vars.levels[k], count, coords_.at(result_.levelVars[k]),
                                                   /*roomReserved=*/true, indexType));
    return block({inFillPass(block(std::move(append))), assign(group.count, plusOne(count))});
  }
  const bool reserved = reservedGroup_ == g;
  for (int k = group.first; k <= group.last; ++k) {
    append.push_back(
        levelOf(k).appendCoordinate(vars.levels[k], count, coords_.at(result_.levelVars[k]), reserved, indexType));
  }
  // (Entries under a dense parent or at the top are counted per parent, see countEntries.)
  if (group.child >= 0 && groups_[group.child].parent == g) {
    // The child's segment of this entry ends where the child's counter stands now.
    const AppendGroup& child = groups_[group.child];
    append.push_back(levelOf(child.first).endSegment(vars.levels[child.first], count, ir::ref(child.count), indexType));
  }
  Stmt next = assign(group.count, plusOne(count));
  if (group.child >= 0) {
    append.push_back(next);
    return ifThen(binary(BinaryOp::Gt, ir::ref(groups_[group.child].count), ir::ref(startVar)),
                  block(std::move(append)));
  }
  if (trailingDense_ >= 0) {  // a block is kept whole
    append.push_back(next);
    return block(std::move(append));
  }
  // Like SciPy, an entry whose value came out zero (no term reached it, or terms cancelled)
  // is not stored; the next entry reuses its slot.
  Expr nonzero = binary(BinaryOp::Ne, load(vars.vals, count), zeroOf(resultTensor_->dtype));
  if (appendIf_ || reserved) {
    // Written at every step (there is room); kept (the count moves past it) only where it is
    // nonzero and, in a speculative merge, where its region holds: no branch to mispredict.
    Expr keep = appendIf_ ? binary(BinaryOp::And, appendIf_, nonzero) : nonzero;
    append.push_back(assign(group.count, binary(BinaryOp::Add, count, cast(kIndex, keep))));
    return block(std::move(append));
  }
  append.push_back(next);
  return ifThen(nonzero, block(std::move(append)));
}

Stmt Lowerer::reserveResultRoom(const std::string& var, const Expr& steps, bool writesResult) {
  int g = groupEndingAt(groups_, result_.levelVars, var);
  // The leaf group only (a group above appends once per child segment, not per step), one
  // value per entry (not a dense block), appended by this kernel (not checked against out=).
  if (!assemble_ || twoPass_ || !writesResult || g < 0 || groups_[g].child >= 0 || trailingDense_ >= 0) return nullptr;
  const AppendGroup& group = groups_[g];
  TensorVars& vars = *result_.vars;
  Expr needed = binary(BinaryOp::Add, ir::ref(group.count), steps);
  std::vector<Stmt> grows{grow(vars.vals, vars.valsCap, needed)};
  for (int k = group.first; k <= group.last; ++k) grows.push_back(levelOf(k).reserveAppends(vars.levels[k], needed));
  reservedGroup_ = g;
  return block(std::move(grows));
}

bool Lowerer::appendsSpeculatively(const cin::ForallNode& f, const std::string& var) const {
  if (!assemble_ || twoPass_ || privateResult_ || atomicResult_ || trailingDense_ >= 0) return false;
  if (f.body->kind != cin::StmtKind::Assign) return false;
  const auto& a = cin::as<cin::AssignNode>(f.body);
  if (a.lhs->tensor != resultTensor_ || a.accumulate) return false;
  int g = groupEndingAt(groups_, result_.levelVars, var);
  return g >= 0 && groups_[g].child < 0;
}

Stmt Lowerer::checkResultEntry(const AppendGroup& group) {
  // The entry must exist in the given structure: the same coordinates, at the position this
  // kernel reaches it, inside its parent's segment.
  TensorVars& vars = *result_.vars;
  Expr count = ir::ref(group.count);
  std::vector<Expr> mismatches;
  for (int k = group.first; k <= group.last; ++k) {
    Expr stored = cast(scalar(DType::Int64), load(vars.crd(k), count));
    mismatches.push_back(binary(BinaryOp::Ne, stored, coords_.at(result_.levelVars[k])));
  }
  if (group.parent < 0) {
    // Inside the parent's segment.
    Expr parent = group.first == 0 ? intLit(0) : result_.pos[group.first - 1];
    std::optional<PositionRange> segment =
        levelOf(group.first).positionRange(vars.levels[group.first], LevelParent{parent, nullptr, group.first == 0});
    mismatches.push_back(binary(BinaryOp::Lt, count, segment->begin));
    mismatches.push_back(binary(BinaryOp::Ge, count, segment->end));
  }
  // Bounds first: the coordinate loads must not run past the given arrays.
  // (In a compute-only kernel the capacity parameters hold the given arrays' lengths.)
  Stmt bounds =
      ifThen(binary(BinaryOp::Ge, count, ir::ref(vars.capacity(group.first, "crd"))), ret(kStructureMismatch));
  Expr any = mismatches.front();
  for (size_t n = 1; n < mismatches.size(); ++n) any = binary(BinaryOp::Or, any, mismatches[n]);
  return block({bounds, ifThen(any, ret(kStructureMismatch))});
}

}  // namespace coiter::lower
