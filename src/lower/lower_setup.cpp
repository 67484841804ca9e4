// Kernel parameters: one pointer slot per array and one integer slot per extent or capacity,
// for every tensor of the statement; plus the plan for appending to the result.
#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

namespace nt = coiter::notation;

using namespace ir;

Lowerer::Lowerer(const schedule::ScheduledStatement& stmt, const std::string& name, bool assemble, bool tryOverwrite,
                 bool tryPattern)
    : tryOverwrite_(tryOverwrite),
      tryPattern_(tryPattern && assemble),
      scheduled_(stmt),
      root_(stmt.stmt),
      name_(name),
      assemble_(assemble) {
  abi_.assembles = assemble;
}

std::string freshName(std::set<std::string>& used, const std::string& base) {
  std::string clean;
  for (char c : base) clean += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (clean.empty() || std::isdigit(static_cast<unsigned char>(clean[0]))) clean = "v" + clean;
  std::string candidate = clean;
  for (int n = 0; used.count(candidate); ++n) candidate = clean + "_" + std::to_string(n);
  used.insert(candidate);
  return candidate;
}

std::string Lowerer::freshName(const std::string& base) { return lower::freshName(usedNames_, base); }

TensorVars& Lowerer::addTensor(const notation::TensorVarPtr& t, bool result) {
  auto vars = std::make_unique<TensorVars>();
  vars->tensor = t;
  vars->index = static_cast<int>(abi_.tensors.size());
  abi_.tensors.push_back(t);
  const Format& format = t->format;
  if (result && format.hasDerivedLevels()) {
    throw FormatError("result " + t->name + ": a " + format.str() +
                      " result cannot be assembled by a kernel; "
                      "compute it in another format (csr, dense) and convert it with asformat()");
  }
  auto pointerParam = [&](const std::string& name, DType elem, int level, const std::string& array) {
    Var v = makeVar(freshName(name), pointerTo(elem));
    int slot = abi_.pointerSlots++;
    params_.push_back(Param{v, slot, result});
    abi_.arrays.push_back(ArraySlot{vars->index, level, array, elem, slot, -1});
    return v;
  };
  auto integerParam = [&](const std::string& name, bool writeBack) {
    Var v = makeVar(freshName(name), scalar(DType::Int64));
    params_.push_back(Param{v, abi_.integerSlots++, writeBack});
    return v;
  };
  for (int m = 0; m < t->order(); ++m) {
    Var e = integerParam(t->name + "_dim" + std::to_string(m), false);
    abi_.extents.push_back(ExtentSlot{vars->index, m, params_.back().slot});
    vars->extents.push_back(e);
  }
  const auto& levels = format.levels();
  size_t n = levels.size();
  vars->levels.resize(n);
  for (size_t k = 0; k < n; ++k) {
    const LevelType& type = *levels[k];
    LevelKernelVars& level = vars->levels[k];
    std::string prefix = t->name + std::to_string(k + 1);
    const LevelCoordinate& lc = format.levelMap()[k];
    if (lc.kind == LevelCoordinate::Kind::Mode) {
      level.extent = ir::ref(vars->extents[lc.mode]);
    } else if (lc.kind == LevelCoordinate::Kind::BlockOffset) {
      // The block shape is part of the format: constant trip counts unroll.
      level.extent = intLit(lc.factor);
    } else if (type.extentIsStored()) {
      // A derived level (diagonals, slots, blocks, offsets inside a block) that stores its size.
      level.extent = ir::ref(integerParam(prefix + "_size", false));
      abi_.extents.push_back(ExtentSlot{vars->index, -1 - static_cast<int>(k), params_.back().slot, "size"});
    } else if (lc.kind == LevelCoordinate::Kind::BlockIndex) {
      level.extent = binary(BinaryOp::Div, ir::ref(vars->extents[lc.mode]), intLit(lc.factor));
    } else {
      throw CompileError("lowering: level " + std::to_string(k + 1) + " of " + t->name + " (" + type.name() +
                         ") stores a coordinate the compiler cannot derive");
    }
    const bool inserted = result && format.insertsResultLevel(static_cast<int>(k));
    if (result && !isAppended(type.assembly()) && type.assembly() != LevelAssembly::Located && !inserted) {
      std::string instead = type.assembly() == LevelAssembly::Inserted ? format.resultAssemblyFormat().str() : "";
      throw FormatError("a kernel cannot compute the " + type.name() + " level " + std::to_string(k + 1) +
                        " of the result " + t->name + " (format " + format.str() + ")" +
                        (instead.empty() ? "; choose a dense or compressed result format"
                                         : ": compute it in format " + instead + " and convert it with asformat()"));
    }
    for (const LevelKernelArray& array : type.kernelArrays()) {
      level.arrays[array.name] = pointerParam(prefix + "_" + array.name, t->indexType, static_cast<int>(k), array.name);
      if (result && array.grows) {
        level.capacities[array.name] = integerParam(prefix + "_" + array.name + "_capacity", true);
        abi_.arrays.back().capacitySlot = params_.back().slot;
      }
    }
    for (const LevelKernelScalar& scalar : type.kernelScalars()) {
      level.scalars[scalar.name] = integerParam(prefix + "_" + scalar.suffix, false);
      abi_.extents.push_back(ExtentSlot{vars->index, -1 - static_cast<int>(k), params_.back().slot, scalar.name});
    }
    if (inserted && assemble_) {
      for (const std::string& name : type.insertScratch())
        level.scratch[name] = makeVar(freshName(prefix + "_" + name), pointerTo(DType::Int64));
    }
  }
  vars->vals = pointerParam(t->name + "_vals", t->dtype, -1, "vals");
  // Appended values grow; the values of located and inserted levels are allocated in full by
  // the caller.
  bool grows =
      std::any_of(levels.begin(), levels.end(), [](const LevelTypePtr& l) { return isAppended(l->assembly()); });
  if (result && grows) {
    vars->valsCap = integerParam(t->name + "_vals_capacity", true);
    abi_.arrays.back().capacitySlot = params_.back().slot;
  }
  tensors_.push_back(std::move(vars));
  return *tensors_.back();
}

