// A level type the compiler has never heard of, defined in this one file, computes kernels:
// the proof that level types own their code (docs/architecture.md, "Adding a level type").
//
// SegmentEndsLevel is a compressed level that stores only the end of each segment: segment p
// holds positions [ends[p-1], ends[p]) (0 for p = 0), coordinates in crd. Nothing outside
// this file knows it: the lowerer declares its arrays from kernelArrays(), iterates it
// through positionRange(), checks its crd like any coordinate array, and the call passes its
// arrays by name and validates them through validate(). The test computes SpMV, an
// elementwise product and a sum with a CSR matrix (a merge), on both engines, against
// results computed here from the dense matrices.
#include <cstdio>
#include <string>
#include <vector>

#include "driver/compiler.hpp"
#include "format/level_kernel.hpp"
#include "format/level_type.hpp"
#include "format/levels/level_checks.hpp"
#include "ir_test_support.hpp"
#include "notation/operators.hpp"
#include "storage/unpack.hpp"

using namespace coiter;
using namespace coiter_test;

namespace {

class SegmentEndsLevel final : public LevelType {
 public:
  SegmentEndsLevel()
      : LevelType({/*full*/ false, /*ordered*/ true, /*unique*/ true, /*branchless*/ false,
                   /*compact*/ true}) {}
  LevelKind kind() const override { return LevelKind::External; }
  std::string name() const override { return "segment_ends"; }
  LevelCapabilities capabilities() const override { return {false, true, false, false, false}; }
  char letter() const override { return 0; }
  std::vector<std::string> arrayNames() const override { return {"ends", "crd"}; }
  std::vector<std::string> scalarNames() const override { return {}; }
  std::vector<std::string> configurableProperties() const override { return {}; }

  // In kernels: its two arrays, and the positions of a segment.
  std::vector<LevelKernelArray> kernelArrays() const override { return {{"ends", false}, {"crd", false}}; }
  std::optional<PositionRange> positionRange(const LevelKernelVars& vars, const LevelParent& parent) const override {
    using namespace ir;
    const Type index = ir::scalar(DType::Int64);
    Var ends = vars.array("ends");
    Expr previous = binary(BinaryOp::Max, binary(BinaryOp::Sub, parent.position, intLit(1)), intLit(0));
    Expr begin = select(binary(BinaryOp::Eq, parent.position, intLit(0)), intLit(0), cast(index, load(ends, previous)));
    return PositionRange{begin, cast(index, load(ends, parent.position))};
  }

  // Tensors: arrays are given (this test does not pack), read back and validated.
  PackOutput pack(const PackInput& in) const override {
    throw FormatError(in.where + ": the test's segment_ends level is built from arrays, not packed");
  }
  void expand(const LevelStorage& s, const std::vector<int64_t>& parents, ExpandOutput& out) const override {
    const Buffer& ends = s.array("ends");
    const Buffer& crd = s.array("crd");
    for (size_t k = 0; k < parents.size(); ++k) {
      int64_t p = parents[k];
      for (int64_t q = p == 0 ? 0 : ends.index(p - 1); q < ends.index(p); ++q) out.push(q, crd.index(q), k);
    }
  }
  int64_t countPositions(const LevelStorage& s, int64_t) const override { return s.array("crd").length(); }
  int64_t validate(const LevelStorage& s, int64_t parentCount, int64_t extent, const LevelDescription& where,
                   ValidationScope scope) const override {
    const Buffer& ends = checkedArray(s, "ends", parentCount, where);
    const Buffer& crd = checkedArray(s, "crd", -1, where);
    checkNonDecreasing(ends, "ends", where);
    if (parentCount > 0 && (ends.index(0) < 0 || ends.index(parentCount - 1) != crd.length()))
      throw FormatError(where + ": ends must start at 0 or more and end at the length of crd");
    if (scope != ValidationScope::Structure) checkRange(crd, 0, extent, "crd", where);
    return crd.length();
  }

 protected:
  std::shared_ptr<LevelType> clone() const override { return std::make_shared<SegmentEndsLevel>(*this); }
};

constexpr int64_t kRows = 5, kCols = 6;

// Dense row-major matrices; A has an empty row, a full row and a row with one entry.
const std::vector<double> denseA = {1, 0, 2, 0,  0, 3,  //
                                    0, 0, 0, 0,  0, 0,  //
                                    4, 5, 6, 7,  8, 9,  //
                                    0, 0, 0, -1, 0, 0,  //
                                    0, 2, 0, 0,  0, 1};
const std::vector<double> denseB = {0, 1, 2, 0, 0, 0,  //
                                    0, 0, 3, 0, 0, 0,  //
                                    4, 0, 0, 0, 0, 5,  //
                                    0, 0, 0, 0, 0, 0,  //
                                    0, 2, 0, 6, 0, 0};

// (ends or pos, crd, vals) of a dense matrix by rows; `withLeadingZero` gives CSR's pos.
struct Rows {
  std::vector<int64_t> bounds, crd;
  std::vector<double> vals;
};
Rows byRows(const std::vector<double>& dense, bool withLeadingZero) {
  Rows r;
  if (withLeadingZero) r.bounds.push_back(0);
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      if (dense[i * kCols + j] == 0) continue;
      r.crd.push_back(j);
      r.vals.push_back(dense[i * kCols + j]);
    }
    r.bounds.push_back(static_cast<int64_t>(r.crd.size()));
  }
  return r;
}

