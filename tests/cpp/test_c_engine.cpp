// The C engine on hand-built IR: each kernel is printed, compiled with the system cc, loaded
// and called, and its results are compared with the same computation done here in C++.
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <thread>

#include <unistd.h>

#include "codegen/c_codegen.hpp"
#include "ir/ir.hpp"
#include "ir_test_support.hpp"
#include "jit/c_engine.hpp"
#include "util/errors.hpp"

using namespace coiter;
using namespace coiter::ir;
using namespace coiter_test;
using Op = BinaryOp;
using cdouble = std::complex<double>;

namespace {

// Same value, bit for bit (so -0.0 differs from 0.0), or both NaN.
template <typename T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
  } else if constexpr (std::is_same_v<T, cdouble> || std::is_same_v<T, std::complex<float>>) {
    return same(a.real(), b.real()) && same(a.imag(), b.imag());
  } else {
    return a == b;
  }
}

// Set COITER_TEST_VERBOSE to see every kernel's C source.
std::unique_ptr<LoadedKernel> build(const Function& f) {
  if (std::getenv("COITER_TEST_VERBOSE")) std::printf("%s\n", codegen::printC(f).c_str());
  return cEngine().load(cEngine().compile(f), f.name);
}

Param in(const Var& v, int slot) { return Param{v, slot, false}; }
Param inout(const Var& v, int slot) { return Param{v, slot, true}; }

Var num(const char* name, DType t) { return makeVar(name, scalar(t)); }
// The value of a variable (ir::ref; unqualified `ref` would find std::ref by ADL).
Expr val(const Var& v) { return ir::ref(v); }
Expr i32(int64_t v) { return intLit(v, DType::Int32); }

// ---------------------------------------------------------------------------------------------
// (a) CSR SpMV, (h) its printed form, and the compile time.

Function spmvKernel() {
  Var pos = ptr("A2_pos", DType::Int32), crd = ptr("A2_crd", DType::Int32);
  Var vals = ptr("A_vals", DType::Float64), x = ptr("x_vals", DType::Float64);
  Var y = ptr("y_vals", DType::Float64), n = num("n", DType::Int32);
  Var i = num("i", DType::Int32), p = num("pA2", DType::Int32), t = num("t", DType::Float64);
  Stmt row = forLoop(p, load(pos, val(i)), load(pos, add(val(i), i32(1))),
                     assign(t, add(val(t), mul(load(vals, val(p)), load(x, load(crd, val(p)))))));
  Stmt body = block({comment("y(i) = A(i,j) * x(j)"),
                     forLoop(i, i32(0), val(n), block({declare(t, f64(0.0)), row, store(y, val(i), val(t))})), ret()});
  return Function{"spmv", {in(pos, 0), in(crd, 1), in(vals, 2), in(x, 3), in(y, 4), in(n, 0)}, body};
}

void testSpmv() {
  Function f = spmvKernel();
  std::string c = codegen::printC(f);
  std::printf("%s\n", c.c_str());
  size_t first = c.find("for (");
  check(first != std::string::npos && c.find("for (", first + 1) != std::string::npos &&
            c.find("for (", c.find("for (", first + 1) + 1) == std::string::npos,
        "spmv source has exactly two for loops");
  check(c.find("while") == std::string::npos, "spmv source has no while");
  check(c.find("t += A_vals[pA2] * x_vals[A2_crd[pA2]];") != std::string::npos,
        "spmv source uses a compound assignment without redundant parentheses");

  auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> library = cEngine().compile(f);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("compile of spmv: %.3f s (%zu bytes)\n", seconds, library.size());
  auto kernel = cEngine().load(library, f.name);

  const int rows = 300, cols = 200;
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<int32_t> pos{0}, crd;
  std::vector<double> vals, x(cols), y(rows, -1.0), expected(rows, 0.0);
  for (double& v : x) v = value(rng);
  for (int r = 0; r < rows; r++) {
    for (int j = 0; j < cols; j++) {
      if (rng() % 10 != 0) continue;
      crd.push_back(j);
      vals.push_back(value(rng));
      expected[r] += vals.back() * x[j];
    }
    pos.push_back(static_cast<int32_t>(crd.size()));
  }
  void* pointers[] = {pos.data(), crd.data(), vals.data(), x.data(), y.data()};
  int64_t integers[] = {rows};
  check(kernel->entry()(pointers, integers) == kOk, "spmv returns kOk");
  bool ok = true;
  for (int r = 0; r < rows; r++) ok = ok && same(y[r], expected[r]);
  check(ok, "spmv result equals the C++ result bit for bit");
}