void Lowerer::registerAccesses(const cin::Stmt& s) {
  cin::forEachAssignment(s, [&](const cin::AssignNode& a) {
    notation::forEachSubexpression(a.rhs, [&](const notation::Expr& e) {
      using notation::ExprKind;
      if (e->kind == ExprKind::Reduce) throw CoiterError("lowering: reductions must be concretized first");
      if (e->kind != ExprKind::Access) return;
      const auto& acc = static_cast<const AccessNode&>(*e);
      if (acc.tensor->temporary && acc.tensor->order() == 0) return;  // scalar temporaries
      TensorVars* vars = nullptr;  // workspaces get theirs when their where is lowered
      if (!acc.tensor->temporary) {
        for (auto& t : tensors_) {
          if (t->tensor == acc.tensor) vars = t.get();
        }
        if (!vars) vars = &addTensor(acc.tensor, false);
      }
      AccessState state;
      state.vars = vars;
      state.levelVars = notation::levelIndices(acc);
      for (size_t k = 0; vars && k < acc.levelVars.size(); ++k) {
        // A level's own variable (diagonal, slot, block number) ranges over the level.
        if (std::find(acc.indices.begin(), acc.indices.end(), acc.levelVars[k]) == acc.indices.end())
          levelVarExtents_[acc.levelVars[k]] = vars->levels[k].extent;
      }
      state.pos.assign(state.levelVars.size(), nullptr);
      state.runEnd.assign(state.levelVars.size(), nullptr);
      accesses_[&acc] = state;
      accessOrder_.push_back(&acc);
    });
    if (!a.lhs->tensor->temporary) {
      if (resultTensor_ && resultTensor_ != a.lhs->tensor) {
        throw CompileError("a kernel computes one result; the statement writes " + resultTensor_->name + " and " +
                           a.lhs->tensor->name);
      }
      if (!resultTensor_) {
        resultTensor_ = a.lhs->tensor;
        result_.levelVars = notation::levelIndices(*a.lhs);
      }
    }
  });
}

