// See segment_positions.hpp.
#include "ir/segment_positions.hpp"

#include <algorithm>
#include <vector>

namespace coiter::ir {

RowDefinitions::RowDefinitions(const Stmt& body, const VarNode* i) : i_(i) { collect(body); }

void RowDefinitions::collect(const Stmt& s) {
  if (!s) return;
  bool assigns = s->kind == StmtKind::Assign;
  if (forEachWrite(s, [&](const VarNode* v) {
        written_.insert(v);
        if (!assigns) writtenOtherwise_.insert(v);
      })) {
    if (assigns) assignments_[as<AssignNode>(s).var.get()].push_back(as<AssignNode>(s).value);
    return;
  }
  if (s->kind == StmtKind::Declare) {
    declarations_[as<DeclareNode>(s).var.get()].push_back(as<DeclareNode>(s).init);
    return;
  }
  if (s->kind == StmtKind::For) {
    written_.insert(as<ForNode>(s).var.get());
    writtenOtherwise_.insert(as<ForNode>(s).var.get());
  }
  forEachChildStmt(s, [this](const Stmt& child) { collect(child); });
}

const Expr& RowDefinitions::resolved(const Expr& e) const {
  if (e->kind == ExprKind::Cast) return resolved(as<CastNode>(e).a);
  if (e->kind == ExprKind::VarRef) {
    const VarNode* v = as<VarRefNode>(e).var.get();
    auto declared = declarations_.find(v);
    if (declared != declarations_.end() && declared->second.size() == 1 && declared->second.front() &&
        !written_.count(v))
      return resolved(declared->second.front());
  }
  return e;
}

bool RowDefinitions::isI(const Expr& e) const {
  const Expr& r = resolved(e);
  return r->kind == ExprKind::VarRef && as<VarRefNode>(r).var.get() == i_;
}

bool RowDefinitions::isIPlusOne(const Expr& e) const {
  const Expr& r = resolved(e);
  if (r->kind != ExprKind::Binary || as<BinaryNode>(r).op != BinaryOp::Add) return false;
  auto one = [](const Expr& x) { return x->kind == ExprKind::Literal && as<LiteralNode>(x).intValue == 1; };
  const auto& b = as<BinaryNode>(r);
  return (isI(b.a) && one(b.b)) || (one(b.a) && isI(b.b));
}

Var RowDefinitions::rowBound(const Expr& e, bool end) const {
  const Expr& r = resolved(e);
  if (r->kind != ExprKind::Load) return nullptr;
  const auto& load = as<LoadNode>(r);
  if (written_.count(load.buffer.get())) return nullptr;
  return (end ? isIPlusOne(load.index) : isI(load.index)) ? load.buffer : nullptr;
}

Var RowDefinitions::rowStart(const Expr& e) const { return rowBound(e, false); }
Var RowDefinitions::rowEnd(const Expr& e) const { return rowBound(e, true); }

namespace {

bool isLiteralAtLeast(const Expr& e, int64_t least) {
  return e->kind == ExprKind::Literal && !e->type.pointer && isInteger(e->type.elem) &&
         as<LiteralNode>(e).intValue >= least;
}

bool mentions(const Expr& e, const VarNode* v) {
  return refersTo(e, [v](const VarNode* x) { return x == v; });
}

// The variables `s` writes anywhere inside it: assigned, declared (a declaration in a loop
// makes a new value each iteration), a for loop's variable, or written by a statement
// (forEachWrite).
void collectWritten(const Stmt& s, std::unordered_set<const VarNode*>& out) {
  if (!s) return;
  if (forEachWrite(s, [&](const VarNode* v) { out.insert(v); })) return;
  if (s->kind == StmtKind::Declare) out.insert(as<DeclareNode>(s).var.get());
  if (s->kind == StmtKind::For) out.insert(as<ForNode>(s).var.get());
  forEachChildStmt(s, [&](const Stmt& child) { collectWritten(child, out); });
}

class RowSegments {
 public:
  RowSegments(const ForNode& rowLoop, const RowDefinitions& definitions,
              const std::unordered_set<const VarNode*>& guarded)
      : definitions_(definitions), guarded_(guarded) {
    findNonNegative();
    findPositions(rowLoop.body);
    Facts facts;
    stmt(rowLoop.body, facts);
    for (const LoadNode* load : unbounded_) proven.erase(load);
  }
  std::unordered_map<const LoadNode*, Var> proven;