Buffer doubles(const std::vector<double>& v) {
  Buffer b = Buffer::allocate(DType::Float64, static_cast<int64_t>(v.size()));
  for (size_t k = 0; k < v.size(); ++k) b.as<double>()[k] = v[k];
  return b;
}

LevelStorage denseRows() {
  LevelStorage rows;
  rows.scalars["size"] = kRows;
  return rows;
}

std::shared_ptr<const TensorStorage> matrixA(const Format& format) {
  Rows r = byRows(denseA, false);
  LevelStorage cols;
  cols.arrays["ends"] = Buffer::fromIndices(r.bounds, DType::Int32);
  cols.arrays["crd"] = Buffer::fromIndices(r.crd, DType::Int32);
  auto t = std::make_shared<TensorStorage>(format, std::vector<int64_t>{kRows, kCols}, DType::Float64, DType::Int32,
                                           std::vector<LevelStorage>{denseRows(), cols}, doubles(r.vals));
  t->validate();
  return t;
}

std::shared_ptr<const TensorStorage> csrB() {
  Rows r = byRows(denseB, true);
  LevelStorage cols;
  cols.arrays["pos"] = Buffer::fromIndices(r.bounds, DType::Int32);
  cols.arrays["crd"] = Buffer::fromIndices(r.crd, DType::Int32);
  auto t = std::make_shared<TensorStorage>(Format::parse("ds"), std::vector<int64_t>{kRows, kCols}, DType::Float64,
                                           DType::Int32, std::vector<LevelStorage>{denseRows(), cols}, doubles(r.vals));
  t->validate();
  return t;
}

std::shared_ptr<const TensorStorage> denseVector(const std::vector<double>& v) {
  LevelStorage level;
  level.scalars["size"] = static_cast<int64_t>(v.size());
  return std::make_shared<TensorStorage>(Format::parse("d"), std::vector<int64_t>{static_cast<int64_t>(v.size())},
                                         DType::Float64, DType::Int32, std::vector<LevelStorage>{level}, doubles(v));
}

std::vector<double> toDense(const TensorStorage& t) {
  int64_t size = 1;
  for (int64_t extent : t.shape()) size *= extent;
  std::vector<double> out(size, 0.0);
  scatterToDense(t, out.data());
  return out;
}

void checkClose(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  bool same = got.size() == want.size();
  for (size_t k = 0; same && k < got.size(); ++k) same = got[k] == want[k];
  check(same, what);
}

void testEngine(const std::string& engine) {
  using namespace notation;
  Format format({denseLevel(), std::make_shared<SegmentEndsLevel>()});
  auto A = makeTensorVar("A", format, DType::Float64);
  auto B = makeTensorVar("B", Format::parse("ds"), DType::Float64);
  auto x = makeTensorVar("x", Format::parse("d"), DType::Float64);
  auto y = makeTensorVar("y", Format::parse("d"), DType::Float64);
  auto C = makeTensorVar("C", Format::parse("ds"), DType::Float64);
  CompileOptions options;
  options.engine = engine;
  const std::vector<double> xs = {1, -2, 3, 0.5, 2, -1};

  // y(i) = sum_j A(i,j) * x(j)
  auto spmv = compileKernel(
      assignment(access(y, {"i"}), reduce(addOp(), "j", binary(mulOp(), access(A, {"i", "j"}), access(x, {"j"})))),
      options);
  std::vector<double> want(kRows, 0.0);
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kCols; ++j) want[i] += denseA[i * kCols + j] * xs[j];
  checkClose(toDense(*spmv->run({matrixA(format), denseVector(xs)}, nullptr)), want, engine + ": SpMV");

  // C(i,j) = A(i,j) * B(i,j) and C(i,j) = A(i,j) + B(i,j): an intersection and a union with CSR.
  for (const Operator* op : {&mulOp(), &addOp()}) {
    auto kernel = compileKernel(
        assignment(access(C, {"i", "j"}), binary(*op, access(A, {"i", "j"}), access(B, {"i", "j"}))), options);
    std::vector<double> expected(kRows * kCols);
    for (size_t k = 0; k < expected.size(); ++k)
      expected[k] = op == &mulOp() ? denseA[k] * denseB[k] : denseA[k] + denseB[k];
    auto result = kernel->run({matrixA(format), csrB()}, nullptr);
    checkClose(toDense(*result), expected, engine + ": A " + (op == &mulOp() ? "*" : "+") + " B");
  }

  // Arrays that lie are refused by the level's own validate(), before any kernel runs.
  Rows r = byRows(denseA, false);
  r.bounds.back() += 3;  // the last segment runs past crd
  LevelStorage cols;
  cols.arrays["ends"] = Buffer::fromIndices(r.bounds, DType::Int32);
  cols.arrays["crd"] = Buffer::fromIndices(r.crd, DType::Int32);
  TensorStorage lying(format, {kRows, kCols}, DType::Float64, DType::Int32, {denseRows(), cols}, doubles(r.vals));
  bool refused = false;
  try {
    lying.validate();
  } catch (const FormatError&) {
    refused = true;
  }
  check(refused, engine + ": a segment past the end of crd is refused");
}

}  // namespace

int main() {
  testEngine("c");
  if (llvmEngine()) testEngine("llvm");
  std::printf("%s\n", failures ? "FAILED" : "all level extension tests passed");
  return failures ? 1 : 0;
}
