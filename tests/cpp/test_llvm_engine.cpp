// The LLVM engine on hand-built IR: every kernel goes through compile -> load -> call, the
// path the on-disk cache takes. Prints each failed check and exits nonzero if any failed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "ir/ir.hpp"
#include "ir_test_support.hpp"
#include "jit/engine.hpp"
#include "util/errors.hpp"

using namespace coiter;
using namespace coiter::ir;
using namespace coiter_test;
using B = coiter::ir::BinaryOp;

namespace {

const Engine& engine() { return *llvmEngine(); }

std::unique_ptr<LoadedKernel> compileAndLoad(const Function& f) { return engine().load(engine().compile(f), f.name); }

int32_t call(const LoadedKernel& kernel, std::vector<void*>& pointers, std::vector<int64_t>& integers) {
  return kernel.entry()(pointers.data(), integers.data());
}

// ---- (a) CSR SpMV -----------------------------------------------------------------------------
Function spmvKernel(const std::string& name) {
  Var pos = ptr("pos", DType::Int32), crd = ptr("crd", DType::Int32);
  Var vals = ptr("vals", DType::Float64), x = ptr("x", DType::Float64);
  Var y = ptr("y", DType::Float64), n = var("n"), i = var("i"), p = var("p", DType::Int32);
  Var sum = var("sum", DType::Float64);
  Expr product = mul(load(vals, use(p)), load(x, load(crd, use(p))));
  Stmt inner = forLoop(p, load(pos, use(i)), load(pos, add(use(i), intLit(1))), assign(sum, add(use(sum), product)));
  Stmt rows = forLoop(i, intLit(0), use(n), block({declare(sum, f64(0.0)), inner, store(y, use(i), use(sum))}));
  return Function{name,
                  {arg(pos, 0), arg(crd, 1), arg(vals, 2), arg(x, 3), arg(y, 4), arg(n, 0)},
                  block({comment("y = A x"), rows, ret()})};
}

struct Csr {
  int rows = 60, cols = 45;
  std::vector<int32_t> pos{0}, crd;
  std::vector<double> vals, x;
  Csr() {
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        if ((i * 7 + j * 3) % 5 != 0) continue;
        crd.push_back(j);
        vals.push_back(0.5 * i - 0.25 * j);
      }
      pos.push_back(static_cast<int32_t>(crd.size()));
    }
    for (int j = 0; j < cols; ++j) x.push_back(1.0 + j * 0.125);
  }
  // Same summation order as the kernel, so results compare exactly.
  std::vector<double> reference() const {
    std::vector<double> y(rows);
    for (int i = 0; i < rows; ++i) {
      double sum = 0.0;
      for (int32_t p = pos[i]; p < pos[i + 1]; ++p) sum += vals[p] * x[crd[p]];
      y[i] = sum;
    }
    return y;
  }
};

bool runSpmv(const LoadedKernel& kernel, const Csr& a) {
  std::vector<double> y(a.rows, -1.0);
  std::vector<void*> pointers{(void*)a.pos.data(), (void*)a.crd.data(), (void*)a.vals.data(), (void*)a.x.data(),
                              y.data()};
  std::vector<int64_t> integers{a.rows};
  return call(kernel, pointers, integers) == kOk && y == a.reference();
}

void testSpmv() { check(runSpmv(*compileAndLoad(spmvKernel("spmv")), Csr()), "(a) CSR SpMV"); }

