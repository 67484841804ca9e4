// The level abstraction of the thesis (Kjolstad's thesis, ch. 2): a level type is known to the
// rest of coiter only through its properties and capabilities. One subclass per level type
// lives in format/levels/; adding a level type means adding one class there.
//
// Besides the capabilities (which return IR in the compiler), each level type implements the
// data paths used by tensors: packing sorted coordinates into its arrays, expanding stored
// positions back into coordinates, finding a coordinate under a parent, and validating
// arrays that come from outside (so no later read can go out of bounds).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/level_description.hpp"
#include "format/level_kernel.hpp"
#include "format/level_storage.hpp"

namespace coiter {

// The level types coiter registers (makeLevelType). `External`: a level type defined outside
// src/format/ (a test, an extension), identified by its name.
enum class LevelKind { Dense, Compressed, Singleton, Hashed, Range, Offset, External };

struct LevelProperties {
  bool full = false;        // every segment holds every coordinate of the dimension
  bool ordered = true;      // coordinates under one parent are non-decreasing
  bool unique = true;       // no coordinate repeats under one parent
  bool branchless = false;  // every parent has exactly one child
  bool compact = true;      // no unlabeled (empty) slots between coordinates
  bool operator==(const LevelProperties& o) const;
};

// How much of a level's arrays validate() checks. Each scope includes the ones above it.
//   Structure: array lengths and parameters, and positions (pos) non-decreasing within their
//              arrays: O(parent positions). Enough for a compiled kernel to iterate the level
//              without leaving its arrays, since kernels check every coordinate they load
//              (ir/guard_coordinates.hpp). Checked on every kernel call.
//   Bounds:    also every stored coordinate within its dimension: O(positions). Enough for
//              code that uses coordinates as addresses (conversions). Checked on every
//              conversion, so arrays changed after wrapping are caught there too.
//   Full:      also the declared invariants results depend on (order, uniqueness, hashed
//              entries reachable by probing). Checked once per tensor (TensorStorage::validate).
enum class ValidationScope { Structure, Bounds, Full };

struct LevelCapabilities {
  bool coordinateIterate = false;
  bool positionIterate = false;
  bool locate = false;
  bool append = false;
  bool insert = false;
};

// Options a user may set when calling a level type: ct.compressed(ordered=False), ...
struct LevelOptions {
  int ordered = -1;  // -1: the level type's default
  int unique = -1;
  int full = -1;
  int compact = -1;
  int64_t buckets = 0;  // hashed: buckets per segment (0: chosen from the data)
};

// One group of sorted entries that sits under one position of a level.
struct PackNode {
  int64_t pos;  // position in the level's position space
  int64_t lo;   // entries [lo, hi) of the sorted entry list
  int64_t hi;
};

// The non-empty positions of a level, ascending, each with its group of entries. When
// position q holds exactly entry q for every entry (the leaves of CSR and COO), the nodes
// are implied rather than listed: a node per entry would cost more memory traffic than the
// rest of packing.
struct PackNodes {
  std::vector<PackNode> list;  // unless oneEntryEach
  bool oneEntryEach = false;   // position q holds entry q, for q < entryCount
  int64_t entryCount = 0;

  static PackNodes entries(int64_t count) { return {{}, true, count}; }
  int64_t size() const { return oneEntryEach ? entryCount : static_cast<int64_t>(list.size()); }
  PackNode operator[](int64_t k) const { return oneEntryEach ? PackNode{k, k, k + 1} : list[k]; }
  template <typename Visit>
  void forEach(Visit&& visit) const {
    if (!oneEntryEach) {
      for (const PackNode& node : list) visit(node);
      return;
    }
    for (int64_t q = 0; q < entryCount; ++q) visit(PackNode{q, q, q + 1});
  }
};

// What a level sees while a tensor is packed top-down from sorted, de-duplicated entries.
// Coordinates are int32 or int64 columns, all of one width, and a level writes its index
// arrays at that width (packing picks int32 when a bound shows every value fits).
struct PackInput {
  int64_t extent = 0;    // range of this level's coordinates
  const Buffer* coords;  // this level's coordinate of every sorted entry
  // Coordinates of this level and the branchless levels directly below it: the key a
  // non-unique level groups by. `chainReachesLeaf` when that chain ends at the last level,
  // in which case every entry keeps its own position (duplicates stay separate).
  std::vector<const Buffer*> chain;
  bool chainReachesLeaf = false;
  int64_t parentCount = 0;                // sz_{k-1}
  const PackNodes* parents;               // non-empty parents
  const std::vector<int64_t>* diagonals;  // DIA: offset of each diagonal (range/offset levels)
  int64_t rows = 0, cols = 0;             // DIA: matrix shape (range/offset levels)
  std::string where;                      // "level 1 (compressed) of a csr tensor", for errors
};

// A level's arrays may be the coordinate column itself, shared rather than copied.
struct PackOutput {
  std::map<std::string, Buffer> arrays;  // at the width of PackInput::coords
  std::map<std::string, int64_t> scalars;
  int64_t positionCount = 0;
  PackNodes children;
};

// Children of a batch of parent positions, as produced by expand().
struct ExpandOutput {
  std::vector<int64_t> childPos;
  std::vector<int64_t> coord;
  std::vector<int64_t> parentIndex;  // index into the parent batch
  void push(int64_t pos, int64_t c, int64_t parent) {
    childPos.push_back(pos);
    coord.push_back(c);
    parentIndex.push_back(parent);
  }
};

class LevelType {
 public:
  virtual ~LevelType() = default;

