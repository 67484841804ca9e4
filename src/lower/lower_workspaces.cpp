// Vector workspaces (lowerer.hpp, WorkspaceVars): declared when their where statement is
// lowered, written by its producer, ordered, read by its consumer through their list of
// coordinates, and emptied for the next execution of the where. The format of the
// workspace's level (precompute's `format`) picks the storage: dense, hashed or compressed.
#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;
namespace nt = notation;

namespace {

constexpr int64_t kInitialEntries = 16;  // hashed and compressed workspaces grow from here

WorkspaceKind kindOf(const TensorVar& w) {
  if (w.order() > 1) return WorkspaceKind::DenseArray;
  // The workspace implementation that assembles its one level the way the level's type does.
  switch (w.format.levels()[0]->assembly()) {
    case LevelAssembly::Inserted: return WorkspaceKind::Hashed;
    case LevelAssembly::Appended: return WorkspaceKind::Compressed;
    case LevelAssembly::Located: return WorkspaceKind::Dense;
    default:
      throw FormatError("workspace " + w.name + ": a " + w.format.levels()[0]->name() +
                        " level cannot hold a workspace; use dense, compressed or hashed");
  }
}

}  // namespace

WorkspaceVars& Lowerer::declareWorkspace(const notation::TensorVarPtr& w, const std::vector<std::string>& indexVars) {
  auto& ws = workspaces_[w.get()];
  if (ws.tensor) return ws;
  // Over a derived loop (a split's inner loop), a workspace is a dense array of the block:
  // written and read at the loop's coordinate within the block, not listed.
  ws.kind = scheduled_.isDerived(indexVars.front()) ? WorkspaceKind::DenseArray : kindOf(*w);
  const std::string& indexVar = indexVars.front();
  ws.indexVar = indexVar;
  ws.tensor = std::make_unique<TensorVars>();
  ws.tensor->tensor = w;
  ws.tensor->extents = {};
  ws.tensor->vals = makeVar(freshName(w->name + "_vals"), pointerTo(w->dtype));
  // The coordinate list, iterated like the crd array of one level.
  ws.tensor->levels.resize(1);
  ws.tensor->levels[0].arrays["crd"] = makeVar(freshName(w->name + "_list"), pointerTo(DType::Int64));
  ws.count = makeVar(freshName(w->name + "_count"), kIndex);
  for (auto& [acc, state] : accesses_) {
    if (acc->tensor == w) state.vars = ws.tensor.get();
  }
  const Var& vals = ws.tensor->vals;
  const Var& list = ws.tensor->crd(0);
  if (ws.kind == WorkspaceKind::DenseArray) {
    // Extents per mode, for locating it like a dense operand.
    ws.tensor->levels.assign(w->order(), LevelKernelVars{});
    Expr size = intLit(1);
    for (size_t m = 0; m < indexVars.size(); ++m) {
      Var extent = makeVar(freshName(w->name + "_dim" + std::to_string(m)), kIndex);
      prologue_.push_back(declare(extent, extentOf(indexVars[m])));
      ws.tensor->extents.push_back(extent);
      size = binary(BinaryOp::Mul, size, ir::ref(extent));
    }
    ws.size = size;
    if (parallelDepth_ > 0) {
      // One array per thread of the parallel loop around the where statement, one after the
      // other: the thread id is the position above the first level.
      ws.tensor->root = threadId();
      size = binary(BinaryOp::Mul, numThreads(), size);
    }
    prologue_.push_back(declare(vals, nullptr));
    prologue_.push_back(allocate(vals, size, false));
    epilogue_.push_back(freeBuffer(vals));
    return ws;
  }
  if (ws.kind == WorkspaceKind::Dense) {
    Expr extent = extentOf(indexVar);
    Expr size = extent;
    if (parallelDepth_ > 0) {
      // One slice per thread of the parallel loop around the workspace's where statement.
      size = binary(BinaryOp::Mul, numThreads(), extent);
      ws.base = binary(BinaryOp::Mul, threadId(), extent);
    }
    ws.mark = makeVar(freshName(w->name + "_mark"), pointerTo(DType::Bool));
    for (const Var& v : {vals, list, ws.mark}) prologue_.push_back(declare(v, nullptr));
    prologue_.push_back(allocate(vals, size, true));
    prologue_.push_back(allocate(ws.mark, size, true));
    prologue_.push_back(allocate(list, size, false));
    for (const Var& v : {vals, list, ws.mark}) epilogue_.push_back(freeBuffer(v));
    return ws;
  }
  // (Their arrays grow, so the schedule's legality keeps them out of parallel loops.)
  if (parallelDepth_ > 0) throw CompileError("lowering: a growing workspace inside a parallel loop");
  // Hashed and compressed workspaces grow from a few entries: their memory follows the
  // entries, not the extent.
  ws.listCapacity = makeVar(freshName(w->name + "_list_capacity"), kIndex);
  std::vector<Var> arrays{vals, list};
  if (ws.kind == WorkspaceKind::Hashed) {
    ws.keys = makeVar(freshName(w->name + "_keys"), pointerTo(DType::Int64));
    ws.slots = makeVar(freshName(w->name + "_slots"), pointerTo(DType::Int64));
    ws.tableSize = makeVar(freshName(w->name + "_table_size"), kIndex);
    ws.valsCapacity = makeVar(freshName(w->name + "_slots_capacity"), kIndex);  // of slots
    arrays.push_back(ws.keys);
    arrays.push_back(ws.slots);
  } else {
    ws.valsCapacity = makeVar(freshName(w->name + "_vals_capacity"), kIndex);
  }
  for (const Var& v : arrays) prologue_.push_back(declare(v, nullptr));
  for (const Var& v : {ws.listCapacity, ws.valsCapacity}) prologue_.push_back(declare(v, intLit(kInitialEntries)));
  prologue_.push_back(allocate(list, intLit(kInitialEntries), false));
  if (ws.kind == WorkspaceKind::Hashed) {
    // The table holds at most half its size in entries (growHashedWorkspace).
    prologue_.push_back(declare(ws.tableSize, intLit(2 * kInitialEntries)));
    prologue_.push_back(allocate(vals, ir::ref(ws.tableSize), false));
    prologue_.push_back(allocate(ws.keys, ir::ref(ws.tableSize), false));
    prologue_.push_back(allocate(ws.slots, intLit(kInitialEntries), false));
    Var n = makeVar(freshName(w->name + "_clear"), kIndex);
    prologue_.push_back(forLoop(n, intLit(0), ir::ref(ws.tableSize), store(ws.keys, ir::ref(n), intLit(-1))));
  } else {
    prologue_.push_back(allocate(vals, intLit(kInitialEntries), false));
  }
  for (const Var& v : arrays) epilogue_.push_back(freeBuffer(v));
  return ws;
}

