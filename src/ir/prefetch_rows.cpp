// See prefetch_rows.hpp. The pattern is matched on the IR the lowerer produced; the loop it
// changes keeps its iterations, and only gains guarded loads and prefetches at its top.
#include "ir/prefetch_rows.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>
#include <vector>

#include "ir/visitor.hpp"

namespace coiter::ir {
namespace {

using VarSet = std::unordered_set<const VarNode*>;

// Variables `s` writes (assigns, declares, loops over, allocates or grows) and buffers it
// stores into: a value read from them at a later iteration is not known here.
void collectWritten(const Stmt& s, VarSet& out) {
  if (!s || forEachWrite(s, [&](const VarNode* v) { out.insert(v); })) return;
  if (s->kind == StmtKind::Declare) {
    out.insert(as<DeclareNode>(s).var.get());
    return;
  }
  if (s->kind == StmtKind::For) out.insert(as<ForNode>(s).var.get());
  forEachChildStmt(s, [&](const Stmt& child) { collectWritten(child, out); });
}

// `e` with each variable in `values` replaced by its value; null when `e` reads a variable
// in `unknown` (one the loop changes, whose value at a later iteration is not known here).
Expr substitute(const Expr& e, const std::map<const VarNode*, Expr>& values, const VarSet& unknown) {
  switch (e->kind) {
    case ExprKind::Literal:
    case ExprKind::ThreadId:
    case ExprKind::NumThreads:
    case ExprKind::InterruptRequested: return e;
    case ExprKind::VarRef: {
      const VarNode* v = as<VarRefNode>(e).var.get();
      if (auto it = values.find(v); it != values.end()) return it->second;
      return unknown.count(v) ? nullptr : e;
    }
    case ExprKind::Load: {
      const auto& l = as<LoadNode>(e);
      if (unknown.count(l.buffer.get())) return nullptr;
      Expr index = substitute(l.index, values, unknown);
      return index ? load(l.buffer, index) : nullptr;
    }
    case ExprKind::Binary: {
      const auto& b = as<BinaryNode>(e);
      Expr x = substitute(b.a, values, unknown), y = substitute(b.b, values, unknown);
      return x && y ? std::make_shared<BinaryNode>(b.op, b.type, x, y) : nullptr;
    }
    case ExprKind::Unary: {
      const auto& u = as<UnaryNode>(e);
      Expr x = substitute(u.a, values, unknown);
      return x ? std::make_shared<UnaryNode>(u.op, x) : nullptr;
    }
    case ExprKind::Cast: {
      Expr x = substitute(as<CastNode>(e).a, values, unknown);
      return x ? cast(e->type, x) : nullptr;
    }
    case ExprKind::Select: {
      const auto& s = as<SelectNode>(e);
      Expr c = substitute(s.cond, values, unknown), x = substitute(s.a, values, unknown),
           y = substitute(s.b, values, unknown);
      return c && x && y ? select(c, x, y) : nullptr;
    }
  }
  return nullptr;
}

// Whether `s` may leave the loop early (then a later iteration's loads may not be valid).
bool mayExit(const Stmt& s) {
  if (!s) return false;
  if (s->kind == StmtKind::Break || s->kind == StmtKind::Return) return true;
  bool exits = false;
  forEachChildStmt(s, [&](const Stmt& child) { exits = exits || mayExit(child); });
  return exits;
}

bool readsLoad(const Expr& e) {
  bool reads = e->kind == ExprKind::Load;
  forEachChildExpr(e, [&](const Expr& child) { reads = reads || readsLoad(child); });
  return reads;
}

// Buffers loaded at exactly index `q` anywhere in `s`.
void rowArrays(const Stmt& s, const VarNode* q, std::vector<Var>& out);
void rowArrays(const Expr& e, const VarNode* q, std::vector<Var>& out) {
  if (e->kind == ExprKind::Load) {
    const auto& l = as<LoadNode>(e);
    bool atQ = l.index->kind == ExprKind::VarRef && as<VarRefNode>(l.index).var.get() == q;
    if (atQ && std::find(out.begin(), out.end(), l.buffer) == out.end()) out.push_back(l.buffer);
  }
  forEachChildExpr(e, [&](const Expr& child) { rowArrays(child, q, out); });
}
void rowArrays(const Stmt& s, const VarNode* q, std::vector<Var>& out) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Declare:
      if (as<DeclareNode>(s).init) rowArrays(as<DeclareNode>(s).init, q, out);
      return;
    case StmtKind::Assign: return rowArrays(as<AssignNode>(s).value, q, out);
    case StmtKind::Store: rowArrays(as<StoreNode>(s).index, q, out); return rowArrays(as<StoreNode>(s).value, q, out);
    case StmtKind::If: rowArrays(as<IfNode>(s).cond, q, out); break;
    case StmtKind::While: rowArrays(as<WhileNode>(s).cond, q, out); break;
    default: break;
  }
  forEachChildStmt(s, [&](const Stmt& child) { rowArrays(child, q, out); });
}

