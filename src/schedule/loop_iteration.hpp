// What one loop of a scheduled statement iterates, decided without its iteration lattice
// (lattice/ is a later stage: lowering builds the lattice, the legality check only needs its
// shape). A loop over index variable v iterates the operand levels v indexes where the loop
// starts (a sparse level, a workspace's list of coordinates) and locates the others; its
// domain combines them as its expression does (Kjolstad's thesis, ch. 3): a product intersects, a sum
// unites. What legality asks of that domain is
//   - which levels the loop iterates (a split cannot restrict a workspace or an unordered
//     level to a block), and
//   - whether it is one loop over one iterator, or a merge of several (while loops, which no
//     parallel unit can divide).
// The answer is the lattice's, or more cautious: a domain summarized as a merge may still
// lower to one loop (two hashed operands united), never the other way round.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cin/concrete_notation.hpp"
#include "schedule/scheduled_statement.hpp"

namespace coiter::schedule {

struct IteratedLevel {
  const notation::AccessNode* access = nullptr;
  int level = 0;           // the access's level; 0 for a workspace
  bool workspace = false;  // a workspace's list of the coordinates its producer touched
};

struct LoopIteration {
  bool empty = true;                  // the body is zero everywhere: the loop is not lowered
  std::vector<IteratedLevel> levels;  // the levels it iterates (merges, when several)
  bool merges = false;                // several iterators or lattice points: not one for loop
};

// The iteration of a loop over `var` (an original index variable, or a fused or position
// loop's) around `body`, in the scheduled statement `s` (for the relations of derived loops).
// `entered(access)`: how many of the access's levels have positions where the loop starts.
// `inOrder`: the loop appends to the result, so unordered levels are located, not iterated.
// Throws ScheduleError when an operand would be traversed out of order: `var` indexes one of
// its levels below a level without random access that no loop around has entered.
LoopIteration loopIteration(const ScheduledStatement& s, const cin::Stmt& body, const std::string& var,
                            const std::function<int(const notation::AccessNode&)>& entered, bool inOrder);

// Whether a workspace access is consumed through its list of coordinates: a workspace over one
// index variable of the statement. (Over a derived loop, a split's inner loop, a workspace is
// a dense array of the block, located like a dense operand.)
bool listWorkspace(const ScheduledStatement& s, const notation::AccessNode& a);

}  // namespace coiter::schedule