Expr Lowerer::probeHashedWorkspace(const WorkspaceVars& ws, const Var& keys, const Expr& size, const Expr& key,
                                   std::vector<Stmt>& out) {
  // Linear probing from key % size; the table is never full, so an empty slot ends it.
  Var slot = makeVar(freshName(ws.tensor->tensor->name + "_slot"), kIndex);
  out.push_back(declare(slot, binary(BinaryOp::Rem, key, size)));
  Expr stored = load(keys, ir::ref(slot));
  Expr searching = binary(BinaryOp::And, binary(BinaryOp::Ne, stored, key), binary(BinaryOp::Ne, stored, intLit(-1)));
  Expr next = plusOne(ir::ref(slot));
  out.push_back(whileLoop(searching, assign(slot, select(binary(BinaryOp::Eq, next, size), intLit(0), next))));
  return ir::ref(slot);
}

Stmt Lowerer::growHashedWorkspace(const WorkspaceVars& ws) {
  // Twice the size: every entry moves to its slot in the new table (the slots list says
  // where each one is now, so the old table is not searched).
  const std::string& name = ws.tensor->tensor->name;
  const Var& vals = ws.tensor->vals;
  Var size = makeVar(freshName(name + "_new_size"), kIndex);
  Var keys = makeVar(freshName(name + "_new_keys"), pointerTo(DType::Int64));
  Var values = makeVar(freshName(name + "_new_vals"), vals->type);
  Var n = makeVar(freshName(name + "_entry"), kIndex);
  Var old = makeVar(freshName(name + "_old_slot"), kIndex);
  Var key = makeVar(freshName(name + "_key"), kIndex);
  std::vector<Stmt> move{declare(old, load(ws.slots, ir::ref(n))), declare(key, load(ws.keys, ir::ref(old)))};
  Expr slot = probeHashedWorkspace(ws, keys, ir::ref(size), ir::ref(key), move);
  move.push_back(store(keys, slot, ir::ref(key)));
  move.push_back(store(values, slot, load(vals, ir::ref(old))));
  move.push_back(store(ws.slots, ir::ref(n), slot));
  Var c = makeVar(freshName(name + "_clear"), kIndex);
  return block({
      declare(size, binary(BinaryOp::Mul, ir::ref(ws.tableSize), intLit(2))),
      declare(keys, nullptr),
      allocate(keys, ir::ref(size), false),
      declare(values, nullptr),
      allocate(values, ir::ref(size), false),
      forLoop(c, intLit(0), ir::ref(size), store(keys, ir::ref(c), intLit(-1))),
      forLoop(n, intLit(0), ir::ref(ws.count), block(std::move(move))),
      freeBuffer(ws.keys),
      freeBuffer(vals),
      assign(ws.keys, ir::ref(keys)),
      assign(vals, ir::ref(values)),
      assign(ws.tableSize, ir::ref(size)),
  });
}

