// Compressed level: segment of parent p is crd[pos[p]:pos[p+1]] (Kjolstad's thesis, ch. 2).
// Non-unique compressed levels (the top of COO) give every group of the branchless chain
// below them its own position.
#include <algorithm>
#include <limits>

#include "format/level_kernel.hpp"
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

class CompressedLevel final : public LevelType {
 public:
  CompressedLevel() : LevelType({false, true, true, false, true}) {}
  LevelKind kind() const override { return LevelKind::Compressed; }
  std::string name() const override { return "compressed"; }
  LevelCapabilities capabilities() const override { return {false, true, false, true, false}; }
  char letter() const override {
    if (!props_.ordered || props_.full) return 0;
    return props_.unique ? 's' : 'u';
  }
  std::vector<std::string> arrayNames() const override { return {"pos", "crd"}; }
  std::vector<std::string> scalarNames() const override { return {}; }
  std::vector<std::string> configurableProperties() const override { return {"full", "ordered", "unique"}; }

  // In kernels: segment [pos[p], pos[p+1]) of crd; a result level appends coordinates in
  // order and bounds each parent's segment.
  std::vector<LevelKernelArray> kernelArrays() const override { return {{"pos", true}, {"crd", true}}; }
  bool storesSegments() const override { return true; }
  std::optional<PositionRange> positionRange(const LevelKernelVars& vars, const LevelParent& parent) const override {
    using namespace ir;
    const Type index = ir::scalar(DType::Int64);
    Var pos = vars.array("pos");
    return PositionRange{cast(index, load(pos, parent.position)),
                         cast(index, load(pos, binary(BinaryOp::Add, parent.position, intLit(1))))};
  }
  LevelAssembly assembly() const override { return LevelAssembly::Appended; }
  ir::Stmt appendCoordinate(const LevelKernelVars& vars, const ir::Expr& position, const ir::Expr& coord,
                            bool roomReserved, DType indexType) const override {
    return appendCoordinateToCrd(vars, position, coord, roomReserved, indexType);
  }
  ir::Stmt reserveAppends(const LevelKernelVars& vars, const ir::Expr& entries) const override {
    return reserveCrd(vars, entries);
  }
  ir::Stmt endSegment(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& end,
                      DType indexType) const override {
    using namespace ir;
    Var pos = vars.array("pos");
    return block({grow(pos, vars.capacity("pos"), binary(BinaryOp::Add, parent, intLit(2))),
                  store(pos, binary(BinaryOp::Add, parent, intLit(1)), cast(ir::scalar(indexType), end))});
  }
  ir::Stmt countIntoSegment(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& added,
                            DType indexType) const override {
    using namespace ir;
    Var pos = vars.array("pos");
    Expr slot = binary(BinaryOp::Add, parent, intLit(1));
    return store(pos, slot, binary(BinaryOp::Add, load(pos, slot), cast(ir::scalar(indexType), added)));
  }
  ir::Stmt openSegments(const LevelKernelVars& vars, const ir::Expr& first, const ir::Expr& parents,
                        LevelCode& code) const override {
    using namespace ir;
    // pos[p + 1] holds the count of parent p; pos[0] stays 0 from the allocation.
    Var pos = vars.array("pos");
    Expr begin = binary(BinaryOp::Add, first, intLit(1));
    Expr end = binary(BinaryOp::Add, begin, parents);
    Var slot = makeVar(code.freshName(code.name + "_segment"), ir::scalar(DType::Int64));
    return block({grow(pos, vars.capacity("pos"), end),
                  forLoop(slot, begin, end, store(pos, ir::ref(slot), zeroOf(pos->type.elem)))});
  }
  int64_t finishAssembly(const AssembledLevel& in, LevelStorage& out) const override {
    // append_finalize: each parent's count becomes the end of its segment (a prefix sum),
    // unless the kernel wrote the ends itself.
    Buffer& pos = in.array("pos");
    const int64_t parents = in.parentCount;
    int64_t positions = 0;
    dispatchDType(pos.dtype(), [&](auto* tag) {
      using I = std::remove_pointer_t<decltype(tag)>;
      if constexpr (std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>) {
        I* p = pos.as<I>();
        if (in.countsPerParent) {
          for (int64_t q = 0; q < parents; ++q) p[q + 1] += p[q];
        }
        positions = static_cast<int64_t>(p[parents]);
      }
    });
    out.arrays["pos"] = in.trim(pos, parents + 1);
    out.arrays["crd"] = in.trim(in.array("crd"), positions);
    return positions;
  }