// ---------------------------------------------------------------------------------------------
// (b) Two-way merge: the dot product of two sparse vectors.

void testMergeDot() {
  Var acrd = ptr("a_crd", DType::Int32), avals = ptr("a_vals", DType::Float64);
  Var bcrd = ptr("b_crd", DType::Int32), bvals = ptr("b_vals", DType::Float64);
  Var out = ptr("out", DType::Float64), na = num("na", DType::Int32), nb = num("nb", DType::Int32);
  Var pa = num("pa", DType::Int32), pb = num("pb", DType::Int32), s = num("s", DType::Float64);
  Var ia = num("ia", DType::Int32), ib = num("ib", DType::Int32), i = num("i", DType::Int32);
  Expr aHere = binary(Op::Eq, val(ia), val(i)), bHere = binary(Op::Eq, val(ib), val(i));
  Stmt loop = whileLoop(binary(Op::And, binary(Op::Lt, val(pa), val(na)), binary(Op::Lt, val(pb), val(nb))),
                        block({declare(ia, load(acrd, val(pa))), declare(ib, load(bcrd, val(pb))),
                               declare(i, binary(Op::Min, val(ia), val(ib))),
                               ifThen(binary(Op::And, aHere, bHere),
                                      assign(s, add(val(s), mul(load(avals, val(pa)), load(bvals, val(pb)))))),
                               assign(pa, add(val(pa), select(aHere, i32(1), i32(0)))),
                               assign(pb, add(val(pb), cast(scalar(DType::Int32), bHere)))}));
  Stmt body =
      block({declare(pa, i32(0)), declare(pb, i32(0)), declare(s, f64(0.0)), loop, store(out, i32(0), val(s)), ret()});
  Function f{
      "merge_dot", {in(acrd, 0), in(avals, 1), in(bcrd, 2), in(bvals, 3), in(out, 4), in(na, 0), in(nb, 1)}, body};
  std::string c = codegen::printC(f);
  check(c.find("while (pa < na && pb < nb) {") != std::string::npos, "merge prints its while");

  std::vector<int32_t> a{1, 4, 5, 9, 12, 20}, b{0, 4, 9, 10, 20, 25, 30};
  std::vector<double> av{1.5, 2.0, -3.0, 4.0, 5.0, 6.0}, bv{7.0, 0.5, -1.0, 2.0, 3.0, 9.0, 1.0};
  double expected = 2.0 * 0.5 + 4.0 * -1.0 + 6.0 * 3.0, result = 0.0;
  void* pointers[] = {a.data(), av.data(), b.data(), bv.data(), &result};
  int64_t integers[] = {static_cast<int64_t>(a.size()), static_cast<int64_t>(b.size())};
  auto kernel = build(f);
  check(kernel->entry()(pointers, integers) == kOk, "merge returns kOk");
  check(same(result, expected), "merge dot product: " + std::to_string(result));
}

// ---------------------------------------------------------------------------------------------
// (c) Grow: appending to an output of unknown size; (f) Allocate, zeroing, Free; and both
// failing for absurd sizes.