 private:
  // What the conditions around a point say: index < pos[i + 1], as (index, pos).
  using Facts = std::vector<std::pair<Expr, Var>>;

  // Variables declared once with a non-negative literal and assigned only themselves times,
  // divided by or plus a positive literal.
  void findNonNegative() {
    for (const auto& [v, inits] : definitions_.declarations()) {
      if (inits.size() != 1 || !inits.front() || !isLiteralAtLeast(inits.front(), 0) ||
          definitions_.writtenOtherwise(v))
        continue;
      auto assigned = definitions_.assignments().find(v);
      bool keeps =
          assigned == definitions_.assignments().end() ||
          std::all_of(assigned->second.begin(), assigned->second.end(), [&](const Expr& value) {
            if (value->kind != ExprKind::Binary) return false;
            const auto& b = as<BinaryNode>(value);
            auto self = [&](const Expr& x) { return x->kind == ExprKind::VarRef && as<VarRefNode>(x).var.get() == v; };
            if (b.op == BinaryOp::Mul || b.op == BinaryOp::Add)
              return (self(b.a) && isLiteralAtLeast(b.b, 1)) || (self(b.b) && isLiteralAtLeast(b.a, 1));
            return b.op == BinaryOp::Div && self(b.a) && isLiteralAtLeast(b.b, 1);
          });
      if (keeps) nonNegative_.insert(v);
    }
  }
  bool nonNegativeTerm(const Expr& e) const {
    if (isLiteralAtLeast(e, 0)) return true;
    if (e->kind == ExprKind::VarRef) return nonNegative_.count(as<VarRefNode>(e).var.get()) > 0;
    if (e->kind == ExprKind::Binary && as<BinaryNode>(e).op == BinaryOp::Add)
      return nonNegativeTerm(as<BinaryNode>(e).a) && nonNegativeTerm(as<BinaryNode>(e).b);
    return false;
  }
  // Whether `value`, assigned to p (at least pos[i]), is at least pos[i] too: p, pos[i],
  // pos[i + 1] (pos never decreases: the caller checks), a select of such, or such plus a
  // non-negative term.
  bool atLeastRowStart(const Expr& value, const VarNode* p, const Var& pos) const {
    if (value->kind == ExprKind::VarRef && as<VarRefNode>(value).var.get() == p) return true;
    if (definitions_.rowStart(value) == pos || definitions_.rowEnd(value) == pos) return true;
    if (value->kind == ExprKind::Select)
      return atLeastRowStart(as<SelectNode>(value).a, p, pos) && atLeastRowStart(as<SelectNode>(value).b, p, pos);
    if (value->kind == ExprKind::Binary && as<BinaryNode>(value).op == BinaryOp::Add) {
      const auto& b = as<BinaryNode>(value);
      return (atLeastRowStart(b.a, p, pos) && nonNegativeTerm(b.b)) ||
             (atLeastRowStart(b.b, p, pos) && nonNegativeTerm(b.a));
    }
    return false;
  }
  // Variables declared once as pos[i] that never decrease; for loops from one (or from
  // pos[i]) to pos[i + 1], whose variable is written by nothing else.
  void findPositions(const Stmt& body) {
    for (const auto& [v, inits] : definitions_.declarations()) {
      if (inits.size() != 1 || !inits.front() || v->type != scalar(DType::Int64) || definitions_.writtenOtherwise(v))
        continue;
      Var pos = definitions_.rowStart(inits.front());
      if (!pos) continue;
      auto assigned = definitions_.assignments().find(v);
      if (assigned != definitions_.assignments().end() &&
          !std::all_of(assigned->second.begin(), assigned->second.end(),
                       [&](const Expr& value) { return atLeastRowStart(value, v, pos); }))
        continue;
      positions_[v] = pos;
    }
    findLoopPositions(body);
  }
  void findLoopPositions(const Stmt& s) {
    if (!s) return;
    if (s->kind == StmtKind::For) {
      const auto& n = as<ForNode>(s);
      Var from = n.begin->kind == ExprKind::VarRef ? positionOf(as<VarRefNode>(n.begin).var.get()) : nullptr;
      Var start = definitions_.rowStart(n.begin), end = definitions_.rowEnd(n.end);
      std::unordered_set<const VarNode*> inside;
      collectWritten(n.body, inside);
      if (end && (from == end || start == end) && !inside.count(n.var.get())) positions_[n.var.get()] = end;
    }
    forEachChildStmt(s, [this](const Stmt& child) { findLoopPositions(child); });
  }
  Var positionOf(const VarNode* v) const {
    auto found = positions_.find(v);
    return found == positions_.end() ? nullptr : found->second;
  }
  // The pos array whose row segment `index` lies at or after the start of: a segment
  // position, or one plus a non-negative term.
  Var segmentOf(const Expr& index) const {
    if (index->kind == ExprKind::VarRef) return positionOf(as<VarRefNode>(index).var.get());
    if (index->kind != ExprKind::Binary || as<BinaryNode>(index).op != BinaryOp::Add) return nullptr;
    const auto& b = as<BinaryNode>(index);
    if (Var pos = segmentOf(b.a); pos && nonNegativeTerm(b.b)) return pos;
    if (Var pos = segmentOf(b.b); pos && nonNegativeTerm(b.a)) return pos;
    return nullptr;
  }