  PackOutput pack(const PackInput& in) const override {
    PackOutput out;
    // append_edges: each parent's group count, then append_finalize: a prefix sum.
    int64_t groups = 0;
    int64_t nextEntry = 0;  // parents hold the entries in order when each starts here
    bool entriesInOrder = true;
    // pos has one entry more than there are parents, which a dense level over an extent of
    // 2**63 - 1 leaves no room for.
    if (in.parentCount == std::numeric_limits<int64_t>::max())
      throw ShapeError(in.where + ": array 'pos' would need 2**63 elements");
    Buffer pos = makeIndexArray(in, "pos", in.parentCount + 1, [&](auto* p) {
      in.parents->forEach([&](const PackNode& node) {
        int64_t count = 0;
        forEachGroup(in, node, props_.unique, [&](int64_t, int64_t, int64_t) { ++count; });
        p[node.pos + 1] = count;
        groups += count;
        entriesInOrder = entriesInOrder && node.lo == nextEntry;
        nextEntry = node.hi;
      });
      for (int64_t q = 0; q < in.parentCount; ++q) p[q + 1] += p[q];
    });
    out.arrays["pos"] = pos;
    out.positionCount = groups;
    if (entriesInOrder && groups == in.coords->length()) {
      // Every group is one entry, in entry order: crd is the coordinate column as it stands.
      out.arrays["crd"] = *in.coords;
      out.children = PackNodes::entries(groups);
      return out;
    }
    out.children.list.reserve(groups);
    out.arrays["crd"] = makeIndexArray(in, "crd", groups, [&](auto* crd) {
      in.parents->forEach([&](const PackNode& node) {
        forEachGroup(in, node, props_.unique, [&](int64_t lo, int64_t hi, int64_t c) {
          const int64_t q = static_cast<int64_t>(out.children.list.size());
          out.children.list.push_back({q, lo, hi});
          crd[q] = c;
        });
      });
    });
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    const Buffer& pos = s.array("pos");
    const Buffer& crd = s.array("crd");
    for (size_t k = 0; k < parents.size(); ++k)
      for (int64_t q = pos.index(parents[k]); q < pos.index(parents[k] + 1); ++q)
        out.push(q, crd.index(q), static_cast<int64_t>(k));
  }

  bool runsInParentOrder() const override { return true; }

  void childStarts(const LevelStorage& s, int64_t parentCount, int64_t* out) const override {
    copyIndices(s.array("pos"), 0, parentCount + 1, out);
  }

  void coordinatesAt(const LevelStorage& s, int64_t begin, int64_t end, int64_t* out) const override {
    copyIndices(s.array("crd"), begin, end, out);
  }

  void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const override {
    const Buffer& pos = s.array("pos");
    const Buffer& crd = s.array("crd");
    int64_t lo = pos.index(parent), hi = pos.index(parent + 1);
    if (props_.ordered && props_.unique) {  // binary search
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (crd.index(mid) < coord)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo < pos.index(parent + 1) && crd.index(lo) == coord) out.push_back(lo);
      return;
    }
    for (int64_t q = lo; q < hi; ++q)
      if (crd.index(q) == coord) out.push_back(q);
  }

  int64_t countPositions(const LevelStorage& s, int64_t) const override {
    return checkedArray(s, "crd", -1, name()).length();
  }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
                   ValidationScope scope) const override {
    const Buffer& pos = checkedArray(s, "pos", parentCount + 1, where);
    const Buffer& crd = checkedArray(s, "crd", -1, where);
    if (pos.index(0) != 0) throw FormatError(where + ": pos[0] must be 0");
    checkNonDecreasing(pos, "pos", where);
    if (pos.index(parentCount) != crd.length())
      throw FormatError(where + ": pos[-1] = " + std::to_string(pos.index(parentCount)) + " but crd has " +
                        std::to_string(crd.length()) + " entries");
    if (scope == ValidationScope::Structure) return crd.length();
    checkRange(crd, 0, extent, "crd", where);
    if (scope == ValidationScope::Full) checkSegments(pos, crd, parentCount, where);
    return crd.length();
  }

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<CompressedLevel>(*this); }

 private:
  // Declared invariants are checked, because the compiler relies on them (merges need order).
  void checkSegments(const Buffer& pos, const Buffer& crd, int64_t parentCount, const LevelDescription& where) const {
    if (!props_.ordered && !props_.unique) return;
    if (props_.ordered) {
      UnsortedEntry bad = findUnsortedSegmentEntry(pos, crd, parentCount, props_.unique);
      if (bad.segment >= 0)
        throw FormatError(where + ": segment " + std::to_string(bad.segment) + " is not " +
                          (props_.unique ? "strictly increasing" : "sorted") + " at crd[" + std::to_string(bad.entry) +
                          "]");
      return;
    }
    std::vector<int64_t> segment;  // unordered but unique: sort a copy of each segment
    for (int64_t p = 0; p < parentCount; ++p) {
      segment.clear();
      for (int64_t q = pos.index(p); q < pos.index(p + 1); ++q) segment.push_back(crd.index(q));
      std::sort(segment.begin(), segment.end());
      if (std::adjacent_find(segment.begin(), segment.end()) != segment.end())
        throw FormatError(where + ": segment " + std::to_string(p) + " repeats a coordinate in a unique level");
    }
  }
};

}  // namespace

LevelTypePtr compressedLevel() { return std::make_shared<CompressedLevel>(); }

}  // namespace coiter