void testGrowAppend() {
  Var src = ptr("src", DType::Float64), out = ptr("out_vals", DType::Float64);
  Var n = num("n", DType::Int64), cap = num("out_capacity", DType::Int64);
  Var count = num("count", DType::Int64), i = num("i", DType::Int64);
  Stmt append = block({grow(out, cap, add(val(count), intLit(1))), store(out, val(count), load(src, val(i))),
                       assign(count, add(val(count), intLit(1)))});
  Stmt body =
      block({forLoop(i, intLit(0), val(n), ifThen(binary(Op::Gt, load(src, val(i)), f64(0.0)), append)), ret()});
  Function f{"append_positive", {in(src, 0), inout(out, 1), in(n, 0), inout(cap, 1), inout(count, 2)}, body};
  std::string c = codegen::printC(f);
  check(c.find("count++;") != std::string::npos, "append prints count++");

  std::vector<double> values, expected;
  for (int k = 0; k < 1000; k++) {
    values.push_back(std::sin(k * 0.37));
    if (values.back() > 0.0) expected.push_back(values.back());
  }
  void* pointers[] = {values.data(), std::malloc(sizeof(double))};
  int64_t integers[] = {static_cast<int64_t>(values.size()), 1, 0};
  auto kernel = build(f);
  check(kernel->entry()(pointers, integers) == kOk, "append returns kOk");
  check(integers[2] == static_cast<int64_t>(expected.size()), "append writes back the count");
  check(integers[1] >= integers[2] && integers[1] <= 2 * integers[2], "append writes back the capacity");
  auto* result = static_cast<double*>(pointers[1]);
  bool ok = integers[2] == static_cast<int64_t>(expected.size());
  for (size_t k = 0; ok && k < expected.size(); k++) ok = same(result[k], expected[k]);
  check(ok, "append result");
  std::free(pointers[1]);

  // 2^50 doubles exceed any address space: Grow fails, and the old buffer comes back.
  Function oom{
      "grow_too_much", {inout(out, 0), inout(cap, 0)}, block({grow(out, cap, intLit(int64_t{1} << 50)), ret()})};
  void* buffer = std::malloc(sizeof(double));
  void* slots[] = {buffer};
  int64_t capacity[] = {1};
  check(build(oom)->entry()(slots, capacity) == kOutOfMemory, "failed Grow returns kOutOfMemory");
  check(slots[0] == buffer && capacity[0] == 1, "failed Grow writes back the old buffer");
  std::free(slots[0]);
}

void testWorkspace() {
  Var crd = ptr("B_crd", DType::Int32), vals = ptr("B_vals", DType::Float64);
  Var out = ptr("out", DType::Float64), nnz = num("nnz", DType::Int64), m = num("m", DType::Int64);
  Var w = ptr("w", DType::Float64), scratch = ptr("scratch", DType::Int32);
  Var empty = num("empty", DType::Int64), p = num("p", DType::Int64), j = num("j", DType::Int64);
  Expr slot = load(crd, val(p));
  Stmt body = block({declare(w, nullptr), allocate(w, val(m), true),
                     forLoop(p, intLit(0), val(nnz), store(w, slot, add(load(w, slot), load(vals, val(p))))),
                     declare(scratch, nullptr), declare(empty, intLit(0)), allocate(scratch, val(empty), false),
                     freeBuffer(scratch), allocate(scratch, intLit(0), true), freeBuffer(scratch),
                     forLoop(j, intLit(0), val(m), store(out, val(j), load(w, val(j)))), freeBuffer(w), ret()});
  Function f{"scatter_gather", {in(crd, 0), in(vals, 1), in(out, 2), in(nnz, 0), in(m, 1)}, body};
  std::string c = codegen::printC(f);
  check(c.find("w[B_crd[p]] += B_vals[p];") != std::string::npos, "workspace prints +=");
  check(c.find("calloc(m > 0 ? m : 1, sizeof(double))") != std::string::npos, "workspace prints calloc");

  std::vector<int32_t> cs{3, 0, 3, 7, 3};
  std::vector<double> vs{1.0, 2.0, 4.0, 8.0, 16.0}, result(9, -1.0), expected(9, 0.0);
  for (size_t k = 0; k < cs.size(); k++) expected[cs[k]] += vs[k];
  void* pointers[] = {cs.data(), vs.data(), result.data()};
  int64_t integers[] = {static_cast<int64_t>(cs.size()), 9};
  check(build(f)->entry()(pointers, integers) == kOk, "workspace returns kOk (zero-sized allocations succeed)");
  check(result == expected, "workspace result");

  Function oom{"allocate_too_much",
               {inout(m, 0)},
               block({declare(w, nullptr), allocate(w, intLit(int64_t{1} << 50), false), assign(m, intLit(7)),
                      freeBuffer(w), ret()})};
  int64_t size[] = {3};
  check(build(oom)->entry()(nullptr, size) == kOutOfMemory && size[0] == 3,
        "failed Allocate returns kOutOfMemory and writes back parameters");
}

