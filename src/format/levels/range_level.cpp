// Range level (the rows of DIA): under diagonal d, with offset o = offset[d], the rows
// i in [max(0, -o), min(N, M - o)) exist, at positions d*N + i (Kjolstad's thesis, ch. 2).
// Its parent must be the dense level of diagonals, whose position is the diagonal number.
#include <algorithm>

#include "format/level_kernel.hpp"
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

class RangeLevel final : public LevelType {
 public:
  RangeLevel() : LevelType({false, true, true, false, false}) {}
  LevelKind kind() const override { return LevelKind::Range; }
  std::string name() const override { return "range"; }
  LevelCapabilities capabilities() const override { return {true, false, true, false, false}; }
  char letter() const override { return 0; }
  std::vector<std::string> arrayNames() const override { return {"offset"}; }
  std::vector<std::string> scalarNames() const override { return {"rows", "cols"}; }
  bool locatesEveryCoordinate() const override { return true; }
  std::vector<std::string> configurableProperties() const override { return {"ordered", "unique"}; }

  // In kernels: located like a dense level over the rows (positions outside a diagonal hold
  // padding, which the offset level below tells apart).
  ir::Expr locate(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord,
                  LevelCode& code) const override {
    return locateInExtent(vars, parent, coord, code);
  }

  PackOutput pack(const PackInput& in) const override {
    const std::vector<int64_t>& offset = *in.diagonals;
    if (static_cast<int64_t>(offset.size()) != in.parentCount)
      throw FormatError(in.where + ": a range level must sit under the dense level of diagonals");
    PackOutput out;
    out.arrays["offset"] = Buffer::fromIndices(offset, in.coords->dtype());
    out.scalars["rows"] = in.rows;
    out.scalars["cols"] = in.cols;
    out.positionCount = checkedProduct(in.parentCount, in.rows, in.where);
    in.parents->forEach([&](const PackNode& node) {
      forEachGroup(in, node, true, [&](int64_t lo, int64_t hi, int64_t i) {
        out.children.list.push_back({node.pos * in.rows + i, lo, hi});
      });
    });
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    const Buffer& offset = s.array("offset");
    int64_t rows = s.scalar("rows"), cols = s.scalar("cols");
    for (size_t k = 0; k < parents.size(); ++k) {
      int64_t d = parents[k], o = offset.index(d);
      for (int64_t i = std::max<int64_t>(0, -o); i < std::min(rows, cols - o); ++i)
        out.push(d * rows + i, i, static_cast<int64_t>(k));
    }
  }

  void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const override {
    int64_t rows = s.scalar("rows"), cols = s.scalar("cols");
    int64_t o = s.array("offset").index(parent);
    if (coord >= std::max<int64_t>(0, -o) && coord < std::min(rows, cols - o)) out.push_back(parent * rows + coord);
  }

  int64_t countPositions(const LevelStorage& s, int64_t parentCount) const override {
    return checkedProduct(parentCount, checkedScalar(s, "rows", name()), name());
  }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
                   ValidationScope) const override {
    int64_t rows = checkedScalar(s, "rows", where), cols = checkedScalar(s, "cols", where);
    if (rows != extent)
      throw FormatError(where + ": range rows " + std::to_string(rows) + " do not match the dimension " +
                        std::to_string(extent));
    checkRange(checkedArray(s, "offset", parentCount, where), -rows + 1, std::max<int64_t>(cols, 1), "offset", where);
    return checkedProduct(parentCount, rows, where);
  }

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<RangeLevel>(*this); }
};

}  // namespace

LevelTypePtr rangeLevel() { return std::make_shared<RangeLevel>(); }

}  // namespace coiter