// ---- (b) two-way merge: sparse dot product ----------------------------------------------------
void testMerge() {
  Var aCrd = ptr("a_crd", DType::Int64), aVal = ptr("a_val", DType::Float64);
  Var bCrd = ptr("b_crd", DType::Int64), bVal = ptr("b_val", DType::Float64);
  Var out = ptr("out", DType::Float64), aN = var("a_n"), bN = var("b_n");
  Var matches = var("matches", DType::Int32);  // written back: exercises Int32 slots
  Var ia = var("ia"), ib = var("ib"), ca = var("ca"), cb = var("cb"), c = var("c");
  Var sum = var("sum", DType::Float64);
  Expr aHere = binary(B::Eq, use(ca), use(c)), bHere = binary(B::Eq, use(cb), use(c));
  Stmt step = block({
      declare(ca, load(aCrd, use(ia))),
      declare(cb, load(bCrd, use(ib))),
      declare(c, binary(B::Min, use(ca), use(cb))),
      ifThen(binary(B::And, aHere, bHere),
             block({assign(sum, add(use(sum), mul(load(aVal, use(ia)), load(bVal, use(ib))))),
                    assign(matches, add(use(matches), intLit(1, DType::Int32)))})),
      ifThen(aHere, assign(ia, add(use(ia), intLit(1)))),
      ifThen(bHere, assign(ib, add(use(ib), intLit(1)))),
  });
  Expr more = binary(B::And, binary(B::Lt, use(ia), use(aN)), binary(B::Lt, use(ib), use(bN)));
  Function f{"merge_dot",
             {arg(aCrd, 0), arg(aVal, 1), arg(bCrd, 2), arg(bVal, 3), arg(out, 4), arg(aN, 0), arg(bN, 1),
              arg(matches, 2, true)},
             block({declare(ia, intLit(0)), declare(ib, intLit(0)), declare(sum, f64(0.0)), whileLoop(more, step),
                    store(out, intLit(0), use(sum)), ret()})};
  auto kernel = compileAndLoad(f);

  std::vector<int64_t> ac{0, 3, 4, 9, 12, 20}, bc{1, 3, 9, 10, 20, 21, 30};
  std::vector<double> av{1, 2, 3, 4, 5, 6}, bv{10, 20, 30, 40, 50, 60, 70};
  double result = 0.0;
  std::vector<void*> pointers{ac.data(), av.data(), bc.data(), bv.data(), &result};
  std::vector<int64_t> integers{(int64_t)ac.size(), (int64_t)bc.size(), -5};
  check(call(*kernel, pointers, integers) == kOk, "(b) merge status");
  check(result == 2.0 * 20 + 4.0 * 30 + 6.0 * 50, "(b) merge dot product");
  check(integers[2] == -2, "(b) Int32 write-back sign-extends (-5 + 3 matches), got " + std::to_string(integers[2]));
}

// ---- (b2) a load guarded by the left side of `and` in a While condition -----------------------
// `while (i < n && crd[i] != 7) i++` over an array that ends just before an unreadable page:
// crd[n] must never be loaded (ir.hpp: And in a condition).
void testGuardedLoad() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* base = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(static_cast<char*>(base) + page, page, PROT_NONE) != 0) {
    check(false, "(b2) guard page");
    return;
  }
  const int64_t n = 16;
  auto* crd = reinterpret_cast<int32_t*>(static_cast<char*>(base) + page) - n;  // ends at the guard
  for (int64_t k = 0; k < n; ++k) crd[k] = static_cast<int32_t>(k * 10);        // no 7
  Var c = ptr("crd", DType::Int32), count = var("n"), i = var("i"), out = var("out");
  Expr more = binary(B::And, binary(B::Lt, use(i), use(count)),
                     binary(B::Ne, cast(scalar(DType::Int64), load(c, use(i))), intLit(7)));
  Function f{
      "guarded_scan",
      {arg(c, 0), arg(count, 0), arg(out, 1, true)},
      block({declare(i, intLit(0)), whileLoop(more, assign(i, add(use(i), intLit(1)))), assign(out, use(i)), ret()})};
  auto kernel = compileAndLoad(f);
  std::vector<void*> pointers{crd};
  std::vector<int64_t> integers{n, -1};
  check(call(*kernel, pointers, integers) == kOk && integers[1] == n, "(b2) guarded scan stops at n");
  munmap(base, 2 * page);
}

