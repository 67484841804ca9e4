// Singleton level: one child per parent, at the parent's own position; crd[p] is its
// coordinate (Kjolstad's thesis, ch. 2). A non-compact singleton (ELL's column level) may leave a
// parent without a child, marked by crd[p] == -1.
#include <algorithm>

#include "format/level_kernel.hpp"
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

class SingletonLevel final : public LevelType {
 public:
  SingletonLevel() : LevelType({false, true, true, true, true}) {}
  LevelKind kind() const override { return LevelKind::Singleton; }
  std::string name() const override { return "singleton"; }
  LevelCapabilities capabilities() const override { return {false, true, false, true, false}; }
  char letter() const override {
    if (!props_.ordered || props_.full || !props_.compact) return 0;
    return props_.unique ? 'q' : 'c';
  }
  std::vector<std::string> arrayNames() const override { return {"crd"}; }
  std::vector<std::string> scalarNames() const override { return {}; }
  std::vector<std::string> configurableProperties() const override { return {"full", "ordered", "unique", "compact"}; }

  // In kernels: the one child of each parent (or of each run of equal parents), appended
  // beside the level above.
  std::vector<LevelKernelArray> kernelArrays() const override { return {{"crd", true}}; }
  std::optional<PositionRange> positionRange(const LevelKernelVars&, const LevelParent& parent) const override {
    return positionsOfParent(parent);
  }
  LevelAssembly assembly() const override { return LevelAssembly::AppendedBelow; }
  ir::Stmt appendCoordinate(const LevelKernelVars& vars, const ir::Expr& position, const ir::Expr& coord,
                            bool roomReserved, DType indexType) const override {
    return appendCoordinateToCrd(vars, position, coord, roomReserved, indexType);
  }
  ir::Stmt reserveAppends(const LevelKernelVars& vars, const ir::Expr& entries) const override {
    return reserveCrd(vars, entries);
  }
  int64_t finishAssembly(const AssembledLevel& in, LevelStorage& out) const override {
    out.arrays["crd"] = in.trim(in.array("crd"), in.parentCount);
    return in.parentCount;
  }

  PackOutput pack(const PackInput& in) const override {
    const PackNodes& parents = *in.parents;
    if (props_.compact && parents.size() != in.parentCount)
      throw FormatError(in.where +
                        ": a compact singleton level needs a child under every "
                        "parent position, but some are empty; use a compressed level or "
                        "singleton(compact=False)");
    PackOutput out;
    out.positionCount = in.parentCount;
    out.children = parents;  // each parent's one child sits at the parent's position
    if (parents.oneEntryEach && parents.size() == in.parentCount) {
      // Position q holds entry q: crd is the coordinate column as it stands.
      out.arrays["crd"] = *in.coords;
      return out;
    }
    out.arrays["crd"] = makeIndexArray(in, "crd", in.parentCount, [&](auto* crd) {
      std::fill(crd, crd + in.parentCount, -1);
      parents.forEach([&](const PackNode& node) {
        // Entries under one parent are sorted by this level's coordinate: first == last
        // means they all share it.
        const int64_t first = in.coords->index(node.lo), last = in.coords->index(node.hi - 1);
        if (first != last)
          throw FormatError(in.where +
                            ": a singleton level holds one coordinate per parent, "
                            "but parent position " +
                            std::to_string(node.pos) + " has coordinates " + std::to_string(first) + " and " +
                            std::to_string(last) + "; use a compressed level");
        crd[node.pos] = first;
      });
    });
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    const Buffer& crd = s.array("crd");
    for (size_t k = 0; k < parents.size(); ++k) {
      int64_t c = crd.index(parents[k]);
      if (c >= 0) out.push(parents[k], c, static_cast<int64_t>(k));
    }
  }

  // (Without unlabeled slots: with them, a position may hold no entry.)
  bool runsInParentOrder() const override { return props_.compact; }

  void childStarts(const LevelStorage&, int64_t parentCount, int64_t* out) const override {
    for (int64_t p = 0; p <= parentCount; ++p) out[p] = p;
  }

  void coordinatesAt(const LevelStorage& s, int64_t begin, int64_t end, int64_t* out) const override {
    copyIndices(s.array("crd"), begin, end, out);
  }

  void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const override {
    if (coord >= 0 && s.array("crd").index(parent) == coord) out.push_back(parent);
  }

  int64_t countPositions(const LevelStorage&, int64_t parentCount) const override { return parentCount; }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
                   ValidationScope scope) const override {
    const Buffer& crd = checkedArray(s, "crd", parentCount, where);
    if (scope != ValidationScope::Structure) checkRange(crd, smallestStoredCoordinate(), extent, "crd", where);
    return parentCount;
  }

  int64_t smallestStoredCoordinate() const override { return props_.compact ? 0 : -1; }

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<SingletonLevel>(*this); }
};

}  // namespace

LevelTypePtr singletonLevel() { return std::make_shared<SingletonLevel>(); }

}  // namespace coiter
