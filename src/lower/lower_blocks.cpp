// Loops of derived index variables (Kjolstad's thesis, ch. 3, ch. 5). A split or divide turns
// ∀i into ∀i0 ∀i1: the outer loop enumerates blocks of i's coordinates and the inner loop
// iterates i as before, restricted to the block [lo, hi). Coordinates stay in i's space, so
// operands are read as without the split; a dense dimension iterates [lo, hi) and an ordered
// sparse level finds the positions of [lo, hi) by binary search. The last block is shorter
// when the block size does not divide the extent (the tail). A bound fixes a loop's extent at
// compile time, checked when the kernel starts.
#include <optional>
#include <utility>

#include "lower/index_exprs.hpp"
#include "lower/lowerer.hpp"
#include "util/errors.hpp"

namespace coiter::lower {

using namespace ir;

namespace {

// map[key] = value while this lives; then the entry before (or none) again.
template <typename Map>
class ScopedEntry {
 public:
  ScopedEntry(Map& map, const typename Map::key_type& key, typename Map::mapped_type value) : map_(map), key_(key) {
    if (auto it = map_.find(key_); it != map_.end()) saved_ = it->second;
    map_.insert_or_assign(key_, std::move(value));
  }
  ~ScopedEntry() {
    if (saved_)
      map_.insert_or_assign(key_, *saved_);
    else
      map_.erase(key_);
  }
  ScopedEntry(const ScopedEntry&) = delete;
  ScopedEntry& operator=(const ScopedEntry&) = delete;