  // The pos array whose row segment `index` lies in, by `facts`: a segment index that a fact
  // bounds, or pos[i + 1] - 1 where a fact says the segment holds a position (p < pos[i + 1]
  // with p >= pos[i]: it is not empty).
  Var boundedBy(const Expr& index, const Facts& facts) const {
    auto known = [&](const Var& pos, const Expr& bounded) {
      return std::any_of(facts.begin(), facts.end(), [&](const auto& fact) {
        return fact.second == pos && (!bounded || sameExpr(fact.first, bounded));
      });
    };
    if (Var pos = segmentOf(index); pos && known(pos, index)) return pos;
    if (index->kind != ExprKind::Binary) return nullptr;
    const auto& b = as<BinaryNode>(index);
    bool minusOne = (b.op == BinaryOp::Sub && b.b->kind == ExprKind::Literal && as<LiteralNode>(b.b).intValue == 1) ||
                    (b.op == BinaryOp::Add && b.b->kind == ExprKind::Literal && as<LiteralNode>(b.b).intValue == -1);
    if (Var pos = definitions_.rowEnd(b.a); pos && minusOne && known(pos, nullptr)) return pos;
    return nullptr;
  }

  void kill(Facts& facts, const std::unordered_set<const VarNode*>& written) const {
    facts.erase(std::remove_if(facts.begin(), facts.end(),
                               [&](const auto& fact) {
                                 return std::any_of(written.begin(), written.end(),
                                                    [&](const VarNode* v) { return mentions(fact.first, v); });
                               }),
                facts.end());
  }
  void killWrittenIn(Facts& facts, const Stmt& s) const {
    std::unordered_set<const VarNode*> written;
    collectWritten(s, written);
    kill(facts, written);
  }

