// How a compiled kernel receives its tensors: which pointer slot holds which array and which
// integer slot holds which extent or capacity. The lowerer produces it together with the IR;
// the kernel dispatcher fills the slots from tensor storage, and reads results back.
#pragma once
#include <string>
#include <vector>

#include "notation/index_notation.hpp"

namespace coiter {

struct ArraySlot {
  int tensor;         // index into KernelABI::tensors
  int level;          // level of the array, or -1 for the values
  std::string array;  // "pos", "crd" or "vals"
  DType type;
  int slot;               // pointer slot
  int capacitySlot = -1;  // integer slot holding the capacity (grown result arrays), else -1
};

struct ExtentSlot {
  int tensor;
  int mode;            // the mode whose extent goes in the slot; -1 - k: a scalar of level k
  int slot;            // integer slot
  std::string scalar;  // mode < 0: the level's scalar (LevelType::kernelScalars)
};

// A kernel whose sparse result is assembled in parallel by chunks of its outermost loop
// (call/chunked_assembly.hpp): each call computes the rows [begin, end) of `indexVar`,
// appending into its own result arrays and counting entries per row in the shared pos array;
// the dispatcher then concatenates the chunks. Rows are the coordinates of the result's first
// level; its levels above `appendLevel` are dense.
struct ChunkedAssembly {
  bool enabled = false;
  std::string indexVar;
  int beginSlot = -1, endSlot = -1;  // integer slots of the chunk's row range
  int appendLevel = -1;              // the result's (only) compressed level
  bool dynamic = true;
  int64_t chunk = 0;  // rows per chunk, 0: chosen by the dispatcher
  // The work of a row follows its operand nonzeros (the kernel merges or scans the operands'
  // rows, without a workspace): chunks of equal weight take equal time, so the first chunk may
  // be large (call/chunked_assembly.cpp).
  bool workFollowsWeights = false;
};

// A kernel whose sparse result is assembled in two passes (lower/lower_two_pass.cpp): called
// with the integer in `passSlot` 0, it counts each parent's entries into the pos array of
// `appendLevel` (its parents are the dense levels above it); the caller turns the counts into
// offsets and sizes the appended arrays (crd, vals) exactly; called with 1, it fills them,
// each parent from its offset. The parents are independent, so a GPU's threads (or the CPU's)
// fill them in parallel, and no array grows.
struct TwoPassAssembly {
  bool enabled = false;
  int passSlot = -1;
  int appendLevel = -1;
};

struct KernelABI {
  // Operands in order of first appearance, then the result (last).
  std::vector<notation::TensorVarPtr> tensors;
  std::vector<ArraySlot> arrays;
  std::vector<ExtentSlot> extents;
  int pointerSlots = 0;
  int integerSlots = 0;
  // Index variables and, for each, the (tensor, mode) pairs whose extents must agree.
  std::vector<std::string> indexVars;
  std::vector<std::vector<std::pair<int, int>>> indexVarModes;
  bool assembles = true;  // false: compute-only, the result's index arrays are inputs
  // A compute-only kernel whose result keeps the pattern of this operand (its index into
  // `tensors`; lower/lower_result_pattern.cpp): the call gives the result the operand's index
  // arrays and zeroed values, without a structure from the caller. -1: none.
  int patternOperand = -1;
  // The (all-dense) result's every entry is stored once: its values need no zeroing.
  bool resultOverwritten = false;
  ChunkedAssembly chunks;
  TwoPassAssembly twoPass;
  // Result levels whose pos array the kernel fills with each parent's entry count (a compressed
  // level under a dense one); the caller turns the counts into offsets.
  std::vector<int> countedLevels;
  // Pointer slot of an int64 the caller zeroes before the call; the kernel sets it when an
  // operand's coordinate lies outside its dimension (ir/guard_coordinates.hpp). -1: the
  // kernel loads no operand coordinate.
  int violationSlot = -1;
  int result() const { return static_cast<int>(tensors.size()) - 1; }
};

}  // namespace coiter