void Lowerer::declareTensors() {
  registerAccesses(root_);
  if (!resultTensor_) throw CompileError("the statement assigns no result tensor");
  TensorVars& result = addTensor(resultTensor_, true);
  result_.vars = &result;
  result_.pos.assign(resultTensor_->order(), nullptr);
  result_.runEnd.assign(resultTensor_->order(), nullptr);
  // Index variables and the modes whose extents they must match.
  auto noteModes = [&](const AccessNode& acc, int tensorIndex) {
    for (size_t m = 0; m < acc.indices.size(); ++m) {
      const std::string& v = acc.indices[m];
      auto it = std::find(abi_.indexVars.begin(), abi_.indexVars.end(), v);
      size_t k = it - abi_.indexVars.begin();
      if (it == abi_.indexVars.end()) {
        abi_.indexVars.push_back(v);
        abi_.indexVarModes.emplace_back();
      }
      auto pair = std::make_pair(tensorIndex, static_cast<int>(m));
      auto& modes = abi_.indexVarModes[k];
      if (std::find(modes.begin(), modes.end(), pair) == modes.end()) modes.push_back(pair);
    }
  };
  for (const AccessNode* acc : accessOrder_) {
    if (!acc->tensor->temporary) noteModes(*acc, accesses_.at(acc).vars->index);
  }
  cin::forEachAssignment(root_, [&](const cin::AssignNode& a) {
    if (!a.lhs->tensor->temporary) noteModes(*a.lhs, result.index);
  });
  // A workspace may be written under one index variable and read under another (precompute
  // with renamed workspace variables): both range over the same mode of the workspace, so
  // each takes the other's modes for extents and checks, also one that no operand reads
  // (precompute(A(i,j) * x(j), [j], [jw]) for SpMV leaves y(i) = Σ_j w(j)).
  std::map<std::pair<const TensorVar*, size_t>, std::set<std::string>> workspaceIndices;
  cin::forEachAssignment(root_, [&](const cin::AssignNode& a) {
    auto note = [&](const AccessNode& acc) {
      if (!acc.tensor->temporary) return;
      for (size_t m = 0; m < acc.indices.size(); ++m) workspaceIndices[{acc.tensor.get(), m}].insert(acc.indices[m]);
    };
    note(*a.lhs);
    nt::forEachSubexpression(a.rhs, [&](const nt::Expr& e) {
      if (e->kind == nt::ExprKind::Access) note(static_cast<const AccessNode&>(*e));
    });
  });
  for (const auto& [w, vars] : workspaceIndices) {
    std::vector<std::pair<int, int>> modes;
    for (const auto& v : vars) {
      auto it = std::find(abi_.indexVars.begin(), abi_.indexVars.end(), v);
      if (it == abi_.indexVars.end()) continue;
      for (const auto& m : abi_.indexVarModes[it - abi_.indexVars.begin()]) {
        if (std::find(modes.begin(), modes.end(), m) == modes.end()) modes.push_back(m);
      }
    }
    if (modes.empty()) continue;
    for (const auto& v : vars) {
      auto it = std::find(abi_.indexVars.begin(), abi_.indexVars.end(), v);
      if (it != abi_.indexVars.end()) {
        abi_.indexVarModes[it - abi_.indexVars.begin()] = modes;
      } else {
        abi_.indexVars.push_back(v);
        abi_.indexVarModes.push_back(modes);
      }
    }
  }
  planResultAssembly();
}