  virtual LevelKind kind() const = 0;
  virtual std::string name() const = 0;  // "dense", "compressed", ...
  LevelProperties properties() const { return props_; }
  virtual LevelCapabilities capabilities() const = 0;
  // Letter of the format syntax ('d', 's', 'u', 'q', 'c', 'h'), or 0 when none spells it.
  virtual char letter() const = 0;
  virtual std::vector<std::string> arrayNames() const = 0;
  virtual std::vector<std::string> scalarNames() const = 0;
  // Which properties a user may configure on this level type (Kjolstad's thesis, Table 2-11).
  virtual std::vector<std::string> configurableProperties() const = 0;
  int64_t buckets() const { return buckets_; }

  // A new level type of the same kind with the given options applied.
  std::shared_ptr<const LevelType> configure(const LevelOptions& options) const;
  std::string repr() const;  // "compressed(ordered=False)"
  bool operator==(const LevelType& other) const;

  // Builds this level's arrays and the children of every parent from sorted entries.
  virtual PackOutput pack(const PackInput& in) const = 0;
  // Stored children (position, coordinate) of each parent position; unlabeled slots skipped.
  virtual void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const = 0;
  // Whether the level's positions are exactly its parents' stored children, each parent's
  // children one run of positions, in parent order, and each position's coordinate known from
  // the position alone (dense; compressed; singleton without unlabeled slots). Entries of a
  // tensor whose levels all are so are listed in storage order straight into their output,
  // without expand()'s batches (storage/unpack.cpp).
  virtual bool runsInParentOrder() const { return false; }
  // Where runsInParentOrder: the first child position of each parent in [0, parentCount]
  // (parentCount + 1 values, the last one past the last child).
  virtual void childStarts(const LevelStorage& s, int64_t parentCount, int64_t* out) const;
  // Where runsInParentOrder: the coordinate at each position in [begin, end).
  virtual void coordinatesAt(const LevelStorage& s, int64_t begin, int64_t end, int64_t* out) const;
  // Positions under `parent` whose coordinate is `coord` (several for non-unique levels).
  virtual void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const;
  // Number of positions of this level (sz_k) given the parent's; O(1), no array is scanned.
  virtual int64_t countPositions(const LevelStorage& s, int64_t parentCount) const = 0;
  // Checks arrays that came from outside, as far as `scope` says, and returns the level's
  // position count.
  virtual int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
                           ValidationScope scope) const = 0;
  // The smallest coordinate the level's crd array may hold: 0, or -1 where unlabeled slots
  // are stored as -1 (hashed buckets, non-compact singletons). Kernels that load coordinates
  // check them against [smallestStoredCoordinate(), extent).
  virtual int64_t smallestStoredCoordinate() const { return 0; }
  // Whether the level has a position for every coordinate of its extent under each parent,
  // computed from the parent's position and the coordinate (dense; range, whose positions
  // outside a diagonal hold padding that the offset level below rejects). The compiler then
  // iterates the dimension and locates such a level instead of iterating it.
  virtual bool locatesEveryCoordinate() const { return false; }