// The prefetches at the top of loop `f`'s body, which compare with `end`, a new variable
// that is to hold f's end (`begin`, its start); prefetches null when f's body does not start
// an inner loop at a row chosen by a coordinate loaded at f's position. `spread`: how far
// apart (in positions of the rows' arrays) the rows of f's first and last iterations start,
// valid where f has an iteration.
struct Prefetches {
  Stmt prefetches;
  Var begin, end;
  Expr spread;
};
Prefetches prefetchesFor(const ForNode& f, const FreshName& fresh) {
  if (f.schedule.kind == LoopKind::Vectorized || f.body->kind != StmtKind::Block || mayExit(f.body)) return {};
  // Only declarations may come before the inner loop: every later iteration runs them too,
  // so their loads at p + d are as valid as at p. Each is kept inlined in terms of f's
  // variable and variables the loop does not change.
  std::map<const VarNode*, Expr> defs;
  for (const Stmt& s : as<BlockNode>(f.body).stmts) {
    if (s->kind == StmtKind::Prefetch) continue;  // (prefetchSkippedReads': no effect on values)
    if (s->kind == StmtKind::Declare) {
      const auto& d = as<DeclareNode>(s);
      if (!d.init || d.var->type.pointer) return {};
      defs[d.var.get()] = substitute(d.init, defs, {});
      continue;
    }
    if (s->kind != StmtKind::For) return {};
    const auto& inner = as<ForNode>(s);
    // Its start: pos[x], with x read through a load that depends on f's position.
    Expr start = inner.begin->kind == ExprKind::Cast ? as<CastNode>(inner.begin).a : inner.begin;
    if (start->kind != ExprKind::Load) return {};
    const auto& rowStart = as<LoadNode>(start);
    Expr row = substitute(rowStart.index, defs, {});
    if (!readsLoad(row)) return {};
    std::vector<Var> arrays;
    rowArrays(inner.body, inner.var.get(), arrays);
    if (arrays.empty()) return {};
    // x at iteration p + delta; nothing the loop writes may be read (but f's variable).
    VarSet unknown;
    collectWritten(f.body, unknown);
    auto ahead = [&](int64_t delta) { return binary(BinaryOp::Add, ir::ref(f.var), intLit(delta, f.var->type.elem)); };
    Expr nearRow = substitute(row, {{f.var.get(), ahead(kPrefetchDistance)}}, unknown);
    Expr farRow = substitute(row, {{f.var.get(), ahead(2 * kPrefetchDistance)}}, unknown);
    // pos itself is read ahead (a load, not a prefetch): it must be an array the loop does
    // not store into or grow.
    if (!nearRow || !farRow || unknown.count(rowStart.buffer.get())) return {};
    Var begin = makeVar(fresh(f.var->name + "_begin"), f.var->type),
        end = makeVar(fresh(f.var->name + "_end"), f.end->type);
    const Type i64 = scalar(DType::Int64);
    auto startAt = [&](const Expr& p) {
      Expr at = substitute(row, {{f.var.get(), p}}, unknown);
      return at ? cast(i64, load(rowStart.buffer, at)) : nullptr;
    };
    Expr firstStart = startAt(ir::ref(begin)),
         lastStart = startAt(binary(BinaryOp::Add, ir::ref(end), intLit(-1, end->type.elem)));
    if (!firstStart || !lastStart) return {};
    auto within = [&](int64_t delta) { return binary(BinaryOp::Lt, ahead(delta), ir::ref(end)); };
    Var first = makeVar(fresh(inner.var->name + "_ahead"), inner.var->type);
    std::vector<Stmt> rowElements{declare(first, cast(inner.var->type, load(rowStart.buffer, nearRow)))};
    for (const Var& a : arrays) rowElements.push_back(prefetch(a, ir::ref(first)));
    return {block({ifThen(within(kPrefetchDistance), block(std::move(rowElements))),
                   ifThen(within(2 * kPrefetchDistance), prefetch(rowStart.buffer, farRow))}),
            begin, end, binary(BinaryOp::Sub, lastStart, firstStart)};
  }
  return {};
}

