// A tensor format: one level type per level plus the map from mode coordinates to level
// coordinates (for one-level-per-mode formats, the mode order). docs/reference.md, "Formats".
#pragma once
#include <string>
#include <vector>

#include "format/level_coordinate.hpp"
#include "format/level_type.hpp"

namespace coiter {

class Format {
 public:
  Format() = default;
  // One level per mode; modeOrder[k] is the mode stored at level k (empty: identity).
  Format(std::vector<LevelTypePtr> levels, std::vector<int> modeOrder = {});

  // Letter syntax: "ds", "ds:1,0" (d dense, s compressed, u compressed non-unique,
  // q singleton, c singleton non-unique, h hashed).
  static Format parse(const std::string& text);
  // Named formats of docs/reference.md, "Formats" for tensors of the given order ("csr", "coo", "dense", ...).
  static Format named(const std::string& name, int order);
  static bool isName(const std::string& name);
  static Format bcsr(int64_t blockRows, int64_t blockCols);
  static Format dia();
  static Format ell();

  int order() const { return order_; }
  const std::vector<LevelTypePtr>& levels() const { return levels_; }
  const std::vector<int>& modeOrder() const { return modeOrder_; }
  const std::vector<LevelCoordinate>& levelMap() const { return levelMap_; }
  const std::string& name() const { return name_; }  // "bcsr", "dia", "ell" or empty
  bool hasDerivedLevels() const { return !name_.empty(); }

  // Letter syntax when one exists, else the name (with block shape), else "".
  std::string str() const;
  std::string repr() const;
  bool operator==(const Format& o) const;
  bool operator!=(const Format& o) const { return !(*this == o); }

  // What restricts a loop over level `level`'s coordinate to part of its extent (derived
  // levels): a block's offset level to the block whose index (level `partner`) is known, a
  // block index level to the block holding the known offset (level `partner`), and a DIA row
  // level, once `entered` is that level (its diagonal is chosen), to the rows the diagonal
  // holds. Legality (which loops are restricted) and lowering (the restricted bounds) both ask.
  struct Restriction {
    enum class Kind { None, ToKnownBlock, ToBlockOfKnownOffset, ToDiagonalRows } kind = Kind::None;
    int partner = -1;
  };
  Restriction restrictionAt(int level, int entered) const;
  // The first level whose coordinate is of `kind` over `level`'s mode (a block's index and
  // offset levels find each other), or -1.
  int partnerLevel(int level, LevelCoordinate::Kind kind) const;
  // Whether level `level` has the kernel array `name` ("crd", "offset", ...).
  bool levelHasArray(int level, const std::string& name) const;

  // Extent of each level's coordinates for a tensor of this shape; data-dependent levels
  // (diagonals, slots) get -1.
  std::vector<int64_t> levelExtents(const std::vector<int64_t>& shape) const;
  // Whether some non-unique level has only branchless levels below it, so the format can
  // hold duplicate coordinates (COO).
  bool holdsDuplicates() const;
  // Whether every level is full (dense: every coordinate under every parent) and none is
  // derived: a dense array, with no unstored zeros.
  bool isAllDense() const;
  // Why a kernel cannot compute a result in this format, or "" when it can: levels located
  // (dense), appended (compressed, singleton below an appended level) or inserted (hashed;
  // see resultAssemblyFormat), and no derived levels (DIA, ELL, BCSR).
  std::string resultAssemblyProblem() const;
  // Whether a kernel computing a result in this format inserts level k in one pass: an
  // inserted level (hashed) with every level above it located (dense), so that its parents
  // and their storage exist before the kernel runs, and no level below it.
  bool insertsResultLevel(int k) const;
  // Whether a kernel can assemble a result in this format in two passes, counting then
  // filling each row from its offset (lower/lower_two_pass.cpp): one appended level
  // (compressed), the last, under located (dense) levels only, such as CSR.
  bool fillsRowsInTwoPasses() const;
  // The format a kernel computes a result of this format in: the format itself, or, where an
  // inserted level is not inserted in one pass (insertsResultLevel: `hs`, a hashed level
  // under a compressed one), the format with that level compressed; its caller packs the
  // result into this format after the call.
  Format resultAssemblyFormat() const;
  // Checks a tensor shape against the format (order, block divisibility).
  void checkShape(const std::vector<int64_t>& shape) const;

 private:
  Format(std::vector<LevelTypePtr> levels, int order, std::vector<LevelCoordinate> map, std::string name);
  std::vector<LevelTypePtr> levels_;
  std::vector<int> modeOrder_;
  std::vector<LevelCoordinate> levelMap_;
  int order_ = 0;
  std::string name_;
};

}  // namespace coiter
