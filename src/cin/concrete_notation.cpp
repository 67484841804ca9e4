#include "cin/concrete_notation.hpp"

#include <algorithm>

namespace coiter::cin {

Stmt assign(std::shared_ptr<const notation::AccessNode> lhs, Expr rhs, const notation::Operator* accumulate) {
  return std::make_shared<AssignNode>(std::move(lhs), std::move(rhs), accumulate);
}
Stmt forall(const std::string& var, Stmt body) { return std::make_shared<ForallNode>(var, std::move(body)); }
Stmt where(Stmt consumer, Stmt producer) {
  return std::make_shared<WhereNode>(std::move(consumer), std::move(producer));
}
Stmt sequence(Stmt define, Stmt mutate) { return std::make_shared<SequenceNode>(std::move(define), std::move(mutate)); }

ForallChain forallChain(const Stmt& s) {
  ForallChain chain{{}, s};
  while (chain.body->kind == StmtKind::Forall) {
    chain.vars.push_back(as<ForallNode>(chain.body).var);
    chain.body = as<ForallNode>(chain.body).body;
  }
  return chain;
}

Stmt nestForalls(const std::vector<std::string>& vars, Stmt body) {
  for (auto it = vars.rbegin(); it != vars.rend(); ++it) body = forall(*it, body);
  return body;
}

std::string toString(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Assign: {
      const auto& a = as<AssignNode>(s);
      notation::Expr lhs = a.lhs;
      std::string op = a.accumulate ? (a.accumulate->symbol.empty() ? " " + a.accumulate->name + "= "
                                                                    : " " + a.accumulate->symbol + "= ")
                                    : " = ";
      return notation::toString(lhs) + op + notation::toString(a.rhs);
    }
    case StmtKind::Forall: {
      const auto& f = as<ForallNode>(s);
      return "∀" + f.var + " " + toString(f.body);
    }
    case StmtKind::Where: {
      const auto& w = as<WhereNode>(s);
      return "(" + toString(w.consumer) + " where " + toString(w.producer) + ")";
    }
    case StmtKind::Sequence: {
      const auto& q = as<SequenceNode>(s);
      return "(" + toString(q.define) + " ; " + toString(q.mutate) + ")";
    }
  }
  return "?";
}

namespace {

void collect(const Stmt& s, bool reads, std::vector<TensorVarPtr>& out) {
  auto add = [&](const TensorVarPtr& t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  forEachAssignment(s, [&](const AssignNode& a) {
    add(a.lhs->tensor);
    if (reads) {
      for (const auto& t : notation::operandsOf(a.rhs)) add(t);
    }
  });
}

}  // namespace

void forEachAssignment(const Stmt& s, const std::function<void(const AssignNode&)>& fn) {
  switch (s->kind) {
    case StmtKind::Assign: fn(as<AssignNode>(s)); break;
    case StmtKind::Forall: forEachAssignment(as<ForallNode>(s).body, fn); break;
    case StmtKind::Where:
      forEachAssignment(as<WhereNode>(s).consumer, fn);
      forEachAssignment(as<WhereNode>(s).producer, fn);
      break;
    case StmtKind::Sequence:
      forEachAssignment(as<SequenceNode>(s).define, fn);
      forEachAssignment(as<SequenceNode>(s).mutate, fn);
      break;
  }
}

std::vector<TensorVarPtr> resultsOf(const Stmt& s) {
  std::vector<TensorVarPtr> out;
  collect(s, false, out);
  return out;
}

std::vector<TensorVarPtr> tensorsOf(const Stmt& s) {
  std::vector<TensorVarPtr> out;
  collect(s, true, out);
  return out;
}

namespace {

void collectTemporaries(const Stmt& s, std::vector<const notation::TensorVar*>& out) {
  switch (s->kind) {
    case StmtKind::Assign: return;
    case StmtKind::Forall: return collectTemporaries(as<ForallNode>(s).body, out);
    case StmtKind::Where: {
      const auto& w = as<WhereNode>(s);
      for (const auto& t : resultsOf(w.producer)) {
        if (t->temporary) out.push_back(t.get());
      }
      collectTemporaries(w.consumer, out);
      return collectTemporaries(w.producer, out);
    }
    case StmtKind::Sequence:
      collectTemporaries(as<SequenceNode>(s).define, out);
      return collectTemporaries(as<SequenceNode>(s).mutate, out);
  }
}

}  // namespace

std::vector<const notation::TensorVar*> temporariesDeclaredIn(const Stmt& s) {
  std::vector<const notation::TensorVar*> out;
  collectTemporaries(s, out);
  return out;
}

}  // namespace coiter::cin