void Lowerer::planResultAssembly() {
  const Format& format = resultTensor_->format;
  if (std::string problem = format.resultAssemblyProblem(); !problem.empty()) {
    throw FormatError("result format " + format.str() + ": " + problem);
  }
  const auto& levels = format.levels();
  groupOfLevel_.assign(levels.size(), -1);
  planResultPattern();
  if (patternAccess_) return;  // nothing appended: the operand's structure is the result's
  for (size_t k = 0; k < levels.size(); ++k) {
    LevelAssembly assembly = levels[k]->assembly();
    if (assembly == LevelAssembly::Located) continue;
    if (assembly == LevelAssembly::Inserted) {  // the last level, under located ones (addTensor)
      planResultInserts(static_cast<int>(k));
      continue;
    }
    if (assembly == LevelAssembly::AppendedBelow) {  // joins the group above
      groups_.back().last = static_cast<int>(k);
      groupOfLevel_[k] = static_cast<int>(groups_.size()) - 1;
      continue;
    }
    // Appended: a new group.
    AppendGroup g;
    g.first = g.last = static_cast<int>(k);
    g.count = makeVar(freshName(resultTensor_->name + std::to_string(k + 1) + "_count"), scalar(DType::Int64));
    if (!groups_.empty()) {
      groups_.back().child = static_cast<int>(groups_.size());
      // Directly below the group above, that group ends our segments; with dense levels
      // between, we count entries per dense position (countEntries).
      if (groups_.back().last == static_cast<int>(k) - 1) g.parent = static_cast<int>(groups_.size()) - 1;
    }
    groups_.push_back(g);
    groupOfLevel_[k] = static_cast<int>(groups_.size()) - 1;
  }
  for (const auto& g : groups_) {
    if (assemble_ && g.parent < 0 && g.first > 0) abi_.countedLevels.push_back(g.first);
  }
  // Located levels below the last group give each of its entries a dense block.
  if (!groups_.empty() && groups_.back().last + 1 < static_cast<int>(levels.size())) {
    trailingDense_ = groups_.back().last + 1;
  }
  if (trailingDense_ >= 0 && !assemble_) {
    throw FormatError("out: reusing the structure of a " + resultTensor_->format.str() +
                      " result (dense levels below a compressed one) is not supported yet");
  }
}

void Lowerer::planResultInserts(int level) {
  insertedLevel_ = level;
  if (!assemble_) return;  // a compute-only kernel locates the entries in the given tables
  // The level's scratch arrays live for the whole kernel; a full table found inside a
  // parallel loop (which cannot return) is reported after the computation.
  const LevelKernelVars& vars = result_.vars->levels[level];
  Expr parents = intLit(1);
  for (int k = 0; k < level; ++k) parents = binary(BinaryOp::Mul, parents, result_.vars->levels[k].extent);
  for (const auto& [name, scratch] : vars.scratch) prologue_.push_back(declare(scratch, nullptr));
  prologue_.push_back(levelOf(level).startInserts(vars, parents));
  if (Expr full = levelOf(level).insertsFull(vars)) epilogue_.push_back(ifThen(full, ret(kTableFull)));
  for (const auto& [name, scratch] : vars.scratch) epilogue_.push_back(freeBuffer(scratch));
}

ir::Expr Lowerer::blockSize() const {
  Expr size = intLit(1);
  if (trailingDense_ < 0) return size;
  for (int k = trailingDense_; k < resultTensor_->order(); ++k) {
    int mode = resultTensor_->format.modeOrder()[k];
    size = binary(BinaryOp::Mul, size, ir::ref(result_.vars->extents[mode]));
  }
  return size;
}