 private:
  Map& map_;
  typename Map::key_type key_;
  std::optional<typename Map::mapped_type> saved_;
};

}  // namespace

Lowerer::Interval Lowerer::intervalOf(const std::string& root, const std::string& loopVar) const {
  auto it = intervals_.find(root);
  if (it != intervals_.end()) return it->second;
  const schedule::IndexRelation* own = scheduled_.relationOf(root);
  if (own && own->kind == schedule::RelationKind::Pos && own->bounded == root) return positionInterval(*own);
  if (own && own->kind == schedule::RelationKind::Fuse && own->bounded == root) {
    return {intLit(0), binary(BinaryOp::Mul, extentOf(own->parent), extentOf(own->second)), false};
  }
  // A bound with an exact extent makes the trip count a constant (for unrolling).
  for (std::string v = loopVar; const schedule::IndexRelation* r = scheduled_.relationOf(v); v = r->parent) {
    if (r->kind == schedule::RelationKind::Bound && r->exact) return {intLit(0), intLit(r->size), false};
  }
  return {intLit(0), extentOf(root), false};
}

Expr Lowerer::searchPosition(const Var& crd, Expr begin, Expr end, Expr target, const std::string& name,
                             std::vector<Stmt>& out) {
  Var lo = makeVar(freshName(name), kIndex);
  Var hi = makeVar(freshName(name + "_end"), kIndex);
  Var mid = makeVar(freshName(name + "_mid"), kIndex);
  out.push_back(declare(lo, std::move(begin)));
  out.push_back(declare(hi, std::move(end)));
  Expr below = binary(BinaryOp::Lt, cast(kIndex, load(crd, ir::ref(mid))), std::move(target));
  Stmt step = block({
      declare(mid, binary(BinaryOp::Div, binary(BinaryOp::Add, ir::ref(lo), ir::ref(hi)), intLit(2))),
      ifThen(below, assign(lo, binary(BinaryOp::Add, ir::ref(mid), intLit(1))), assign(hi, ir::ref(mid))),
  });
  out.push_back(whileLoop(binary(BinaryOp::Lt, ir::ref(lo), ir::ref(hi)), step));
  return ir::ref(lo);
}

Stmt Lowerer::lowerBlockLoop(const cin::ForallNode& f, const schedule::IndexRelation& r) {
  std::string root = scheduled_.rootOf(r.parent);
  Interval whole = intervalOf(root, r.parent);
  std::vector<Stmt> out;
  auto local = [&](const std::string& name, Expr value) {
    Var v = makeVar(freshName(name), kIndex);
    out.push_back(declare(v, std::move(value)));
    return ir::ref(v);
  };
  Expr lo = local(root + "_lo", whole.lo);
  Expr span = local(root + "_span", binary(BinaryOp::Sub, whole.hi, lo));
  auto ceilDiv = [](Expr a, Expr b) {
    return binary(BinaryOp::Div, binary(BinaryOp::Add, a, binary(BinaryOp::Sub, b, intLit(1))), b);
  };
  bool split = r.kind == schedule::RelationKind::Split;
  Expr size = split ? intLit(r.size) : local(f.var + "_size", ceilDiv(span, intLit(r.size)));
  Expr blocks = split ? local(f.var + "_blocks", ceilDiv(span, size)) : intLit(r.size);
  // A bound with an exact extent on the block loop makes its trip count a constant (for
  // unrolling; checked when the kernel starts).
  for (std::string v = f.var; v != r.outer; v = scheduled_.relationOf(v)->parent) {
    const schedule::IndexRelation* b = scheduled_.relationOf(v);
    if (b->kind == schedule::RelationKind::Bound && b->exact) blocks = intLit(b->size);
  }

  Var block = makeVar(freshName(f.var), kIndex);
  Expr hiEnd = binary(BinaryOp::Add, lo, span);
  if (auto offset = strided_.find(&r); offset != strided_.end()) {
    // The inner loop is outside (a strided walk): this loop binds the root itself, at the
    // offset the inner loop is at in every block.
    Expr blockStart = binary(BinaryOp::Add, lo, binary(BinaryOp::Mul, ir::ref(block), size));
    Expr at = binary(BinaryOp::Add, blockStart, offset->second);
    const schedule::IndexRelation* own = scheduled_.relationOf(root);
    if (own && own->kind == schedule::RelationKind::Pos && own->bounded == root) {
      // Over stored positions: the loop over the root's positions, restricted to the one at
      // that offset (none past the segment's end), binds the coordinates of its entry.
      ParallelStateGuard parallelState(*this);
      ParallelPlan plan = planLoop(f, root, true);
      Stmt inner;
      {
        ScopedEntry one(intervals_, root,
                        Interval{at, binary(BinaryOp::Min, binary(BinaryOp::Add, at, intLit(1)), hiEnd), true});
        inner = lowerPositionLoop(cin::ForallNode(root, f.body), *own);
      }
      if (!inner) return nullptr;
      out.push_back(plan.around(forLoop(block, intLit(0), blocks, inner, plan.schedule)));
      return ir::block(std::move(out));
    }
    Var coordinate = makeVar(freshName(root), kIndex);
    std::vector<Stmt> visit;
    std::map<const AccessNode*, int> before;
    for (auto& [a, st] : accesses_) before[a] = st.entered;
    int resultBefore = result_.entered;
    coords_[root] = ir::ref(coordinate);
    resolveLocates(visit);
    enterResultLevels(visit);
    ParallelStateGuard parallelState(*this);
    ParallelPlan plan = planLoop(f, root, true);
    openLoops_.push_back(root);
    Stmt inner = lowerStmt(f.body);
    openLoops_.pop_back();
    for (auto& [a, st] : accesses_) st.entered = before[a];
    result_.entered = resultBefore;
    coords_.erase(root);
    if (!inner) return nullptr;
    visit.push_back(inner);
    Stmt inRange = ifThen(binary(BinaryOp::Lt, ir::ref(coordinate), hiEnd), ir::block(std::move(visit)));
    Stmt step = ir::block({declare(coordinate, at), inRange});
    out.push_back(plan.around(forLoop(block, intLit(0), blocks, step, plan.schedule)));
    return ir::block(std::move(out));
  }
  Var blockLo = makeVar(freshName(root + "_block_lo"), kIndex);
  Var blockHi = makeVar(freshName(root + "_block_hi"), kIndex);
  Expr hi = hiEnd;
  // Divided blocks past the end (more parts than coordinates) are empty.
  Expr first = binary(BinaryOp::Min, binary(BinaryOp::Add, lo, binary(BinaryOp::Mul, ir::ref(block), size)), hi);
  std::vector<Stmt> body{declare(blockLo, first),
                         declare(blockHi, binary(BinaryOp::Min, binary(BinaryOp::Add, ir::ref(blockLo), size), hi))};

  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, root, true);
  Stmt inner;
  {
    ScopedEntry restricted(intervals_, root, Interval{ir::ref(blockLo), ir::ref(blockHi), true});
    // (The block loop is not an open loop of `root`: the inner loop is, for assembly checks.)
    openBlocks_.insert(&r);
    inner = lowerStmt(f.body);
    openBlocks_.erase(&r);
  }
  if (!inner) return nullptr;
  body.push_back(inner);
  out.push_back(plan.around(forLoop(block, intLit(0), blocks, ir::block(std::move(body)), plan.schedule)));
  return ir::block(std::move(out));
}

void Lowerer::checkBounds(std::vector<Stmt>& out) {
  for (const auto& r : scheduled_.relations) {
    if (r.kind != schedule::RelationKind::Bound) continue;
    // (The bounded loop's own extent: a split's outer loop counts blocks.)
    Expr extent = extentOf(r.parent);
    Expr broken = binary(r.exact ? BinaryOp::Ne : BinaryOp::Gt, extent, intLit(r.size));
    out.push_back(ifThen(broken, ret(kBoundViolated)));
  }
}

Stmt Lowerer::lowerStridedLoop(const cin::ForallNode& f, const schedule::IndexRelation& r) {
  // A split's inner loop outside its outer loop walks the offsets within a block; the outer
  // loop, inside, visits the coordinate at that offset in every block (lowerBlockLoop).
  ParallelStateGuard parallelState(*this);
  ParallelPlan plan = planLoop(f, scheduled_.rootOf(r.parent), true);
  Var offset = makeVar(freshName(f.var), kIndex);
  coords_[f.var] = ir::ref(offset);
  strided_[&r] = ir::ref(offset);
  Stmt inner = lowerStmt(f.body);
  strided_.erase(&r);
  coords_.erase(f.var);
  if (!inner) return nullptr;
  return plan.around(forLoop(offset, intLit(0), intLit(r.size), inner, plan.schedule));
}

}  // namespace coiter::lower