// ---- (c) Grow-based append, and allocation failures --------------------------------------------
void testGrow() {
  Var in = ptr("in", DType::Float64), out = ptr("out", DType::Float64);
  Var n = var("n"), cap = var("cap"), count = var("count"), i = var("i");
  Stmt append = block({grow(out, cap, add(use(count), intLit(1))), store(out, use(count), load(in, use(i))),
                       assign(count, add(use(count), intLit(1)))});
  Stmt loop = whileLoop(boolLit(true), block({ifThen(binary(B::Ge, use(i), use(n)), breakLoop()),
                                              ifThen(binary(B::Gt, load(in, use(i)), f64(0.0)), append),
                                              assign(i, add(use(i), intLit(1)))}));
  Function f{"append_positive",
             {arg(in, 0), arg(out, 1, true), arg(n, 0), arg(cap, 1, true), arg(count, 2, true)},
             block({declare(i, intLit(0)), loop, ret()})};
  auto kernel = compileAndLoad(f);

  std::vector<double> input, expected;
  for (int k = 0; k < 1000; ++k) input.push_back(std::sin(k * 0.37));
  for (double v : input)
    if (v > 0) expected.push_back(v);
  std::vector<void*> pointers{input.data(), std::malloc(sizeof(double))};
  std::vector<int64_t> integers{(int64_t)input.size(), 1, 0};
  check(call(*kernel, pointers, integers) == kOk, "(c) append status");
  int64_t got = integers[2], capacity = integers[1];
  auto* data = static_cast<double*>(pointers[1]);
  check(got == (int64_t)expected.size() && std::equal(expected.begin(), expected.end(), data), "(c) appended values");
  check(capacity >= got && (capacity & (capacity - 1)) == 0,
        "(c) capacity doubles from 1: " + std::to_string(capacity));
  std::free(pointers[1]);

  // An impossible size returns kOutOfMemory and hands the old buffer back to be freed.
  Var needed = var("needed");
  Function huge{"grow_huge",
                {arg(out, 0, true), arg(cap, 0, true), arg(needed, 1)},
                block({grow(out, cap, use(needed)), store(out, intLit(0), f64(1.0)), ret()})};
  auto hugeKernel = compileAndLoad(huge);
  for (int64_t size : {int64_t(1) << 60, int64_t(1) << 61}) {  // 2^63 bytes; 2^64 overflows
    void* buffer = std::malloc(8 * sizeof(double));
    std::vector<void*> ps{buffer};
    std::vector<int64_t> is{8, size};
    check(call(*hugeKernel, ps, is) == kOutOfMemory && ps[0] == buffer && is[0] == 8,
          "(c) failed Grow returns kOutOfMemory, old buffer; needed " + std::to_string(size));
    std::free(ps[0]);
  }
  Function alloc{"allocate_huge",
                 {arg(out, 0, true), arg(needed, 0)},
                 block({allocate(out, use(needed), false), store(out, intLit(0), f64(1.0)), ret()})};
  auto allocKernel = compileAndLoad(alloc);
  std::vector<void*> ps{nullptr};
  std::vector<int64_t> is{int64_t(1) << 62};
  check(call(*allocKernel, ps, is) == kOutOfMemory && ps[0] == nullptr, "(c) failed Allocate returns kOutOfMemory");
}

