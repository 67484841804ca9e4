// Hashed level: each segment is an open-addressing table of W buckets with linear probing;
// crd holds the coordinate in each bucket or -1 when empty (Kjolstad's thesis, ch. 2).
//
// Resize policy (the thesis defines none): W is one count for the whole level. A requested
// bucket count is used when every segment fits in it; otherwise, and when none is requested,
// W is the smallest power of two that keeps the fullest segment at most half full. A table
// therefore never loses an entry, and locate stops after one full wrap even in a full table.
#include <algorithm>
#include <functional>

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
  // absent). A result level inserts in the same probe, claiming the empty bucket it ends at.
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
    return probe(vars, parent, coord, code, nullptr);
  }
  bool locateMayMiss() const override { return true; }
  LevelAssembly assembly() const override { return LevelAssembly::Inserted; }

  // In a result: W is chosen before the kernel runs (it is the stride of every parent's table).
  // A parent's table takes entries up to its load limit, W/2, or W itself for the requested
  // bucket count; the next W is then what bucketCountFor chooses for one entry more than
  // the limit, so that the W a kernel ends with is the one pack() chooses for the same
  // entries whenever the first try's W was not larger. Each parent's entry count is kept
  // in a scratch array, counts[p + 1]; counts[0] counts the inserts that found their table
  // full.
  std::map<std::string, int64_t> insertScalars(int64_t entriesPerParent) const override {
    return {{"size", bucketCountFor(buckets_, buckets_ > 0 ? 0 : entriesPerParent)}};
  }
  std::map<std::string, int64_t> largerInsertScalars(const std::map<std::string, int64_t>& tried) const override {
    const int64_t w = tried.at("size");
    return {{"size", bucketCountFor(0, loadLimit(w) + 1)}};
  }
  int64_t insertArrayStart(const std::string&) const override { return -1; }  // empty buckets
  int64_t fullestSegment(const LevelStorage& s, int64_t parentCount) const override {
    const Buffer& crd = s.array("crd");
    const int64_t w = s.scalar("size");
    int64_t fullest = 0;
    dispatchDType(crd.dtype(), [&](auto* tag) {
      using I = std::remove_pointer_t<decltype(tag)>;
      if constexpr (std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>) {
        const I* c = crd.as<I>();
        for (int64_t p = 0; p < parentCount; ++p)
          fullest = std::max<int64_t>(fullest, std::count_if(c + p * w, c + (p + 1) * w, [](I x) { return x >= 0; }));
      }
    });
    return fullest;
  }
  std::vector<std::string> insertScratch() const override { return {"counts"}; }
  ir::Stmt startInserts(const LevelKernelVars& vars, const ir::Expr& parents) const override {
    return ir::allocate(vars.scratchArray("counts"), ir::binary(ir::BinaryOp::Add, parents, ir::intLit(1)), true);
  }
  ir::Expr insert(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord,
                  LevelCode& code) const override {
    using namespace ir;
    const Type index = ir::scalar(DType::Int64);
    Var counts = vars.scratchArray("counts");
    Var crd = vars.array("crd");
    Expr w = ir::ref(vars.scalar("size"));
    Expr half = binary(BinaryOp::Div, w, intLit(2));
    // (Only the first try runs with the requested count: every larger W is a power of two above it.)
    Expr limit = buckets_ > 0 ? select(binary(BinaryOp::Eq, w, intLit(buckets_)), w, half) : half;
    Expr counted = binary(BinaryOp::Add, parent, intLit(1));
    auto claim = [&](const Expr& slot, const Var& found) {
      Var entries = makeVar(code.freshName(code.name + "_entries"), index);
      Stmt take =
          block({store(crd, slot, cast(ir::scalar(crd->type.elem), coord)),
                 store(counts, counted, binary(BinaryOp::Add, ir::ref(entries), intLit(1))), assign(found, slot)});
      return block(
          {declare(entries, load(counts, counted)), ifThen(binary(BinaryOp::Lt, ir::ref(entries), limit), take)});
    };
    Expr found = probe(vars, parent, coord, code, claim);
    // Not found and not claimed: the table is at its limit (or, at the requested count, has
    // no empty bucket left).
    code.out.push_back(
        ifThen(binary(BinaryOp::Eq, found, intLit(-1)), atomicUpdate(BinaryOp::Add, counts, intLit(0), intLit(1))));
    return found;
  }
  ir::Expr insertsFull(const LevelKernelVars& vars) const override {
    return ir::binary(ir::BinaryOp::Ne, ir::load(vars.scratchArray("counts"), ir::intLit(0)), ir::intLit(0));
  }
  int64_t finishAssembly(const AssembledLevel& in, LevelStorage& out) const override {
    const int64_t w = in.scalars.at("size");
    const int64_t positions = checkedProduct(in.parentCount, w, name());
    out.scalars["size"] = w;
    out.arrays["crd"] = in.trim(in.array("crd"), positions);
    return positions;
  }

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

  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
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

 private:
  // The entries a table of W buckets takes in a result before it counts as full.
  int64_t loadLimit(int64_t w) const { return buckets_ > 0 && w == buckets_ ? w : w / 2; }

  // Linear probing from bucket coord % W, at most W probes: the position of `coord` under
  // `parent`, or -1. At an empty bucket, `atEmpty(slot, found)` may claim it (inserts).
  ir::Expr probe(const LevelKernelVars& vars, const ir::Expr& parent, const ir::Expr& coord, LevelCode& code,
                 const std::function<ir::Stmt(const ir::Expr&, const ir::Var&)>& atEmpty) const {
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
    Stmt empty = atEmpty ? block({atEmpty(slot, found), breakLoop()}) : breakLoop();
    Stmt body = block({
        declare(stored, cast(index, load(vars.array("crd"), slot))),
        ifThen(binary(BinaryOp::Eq, ir::ref(stored), coord), block({assign(found, slot), breakLoop()})),
        ifThen(binary(BinaryOp::Eq, ir::ref(stored), intLit(-1)), empty),
        assign(bucket, select(binary(BinaryOp::Eq, next, w), intLit(0), next)),
    });
    code.out.push_back(forLoop(step, intLit(0), w, body));
    return ir::ref(found);
  }
};

}  // namespace

LevelTypePtr hashedLevel() { return std::make_shared<HashedLevel>(); }

}  // namespace coiter