ir::Expr Lowerer::extentOf(const std::string& indexVar) const {
  // A derived loop's extent follows from its relation (a workspace over it has that size).
  if (const schedule::IndexRelation* r = scheduled_.relationOf(indexVar)) {
    auto ceilDiv = [](Expr a, int64_t b) {
      return binary(BinaryOp::Div, binary(BinaryOp::Add, a, intLit(b - 1)), intLit(b));
    };
    switch (r->kind) {
      case schedule::RelationKind::Split:
        return r->inner == indexVar ? intLit(r->size) : ceilDiv(extentOf(r->parent), r->size);
      case schedule::RelationKind::Divide:
        return r->outer == indexVar ? intLit(r->size) : ceilDiv(extentOf(r->parent), r->size);
      case schedule::RelationKind::Bound: return intLit(r->size);
      case schedule::RelationKind::Precompute: return extentOf(r->parent);
      case schedule::RelationKind::Fuse: return binary(BinaryOp::Mul, extentOf(r->parent), extentOf(r->second));
      case schedule::RelationKind::Pos: break;  // its operand's entries: known in the loop only
    }
  }
  auto it = std::find(abi_.indexVars.begin(), abi_.indexVars.end(), indexVar);
  if (it == abi_.indexVars.end()) {
    auto level = levelVarExtents_.find(indexVar);
    if (level != levelVarExtents_.end()) return level->second;
    throw CompileError("index variable '" + indexVar + "' has no extent");
  }
  auto [tensor, mode] = abi_.indexVarModes[it - abi_.indexVars.begin()].front();
  return ir::ref(tensors_[tensor]->extents[mode]);
}

ir::CoordinateRanges Lowerer::operandCoordinateRanges() const {
  // The extent of a mode, as the first mode of an index variable ranging over it: the call
  // has checked that they agree, and one extent for the operands of a merge leaves a
  // register free in its loop.
  auto extent = [&](int tensor, int mode) {
    const std::pair<int, int> pair{tensor, mode};
    for (const auto& modes : abi_.indexVarModes) {
      if (std::find(modes.begin(), modes.end(), pair) == modes.end()) continue;
      auto [t, m] = modes.front();
      return ir::ref(tensors_[t]->extents[m]);
    }
    return ir::ref(tensors_[tensor]->extents[mode]);
  };
  ir::CoordinateRanges ranges;
  for (const auto& t : tensors_) {
    if (t.get() == result_.vars) continue;
    const Format& format = t->tensor->format;
    for (size_t k = 0; k < t->levels.size(); ++k) {
      ir::Var crd = t->crd(static_cast<int>(k));
      if (!crd) continue;
      const LevelCoordinate& lc = format.levelMap()[k];
      ir::Expr bound = lc.kind == LevelCoordinate::Kind::Mode ? extent(t->index, lc.mode) : t->levels[k].extent;
      ranges[crd.get()] = {format.levels()[k]->smallestStoredCoordinate(), bound};
    }
  }
  return ranges;
}

LoweredKernel Lowerer::run() {
  declareTensors();
  planTwoPassAssembly();
  planChunkedAssembly();
  if (tryOverwrite_) planResultOverwrite();
  std::vector<Stmt> body;
  // (In two passes each row declares its own counter: countRowInPasses.)
  if (!twoPass_)
    for (const auto& g : groups_) body.push_back(declare(g.count, intLit(0)));
  Stmt computation = lowerStmt(root_);
  checkBounds(body);
  body.insert(body.end(), prologue_.begin(), prologue_.end());
  body.push_back(computation);
  body.insert(body.end(), epilogue_.begin(), epilogue_.end());
  if (assemble_) {
    // A top-level compressed level has one segment: all its entries.
    for (const auto& g : groups_) {
      if (g.first == 0) {
        const LevelType& top = *resultTensor_->format.levels()[0];
        body.push_back(top.endSegment(result_.vars->levels[0], intLit(0), ir::ref(g.count), resultTensor_->indexType));
      }
    }
  }
  if (!assemble_) {
    // Every entry of the given structure must have been produced.
    for (const auto& g : groups_) {
      body.push_back(ifThen(binary(BinaryOp::Ne, ir::ref(g.count), ir::ref(result_.vars->capacity(g.first, "crd"))),
                            ret(kStructureMismatch)));
    }
  }
  body.push_back(ret(kOk));
  LoweredKernel out;
  out.function = Function{name_, params_, block(std::move(body))};
  out.abi = abi_;
  out.abi.resultOverwritten = overwriteResult_ && !overwriteBroken_;
  out.names = usedNames_;
  out.coordinateRanges = operandCoordinateRanges();
  return out;
}

}  // namespace coiter::lower