// ---------------------------------------------------------------------------------------------
// (d), (e): elementwise kernels out[i] = a[i] op b[i] of every interesting type.

template <typename T, typename R>
std::vector<R> elementwise(const std::string& name, DType t, DType r, const std::function<Expr(Expr, Expr)>& op,
                           std::vector<T> a, std::vector<T> b) {
  Var pa = ptr("a", t), pb = ptr("b", t), out = ptr("out", r), n = num("n", DType::Int64);
  Var i = num("i", DType::Int64);
  Function f{name,
             {in(pa, 0), in(pb, 1), in(out, 2), in(n, 0)},
             block({forLoop(i, intLit(0), val(n), store(out, val(i), op(load(pa, val(i)), load(pb, val(i))))), ret()})};
  std::vector<R> result(a.size());
  void* pointers[] = {a.data(), b.data(), result.data()};
  int64_t integers[] = {static_cast<int64_t>(a.size())};
  check(build(f)->entry()(pointers, integers) == kOk, name + " returns kOk");
  return result;
}

template <typename T, typename R = T>
void expectBinary(const std::string& name, DType t, Op op, std::vector<T> a, std::vector<T> b,
                  std::vector<R> expected) {
  DType r = isComparison(op) ? DType::Bool : t;
  auto apply = [&](Expr x, Expr y) { return binary(op, x, y); };
  auto result = elementwise<T, R>(name, t, r, apply, a, b);
  for (size_t k = 0; k < expected.size(); k++)
    check(same(result[k], expected[k]), name + " element " + std::to_string(k));
}

template <typename T>
void expectUnary(const std::string& name, DType t, const std::function<Expr(Expr)>& op, std::vector<T> a,
                 std::vector<T> expected) {
  auto result = elementwise<T, T>(name, t, t, [&](Expr x, Expr) { return op(x); }, a, a);
  for (size_t k = 0; k < expected.size(); k++)
    check(same(result[k], expected[k]), name + " element " + std::to_string(k));
}

void testComplex() {
  std::vector<cdouble> a{{1.5, -2.0}, {0.0, 1.0}, {-3.25, 0.5}, {1e300, 1e300}};
  std::vector<cdouble> b{{0.5, 4.0}, {2.0, -0.0}, {7.0, -1.0}, {1e-300, 2e300}};
  std::vector<cdouble> fma(a.size()), quotient(a.size());
  cdouble bias(0.25, -0.0);
  for (size_t k = 0; k < a.size(); k++) {
    fma[k] = a[k] * b[k] + bias;
    quotient[k] = a[k] / b[k];
  }
  Expr biasLit = litReal(scalar(DType::Complex128), 0.25, -0.0);
  auto apply = [&](Expr x, Expr y) { return add(mul(x, y), biasLit); };
  auto r = elementwise<cdouble, cdouble>("complex_fma", DType::Complex128, DType::Complex128, apply, a, b);
  for (size_t k = 0; k < a.size(); k++) check(same(r[k], fma[k]), "complex a*b+c element " + std::to_string(k));
  expectBinary<cdouble>("complex_div", DType::Complex128, Op::Div, a, b, quotient);
  // np.minimum on complex: a NaN operand propagates, otherwise lexicographic order.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expectBinary<cdouble>("complex_min", DType::Complex128, Op::Min, {{1, 2}, {1, 1}, {nan, 0}, {2, 0}, {5, 0}},
                        {{1, 1}, {1, 2}, {1, 1}, {3, nan}, {4, 9}}, {{1, 1}, {1, 1}, {nan, 0}, {3, nan}, {4, 9}});
  using cfloat = std::complex<float>;
  expectBinary<cfloat>("complex64_mul", DType::Complex64, Op::Mul, {{1.5f, -2.0f}}, {{0.5f, 4.0f}},
                       {cfloat(1.5f, -2.0f) * cfloat(0.5f, 4.0f)});
}

