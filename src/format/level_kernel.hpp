// What a level type contributes to a compiled kernel (the level capabilities of Kjolstad's
// thesis, ch. 2, as IR, in the manner of TACO's ModeFormatImpl): the arrays and scalars a kernel takes
// for the level, how its positions under a parent are iterated, how a coordinate is located,
// how a result level is appended to, and what the runtime does with an appended level after
// the kernel. Each level type implements these in its own file (format/levels/); the lowerer
// asks, and never switches on the level's kind.
//
// The IR nodes (ir/ir.hpp) are plain data below every compiler stage, so format/ may build them.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "format/level_storage.hpp"
#include "ir/ir.hpp"

namespace coiter {

// An index array a kernel takes for a level: "pos", "crd", "offset".
struct LevelKernelArray {
  std::string name;
  bool grows = false;  // appended to when the level belongs to a result (with a capacity)
};

// An integer a kernel takes for a level, read from the level's scalar `name`; `suffix` names
// the kernel's parameter (A2_buckets).
struct LevelKernelScalar {
  std::string name;
  std::string suffix;
};

// The IR variables of one level of one tensor inside a kernel.
struct LevelKernelVars {
  std::map<std::string, ir::Var> arrays;      // kernelArrays(), by name
  std::map<std::string, ir::Var> capacities;  // result levels: elements each grown array holds
  std::map<std::string, ir::Var> scalars;     // kernelScalars(), by name
  std::map<std::string, ir::Var> scratch;     // inserted result levels: insertScratch(), by name
  ir::Expr extent;                            // range of the level's coordinates
  // The named array or scalar, or null when the level has none by that name.
  ir::Var array(const std::string& name) const;
  ir::Var capacity(const std::string& name) const;
  ir::Var scalar(const std::string& name) const;
  ir::Var scratchArray(const std::string& name) const;
};

// The positions [begin, end) a level's segment under a parent spans. `single`: exactly one
// position (begin), so the loop over it is not a loop.
struct PositionRange {
  ir::Expr begin, end;
  bool single = false;
};

// Where a level's segment is iterated or located: its parent's position, and the end of the
// run of equal coordinates at a non-unique parent (null when the run is that one position).
struct LevelParent {
  ir::Expr position;  // 0 above the first level
  ir::Expr runEnd;
  bool top = false;  // the level is the tensor's first
};

// What a level's IR may ask of the lowerer: fresh variable names, and a place for the
// statements that compute a value before it is used.
struct LevelCode {
  std::string name;  // what the position's variables are called after (pA2)
  std::function<std::string(const std::string&)> freshName;
  std::vector<ir::Stmt>& out;
};

// How a kernel computes a level of its result.
enum class LevelAssembly {
  None,           // the level cannot belong to a kernel's result (range, offset)
  Located,        // positions follow from the parent's and the coordinate; allocated in full (dense)
  Appended,       // entries appended in coordinate order, segments bounded by pos (compressed)
  AppendedBelow,  // coordinates appended beside the level above, sharing its positions (singleton)
  Inserted,       // entries inserted in any order into storage sized before the kernel (hashed)
};
inline bool isAppended(LevelAssembly a) { return a == LevelAssembly::Appended || a == LevelAssembly::AppendedBelow; }

// A result level's arrays as the kernel left them, and what the runtime makes of them.
struct AssembledLevel {
  std::map<std::string, Buffer*> arrays;   // the kernel's grown arrays, by name
  int64_t parentCount = 0;                 // positions of the level above (1 above the top)
  int64_t extent = 0;                      // range of the level's coordinates
  bool countsPerParent = false;            // pos holds each parent's count, not offsets
  std::map<std::string, int64_t> scalars;  // inserted levels: the scalars the kernel ran with
  // The first `length` elements of a kernel's array as the level's array (the rest given
  // back to the system).
  std::function<Buffer(const Buffer& array, int64_t length)> trim;
  Buffer& array(const std::string& name) const;
};

// Shared by levels located like dense ones: position parent * extent + coord, declared into
// a variable.
ir::Expr locateInExtent(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord, LevelCode& code);
// Shared by branchless levels (singleton, offset): the parent's own position, or the run of
// positions of a non-unique parent.
PositionRange positionsOfParent(const LevelParent& parent);

// Shared by levels that append coordinates to a crd array (compressed, singleton): room for
// the entry at `position` (unless reserved beforehand), then its coordinate.
ir::Stmt appendCoordinateToCrd(const LevelKernelVars& vars, const ir::Expr& position, const ir::Expr& coord,
                               bool roomReserved, DType indexType);
ir::Stmt reserveCrd(const LevelKernelVars& vars, const ir::Expr& entries);

}  // namespace coiter