// Rewrites loops bottom-up: a loop's body has its own prefetches before the loop is matched.
class PrefetchRows : public IRMutator {
 public:
  explicit PrefetchRows(const FreshName& fresh) : fresh_(fresh) {}

 private:
  Stmt mutateFor(const ForNode& n, const Stmt& s) override {
    Stmt rewritten = IRMutator::mutateFor(n, s);
    const auto& loop = as<ForNode>(rewritten);
    auto [prefetches, begin, end, spread] = prefetchesFor(loop, fresh_);
    if (!prefetches) return rewritten;
    // The loop's bounds, in the variables the prefetches compare with (evaluated once). It
    // runs with the prefetches where its rows lie far apart: more than d iterations (else no
    // row is prefetched), whose first and last rows start kCloseRows positions apart or more
    // (read where it starts: two loads, of rows it reads anyway). Rows closer together are
    // fetched by the first of them or the hardware prefetcher, and the prefetches' tests and
    // loads ahead would only cost every iteration: SpMTTKRP's second kernel locates a list of
    // w at each nonzero of B, in loops over B's fibers of about 5 entries whose lists lie
    // within one k of w (a few dozen entries): 9.6-9.8 ms with the prefetches, 8.6-9.2 without.
    // Gustavson's SpGEMM reaches random rows of B: far apart.
    Var far = makeVar(fresh_(loop.var->name + "_rows_far"), scalar(DType::Bool));
    const Type u64 = scalar(DType::UInt64);
    Expr apart = binary(BinaryOp::Gt, cast(u64, binary(BinaryOp::Add, spread, intLit(kCloseRows))),
                        cast(u64, intLit(2 * kCloseRows)));
    Expr someAhead = binary(
        BinaryOp::Lt, binary(BinaryOp::Add, ir::ref(begin), intLit(kPrefetchDistance, begin->type.elem)), ir::ref(end));
    Stmt prefetching = forLoop(loop.var, ir::ref(begin), ir::ref(end), block({prefetches, loop.body}), loop.schedule);
    Stmt plain = forLoop(loop.var, ir::ref(begin), ir::ref(end), loop.body, loop.schedule);
    return block({declare(begin, loop.begin), declare(end, loop.end), declare(far, boolLit(false)),
                  ifThen(someAhead, assign(far, apart)), ifThen(ir::ref(far), prefetching, plain)});
  }

  const FreshName& fresh_;
};

// Adds the prefetches of gathered elements (prefetchGathers) to the loops it is given.
class PrefetchGathers : public IRMutator {
 public:
  PrefetchGathers(const std::map<const VarNode*, GatheringLoop>& loops, const FreshName& fresh)
      : loops_(loops), fresh_(fresh) {}