Stmt Lowerer::storeToWorkspace(const AccessNode& lhs, const nt::Operator* accumulate, Expr value) {
  const TensorVar& w = *lhs.tensor;
  WorkspaceVars& ws = workspaces_.at(&w);
  Expr coord = coords_.at(lhs.indices.front());
  const Var& vals = ws.tensor->vals;
  const Var& list = ws.tensor->crd(0);
  Expr count = ir::ref(ws.count);
  auto update = [&](const Expr& at) {
    return store(vals, at, accumulate ? binary(irOpOf(*accumulate), load(vals, at), value) : value);
  };
  // A new entry starts at zero, the identity of the only accumulation workspaces take (+).
  Expr zero = zeroOf(w.dtype);
  switch (ws.kind) {
    case WorkspaceKind::DenseArray: {
      // Row-major over the modes, as a dense operand is located.
      Expr at = ws.tensor->root ? ws.tensor->root : intLit(0);
      for (size_t m = 0; m < lhs.indices.size(); ++m) {
        at = binary(BinaryOp::Add, binary(BinaryOp::Mul, at, ir::ref(ws.tensor->extents[m])),
                    coords_.at(lhs.indices[m]));
      }
      return update(at);
    }
    case WorkspaceKind::Dense: {
      Expr c = ws.at(coord);
      Stmt touch = ifThen(logicalNot(load(ws.mark, c)),
                          block({store(ws.mark, c, boolLit(true)), store(list, ws.at(count), coord),
                                 assign(ws.count, plusOne(count))}));
      return block({touch, update(c)});
    }
    case WorkspaceKind::Compressed: {
      // Appended in coordinate order: a coordinate equal to the last one adds to its entry.
      size_t depth = producerDepth_.empty() ? 0 : producerDepth_.back();
      // (The schedule's legality requires the workspace's loop to be its producer's outermost.)
      if (openLoops_.size() <= depth || scheduled_.rootOf(openLoops_[depth]) != ws.indexVar) {
        throw CompileError("lowering: the compressed workspace " + w.name + " would be appended out of order");
      }
      Expr last = binary(BinaryOp::Sub, count, intLit(1));
      Expr empty = binary(BinaryOp::Eq, count, intLit(0));
      Expr lastCoord = load(list, select(empty, intLit(0), last));  // read only when not empty
      Expr isNew = binary(BinaryOp::Or, empty, binary(BinaryOp::Ne, lastCoord, coord));
      Stmt append = block({
          ifThen(binary(BinaryOp::And, logicalNot(empty), binary(BinaryOp::Gt, lastCoord, coord)),
                 ret(kUnorderedWorkspace)),
          grow(list, ws.listCapacity, plusOne(count)),
          grow(vals, ws.valsCapacity, plusOne(count)),
          store(list, count, coord),
          store(vals, count, zero),
          assign(ws.count, plusOne(count)),
      });
      return block({ifThen(isNew, append), update(last)});
    }
    case WorkspaceKind::Hashed: {
      std::vector<Stmt> out;
      // Room first: the table stays at most half full, so probes stay short and end.
      out.push_back(
          ifThen(binary(BinaryOp::Gt, binary(BinaryOp::Mul, plusOne(count), intLit(2)), ir::ref(ws.tableSize)),
                 growHashedWorkspace(ws)));
      Expr slot = probeHashedWorkspace(ws, ws.keys, ir::ref(ws.tableSize), coord, out);
      out.push_back(
          ifThen(binary(BinaryOp::Eq, load(ws.keys, slot), intLit(-1)),
                 block({store(ws.keys, slot, coord), store(vals, slot, zero),
                        grow(list, ws.listCapacity, plusOne(count)), grow(ws.slots, ws.valsCapacity, plusOne(count)),
                        store(list, count, coord), store(ws.slots, count, slot), assign(ws.count, plusOne(count))})));
      out.push_back(update(slot));
      return block(std::move(out));
    }
  }
  return nullptr;
}

