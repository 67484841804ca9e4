// Hashed level: each segment is an open-addressing table of W buckets with linear probing;
// crd holds the coordinate in each bucket or -1 when empty (Kjolstad's thesis, ch. 2).
//
// Resize policy (the thesis defines none): W is one count for the whole level. A requested
// bucket count is used when every segment fits in it; otherwise, and when none is requested,
// W is the smallest power of two that keeps the fullest segment at most half full. A table
// therefore never loses an entry, and locate stops after one full wrap even in a full table.
#include <algorithm>

#include "format/level_kernel.hpp"
#include "format/levels/level_checks.hpp"

namespace coiter {
namespace {

int64_t bucketCountFor(int64_t requested, int64_t fullestSegment) {
  if (requested > 0 && fullestSegment <= requested) return requested;
  int64_t w = 4;
  while (w < 2 * fullestSegment) w *= 2;
  return w;
}

class HashedLevel final : public LevelType {
 public:
  HashedLevel() : LevelType({false, false, true, false, false}) {}
  LevelKind kind() const override { return LevelKind::Hashed; }
  std::string name() const override { return "hashed"; }
  LevelCapabilities capabilities() const override { return {false, true, true, false, true}; }
  char letter() const override { return (props_.unique && !props_.full && buckets_ == 0) ? 'h' : 0; }
  std::vector<std::string> arrayNames() const override { return {"crd"}; }
  std::vector<std::string> scalarNames() const override { return {"size"}; }
  std::vector<std::string> configurableProperties() const override { return {"full", "unique"}; }

  // In kernels: segment p is the W buckets [p*W, (p+1)*W), empty ones holding -1; a
  // coordinate is located by linear probing from bucket coord % W (at most W probes; -1 when
  // absent). Workspaces insert into hashed levels; results do not yet.
  std::vector<LevelKernelArray> kernelArrays() const override { return {{"crd", false}}; }
  std::vector<LevelKernelScalar> kernelScalars() const override { return {{"size", "buckets"}}; }
  std::optional<PositionRange> positionRange(const LevelKernelVars& vars, const LevelParent& parent) const override {
    using namespace ir;
    Expr w = ir::ref(vars.scalar("size"));
    return PositionRange{binary(BinaryOp::Mul, parent.position, w),
                         binary(BinaryOp::Mul, binary(BinaryOp::Add, parent.position, intLit(1)), w)};
  }
  ir::Expr locate(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord,
                  LevelCode& code) const override {
    using namespace ir;
    const Type index = ir::scalar(DType::Int64);
    Expr w = ir::ref(vars.scalar("size"));
    Var base = makeVar(code.freshName(code.name + "_base"), index);
    Var bucket = makeVar(code.freshName(code.name + "_bucket"), index);
    Var step = makeVar(code.freshName(code.name + "_probe"), index);
    Var found = makeVar(code.freshName(code.name), index);
    Var stored = makeVar(code.freshName(code.name + "_crd"), index);
    Expr slot = binary(BinaryOp::Add, ir::ref(base), ir::ref(bucket));
    Expr next = binary(BinaryOp::Add, ir::ref(bucket), intLit(1));
    code.out.push_back(declare(base, binary(BinaryOp::Mul, parent, w)));
    code.out.push_back(declare(bucket, binary(BinaryOp::Rem, coord, w)));
    code.out.push_back(declare(found, intLit(-1)));
    Stmt probe = block({
        declare(stored, cast(index, load(vars.array("crd"), slot))),
        ifThen(binary(BinaryOp::Eq, ir::ref(stored), coord), block({assign(found, slot), breakLoop()})),
        ifThen(binary(BinaryOp::Eq, ir::ref(stored), intLit(-1)), breakLoop()),
        assign(bucket, select(binary(BinaryOp::Eq, next, w), intLit(0), next)),
    });
    code.out.push_back(forLoop(step, intLit(0), w, probe));
    return ir::ref(found);
  }
  bool locateMayMiss() const override { return true; }
  LevelAssembly assembly() const override { return LevelAssembly::Inserted; }

