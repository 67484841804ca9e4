// A concrete statement together with what scheduling added to it (Kjolstad's thesis, ch. 3, ch. 6):
// the relations that define derived index variables (split, divide, bound), and per-loop
// tags (parallelize, unroll). The statement's foralls name derived variables; accesses keep
// naming the original ones, and lowering maps between them (coordinate mapping, §4.4).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cin/concrete_notation.hpp"
#include "util/target.hpp"

namespace coiter::schedule {

enum class RelationKind {
  Split,   // parent -> outer, inner: inner has a fixed size (the last block is shorter)
  Divide,  // parent -> outer, inner: outer has a fixed number of parts
  Bound,   // parent -> bounded: the same loop, with its extent known at compile time
  Fuse,    // parent, second -> fused: the two nested loops as one
  Pos,     // parent -> positions: the stored positions of `access`'s level for parent
  // parent -> bounded: the same loop as the derived loop `parent`, under the name a
  // workspace's producer gives it (precompute over a split's inner loop, renamed)
  Precompute,
};

struct IndexRelation {
  RelationKind kind = RelationKind::Split;
  std::string parent;
  std::string outer, inner;      // Split/Divide
  std::string bounded;           // Bound, Fuse, Pos, Precompute: the new variable
  int64_t size = 0;              // Split: block size; Divide: parts; Bound: the bound
  bool exact = false;            // Bound: the extent equals `size` (else it is at most `size`)
  std::string second;            // Fuse: the inner of the two fused loops
  std::string access;            // Pos: the operand access whose positions are iterated, as text
  std::string toString() const;  // "i →split(32) i0 i1"
};

enum class ParallelUnit { None, CpuThread, CpuVector, GpuBlock, GpuWarp, GpuThread };
const char* parallelUnitName(ParallelUnit u);
inline bool isGpuUnit(ParallelUnit u) {
  return u == ParallelUnit::GpuBlock || u == ParallelUnit::GpuWarp || u == ParallelUnit::GpuThread;
}
enum class RaceStrategy { NoRaces, IgnoreRaces, Atomics, Temporary, ParallelReduction };

struct LoopTags {
  ParallelUnit unit = ParallelUnit::None;
  RaceStrategy races = RaceStrategy::NoRaces;
  bool dynamic = true;           // cpu_thread: dynamic chunks (skewed iterations) or static
  int64_t chunk = 0;             // cpu_thread: iterations per chunk, 0 = automatic
  int unroll = 0;                // unroll factor, 0 = none
  std::string toString() const;  // "parallel(cpu_thread,no_races) unroll(4)"; "" when untagged
};

const char* raceStrategyName(RaceStrategy r);

struct ScheduledStatement {
  cin::Stmt stmt;
  std::vector<IndexRelation> relations;
  std::map<std::string, LoopTags> tags;  // by forall variable
  // Result tensors the schedule asked to assemble with `insert` (workspaces where the loop
  // order needs them), `append` (loop order only) or `two_pass` (count, then fill).
  std::map<std::string, std::string> assembly;
  // Where the kernel runs (last: aggregate initializers that name the fields above keep
  // their meaning).
  Target target = Target::Cpu;

  // Whether the sparse result `result` is assembled in two passes (lower/lower_two_pass.cpp):
  // asked for by assemble(result, two_pass), and a GPU's way unless another strategy is asked.
  bool assemblesInTwoPasses(const std::string& result) const;
  // The relation that produced `var`, if it is derived.
  const IndexRelation* relationOf(const std::string& var) const;
  // The loop `var` is, seen through bounds and precomputed copies (which rename a loop, with
  // a known extent or for a workspace's producer, without changing what it iterates): the
  // outer loop of a split for a bound of it.
  std::string loopOf(const std::string& var) const;
  // The split or divide whose outer loop `var` is (through bounds and copies), if any: such a
  // loop enumerates blocks.
  const IndexRelation* blocksOf(const std::string& var) const;
  // The variable whose coordinates a (chain of) derived variable(s) iterates: the original
  // index variable of a split or bound; a fused or position variable is its own space.
  std::string rootOf(const std::string& var) const;
  // The original index variables a loop binds (i for a split of i; i and j for a fusion).
  std::vector<std::string> boundVariables(const std::string& var) const;
  // Whether `var` is derived by a relation (a split's loops, a bound, a fused or position
  // loop, a precomputed copy), not an index variable of the statement's accesses.
  bool isDerived(const std::string& var) const { return relationOf(var) != nullptr; }
  const LoopTags* tagsOf(const std::string& var) const;
  // Whether a loop inside `s` is tagged with a GPU unit and atomics. TACO's GPU schedules tag
  // only the innermost GPU loop so (SpMV: a block, its warps, their threads): every result
  // update is then atomic, which settles the races of the GPU loops around it too.
  bool hasGpuAtomicsInside(const cin::Stmt& s) const;
  // The statement, then " : " and each relation, then each tagged loop.
  std::string toString() const;
};

}  // namespace coiter::schedule