// ---- (d) complex arithmetic -------------------------------------------------------------------
template <typename T>
std::complex<T> smithDivide(std::complex<T> a, std::complex<T> b) {  // NumPy's algorithm
  T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (std::fabs(br) >= std::fabs(bi)) {
    if (br == 0 && bi == 0) return {ar / std::fabs(br), ai / std::fabs(br)};
    T rat = bi / br, scl = T(1) / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  T rat = br / bi, scl = T(1) / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

template <typename T>
bool close(std::complex<T> x, std::complex<T> y, double tolerance) {
  if (std::isinf(y.real()) || std::isinf(y.imag())) return x == y;
  return std::abs(x - y) <= tolerance * std::max<T>(std::abs(y), T(1e-30));
}

template <typename T>
void testComplex(DType dt, double tolerance, T big) {
  using C = std::complex<T>;
  std::string tag = "(d) " + dtypeName(dt) + " ";
  Var a = ptr("a", dt), b = ptr("b", dt), y = ptr("y", dt), q = ptr("q", dt), z = ptr("z", dt);
  Var r = ptr("r", DType::Float64), eq = ptr("eq", DType::Bool), n = var("n"), i = var("i");
  Expr ai = load(a, use(i)), bi = load(b, use(i));
  Expr same = binary(B::And, binary(B::Eq, ai, bi), logicalNot(binary(B::Ne, ai, bi)));
  Stmt body = block({
      store(y, use(i), add(load(y, use(i)), mul(ai, bi))),
      store(q, use(i), binary(B::Div, ai, bi)),
      store(z, use(i), add(neg(ai), cast(scalar(dt), load(r, use(i))))),
      store(eq, use(i), same),
  });
  Function f{"complex_" + dtypeName(dt),
             {arg(a, 0), arg(b, 1), arg(y, 2), arg(q, 3), arg(z, 4), arg(r, 5), arg(eq, 6), arg(n, 0)},
             block({forLoop(i, intLit(0), use(n), body), ret()})};
  auto kernel = compileAndLoad(f);

  std::vector<C> av{{1, 2}, {-3, 0.5}, {big, 0}, {1, 1}, {2, -2}, {0.25, 4}, {7, 7}};
  std::vector<C> bv{{3, -1}, {0.5, 0.25}, {big, big}, {0, 0}, {2, -2}, {-8, 0.5}, {1e-3, 2}};
  size_t count = av.size();
  std::vector<C> yv(count, C(1, -1)), qv(count), zv(count);
  std::vector<double> rv{1.5, -2, 0, 3, 0.5, 1e10, -0.0};
  std::unique_ptr<bool[]> eqv(new bool[count]());
  std::vector<void*> pointers{av.data(), bv.data(), yv.data(), qv.data(), zv.data(), rv.data(), eqv.get()};
  std::vector<int64_t> integers{(int64_t)count};
  check(call(*kernel, pointers, integers) == kOk, tag + "status");
  for (size_t k = 0; k < count; ++k) {
    std::string at = " at " + std::to_string(k);
    check(close(yv[k], C(1, -1) + av[k] * bv[k], tolerance), tag + "multiply-add" + at);
    check(close(qv[k], smithDivide(av[k], bv[k]), tolerance), tag + "division" + at);
    check(close(zv[k], -av[k] + C(T(rv[k]), 0), tolerance), tag + "neg, real->complex" + at);
    check(eqv[k] == (av[k] == bv[k]), tag + "eq/ne" + at);
  }
  // Smith's algorithm avoids overflowing |b|^2: big / (big + big i) = 0.5 - 0.5i.
  check(close(qv[2], C(0.5, -0.5), tolerance), tag + "division without overflow");
  check(std::isinf(qv[3].real()) && std::isinf(qv[3].imag()), tag + "division by zero is inf");
}

// ---- (e) scalar semantics ---------------------------------------------------------------------
int evalCounter = 0;

// Compiles and runs `out[0] = make(a[0], b[0])` with a, b of dtype `in` and out of dtype `out`.
template <typename R, typename T>
R evaluate(DType in, DType out, T a, T b, const std::function<Expr(Expr, Expr)>& make) {
  Var va = ptr("a", in), vb = ptr("b", in), vo = ptr("out", out);
  Function f{"eval_" + std::to_string(evalCounter++),
             {arg(va, 0), arg(vb, 1), arg(vo, 2)},
             block({store(vo, intLit(0), make(load(va, intLit(0)), load(vb, intLit(0)))), ret()})};
  auto kernel = compileAndLoad(f);
  R result{};
  std::vector<void*> pointers{&a, &b, &result};
  std::vector<int64_t> integers{0};
  check(call(*kernel, pointers, integers) == kOk, "(e) status of " + f.name);
  return result;
}

template <typename T, typename R = T>
R op(B o, DType dt, T a, T b) {
  DType out = isComparison(o) ? DType::Bool : dt;
  return evaluate<R>(dt, out, a, b, [o](Expr x, Expr y) { return binary(o, x, y); });
}

template <typename R, typename T>
R castTo(DType from, DType to, T a) {
  return evaluate<R>(from, to, a, a, [to](Expr x, Expr) { return cast(scalar(to), x); });
}

template <typename T>
T unary(DType dt, T a, Expr (*make)(Expr)) {
  return evaluate<T>(dt, dt, a, a, [make](Expr x, Expr) { return make(x); });
}

void testScalars() {
  const DType b8 = DType::Bool, u8 = DType::UInt8, u32 = DType::UInt32, u64 = DType::UInt64;
  const DType i8 = DType::Int8, i32 = DType::Int32, d = DType::Float64, f = DType::Float32;
  // bool: add is or, mul is and, min/max are and/or, false < true.
  check(op(B::Add, b8, true, true) && !op(B::Add, b8, false, false), "(e) bool add = or");
  check(!op(B::Mul, b8, true, false) && op(B::Mul, b8, true, true), "(e) bool mul = and");
  check(!op(B::Min, b8, true, false) && op(B::Max, b8, true, false), "(e) bool min/max");
  check(op(B::Lt, b8, false, true) && op(B::Or, b8, false, true), "(e) bool lt/or");
  check(!unary(b8, true, logicalNot), "(e) not");
  // unsigned: wraparound, unsigned division and comparison.
  check(op<uint8_t>(B::Add, u8, 250, 10) == 4 && op<uint8_t>(B::Sub, u8, 3, 5) == 254, "(e) uint8 add/sub wrap");
  check(op<uint8_t>(B::Mul, u8, 200, 2) == 144, "(e) uint8 mul wraps");
  check(op<uint8_t>(B::Div, u8, 255, 2) == 127 && op<uint8_t>(B::Rem, u8, 255, 7) == 3,
        "(e) uint8 div/rem are unsigned");
  check(op<uint8_t>(B::Min, u8, 200, 100) == 100 && op<uint8_t>(B::Max, u8, 200, 100) == 200,
        "(e) uint8 min/max are unsigned");
  check(op<uint32_t, bool>(B::Gt, u32, 0xFFFFFFFFu, 1u), "(e) uint32 compares unsigned");
  check(op<uint64_t>(B::Div, u64, ~uint64_t(0), 2) == (~uint64_t(0) >> 1), "(e) uint64 udiv");
  check(unary<uint8_t>(u8, 1, neg) == 255, "(e) uint8 neg wraps");
  check(unary<int8_t>(i8, -128, neg) == -128, "(e) int8 neg wraps");
  // Signed division truncates; division by zero and INT_MIN / -1 do not trap.
  check(op<int32_t>(B::Div, i32, -7, 2) == -3 && op<int32_t>(B::Rem, i32, -7, 2) == -1, "(e) int32 -7 / 2 truncates");
  check(op<int32_t>(B::Div, i32, 7, -2) == -3 && op<int32_t>(B::Rem, i32, 7, -2) == 1, "(e) int32 7 / -2 truncates");
  check(op<int32_t>(B::Div, i32, 7, 0) == 0 && op<int32_t>(B::Rem, i32, 7, 0) == 0, "(e) int32 x / 0 == x % 0 == 0");
  const int32_t minInt = std::numeric_limits<int32_t>::min();
  check(op<int32_t>(B::Div, i32, minInt, -1) == minInt && op<int32_t>(B::Rem, i32, minInt, -1) == 0,
        "(e) INT_MIN / -1");
  check(op<uint32_t>(B::Div, u32, 7, 0) == 0 && op<uint32_t>(B::Rem, u32, 7, 0) == 0, "(e) uint32 x / 0 == 0");
  check(op<int8_t>(B::Min, i8, -3, 2) == -3 && op<int8_t>(B::Max, i8, -3, 2) == 2, "(e) int8 min/max are signed");
  // Floats: NaN-propagating min/max, fmod, IEEE comparisons.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  check(std::isnan(op(B::Min, d, nan, 1.0)) && std::isnan(op(B::Min, d, 1.0, nan)), "(e) min propagates NaN");
  check(std::isnan(op(B::Max, d, nan, 1.0)) && std::isnan(op(B::Max, d, 1.0, nan)), "(e) max propagates NaN");
  check(op(B::Min, d, 1.0, 2.0) == 1.0 && op(B::Max, d, 1.0, 2.0) == 2.0, "(e) float64 min/max");
  check(std::isnan(op(B::Max, f, 1.0f, std::numeric_limits<float>::quiet_NaN())), "(e) float32 max propagates NaN");
  check(op(B::Rem, d, 7.5, 2.0) == 1.5 && op(B::Rem, d, -7.5, 2.0) == -1.5, "(e) float rem is fmod");
  check(op<double, bool>(B::Ne, d, nan, nan) && !op<double, bool>(B::Eq, d, nan, nan) &&
            !op<double, bool>(B::Lt, d, nan, 1.0),
        "(e) NaN comparisons");
  // Casts, C rules.
  check(castTo<bool>(i32, b8, int32_t(5)) && !castTo<bool>(i32, b8, int32_t(0)), "(e) int -> bool");
  check(castTo<bool>(d, b8, nan) && !castTo<bool>(d, b8, -0.0), "(e) float -> bool");
  check(castTo<int32_t>(d, i32, -2.7) == -2, "(e) float -> int truncates");
  check(castTo<uint8_t>(d, u8, 200.0) == 200, "(e) float -> uint8");
  check(castTo<double>(u32, d, 0xFFFFFFFFu) == 4294967295.0, "(e) uint32 -> float64 unsigned");
  check(castTo<double>(u64, d, ~uint64_t(0)) == 18446744073709551615.0, "(e) uint64 -> float64 unsigned");
  check(castTo<uint16_t>(i8, DType::UInt16, int8_t(-1)) == 65535, "(e) int8 -> uint16 sign-extends");
  check(castTo<int64_t>(i8, DType::Int64, int8_t(-1)) == -1, "(e) int8 -> int64");
  check(castTo<int32_t>(u8, i32, uint8_t(255)) == 255, "(e) uint8 -> int32 zero-extends");
  check(castTo<int8_t>(DType::UInt16, i8, uint16_t(65535)) == -1, "(e) uint16 -> int8 truncates");
  check(castTo<float>(d, f, 0.1) == 0.1f, "(e) float64 -> float32");
  check(castTo<double>(b8, d, true) == 1.0 && castTo<int32_t>(b8, i32, true) == 1, "(e) bool -> number");
  check(castTo<float>(DType::Int64, f, int64_t(-3)) == -3.0f, "(e) int64 -> float32");
}

// ---- (f) calloc'd workspace -------------------------------------------------------------------
void testWorkspace() {
  Var crd = ptr("crd", DType::Int64), vals = ptr("vals", DType::Float64);
  Var out = ptr("out", DType::Float64), w = ptr("w", DType::Float64);
  Var empty = ptr("empty", DType::Int32), nnz = var("nnz"), m = var("m");
  Var p = var("p"), j = var("j");
  Expr at = load(crd, use(p));
  Stmt scatter = forLoop(p, intLit(0), use(nnz), store(w, at, add(load(w, at), load(vals, use(p)))));
  Function f{"scatter_workspace",
             {arg(crd, 0), arg(vals, 1), arg(out, 2), arg(nnz, 0), arg(m, 1)},
             block({declare(w, nullptr), allocate(w, use(m), true), scatter,
                    forLoop(j, intLit(0), use(m), store(out, use(j), load(w, use(j)))), freeBuffer(w),
                    declare(empty, nullptr), allocate(empty, intLit(0), false), freeBuffer(empty), ret()})};
  auto kernel = compileAndLoad(f);
  std::vector<int64_t> crdv{5, 1, 5, 7, 1, 5};
  std::vector<double> valv{1, 2, 3, 4, 5, 6}, outv(10, -1.0);
  std::vector<void*> pointers{crdv.data(), valv.data(), outv.data()};
  std::vector<int64_t> integers{(int64_t)crdv.size(), (int64_t)outv.size()};
  check(call(*kernel, pointers, integers) == kOk, "(f) status");
  check(outv == std::vector<double>({0, 7, 0, 0, 0, 10, 0, 4, 0, 0}), "(f) calloc'd workspace sums duplicates");
}

// ---- (g) loading and errors -------------------------------------------------------------------
template <typename F>
bool throwsCompileError(F&& f, const char* what) {
  try {
    f();
  } catch (const CompileError& e) {
    std::printf("  expected CompileError (%s): %.160s\n", what, e.what());
    return true;
  }
  return false;
}

void testLoading() {
  std::vector<uint8_t> garbage(4096);
  for (size_t k = 0; k < garbage.size(); ++k) garbage[k] = static_cast<uint8_t>(k * 131 + 7);
  check(throwsCompileError([&] { engine().load(garbage, "spmv"); }, "garbage"), "(g) garbage bytes");
  std::vector<uint8_t> code = engine().compile(spmvKernel("spmv_twice"));
  std::vector<uint8_t> truncated(code.begin(), code.begin() + code.size() / 2);
  check(throwsCompileError([&] { engine().load(truncated, "spmv_twice"); }, "truncated"), "(g) truncated object");
  check(throwsCompileError([&] { engine().load(code, "no_such_kernel"); }, "symbol"), "(g) missing symbol");

  Csr a;
  auto first = engine().load(code, "spmv_twice");
  auto second = engine().load(code, "spmv_twice");
  check(first->entry() != second->entry(), "(g) two loads are separate copies");
  check(runSpmv(*first, a) && runSpmv(*second, a), "(g) both loads run");
  first.reset();
  check(runSpmv(*second, a), "(g) the second load runs after the first is unloaded");
  auto third = engine().load(code, "spmv_twice");
  check(runSpmv(*third, a), "(g) loading again after unloading");

  Var v = var("v"), undeclared = var("u");
  Function badVar{"bad_var", {}, block({assign(undeclared, intLit(1)), ret()})};
  Function noReturn{"no_return", {}, block({declare(v, intLit(1))})};
  check(throwsCompileError([&] { engine().compile(badVar); }, "undeclared variable"), "(g) undeclared variable");
  check(throwsCompileError([&] { engine().compile(noReturn); }, "no return"), "(g) body without Return");
}

// ---- (h) compile latency, source and fingerprint ----------------------------------------------
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void testLatencyAndSource() {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  Function f = spmvKernel("spmv_timed");
  std::vector<double> compileMs, loadMs, totalMs;
  for (int k = 0; k < 20; ++k) {
    auto t0 = Clock::now();
    std::vector<uint8_t> code = engine().compile(f);
    auto t1 = Clock::now();
    auto kernel = engine().load(code, f.name);
    auto t2 = Clock::now();
    compileMs.push_back(ms(t1 - t0));
    loadMs.push_back(ms(t2 - t1));
    totalMs.push_back(ms(t2 - t0));
  }
  std::printf("SpMV compile+load, 20 runs: median %.2f ms (compile %.2f ms, load %.2f ms)\n", median(totalMs),
              median(compileMs), median(loadMs));

  // A dense axpy must come out vectorized: proof that the host CPU reaches the optimizer.
  Var x = ptr("x", DType::Float64), y = ptr("y", DType::Float64), n = var("n"), i = var("i");
  Stmt loop = forLoop(i, intLit(0), use(n), store(y, use(i), add(load(y, use(i)), mul(f64(2.0), load(x, use(i))))));
  std::string text = engine().source(Function{"axpy", {arg(x, 0), arg(y, 1), arg(n, 0)}, block({loop, ret()})});
  check(text.find("define") != std::string::npos && text.find("@axpy") != std::string::npos,
        "(h) source is the kernel's LLVM IR");
  check(text.find(" x double>") != std::string::npos, "(h) axpy is vectorized");
  check(engine().fingerprint().rfind("llvm;", 0) == 0, "(h) fingerprint " + engine().fingerprint());
}

// ---- concurrency ------------------------------------------------------------------------------
void testThreads() {
  Csr a;
  std::vector<int> ok(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 5; ++k) ok[t] += runSpmv(*compileAndLoad(spmvKernel("spmv_thread_" + std::to_string(t))), a);
    });
  }
  for (auto& thread : threads) thread.join();
  check(ok[0] == 5 && ok[1] == 5, "two threads compiling and loading at once");
}

}  // namespace

int main() {
  if (!llvmEngine()) {
    std::printf("skipped: no LLVM\n");
    return 0;
  }
  testSpmv();
  testMerge();
  testGuardedLoad();
  testGrow();
  testComplex<double>(DType::Complex128, 1e-14, 1e300);
  testComplex<float>(DType::Complex64, 1e-6, 1e30f);
  testScalars();
  testWorkspace();
  testLoading();
  testLatencyAndSource();
  testThreads();
  if (failures) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all LLVM engine checks passed\n");
  return 0;
}