void testScalarSemantics() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  using b8 = uint8_t;  // C's bool is one byte (std::vector<bool> is packed and has no data())
  // bool: add is or, mul is and (NumPy).
  expectBinary<b8>("bool_add", DType::Bool, Op::Add, {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 1, 1, 1});
  expectBinary<b8>("bool_mul", DType::Bool, Op::Mul, {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 1});
  expectBinary<b8>("bool_min", DType::Bool, Op::Min, {0, 0, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 1});
  expectUnary<b8>("bool_not", DType::Bool, logicalNot, {0, 1}, {1, 0});
  // unsigned and narrow types wrap.
  expectBinary<uint8_t>("u8_add", DType::UInt8, Op::Add, {200, 255}, {100, 1}, {44, 0});
  expectBinary<uint8_t>("u8_sub", DType::UInt8, Op::Sub, {3}, {5}, {254});
  expectBinary<uint16_t>("u16_mul", DType::UInt16, Op::Mul, {65535}, {65535}, {1});
  expectBinary<int8_t>("i8_add", DType::Int8, Op::Add, {100, -100}, {100, -100}, {-56, 56});
  expectBinary<uint32_t>("u32_sub", DType::UInt32, Op::Sub, {3}, {5}, {4294967294u});
  const uint64_t big = std::numeric_limits<uint64_t>::max();
  expectBinary<uint64_t>("u64_div", DType::UInt64, Op::Div, {big, 7}, {2, 0}, {big / 2, 0});
  const uint64_t high = uint64_t{1} << 63;
  expectBinary<uint64_t, b8>("u64_lt", DType::UInt64, Op::Lt, {high, 1}, {1, high}, {0, 1});
  expectUnary<int8_t>("i8_neg", DType::Int8, neg, {-128, 5}, {-128, -5});
  expectUnary<uint32_t>("u32_neg", DType::UInt32, neg, {1}, {4294967295u});
  // integer Div/Rem truncate; zero divisors give 0; MIN / -1 wraps.
  const int32_t lo = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> dividends{-7, 7, 7, -7, 5, lo}, divisors{2, -2, 2, -2, 0, -1};
  expectBinary<int32_t>("i32_div", DType::Int32, Op::Div, dividends, divisors, {-3, -3, 3, 3, 0, lo});
  expectBinary<int32_t>("i32_rem", DType::Int32, Op::Rem, dividends, divisors, {-1, 1, 1, -1, 0, 0});
  expectBinary<int64_t>("i64_max", DType::Int64, Op::Max, {-5, 9}, {3, 2}, {3, 9});
  expectBinary<double>("f64_rem", DType::Float64, Op::Rem, {7.5, -7.5}, {2.0, 2.0}, {1.5, -1.5});
  // Float Min/Max propagate NaN like np.minimum/np.maximum; equal operands give b.
  std::vector<double> a{nan, 1.0, 1.0, 0.0, -0.0, 2.0}, b{1.0, nan, 2.0, -0.0, 0.0, 1.0};
  expectBinary<double>("f64_min", DType::Float64, Op::Min, a, b, {nan, nan, 1.0, -0.0, 0.0, 1.0});
  expectBinary<double>("f64_max", DType::Float64, Op::Max, a, b, {nan, nan, 2.0, -0.0, 0.0, 2.0});
  const float fnan = std::numeric_limits<float>::quiet_NaN();
  expectBinary<float>("f32_min", DType::Float32, Op::Min, {1.0f, fnan}, {fnan, 1.0f}, {fnan, fnan});
  expectBinary<double, b8>("f64_ne", DType::Float64, Op::Ne, {nan, 1.0}, {nan, 1.0}, {1, 0});
  // A literal divisor is printed as plain C division.
  Var q = ptr("q", DType::Int32);
  std::string c =
      codegen::printC(Function{"div4", {in(q, 0)}, block({store(q, i32(0), binary(Op::Div, i32(9), i32(4))), ret()})});
  check(c.find("9 / 4") != std::string::npos && c.find("coiter_div") == std::string::npos,
        "literal divisors need no helper");
}

