// Dense level: stores only its size N; every segment holds coordinates 0..N-1 and the
// position of coordinate i under parent p is p*N + i (Kjolstad's thesis, ch. 2;
// its §5.2 prints the stride as "the size of the i dimension", but it must be the located level's N).
#include <algorithm>

#include "format/level_kernel.hpp"
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

class DenseLevel final : public LevelType {
 public:
  DenseLevel()
      : LevelType({/*full*/ true, /*ordered*/ true, /*unique*/ true,
                   /*branchless*/ false, /*compact*/ true}) {}
  LevelKind kind() const override { return LevelKind::Dense; }
  std::string name() const override { return "dense"; }
  // Dense levels iterate their coordinate range (the dimension) and locate into it.
  LevelCapabilities capabilities() const override { return {true, false, true, false, true}; }
  char letter() const override { return 'd'; }
  std::vector<std::string> arrayNames() const override { return {}; }
  std::vector<std::string> scalarNames() const override { return {"size"}; }
  bool locatesEveryCoordinate() const override { return true; }
  std::vector<std::string> configurableProperties() const override { return {"ordered", "unique"}; }

  // In kernels: the position of coordinate i under parent p is p*N + i; a result level is
  // allocated in full. A dense level that holds a derived coordinate (DIA's diagonals, ELL's
  // slots) passes its size.
  bool extentIsStored() const override { return true; }
  ir::Expr locate(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord,
                  LevelCode& code) const override {
    return locateInExtent(vars, parent, coord, code);
  }
  LevelAssembly assembly() const override { return LevelAssembly::Located; }
  int64_t finishAssembly(const AssembledLevel& in, LevelStorage& out) const override {
    out.scalars["size"] = in.extent;
    return in.parentCount * in.extent;  // the kernel's caller allocated that many
  }

  PackOutput pack(const PackInput& in) const override {
    PackOutput out;
    out.scalars["size"] = in.extent;
    out.positionCount = checkedProduct(in.parentCount, in.extent, in.where);
    // At most one child per entry and per position. Reserving that bound costs only
    // address space: pages the list never reaches are never touched.
    out.children.list.reserve(std::min(in.coords->length(), out.positionCount));
    in.parents->forEach([&](const PackNode& node) {
      forEachGroup(in, node, true, [&](int64_t lo, int64_t hi, int64_t c) {
        out.children.list.push_back({node.pos * in.extent + c, lo, hi});
      });
    });
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    int64_t n = s.scalar("size");
    for (size_t k = 0; k < parents.size(); ++k)
      for (int64_t c = 0; c < n; ++c) out.push(parents[k] * n + c, c, static_cast<int64_t>(k));
  }

  bool runsInParentOrder() const override { return true; }

  void childStarts(const LevelStorage& s, int64_t parentCount, int64_t* out) const override {
    const int64_t n = s.scalar("size");
    for (int64_t p = 0; p <= parentCount; ++p) out[p] = p * n;
  }

  void coordinatesAt(const LevelStorage& s, int64_t begin, int64_t end, int64_t* out) const override {
    const int64_t n = s.scalar("size");
    for (int64_t q = begin; q < end; ++q) out[q - begin] = q % n;
  }

  void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const override {
    int64_t n = s.scalar("size");
    if (coord >= 0 && coord < n) out.push_back(parent * n + coord);
  }

  int64_t countPositions(const LevelStorage& s, int64_t parentCount) const override {
    return checkedProduct(parentCount, checkedScalar(s, "size", name()), name());
  }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
                   ValidationScope) const override {
    int64_t n = checkedScalar(s, "size", where);
    if (n != extent)
      throw FormatError(where + ": dense size " + std::to_string(n) + " does not match the dimension " +
                        std::to_string(extent));
    return checkedProduct(parentCount, n, where);
  }

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<DenseLevel>(*this); }
};

}  // namespace

LevelTypePtr denseLevel() { return std::make_shared<DenseLevel>(); }

}  // namespace coiter