 private:
  Stmt mutateFor(const ForNode& n, const Stmt& s) override {
    Stmt rewritten = IRMutator::mutateFor(n, s);
    auto gathering = loops_.find(n.var.get());
    if (gathering == loops_.end()) return rewritten;
    const auto& loop = as<ForNode>(rewritten);
    // The loop's declarations, followed to find the loads whose index is a coordinate.
    std::map<const VarNode*, Expr> values;
    collectDeclarations(loop.body, values);
    std::vector<std::pair<Var, Var>> gathers;  // (gathered buffer, crd array)
    findGathers(loop.body, n.var.get(), gathering->second.crd, values, gathers);
    if (gathers.empty()) return rewritten;
    const Type i64 = scalar(DType::Int64), type = loop.var->type;
    // The loop is split where q + d reaches the limit: before, each position prefetches the
    // element d ahead; from there on, none. (Clamping q + d to the limit at every position
    // instead cost a minimum per entry, a tenth of a power-law SpMV's time.)
    Expr ahead = binary(BinaryOp::Add, cast(i64, ir::ref(n.var)), intLit(kGatherPrefetchDistance));
    std::vector<Stmt> prefetches;
    for (const auto& [buffer, crd] : gathers) prefetches.push_back(prefetch(buffer, cast(i64, load(crd, ahead))));
    prefetches.push_back(loop.body);
    if (gathering->second.aheadWithinLimit)
      return forLoop(loop.var, loop.begin, loop.end, block(std::move(prefetches)), loop.schedule);
    Var end = makeVar(fresh_(n.var->name + "_end"), type), split = makeVar(fresh_(n.var->name + "_split"), type);
    Expr last = binary(BinaryOp::Add, gathering->second.limit, intLit(-kGatherPrefetchDistance));
    Expr within = binary(BinaryOp::Min, ir::ref(end), cast(type, binary(BinaryOp::Max, last, intLit(0))));
    return block({declare(end, cast(type, loop.end)),
                  declare(split, binary(BinaryOp::Max, cast(type, loop.begin), within)),
                  forLoop(loop.var, loop.begin, ir::ref(split), block(std::move(prefetches)), loop.schedule),
                  forLoop(loop.var, ir::ref(split), ir::ref(end), loop.body, loop.schedule)});
  }

  static void collectDeclarations(const Stmt& s, std::map<const VarNode*, Expr>& values) {
    if (!s) return;
    if (s->kind == StmtKind::Declare && as<DeclareNode>(s).init)
      values[as<DeclareNode>(s).var.get()] = as<DeclareNode>(s).init;
    forEachChildStmt(s, [&](const Stmt& child) { collectDeclarations(child, values); });
  }
  // The crd array (among `crd`) that `e` reads at position q, through casts and declared
  // variables; null when `e` is not such a coordinate.
  static Var coordinateAt(const Expr& e, const VarNode* q, const std::vector<Var>& crd,
                          const std::map<const VarNode*, Expr>& values) {
    if (e->kind == ExprKind::Cast) return coordinateAt(as<CastNode>(e).a, q, crd, values);
    if (e->kind == ExprKind::VarRef) {
      auto value = values.find(as<VarRefNode>(e).var.get());
      return value == values.end() ? nullptr : coordinateAt(value->second, q, crd, values);
    }
    if (e->kind != ExprKind::Load) return nullptr;
    const auto& l = as<LoadNode>(e);
    bool atQ = l.index->kind == ExprKind::VarRef && as<VarRefNode>(l.index).var.get() == q;
    return atQ && std::find(crd.begin(), crd.end(), l.buffer) != crd.end() ? l.buffer : nullptr;
  }
  static void findGathers(const Stmt& s, const VarNode* q, const std::vector<Var>& crd,
                          const std::map<const VarNode*, Expr>& values, std::vector<std::pair<Var, Var>>& out) {
    class Loads : public IRVisitor {
     public:
      Loads(const VarNode* q, const std::vector<Var>& crd, const std::map<const VarNode*, Expr>& values,
            std::vector<std::pair<Var, Var>>& out)
          : q_(q), crd_(crd), values_(values), out_(out) {}

     protected:
      void visitLoad(const LoadNode& n) override {
        if (Var c = coordinateAt(n.index, q_, crd_, values_)) {
          auto same = [&](const auto& g) { return g.first == n.buffer && g.second == c; };
          if (std::none_of(out_.begin(), out_.end(), same)) out_.emplace_back(n.buffer, c);
        }
        IRVisitor::visitLoad(n);
      }

     private:
      const VarNode* q_;
      const std::vector<Var>& crd_;
      const std::map<const VarNode*, Expr>& values_;
      std::vector<std::pair<Var, Var>>& out_;
    } loads(q, crd, values, out);
    loads.visit(s);
  }

  const std::map<const VarNode*, GatheringLoop>& loops_;
  const FreshName& fresh_;
};

}  // namespace

Stmt prefetchGathers(const Stmt& s, const std::map<const VarNode*, GatheringLoop>& loops, const FreshName& fresh) {
  return PrefetchGathers(loops, fresh).mutate(s);
}

Stmt prefetchIndirectRows(const Stmt& s, const FreshName& fresh) { return PrefetchRows(fresh).mutate(s); }

}  // namespace coiter::ir