// Control flow: an else-if chain, and a For whose bound the body changes (the bound is
// evaluated once).
void testControlFlow() {
  Var x = ptr("x", DType::Float64), sign = ptr("sign", DType::Int32), n = num("n", DType::Int64);
  Var i = num("i", DType::Int64);
  Expr xi = load(x, val(i));
  Stmt classify =
      ifThen(binary(Op::Lt, xi, f64(0.0)), store(sign, val(i), i32(-1)),
             ifThen(binary(Op::Eq, xi, f64(0.0)), store(sign, val(i), i32(0)), store(sign, val(i), i32(1))));
  Stmt body = block(
      {forLoop(i, intLit(0), val(n),
               block({comment("classify x[i];\ngrow the loop bound \\"), classify, assign(n, add(val(n), intLit(1)))})),
       ret()});
  Function f{"classify", {in(x, 0), in(sign, 1), inout(n, 0)}, body};
  std::string c = codegen::printC(f);
  check(c.find("} else if (x[i] == 0.0) {") != std::string::npos, "else-if chain");
  check(c.find("for (int64_t i = 0, i_end = n; i < i_end; i++) {") != std::string::npos,
        "a bound that the body changes is evaluated once");
  check(c.find("// grow the loop bound \\.\n") != std::string::npos, "multi-line comment");
  std::vector<double> values{-2.0, 0.0, 3.0, -0.0};
  std::vector<int32_t> signs(values.size(), 7);
  void* pointers[] = {values.data(), signs.data()};
  int64_t integers[] = {static_cast<int64_t>(values.size())};
  check(build(f)->entry()(pointers, integers) == kOk, "classify returns kOk");
  check(signs == std::vector<int32_t>{-1, 0, 1, 0} && integers[0] == 8, "classify results");
}

// Literals must read back exactly: -0.0, infinities, NaN, extreme and subnormal values.
void testLiterals() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> doubles{-0.0, inf, -inf, std::nan(""), 0.1, 1e300, 5e-324, 123456789.0, 1e21, -2.5};
  std::vector<int64_t> ints{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1};
  std::vector<cdouble> complexes{{-0.0, inf}, {std::nan(""), -0.0}, {0.1, -1e-310}};
  Var d = ptr("d", DType::Float64), i = ptr("i", DType::Int64), z = ptr("z", DType::Complex128);
  Var f = ptr("f", DType::Float32), u = ptr("u", DType::UInt64), s = ptr("s", DType::Int32);
  std::vector<Stmt> stmts;
  for (size_t k = 0; k < doubles.size(); k++) stmts.push_back(store(d, intLit(k), f64(doubles[k])));
  for (size_t k = 0; k < ints.size(); k++) stmts.push_back(store(i, intLit(k), intLit(ints[k])));
  for (size_t k = 0; k < complexes.size(); k++)
    stmts.push_back(store(z, intLit(k), litReal(scalar(DType::Complex128), complexes[k].real(), complexes[k].imag())));
  stmts.push_back(store(f, intLit(0), litReal(scalar(DType::Float32), 0.1)));
  stmts.push_back(store(f, intLit(1), litReal(scalar(DType::Float32), -inf)));
  stmts.push_back(store(u, intLit(0), lit(scalar(DType::UInt64), -1)));
  stmts.push_back(store(s, intLit(0), intLit(std::numeric_limits<int32_t>::min(), DType::Int32)));
  stmts.push_back(ret());
  Function fn{"literals", {in(d, 0), in(i, 1), in(z, 2), in(f, 3), in(u, 4), in(s, 5)}, block(stmts)};
  std::vector<double> dr(doubles.size());
  std::vector<int64_t> iout(ints.size());
  std::vector<cdouble> zr(complexes.size());
  float fr[2];
  uint64_t ur[1];
  int32_t sr[1];
  void* pointers[] = {dr.data(), iout.data(), zr.data(), fr, ur, sr};
  check(build(fn)->entry()(pointers, nullptr) == kOk, "literals returns kOk");
  for (size_t k = 0; k < doubles.size(); k++) check(same(dr[k], doubles[k]), "double literal " + std::to_string(k));
  for (size_t k = 0; k < ints.size(); k++) check(iout[k] == ints[k], "int64 literal " + std::to_string(k));
  for (size_t k = 0; k < complexes.size(); k++)
    check(same(zr[k], complexes[k]), "complex literal " + std::to_string(k));
  check(same(fr[0], 0.1f) && same(fr[1], -std::numeric_limits<float>::infinity()), "float literals");
  check(ur[0] == std::numeric_limits<uint64_t>::max(), "uint64 literal");
  check(sr[0] == std::numeric_limits<int32_t>::min(), "int32 literal");
}