  // Loads in `e`, evaluated whole (both sides of every operator).
  void expr(const Expr& e, const Facts& facts) {
    if (!e) return;
    if (e->kind == ExprKind::Load) {
      const auto& load = as<LoadNode>(e);
      if (guarded_.count(load.buffer.get())) {
        // (A load node may sit in more than one place: each must be bounded.)
        if (Var pos = boundedBy(load.index, facts)) {
          proven.emplace(&load, pos);
        } else {
          unbounded_.insert(&load);
        }
      }
    }
    forEachChildExpr(e, [&](const Expr& child) { expr(child, facts); });
  }
  // A condition: each operand of its && chain is evaluated only when those before it hold,
  // and adds what it says (index < pos[i + 1]) to `facts`.
  void condition(const Expr& e, Facts& facts) {
    if (e->kind == ExprKind::Binary && as<BinaryNode>(e).op == BinaryOp::And && e->type == scalar(DType::Bool)) {
      condition(as<BinaryNode>(e).a, facts);
      condition(as<BinaryNode>(e).b, facts);
      return;
    }
    expr(e, facts);
    if (e->kind != ExprKind::Binary) return;
    const auto& b = as<BinaryNode>(e);
    Expr index = b.op == BinaryOp::Lt ? b.a : b.op == BinaryOp::Gt ? b.b : nullptr;
    Expr bound = b.op == BinaryOp::Lt ? b.b : b.op == BinaryOp::Gt ? b.a : nullptr;
    if (!index) return;
    Var end = definitions_.rowEnd(bound);
    if (end && segmentOf(index) == end) facts.emplace_back(index, end);
  }

  void stmt(const Stmt& s, Facts& facts) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& x : as<BlockNode>(s).stmts) stmt(x, facts);
        return;
      case StmtKind::If: {
        const auto& n = as<IfNode>(s);
        Facts then = facts;
        condition(n.cond, then);
        stmt(n.then, then);
        Facts otherwise = facts;
        stmt(n.otherwise, otherwise);
        killWrittenIn(facts, s);
        return;
      }
      case StmtKind::While: {
        const auto& n = as<WhileNode>(s);
        killWrittenIn(facts, n.body);  // what holds at every test of the condition
        Facts inside = facts;
        condition(n.cond, inside);
        stmt(n.body, inside);
        return;
      }
      case StmtKind::For: {
        const auto& n = as<ForNode>(s);
        expr(n.begin, facts);
        expr(n.end, facts);
        killWrittenIn(facts, s);
        Facts inside = facts;
        if (Var pos = positionOf(n.var.get())) inside.emplace_back(ir::ref(n.var), pos);
        stmt(n.body, inside);
        return;
      }
      default: break;
    }
    // A statement that is no block, branch or loop: its expressions, then what it writes.
    visitExprs(s, facts);
    killWrittenIn(facts, s);
  }
  void visitExprs(const Stmt& s, const Facts& facts) {
    switch (s->kind) {
      case StmtKind::Declare: return expr(as<DeclareNode>(s).init, facts);
      case StmtKind::Assign: return expr(as<AssignNode>(s).value, facts);
      case StmtKind::Store: expr(as<StoreNode>(s).index, facts); return expr(as<StoreNode>(s).value, facts);
      case StmtKind::AtomicUpdate:
        expr(as<AtomicUpdateNode>(s).index, facts);
        return expr(as<AtomicUpdateNode>(s).value, facts);
      case StmtKind::Call:
        for (const Expr& a : as<CallNode>(s).args) expr(a, facts);
        return;
      case StmtKind::Allocate: return expr(as<AllocateNode>(s).count, facts);
      case StmtKind::Grow: return expr(as<GrowNode>(s).needed, facts);
      case StmtKind::Prefetch: return expr(as<PrefetchNode>(s).index, facts);
      default: return;
    }
  }
  const RowDefinitions& definitions_;
  const std::unordered_set<const VarNode*>& guarded_;
  std::unordered_set<const VarNode*> nonNegative_;
  std::unordered_set<const LoadNode*> unbounded_;
  std::map<const VarNode*, Var> positions_;  // segment position -> its pos array
};

}  // namespace

std::unordered_map<const LoadNode*, Var> loadsWithinRowSegments(const ForNode& rowLoop,
                                                                const RowDefinitions& definitions,
                                                                const std::unordered_set<const VarNode*>& guarded) {
  return RowSegments(rowLoop, definitions, guarded).proven;
}

}  // namespace coiter::ir
