// Coordinates that a loop over rows loads inside each row's own segments.
//
// guard_coordinates.hpp checks a block of rows [first, stop) with one pass over the
// coordinates those rows own, crd[pos[first]] .. crd[pos[stop] - 1], when every coordinate a
// row i loads lies in its segment [pos[i], pos[i + 1]). A row loop `for q in [pos[i],
// pos[i + 1])` (SpMV) shows that by its bounds. A merge (a sparse sum or product of
// matrices) walks its positions in while loops, advancing them by selects, leaping over runs
// and draining what is left: loadsWithinRowSegments finds the loads whose position provably
// stays inside the row's segment:
//
//   - the position is a *segment position* of pos: a variable declared pos[i] (following the
//     variables declared from i and never assigned, like CSR's `pA1 = i`) that never
//     decreases, every assignment to it being itself, itself plus a non-negative term, or a
//     select of such; a non-negative term is a sum of non-negative integer literals and
//     non-negative variables (declared a non-negative literal, and assigned only themselves
//     times, divided by or plus a positive literal: a gallop's step); or the variable of a for
//     loop that starts at pos[i] or at a segment position and ends at pos[i + 1];
//   - the load's index is a segment position p, or p plus a non-negative term, and a
//     condition around the load says that index < pos[i + 1]: an if's or a while's condition
//     (or an earlier operand of the && chain the load is in: a condition's right operand
//     that loads runs only when the left one holds, ir.hpp), with nothing between the
//     condition and the load writing a variable the index reads.
//
// Then pos[i] <= index < pos[i + 1]. pos itself must not be written by the loop (the caller
// checks that, with the rest of its conditions).
#pragma once
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/ir.hpp"

namespace coiter::ir {

// The variables a loop body declares (with their initial values) and writes, so that an
// expression can be followed back to the loop variable i through the variables declared from
// it and never assigned.
class RowDefinitions {
 public:
  RowDefinitions(const Stmt& body, const VarNode* i);
  // `e` without casts, through variables declared once and never assigned.
  const Expr& resolved(const Expr& e) const;
  bool isI(const Expr& e) const;
  bool isIPlusOne(const Expr& e) const;
  // The array pos when `e` is pos[i] (rowStart) or pos[i + 1] (rowEnd); else null.
  Var rowStart(const Expr& e) const;
  Var rowEnd(const Expr& e) const;
  bool written(const VarNode* v) const { return written_.count(v) > 0; }
  // Written by something other than an assignment: a call, a for loop over it.
  bool writtenOtherwise(const VarNode* v) const { return writtenOtherwise_.count(v) > 0; }
  // Each declared variable's initial values (more than one when declared more than once).
  const std::map<const VarNode*, std::vector<Expr>>& declarations() const { return declarations_; }
  // Each assigned variable's assigned values.
  const std::map<const VarNode*, std::vector<Expr>>& assignments() const { return assignments_; }

 private:
  void collect(const Stmt& s);
  Var rowBound(const Expr& e, bool end) const;

  const VarNode* i_;
  std::map<const VarNode*, std::vector<Expr>> declarations_, assignments_;
  std::unordered_set<const VarNode*> written_, writtenOtherwise_;
};

// The loads from arrays `guarded` says are coordinate arrays, in the body of the loop over
// rows `rowLoop`, whose index lies inside the row's segment of a pos array (above), each with
// that pos array. `definitions`: the loop body's (RowDefinitions(rowLoop.body, rowLoop.var)).
std::unordered_map<const LoadNode*, Var> loadsWithinRowSegments(const ForNode& rowLoop,
                                                                const RowDefinitions& definitions,
                                                                const std::unordered_set<const VarNode*>& guarded);

}  // namespace coiter::ir
