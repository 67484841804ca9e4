// Offset level (the columns of DIA): one child per parent, at the parent's position; the
// coordinate is computed, not stored: row i on diagonal d has column i + offset[d]
// (Kjolstad's thesis, ch. 2). Its parent is a range level, whose position is d*rows + i.
#include "format/level_kernel.hpp"
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

class OffsetLevel final : public LevelType {
 public:
  OffsetLevel() : LevelType({false, true, true, true, false}) {}
  LevelKind kind() const override { return LevelKind::Offset; }
  std::string name() const override { return "offset"; }
  LevelCapabilities capabilities() const override { return {false, true, false, false, false}; }
  char letter() const override { return 0; }
  std::vector<std::string> arrayNames() const override { return {"offset"}; }
  std::vector<std::string> scalarNames() const override { return {"rows"}; }
  std::vector<std::string> configurableProperties() const override { return {"ordered", "unique"}; }

  // In kernels: the one child of each parent, whose coordinate the lowerer computes from the
  // diagonal's offset (lower/lower_derived_levels.cpp).
  std::vector<LevelKernelArray> kernelArrays() const override { return {{"offset", false}}; }
  std::optional<PositionRange> positionRange(const LevelKernelVars&, const LevelParent& parent) const override {
    return positionsOfParent(parent);
  }

  PackOutput pack(const PackInput& in) const override {
    const std::vector<int64_t>& offset = *in.diagonals;
    if (in.parentCount != static_cast<int64_t>(offset.size()) * in.rows)
      throw FormatError(in.where + ": an offset level must sit under a range level");
    const Buffer& c = *in.coords;
    PackOutput out;
    out.arrays["offset"] = Buffer::fromIndices(offset, c.dtype());
    out.scalars["rows"] = in.rows;
    out.positionCount = in.parentCount;
    in.parents->forEach([&](const PackNode& node) {
      int64_t d = node.pos / in.rows, i = node.pos % in.rows;
      for (int64_t e = node.lo; e < node.hi; ++e)
        if (c.index(e) != i + offset[d])
          throw FormatError(in.where + ": column " + std::to_string(c.index(e)) + " of row " + std::to_string(i) +
                            " is not on diagonal " + std::to_string(offset[d]));
    });
    out.children = *in.parents;  // one child per parent, at the parent's position
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    const Buffer& offset = s.array("offset");
    int64_t rows = s.scalar("rows");
    for (size_t k = 0; k < parents.size(); ++k) {
      int64_t q = parents[k];
      out.push(q, q % rows + offset.index(q / rows), static_cast<int64_t>(k));
    }
  }

  void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const override {
    int64_t rows = s.scalar("rows");
    if (parent % rows + s.array("offset").index(parent / rows) == coord) out.push_back(parent);
  }

  int64_t countPositions(const LevelStorage&, int64_t parentCount) const override { return parentCount; }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t, const LevelDescription& where,
                   ValidationScope) const override {
    int64_t rows = checkedScalar(s, "rows", where);
    if (rows < 0 || (rows == 0 ? parentCount != 0 : parentCount % rows != 0))
      throw FormatError(where + ": an offset level must sit under a range level");
    checkedArray(s, "offset", rows == 0 ? -1 : parentCount / rows, where);
    return parentCount;
  }

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<OffsetLevel>(*this); }
};

}  // namespace

LevelTypePtr offsetLevel() { return std::make_shared<OffsetLevel>(); }

}  // namespace coiter
