// Concrete index notation (Kjolstad's thesis, ch. 4): index notation with its loops made
// explicit. A statement is an assignment, a forall, a where (consumer reads temporaries the
// producer writes) or a sequence (define, then mutate). Reductions no longer appear in
// expressions; they became compound assignments and where statements.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "notation/index_notation.hpp"

namespace coiter::cin {

using notation::Expr;
using notation::TensorVarPtr;

enum class StmtKind { Assign, Forall, Where, Sequence };

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};
using Stmt = std::shared_ptr<const StmtNode>;

struct AssignNode : StmtNode {
  std::shared_ptr<const notation::AccessNode> lhs;
  Expr rhs;
  const notation::Operator* accumulate;  // null for "=", else the compound operator
  AssignNode(std::shared_ptr<const notation::AccessNode> l, Expr r, const notation::Operator* a)
      : StmtNode(StmtKind::Assign), lhs(std::move(l)), rhs(std::move(r)), accumulate(a) {}
};
struct ForallNode : StmtNode {
  std::string var;
  Stmt body;
  ForallNode(std::string v, Stmt b) : StmtNode(StmtKind::Forall), var(std::move(v)), body(std::move(b)) {}
};
struct WhereNode : StmtNode {
  Stmt consumer, producer;
  WhereNode(Stmt c, Stmt p) : StmtNode(StmtKind::Where), consumer(std::move(c)), producer(std::move(p)) {}
};
struct SequenceNode : StmtNode {
  Stmt define, mutate;
  SequenceNode(Stmt d, Stmt m) : StmtNode(StmtKind::Sequence), define(std::move(d)), mutate(std::move(m)) {}
};

Stmt assign(std::shared_ptr<const notation::AccessNode> lhs, Expr rhs, const notation::Operator* accumulate = nullptr);
Stmt forall(const std::string& var, Stmt body);
Stmt where(Stmt consumer, Stmt producer);
Stmt sequence(Stmt define, Stmt mutate);

template <typename T>
const T& as(const Stmt& s) {
  return static_cast<const T&>(*s);
}

// The variables of the foralls directly nested at the top of `s` (outermost first), and the
// statement inside them.
struct ForallChain {
  std::vector<std::string> vars;
  Stmt body;
};
ForallChain forallChain(const Stmt& s);
// forall(vars[0], forall(vars[1], ... body)).
Stmt nestForalls(const std::vector<std::string>& vars, Stmt body);

// "∀i ∀j y(i) += A(i,j) * x(j)"; where as "(consumer where producer)".
std::string toString(const Stmt& s);

// Calls fn on every assignment in `s`, in statement order (a where's consumer first).
void forEachAssignment(const Stmt& s, const std::function<void(const AssignNode&)>& fn);

// Tensors written by assignments in `s` (results and temporaries), in order of appearance.
std::vector<TensorVarPtr> resultsOf(const Stmt& s);
// Every tensor read or written in `s`.
std::vector<TensorVarPtr> tensorsOf(const Stmt& s);
// Temporaries whose where statement lies inside `s`: each iteration of a loop around `s`
// has its own.
std::vector<const notation::TensorVar*> temporariesDeclaredIn(const Stmt& s);

}  // namespace coiter::cin