  PackOutput pack(const PackInput& in) const override {
    // Group first, to know the fullest segment before choosing W.
    const PackNodes& parents = *in.parents;
    std::vector<std::vector<PackNode>> groups(parents.size());
    int64_t fullest = 0;
    for (int64_t k = 0; k < parents.size(); ++k) {
      forEachGroup(in, parents[k], props_.unique, [&](int64_t lo, int64_t hi, int64_t c) {
        groups[k].push_back({c, lo, hi});  // pos holds the coordinate until placed
      });
      fullest = std::max<int64_t>(fullest, static_cast<int64_t>(groups[k].size()));
    }
    const int64_t w = bucketCountFor(buckets_, fullest);
    PackOutput out;
    out.scalars["size"] = w;
    out.positionCount = checkedProduct(in.parentCount, w, in.where);
    out.arrays["crd"] = makeIndexArray(in, "crd", out.positionCount, [&](auto* crd) {
      std::fill(crd, crd + out.positionCount, -1);
      std::vector<PackNode>& children = out.children.list;
      for (int64_t k = 0; k < parents.size(); ++k) {
        const int64_t base = parents[k].pos * w;
        const size_t first = children.size();
        for (const PackNode& g : groups[k]) {
          int64_t b = g.pos % w;
          while (crd[base + b] != -1) b = (b + 1) % w;  // fits: the segment has <= w groups
          crd[base + b] = g.pos;
          children.push_back({base + b, g.lo, g.hi});
        }
        std::sort(children.begin() + first, children.end(),
                  [](const PackNode& a, const PackNode& b) { return a.pos < b.pos; });
      }
    });
    return out;
  }

  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    const Buffer& crd = s.array("crd");
    int64_t w = s.scalar("size");
    for (size_t k = 0; k < parents.size(); ++k)
      for (int64_t q = parents[k] * w; q < (parents[k] + 1) * w; ++q)
        if (crd.index(q) >= 0) out.push(q, crd.index(q), static_cast<int64_t>(k));
  }

  // locate: probe from bucket coord % W until the coordinate or an empty bucket, at most W steps.
  void find(const LevelStorage& s, int64_t parent, int64_t coord, std::vector<int64_t>& out) const override {
    if (coord < 0) return;
    const Buffer& crd = s.array("crd");
    int64_t w = s.scalar("size");
    int64_t b = coord % w;
    for (int64_t step = 0; step < w; ++step, b = (b + 1) % w) {
      int64_t c = crd.index(parent * w + b);
      if (c == coord) out.push_back(parent * w + b);
      if (c == -1 || (c == coord && props_.unique)) return;
    }
  }

  int64_t countPositions(const LevelStorage& s, int64_t parentCount) const override {
    return checkedProduct(parentCount, checkedScalar(s, "size", name()), name());
  }

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const std::string& where,
                   ValidationScope scope) const override {
    int64_t w = checkedScalar(s, "size", where);
    if (w <= 0) throw FormatError(where + ": hashed bucket count must be positive");
    int64_t n = checkedProduct(parentCount, w, where);
    const Buffer& crd = checkedArray(s, "crd", n, where);
    if (scope == ValidationScope::Structure) return n;
    checkRange(crd, smallestStoredCoordinate(), extent, "crd", where);
    if (scope == ValidationScope::Bounds) return n;
    // Every stored coordinate must be reachable by probing from its home bucket.
    for (int64_t p = 0; p < parentCount; ++p)
      for (int64_t b = 0; b < w; ++b) {
        int64_t c = crd.index(p * w + b);
        if (c < 0) continue;
        for (int64_t h = c % w; h != b; h = (h + 1) % w)
          if (crd.index(p * w + h) == -1)
            throw FormatError(where + ": coordinate " + std::to_string(c) + " in bucket " + std::to_string(b) +
                              " of segment " + std::to_string(p) + " cannot be found by linear probing");
      }
    return n;
  }

  int64_t smallestStoredCoordinate() const override { return -1; }  // empty buckets

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<HashedLevel>(*this); }
};

}  // namespace

LevelTypePtr hashedLevel() { return std::make_shared<HashedLevel>(); }

}  // namespace coiter