Stmt Lowerer::startWorkspace(const WorkspaceVars& ws) {
  // A dense array is read wherever its consumer looks, not only where its producer wrote,
  // so it is zeroed whole (the vector kinds are emptied as they are consumed).
  if (ws.kind != WorkspaceKind::DenseArray) return nullptr;
  Var n = makeVar(freshName(ws.tensor->tensor->name + "_zero"), kIndex);
  Expr at =
      ws.tensor->root ? binary(BinaryOp::Add, binary(BinaryOp::Mul, ws.tensor->root, ws.size), ir::ref(n)) : ir::ref(n);
  return forLoop(n, intLit(0), ws.size, store(ws.tensor->vals, at, zeroOf(ws.tensor->tensor->dtype)));
}

namespace {

// Whether `consumer` reads the temporary `t` alone, as in `C(i,j) = w(j)`: its loops then
// iterate the touched coordinates only, in whatever order the list holds them. Anything
// else beside it (`1.5 * w(k) + 1.5`, a union with the dimension) merges the list with
// another iterator, which needs it in order.
bool consumedAlone(const cin::Stmt& consumer, const nt::TensorVar* t) {
  if (consumer->kind == cin::StmtKind::Forall) return consumedAlone(cin::as<cin::ForallNode>(consumer).body, t);
  if (consumer->kind != cin::StmtKind::Assign) return false;
  const nt::Expr& rhs = cin::as<cin::AssignNode>(consumer).rhs;
  return rhs->kind == nt::ExprKind::Access && static_cast<const nt::AccessNode&>(*rhs).tensor.get() == t;
}

}  // namespace

Stmt Lowerer::orderWorkspace(const WorkspaceVars& ws, const cin::Stmt& consumer) {
  // The touched coordinates are sorted unless the result level they are appended to is
  // unordered (SciPy's unsorted CSR, a hashed level) and the consumer reads the workspace
  // alone; a merge with anything else needs them in order (R(k) = 1.5 * w(k) + 1.5 into a
  // hashed vector lost the sums of the coordinates its unsorted list skipped). A compressed
  // workspace is in order already.
  if (ws.kind == WorkspaceKind::DenseArray) return nullptr;
  if (!resultLevelOrdered(ws.indexVar) && consumedAlone(consumer, ws.tensor->tensor.get())) return nullptr;
  const Var& list = ws.tensor->crd(0);
  switch (ws.kind) {
    case WorkspaceKind::Dense:
      return call(RuntimeFunction::SortCoordinates, {ir::ref(list), ws.base ? ws.base : intLit(0), ir::ref(ws.count)});
    case WorkspaceKind::Hashed:
      return call(RuntimeFunction::SortCoordinates, {ir::ref(list), intLit(0), ir::ref(ws.count)});
    default: return nullptr;
  }
}

Expr Lowerer::workspaceValueIndex(const WorkspaceVars& ws, const Expr& at, const Expr& coord, std::vector<Stmt>& out) {
  switch (ws.kind) {
    case WorkspaceKind::Compressed: return at;
    case WorkspaceKind::Hashed: return probeHashedWorkspace(ws, ws.keys, ir::ref(ws.tableSize), coord, out);
    default: return ws.at(coord);
  }
}

Stmt Lowerer::emptyWorkspace(const WorkspaceVars& ws) {
  Var n = makeVar(freshName(ws.tensor->tensor->name + "_empty"), kIndex);
  switch (ws.kind) {
    case WorkspaceKind::Dense: {
      // Values and marks are reset at every coordinate of the list, whether the consumer
      // read it or not: an intersection with a sparse operand stops at that operand's last
      // entry, and the next execution of the where must start from zeros (it would otherwise
      // add to a stale value, and leave a still-marked coordinate out of its list).
      Var at = makeVar(freshName(ws.tensor->tensor->name + "_at"), kIndex);
      Expr coord = ws.at(ir::ref(at));
      return forLoop(n, intLit(0), ir::ref(ws.count),
                     block({declare(at, load(ws.tensor->crd(0), ws.at(ir::ref(n)))),
                            store(ws.tensor->vals, coord, zeroOf(ws.tensor->tensor->dtype)),
                            store(ws.mark, coord, boolLit(false))}));
    }
    case WorkspaceKind::Hashed:
      // A hashed table is emptied through the slots its entries took: no probing (removing
      // entries one by one from a linear-probing table would break the chains of the others).
      return forLoop(n, intLit(0), ir::ref(ws.count), store(ws.keys, load(ws.slots, ir::ref(n)), intLit(-1)));
    default: return nullptr;  // (a compressed list is emptied by its count; an array is zeroed at the start)
  }
}

}  // namespace coiter::lower