// ---------------------------------------------------------------------------------------------
// (g) Failures: a compiler that fails, one that does not exist, bytes that are no library.

template <typename F>
std::string compileErrorOf(F&& f) {
  try {
    f();
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

// A failed compile keeps its source for inspection and names it in the error; the test checks
// that and removes it.
void checkKeptSource(const std::string& error, const std::string& what) {
  size_t at = error.find(" on /"), end = error.find(".c");
  check(!error.empty() && at != std::string::npos && end != std::string::npos,
        what + " raises CompileError naming the source: " + error);
  if (at == std::string::npos || end == std::string::npos) return;
  std::filesystem::path source = error.substr(at + 4, end + 2 - at - 4);
  check(std::filesystem::exists(source), what + " keeps the source " + source.string());
  std::filesystem::remove_all(source.parent_path());
}

void testFailures() {
  Function f = spmvKernel();
  setenv("COITER_CC", "false", 1);
  checkKeptSource(compileErrorOf([&] { cEngine().compile(f); }), "a failing compiler");
  setenv("COITER_CC", "/nonexistent/coiter-cc", 1);
  checkKeptSource(compileErrorOf([&] { cEngine().compile(f); }), "a missing compiler");

  // A compiler without OpenMP (like clang without libomp) still compiles kernels.
  std::filesystem::path script = compilerWithoutOpenmp("coiter-test-no-openmp-");
  setenv("COITER_CC", script.c_str(), 1);
  check(compileErrorOf([&] { build(f); }).empty(), "a compiler rejecting -fopenmp still works");
  std::filesystem::remove_all(script.parent_path());
  unsetenv("COITER_CC");

  check(!compileErrorOf([&] { cEngine().load({1, 2, 3, 4, 5}, "spmv"); }).empty(), "garbage bytes raise CompileError");
  check(!compileErrorOf([&] { cEngine().load({}, "spmv"); }).empty(), "no bytes raise CompileError");
  std::vector<uint8_t> library = cEngine().compile(f);
  check(!compileErrorOf([&] { cEngine().load(library, "not_there"); }).empty(), "a missing symbol raises CompileError");

  std::string fingerprint = cEngine().fingerprint();
  std::printf("fingerprint: %s\n", fingerprint.c_str());
  check(fingerprint.rfind("c;", 0) == 0 && fingerprint == cEngine().fingerprint(), "fingerprint is stable");
}

// Two threads compile and load at the same time.
void testConcurrentCompiles() {
  int ok[2] = {0, 0};
  auto work = [&](int k) {
    for (int round = 0; round < 2; round++) {
      Function f = spmvKernel();
      f.name = "spmv_thread" + std::to_string(k);
      auto kernel = build(f);
      int32_t pos[] = {0, 1}, crd[] = {0};
      double vals[] = {2.0}, x[] = {3.0 + k}, y[] = {0.0};
      void* pointers[] = {pos, crd, vals, x, y};
      int64_t integers[] = {1};
      ok[k] += kernel->entry()(pointers, integers) == kOk && y[0] == 2.0 * (3.0 + k);
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  check(ok[0] == 2 && ok[1] == 2, "concurrent compiles");
}

}  // namespace

int main() {
  std::pair<const char*, void (*)()> tests[] = {{"spmv", testSpmv},           {"merge", testMergeDot},
                                                {"grow", testGrowAppend},     {"workspace", testWorkspace},
                                                {"complex", testComplex},     {"scalars", testScalarSemantics},
                                                {"control", testControlFlow}, {"literals", testLiterals},
                                                {"failures", testFailures},   {"threads", testConcurrentCompiles}};
  for (auto& [name, test] : tests) {
    // A test that throws is one failure; the others still run.
    try {
      test();
    } catch (const std::exception& e) {
      check(false, std::string(name) + " threw: " + e.what());
    }
  }
  std::printf("%s\n", failures ? "FAILED" : "all C engine tests passed");
  return failures ? 1 : 0;
}