  // ---- In kernels: the level's capabilities as IR (format/level_kernel.hpp) ---------------
  // The defaults describe a level that offers nothing; each level type overrides what it has.
  //
  // Arrays and scalars a kernel takes for the level.
  virtual std::vector<LevelKernelArray> kernelArrays() const { return {}; }
  virtual std::vector<LevelKernelScalar> kernelScalars() const { return {}; }
  // Whether the range of a coordinate the format derives (a diagonal, a slot) is the level's
  // stored size, passed to kernels, rather than a function of the modes' extents.
  virtual bool extentIsStored() const { return false; }
  // The positions of the segment under `parent` a loop visits: coordinate iteration by
  // position. Nullopt when the level is located instead (locatesEveryCoordinate) or has no
  // positions of its own to visit.
  virtual std::optional<PositionRange> positionRange(const LevelKernelVars& vars, const LevelParent& parent) const;
  // The position of `coord` under `parent`, computed into `code.out`; null when the level
  // cannot locate. Where locateMayMiss(), an absent coordinate gives position -1.
  virtual ir::Expr locate(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord,
                          LevelCode& code) const;
  virtual bool locateMayMiss() const { return false; }
  // Whether the segment of parent p is positions [pos[p], pos[p+1]) of a "pos" array, with
  // the coordinates in "crd": what pos() and the positions of fused loops iterate.
  virtual bool storesSegments() const { return false; }
  // How a kernel computes the level as part of its result.
  virtual LevelAssembly assembly() const { return LevelAssembly::None; }
  // Appended levels: store the coordinate of the entry at `position` (growing the arrays
  // first unless `roomReserved`).
  virtual ir::Stmt appendCoordinate(const LevelKernelVars& vars, const ir::Expr& position, const ir::Expr& coord,
                                    bool roomReserved, DType indexType) const;
  // Appended levels: room for `entries` entries in all, reserved before a loop that appends
  // at most so many (its appends then check no capacity).
  virtual ir::Stmt reserveAppends(const LevelKernelVars& vars, const ir::Expr& entries) const;
  // Appended levels that bound segments: the segment of `parent` ends before position `end`
  // (a level above appends parent by parent), or gains `added` entries (a dense level above
  // visits each parent once; finishAssembly turns the counts into offsets).
  virtual ir::Stmt endSegment(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& end,
                              DType indexType) const;
  virtual ir::Stmt countIntoSegment(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& added,
                                    DType indexType) const;
  // Levels counted per parent whose parents appear while the kernel runs (dense levels below
  // an appended level: each appended entry brings `parents` new ones, starting at `first`):
  // room for their counts, zeroed, so that countIntoSegment can add to them.
  virtual ir::Stmt openSegments(const LevelKernelVars& vars, const ir::Expr& first, const ir::Expr& parents,
                                LevelCode& code) const;
  // After the kernel: the level's arrays trimmed into `out`; returns its position count.
  virtual int64_t finishAssembly(const AssembledLevel& in, LevelStorage& out) const;

  // ---- Inserted levels in a result (LevelAssembly::Inserted; Format::insertsResultLevel) ----
  // The kernel inserts each entry where the level puts it, into arrays the call allocated
  // before the kernel ran: countPositions() elements each, for the scalars the call chose,
  // every element starting as insertArrayStart(array). When a segment reaches its load limit
  // the kernel returns kTableFull and the call reruns it with largerInsertScalars().
  //
  // The level's scalars for a kernel's first try, when about `entriesPerParent` entries go
  // under each parent.
  virtual std::map<std::string, int64_t> insertScalars(int64_t entriesPerParent) const;
  // The scalars of the next try after `tried` met a full segment.
  virtual std::map<std::string, int64_t> largerInsertScalars(const std::map<std::string, int64_t>& tried) const;
  // The value every element of the level's kernel array `array` starts as.
  virtual int64_t insertArrayStart(const std::string& array) const;
  // The most entries a parent's segment holds (the next call's first try is sized for it).
  virtual int64_t fullestSegment(const LevelStorage& s, int64_t parentCount) const;
  // Int64 arrays the kernel keeps for the level while it inserts (the lowerer declares them
  // into LevelKernelVars::scratch and frees them when the kernel ends).
  virtual std::vector<std::string> insertScratch() const { return {}; }
  // IR, before the first insert: the scratch arrays allocated for `parents` parents.
  virtual ir::Stmt startInserts(const LevelKernelVars& vars, const ir::Expr& parents) const;
  // IR: the position of `coord` under `parent`, stored there first when it is new; -1 when
  // the parent's segment is at its load limit (the kernel then returns kTableFull).
  virtual ir::Expr insert(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord,
                          LevelCode& code) const;
  // IR: whether some insert found its segment full (for inserts inside a parallel loop, which
  // cannot return: the kernel checks this after the loop).
  virtual ir::Expr insertsFull(const LevelKernelVars& vars) const;

 protected:
  explicit LevelType(LevelProperties defaults) : props_(defaults), defaults_(defaults) {}
  virtual std::shared_ptr<LevelType> clone() const = 0;
  LevelProperties props_;
  LevelProperties defaults_;  // before configure(): what repr() leaves out
  int64_t buckets_ = 0;
};

using LevelTypePtr = std::shared_ptr<const LevelType>;

LevelTypePtr makeLevelType(LevelKind kind);
LevelTypePtr denseLevel();
LevelTypePtr compressedLevel();
LevelTypePtr singletonLevel();
LevelTypePtr hashedLevel();
LevelTypePtr rangeLevel();
LevelTypePtr offsetLevel();

}  // namespace coiter
