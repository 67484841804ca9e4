// Parallel, vectorized and atomic IR on both engines (C, and LLVM when built in), and the
// parallel runtime underneath: each kernel is built by hand, run with 1, 2 and 7 threads, and
// its results are compared with the same computation done here in C++.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "ir/ir.hpp"
#include "ir_test_support.hpp"
#include "jit/engine.hpp"
#include "runtime/parallel_runtime.hpp"
#include "util/errors.hpp"

using namespace coiter;
using namespace coiter::ir;
using namespace coiter_test;
using Op = BinaryOp;
using cdouble = std::complex<double>;

namespace {

LoopSchedule parallel(bool dynamic = false, int64_t chunk = 0) {
  return LoopSchedule{LoopKind::Parallel, dynamic, chunk, 0};
}

struct EngineCase {
  std::string name;
  const Engine* engine;
};
std::vector<EngineCase> engines() {
  std::vector<EngineCase> list{{"c", &cEngine()}};
  if (llvmEngine()) list.push_back({"llvm", llvmEngine()});
  return list;
}

// Set COITER_TEST_VERBOSE to see every kernel's source.
std::unique_ptr<LoadedKernel> build(const Engine& engine, const Function& f) {
  if (std::getenv("COITER_TEST_VERBOSE")) std::printf("%s\n", engine.source(f).c_str());
  return engine.load(engine.compile(f), f.name);
}

int32_t run(const LoadedKernel& kernel, std::vector<void*> pointers, std::vector<int64_t> integers) {
  return kernel.entry()(pointers.data(), integers.data());
}

const int kThreadCounts[] = {1, 2, 7};

// ---- the runtime on its own -------------------------------------------------------------------
struct Call {
  int64_t begin, end, thread;
};

std::vector<Call> recordChunks(int64_t begin, int64_t end, int64_t chunk, bool dynamic) {
  std::vector<Call> calls;
  std::mutex mutex;
  auto body = [](void* closure, int64_t b, int64_t e, int64_t t) {
    auto* state = static_cast<std::pair<std::vector<Call>*, std::mutex*>*>(closure);
    std::lock_guard<std::mutex> lock(*state->second);
    state->first->push_back({b, e, t});
  };
  std::pair<std::vector<Call>*, std::mutex*> state{&calls, &mutex};
  coiter_rt_parallel_for(body, &state, begin, end, chunk, dynamic ? 1 : 0);
  std::sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.begin < b.begin; });
  return calls;
}

void testRuntime() {
  for (int threads : kThreadCounts) {
    setNumThreads(threads);
    check(getNumThreads() == threads && coiter_rt_num_threads() == threads, "thread count setting");
    for (bool dynamic : {false, true}) {
      for (int64_t chunk : {0, 7}) {
        std::string tag = "runtime threads=" + std::to_string(threads) + (dynamic ? " dynamic" : " static") +
                          " chunk=" + std::to_string(chunk);
        check(recordChunks(5, 5, chunk, dynamic).empty() && recordChunks(5, 2, chunk, dynamic).empty(),
              tag + ": an empty range makes no call");
        std::vector<Call> one = recordChunks(-3, -2, chunk, dynamic);
        check(one.size() == 1 && one[0].begin == -3 && one[0].end == -2 && one[0].thread == 0,
              tag + ": one iteration is one call on thread 0");
        std::vector<Call> calls = recordChunks(10, 1010, chunk, dynamic);
        bool tiles = !calls.empty() && calls.front().begin == 10 && calls.back().end == 1010;
        for (size_t k = 0; k + 1 < calls.size(); ++k) tiles = tiles && calls[k].end == calls[k + 1].begin;
        check(tiles, tag + ": the chunks tile the range");
        bool threadsOk = true, sizesOk = true;
        // Expected chunk sizes: 7; or ceil(1000 / (16 threads)) for dynamic with chunk 0; or
        // one block per thread (143 or 142 with 7 threads) for static with chunk 0.
        int64_t size = chunk > 0 ? chunk : dynamic ? (999 / (16 * threads)) + 1 : 1000 / threads;
        if (threads == 1) size = 1000;
        for (size_t k = 0; k < calls.size(); ++k) {
          const Call& c = calls[k];
          threadsOk = threadsOk && c.thread >= 0 && c.thread < threads;
          bool last = k + 1 == calls.size();
          int64_t length = c.end - c.begin;
          bool evenBlock = chunk == 0 && !dynamic && (length == size || length == size + 1);
          sizesOk = sizesOk && (length == size || evenBlock || (last && length < size && length > 0));
          // Static chunks are dealt round robin (the team has all threads asked for here).
          if (!dynamic && threads > 1) threadsOk = threadsOk && c.thread == int64_t(k) % threads;
        }
        check(threadsOk, tag + ": thread numbers");
        check(sizesOk, tag + ": chunk sizes");
      }
    }
  }
  bool threw = false;
  try {
    setNumThreads(0);
  } catch (const ArgumentError&) {
    threw = true;
  }
  check(threw && getNumThreads() == 7, "setNumThreads(0) throws ArgumentError and changes nothing");
}

// ---- a parallel loop filling arrays -----------------------------------------------------------
// out[i] = 3 * i + 1 and hits[i] += 1 (non-atomically: each iteration runs exactly once).
Function fillKernel(const std::string& name, DType index, LoopSchedule schedule) {
  Var out = ptr("out", DType::Int64), hits = ptr("hits", DType::Int32), n = var("n", index);
  Var i = var("i", index);
  Expr wide = cast(scalar(DType::Int64), use(i));
  Stmt body = block({store(out, use(i), add(mul(intLit(3), wide), intLit(1))),
                     store(hits, use(i), add(load(hits, use(i)), intLit(1, DType::Int32)))});
  return Function{name,
                  {arg(out, 0), arg(hits, 1), arg(n, 0)},
                  block({forLoop(i, intLit(0, index), use(n), body, schedule), ret()})};
}

void testFill(const EngineCase& e) {
  int variant = 0;
  for (bool dynamic : {false, true}) {
    for (int64_t chunk : {0, 7}) {
      DType index = variant++ % 2 ? DType::Int32 : DType::Int64;
      Function f = fillKernel("fill_" + e.name + std::to_string(variant), index, parallel(dynamic, chunk));
      auto kernel = build(*e.engine, f);
      for (int threads : kThreadCounts) {
        setNumThreads(threads);
        for (int64_t n : {0, 1, 1000}) {
          std::string tag = e.name + " fill " + (dynamic ? "dynamic" : "static") + " chunk=" + std::to_string(chunk) +
                            " n=" + std::to_string(n) + " threads=" + std::to_string(threads);
          std::vector<int64_t> out(n + 1, -5);
          std::vector<int32_t> hits(n + 1, 0);
          check(run(*kernel, {out.data(), hits.data()}, {n}) == kOk, tag + ": status");
          bool ok = out[n] == -5 && hits[n] == 0;  // nothing written past the range
          for (int64_t k = 0; k < n; ++k) ok = ok && out[k] == 3 * k + 1 && hits[k] == 1;
          check(ok, tag + ": every element written exactly once");
        }
      }
    }
  }
}

// ---- captured variables of several types -----------------------------------------------------
// Locals declared before the loop and parameters travel into the (outlined) body by value.
void testCaptures(const EngineCase& e) {
  Var idx = ptr("idx", DType::Int32), x = ptr("x", DType::Float64), xf = ptr("xf", DType::Float32);
  Var out = ptr("out", DType::Float64), zout = ptr("zout", DType::Complex128);
  Var flags = ptr("flags", DType::Bool), n = var("n", DType::Int32), shift = var("shift");
  Var scale = var("scale", DType::Float64), third = var("third", DType::Float32);
  Var z = var("z", DType::Complex128), on = var("on", DType::Bool), half = var("half", DType::Int32);
  Var i = var("i", DType::Int32), t = var("t", DType::Float64);
  Type c128 = scalar(DType::Complex128);
  Expr xi = load(x, cast(scalar(DType::Int64), load(idx, use(i))));
  Stmt body = block({
      declare(t, add(mul(use(scale), xi), cast(scalar(DType::Float64), mul(use(third), load(xf, use(i)))))),
      store(out, use(i),
            select(binary(Op::And, use(on), binary(Op::Lt, use(i), use(half))), use(t),
                   add(use(t), cast(scalar(DType::Float64), use(shift))))),
      store(zout, use(i), mul(use(z), cast(c128, load(x, use(i))))),
      store(flags, use(i), binary(Op::Ge, use(i), use(half))),
  });
  Function f{"captures_" + e.name,
             {arg(idx, 0), arg(x, 1), arg(xf, 2), arg(out, 3), arg(zout, 4), arg(flags, 5), arg(n, 0), arg(shift, 1)},
             block({declare(scale, f64(2.5)), declare(third, litReal(scalar(DType::Float32), 0.5)),
                    declare(z, litReal(c128, 1.5, -2.0)), declare(on, boolLit(true)),
                    declare(half, binary(Op::Div, use(n), intLit(2, DType::Int32))),
                    forLoop(i, intLit(0, DType::Int32), use(n), body, parallel(true, 3)), ret()})};
  auto kernel = build(*e.engine, f);
  const int count = 101;
  std::vector<int32_t> idxv(count);
  std::vector<double> xv(count), outv(count);
  std::vector<float> xfv(count);
  std::vector<cdouble> zv(count);
  std::unique_ptr<bool[]> flagv(new bool[count]());
  for (int k = 0; k < count; ++k) {
    idxv[k] = (k * 37) % count;
    xv[k] = 0.25 * k - 3;
    xfv[k] = 2.0f * k;
  }
  for (int threads : kThreadCounts) {
    setNumThreads(threads);
    std::string tag = e.name + " captures threads=" + std::to_string(threads);
    check(run(*kernel, {idxv.data(), xv.data(), xfv.data(), outv.data(), zv.data(), flagv.get()}, {count, -40}) == kOk,
          tag + ": status");
    bool ok = true;
    for (int k = 0; k < count; ++k) {
      double tk = 2.5 * xv[idxv[k]] + double(0.5f * xfv[k]);
      ok = ok && outv[k] == (k < count / 2 ? tk : tk - 40.0);
      ok = ok && zv[k] == cdouble(1.5, -2.0) * cdouble(xv[k], 0.0);
      ok = ok && flagv[k] == (k >= count / 2);
    }
    check(ok, tag + ": results");
  }
}

// ---- per-thread slices ------------------------------------------------------------------------
// counts[ThreadId] += 1 in a parallel loop (no atomics: each thread owns its slot); plus
// ThreadId outside any parallel loop (0) and NumThreads.
void testThreadSlices(const EngineCase& e) {
  for (bool dynamic : {false, true}) {
    Var counts = ptr("counts", DType::Int64), info = ptr("info", DType::Int64), n = var("n");
    Var i = var("i"), tid = var("tid");
    Stmt body = block({
        declare(tid, threadId()),
        ifThen(binary(Op::Or, binary(Op::Lt, use(tid), intLit(0)), binary(Op::Ge, use(tid), numThreads())),
               store(info, intLit(2), intLit(1))),
        store(counts, use(tid), add(load(counts, use(tid)), intLit(1))),
    });
    Function f{"slices_" + e.name + (dynamic ? "_dynamic" : "_static"),
               {arg(counts, 0), arg(info, 1), arg(n, 0)},
               block({store(info, intLit(0), threadId()), store(info, intLit(1), numThreads()),
                      forLoop(i, intLit(0), use(n), body, parallel(dynamic)), ret()})};
    auto kernel = build(*e.engine, f);
    for (int threads : kThreadCounts) {
      setNumThreads(threads);
      std::string tag = e.name + " slices " + (dynamic ? "dynamic" : "static") + " threads=" + std::to_string(threads);
      std::vector<int64_t> countv(threads, 0), infov{-1, -1, 0};
      check(run(*kernel, {countv.data(), infov.data()}, {1000}) == kOk, tag + ": status");
      check(infov[0] == 0, tag + ": ThreadId is 0 outside parallel loops");
      check(infov[1] == threads, tag + ": NumThreads is the thread count");
      check(infov[2] == 0, tag + ": ThreadId in [0, NumThreads)");
      int64_t total = 0;
      for (int64_t c : countv) total += c;
      check(total == 1000, tag + ": the slices count every iteration once");
      if (!dynamic) {  // contiguous equal blocks: 1000 = 6 * 143 + 142 with 7 threads
        bool even = true;
        for (int t = 0; t < threads; ++t) even = even && countv[t] == 1000 / threads + (t < 1000 % threads);
        check(even, tag + ": static blocks are equal");
      }
    }
  }
}

// A parallel loop inside a parallel loop runs serially, on the outer loop's thread.
void testNestedParallel(const EngineCase& e) {
  Var owner = ptr("owner", DType::Int64), outer = ptr("outer", DType::Int64);
  Var i = var("i"), j = var("j");
  Stmt inner =
      forLoop(j, intLit(0), intLit(10), store(owner, add(mul(use(i), intLit(10)), use(j)), threadId()), parallel());
  Function f{
      "nested_" + e.name,
      {arg(owner, 0), arg(outer, 1)},
      block({forLoop(i, intLit(0), intLit(100), block({store(outer, use(i), threadId()), inner}), parallel(true, 1)),
             ret()})};
  auto kernel = build(*e.engine, f);
  setNumThreads(7);
  std::vector<int64_t> ownerv(1000, -1), outerv(100, -1);
  check(run(*kernel, {ownerv.data(), outerv.data()}, {}) == kOk, e.name + " nested: status");
  bool ok = true;
  for (int k = 0; k < 1000; ++k) ok = ok && ownerv[k] == outerv[k / 10] && ownerv[k] >= 0 && ownerv[k] < 7;
  check(ok, e.name + " nested: the inner loop runs on the outer loop's thread");
}

// ---- atomic updates under contention ---------------------------------------------------------
void testAtomics(const EngineCase& e) {
  const int64_t n = 200000;
  Var si = ptr("si", DType::Int64), s32 = ptr("s32", DType::Int32), sf = ptr("sf", DType::Float64);
  Var sf32 = ptr("sf32", DType::Float32), sc = ptr("sc", DType::Complex128);
  Var x = ptr("x", DType::Float64), xi = ptr("xi", DType::Int32), xu = ptr("xu", DType::UInt8);
  Var mn = ptr("mn", DType::Float64), mx = ptr("mx", DType::Float64);
  Var mni = ptr("mni", DType::Int32), mxi = ptr("mxi", DType::Int32);
  Var mnu = ptr("mnu", DType::UInt8), mxu = ptr("mxu", DType::UInt8);
  Var nanAt = var("nan_at"), i = var("i");
  Expr slot = binary(Op::Rem, use(i), intLit(3));  // few targets: heavy contention
  Expr xval = load(x, use(i));
  // Slot 0 of mn/mx sees every value; slot 1 every value but the NaN.
  Expr nanFree = cast(scalar(DType::Int64), binary(Op::Ne, use(i), use(nanAt)));
  Stmt body = block({
      atomicUpdate(Op::Add, si, slot, binary(Op::Rem, use(i), intLit(13))),
      atomicUpdate(Op::Add, s32, slot, intLit(-2, DType::Int32)),
      atomicUpdate(Op::Add, sf, slot, f64(0.5)),
      atomicUpdate(Op::Add, sf32, intLit(0), litReal(scalar(DType::Float32), 0.25)),
      atomicUpdate(Op::Add, sc, slot, litReal(scalar(DType::Complex128), 1.0, -2.0)),
      atomicUpdate(Op::Min, mn, intLit(0), xval),
      atomicUpdate(Op::Max, mx, intLit(0), xval),
      ifThen(binary(Op::Eq, nanFree, intLit(1)),
             block({atomicUpdate(Op::Min, mn, intLit(1), xval), atomicUpdate(Op::Max, mx, intLit(1), xval)})),
      atomicUpdate(Op::Min, mni, intLit(0), load(xi, use(i))),
      atomicUpdate(Op::Max, mxi, intLit(0), load(xi, use(i))),
      atomicUpdate(Op::Min, mnu, intLit(0), load(xu, use(i))),
      atomicUpdate(Op::Max, mxu, intLit(0), load(xu, use(i))),
  });
  Function f{"atomics_" + e.name,
             {arg(si, 0), arg(s32, 1), arg(sf, 2), arg(sf32, 3), arg(sc, 4), arg(x, 5), arg(xi, 6), arg(xu, 7),
              arg(mn, 8), arg(mx, 9), arg(mni, 10), arg(mxi, 11), arg(mnu, 12), arg(mxu, 13), arg(nanAt, 0)},
             block({forLoop(i, intLit(0), intLit(n), body, parallel(true, 7)), ret()})};
  auto kernel = build(*e.engine, f);

  std::vector<double> xv(n);
  std::vector<int32_t> xiv(n);
  std::vector<uint8_t> xuv(n);
  for (int64_t k = 0; k < n; ++k) {
    xv[k] = std::sin(0.001 * k) * 1000.0;
    xiv[k] = int32_t((k * 7919) % 100003) - 50000;
    xuv[k] = uint8_t(3 + (k * 31) % 250);
  }
  const int64_t nanAtValue = 123457;
  xv[nanAtValue] = std::numeric_limits<double>::quiet_NaN();
  double minRest = std::numeric_limits<double>::infinity(), maxRest = -minRest;
  for (int64_t k = 0; k < n; ++k) {
    if (k == nanAtValue) continue;
    minRest = std::min(minRest, xv[k]);
    maxRest = std::max(maxRest, xv[k]);
  }
  int64_t expectInt[3] = {0, 0, 0}, slotCount[3] = {0, 0, 0};
  for (int64_t k = 0; k < n; ++k) {
    expectInt[k % 3] += k % 13;
    slotCount[k % 3]++;
  }
  for (int threads : kThreadCounts) {
    setNumThreads(threads);
    std::string tag = e.name + " atomics threads=" + std::to_string(threads);
    std::vector<int64_t> siv(3, 0);
    std::vector<int32_t> s32v(3, 0), mniv{0}, mxiv{0};
    std::vector<double> sfv(3, 0.0), mnv(2, 1e300), mxv(2, -1e300);
    std::vector<float> sf32v{0.0f};
    std::vector<cdouble> scv(3, 0.0);
    std::vector<uint8_t> mnuv{200}, mxuv{5};
    check(run(*kernel,
              {siv.data(), s32v.data(), sfv.data(), sf32v.data(), scv.data(), xv.data(), xiv.data(), xuv.data(),
               mnv.data(), mxv.data(), mniv.data(), mxiv.data(), mnuv.data(), mxuv.data()},
              {nanAtValue}) == kOk,
          tag + ": status");
    bool sums = true;
    for (int s = 0; s < 3; ++s) {
      sums = sums && siv[s] == expectInt[s] && s32v[s] == -2 * slotCount[s] && sfv[s] == 0.5 * slotCount[s] &&
             scv[s] == cdouble(1.0, -2.0) * double(slotCount[s]);
    }
    check(sums, tag + ": int64, int32, float64 and complex128 sums");
    check(sf32v[0] == 0.25f * n, tag + ": float32 sum");
    check(std::isnan(mnv[0]) && std::isnan(mxv[0]), tag + ": a NaN propagates through min and max");
    check(mnv[1] == minRest && mxv[1] == maxRest, tag + ": float64 min and max");
    check(mniv[0] == *std::min_element(xiv.begin(), xiv.end()) && mxiv[0] == *std::max_element(xiv.begin(), xiv.end()),
          tag + ": int32 min and max (starting from 0)");
    check(mnuv[0] == 3 && mxuv[0] == 252, tag + ": uint8 min and max (unsigned)");
  }
}

// ---- vectorized and unrolled loops ------------------------------------------------------------
// y[i] = 2 * x[i] + y[i] and a sum reduction into a local, serial vs vectorized vs unrolled.
Function axpySum(const std::string& name, LoopSchedule schedule) {
  Var x = ptr("x", DType::Float64), y = ptr("y", DType::Float64), out = ptr("out", DType::Int64);
  Var n = var("n"), i = var("i"), s = var("s"), p = var("p", DType::Float64);
  Stmt body =
      block({store(y, use(i), add(mul(f64(2.0), load(x, use(i))), load(y, use(i)))),
             assign(s, add(use(s), cast(scalar(DType::Int64), load(x, use(i))))), assign(p, mul(use(p), f64(1.0)))});
  return Function{
      name,
      {arg(x, 0), arg(y, 1), arg(out, 2), arg(n, 0)},
      block({declare(s, intLit(0)), declare(p, f64(1.0)), forLoop(i, intLit(0), use(n), body, schedule),
             store(out, intLit(0), use(s)), store(out, intLit(1), cast(scalar(DType::Int64), use(p))), ret()})};
}

void testVectorized(const EngineCase& e) {
  const int64_t n = 1003;
  std::vector<double> x(n), expected(n);
  int64_t expectedSum = 0;
  for (int64_t k = 0; k < n; ++k) {
    x[k] = double((k * 17) % 101 - 50);
    expected[k] = 2.0 * x[k] + 0.5 * k;
    expectedSum += int64_t(x[k]);
  }
  struct Variant {
    const char* name;
    LoopSchedule schedule;
  };
  for (const Variant& v : {Variant{"serial", {}}, Variant{"vectorized", {LoopKind::Vectorized, false, 0, 0}},
                           Variant{"unrolled", {LoopKind::Serial, false, 0, 4}},
                           Variant{"vectorized_unrolled", {LoopKind::Vectorized, false, 0, 2}}}) {
    Function f = axpySum(std::string("axpy_") + v.name + "_" + e.name, v.schedule);
    std::string text = e.engine->source(f);
    if (e.name == "c" && v.schedule.kind == LoopKind::Vectorized) {
      check(text.find("#pragma omp simd reduction(+:s) reduction(*:p)\n") != std::string::npos,
            "c prints the simd loop with its reductions");
    }
    if (e.name == "c" && v.schedule.kind == LoopKind::Serial && v.schedule.unroll) {
      check(text.find("#pragma GCC unroll 4\n") != std::string::npos, "c prints the unroll hint");
    }
    if (e.name == "llvm" && v.schedule.kind == LoopKind::Vectorized) {
      check(text.find("x double>") != std::string::npos, "llvm vectorizes the vectorized loop");
    }
    auto kernel = build(*e.engine, f);
    std::vector<double> y(n);
    for (int64_t k = 0; k < n; ++k) y[k] = 0.5 * k;
    std::vector<int64_t> out{0, 0};
    check(run(*kernel, {x.data(), y.data(), out.data()}, {n}) == kOk, e.name + " " + v.name + ": status");
    check(y == expected && out[0] == expectedSum && out[1] == 1,
          e.name + " " + v.name + ": same results as the serial loop");
  }
}

// ---- printed forms ----------------------------------------------------------------------------
void testSources(const EngineCase& e) {
  Function f = fillKernel("printed_" + e.name, DType::Int64, parallel(true, 7));
  std::string text = e.engine->source(f);
  if (e.name == "c") {
    check(text.find("  #pragma omp parallel for schedule(dynamic, 7) "
                    "num_threads(coiter_rt_num_threads())\n  for (int64_t i = 0; i < n; i++) {") != std::string::npos,
          "c prints the parallel loop as an OpenMP loop");
  } else {
    check(text.find("define internal void @printed_llvm.parallel.i(") != std::string::npos,
          "llvm source shows the outlined body");
    check(text.find("@coiter_rt_parallel_for(") != std::string::npos, "llvm source calls the runtime's parallel_for");
  }
}

// A parallel loop whose bound reads memory that its body may store to (same element type):
// the bound is evaluated once, before the loop (in C, hoisted above the OpenMP pragma).
void testBoundReadOnce(const EngineCase& e) {
  Var out = ptr("out", DType::Int64), i = var("i");
  Function f{
      "bound_once_" + e.name,
      {arg(out, 0)},
      block({forLoop(i, intLit(0), load(out, intLit(0)), store(out, use(i), intLit(500)), parallel(false, 3)), ret()})};
  if (e.name == "c") {
    check(e.engine->source(f).find("  int64_t i_end = out[0];\n  #pragma omp parallel for") != std::string::npos,
          "c hoists a bound the body may change above the pragma");
  }
  auto kernel = build(*e.engine, f);
  for (int threads : kThreadCounts) {
    setNumThreads(threads);
    std::vector<int64_t> outv(200, -1);
    outv[0] = 100;
    check(run(*kernel, {outv.data()}, {}) == kOk && std::count(outv.begin(), outv.end(), 500) == 100 && outv[100] == -1,
          e.name + " evaluates a parallel loop's bound once, threads=" + std::to_string(threads));
  }
}

// ---- rule violations --------------------------------------------------------------------------
std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const CoiterError& error) {
    return error.what();
  }
  return "";
}

void testRuleViolations(const EngineCase& e) {
  Var out = ptr("out", DType::Float64), zs = ptr("zs", DType::Complex128), n = var("n");
  Var i = var("i"), j = var("j"), acc = var("acc", DType::Float64);
  auto kernel = [&](const std::string& name, Stmt body) {
    return Function{name,
                    {arg(out, 0), arg(zs, 1), arg(n, 0)},
                    block({declare(acc, f64(0.0)), forLoop(i, intLit(0), use(n), body, parallel()),
                           store(out, intLit(0), use(acc)), ret()})};
  };
  struct Case {
    const char* name;
    Stmt body;
    const char* message;
  };
  std::vector<Case> cases{
      {"assigns_outer", assign(acc, add(use(acc), load(out, use(i)))), "assigns 'acc', declared outside it"},
      {"returns", ifThen(binary(Op::Gt, use(i), intLit(3)), ret()), "returns from the kernel"},
      {"breaks", ifThen(binary(Op::Gt, use(i), intLit(3)), breakLoop()), "breaks out of the parallel loop"},
      {"grows", grow(out, n, use(i)), "grows out"},
      {"frees", freeBuffer(out), "frees out"},
      {"complex_min", atomicUpdate(Op::Min, zs, use(i), litReal(scalar(DType::Complex128), 1.0)),
       "atomic min of zs is not supported"},
  };
  for (const Case& c : cases) {
    Function f = kernel(std::string("bad_") + c.name + "_" + e.name, c.body);
    std::string error = errorOf([&] { e.engine->compile(f); });
    check(error.find(c.message) != std::string::npos,
          e.name + " rejects a parallel body that " + c.name + " (got: '" + error + "')");
  }
  // Allowed: a Break inside the body's own loop, and assignments of the body's own locals.
  Var t = var("t", DType::Float64);
  Stmt own =
      block({declare(t, f64(0.0)),
             forLoop(j, intLit(0), intLit(5),
                     block({assign(t, add(use(t), f64(1.0))), ifThen(binary(Op::Ge, use(j), intLit(2)), breakLoop())})),
             store(out, use(i), use(t))});
  auto good = build(*e.engine, kernel("good_" + e.name, own));
  std::vector<double> outv(50, -1.0);
  std::vector<cdouble> zv(1);
  check(run(*good, {outv.data(), zv.data()}, {50}) == kOk &&
            std::all_of(outv.begin() + 1, outv.end(), [](double v) { return v == 3.0; }),
        e.name + " runs a parallel body with its own locals and inner break");
}

// ---- the C engine without OpenMP --------------------------------------------------------------
// A compiler that rejects -fopenmp still builds parallel kernels; they run on one thread.
void testCWithoutOpenmp() {
  std::filesystem::path script = compilerWithoutOpenmp("coiter-test-parallel-no-openmp-");
  setenv("COITER_CC", script.c_str(), 1);
  Var counts = ptr("counts", DType::Int64), total = ptr("total", DType::Float64), i = var("i");
  Function f{"no_openmp",
             {arg(counts, 0), arg(total, 1)},
             block({forLoop(i, intLit(0), intLit(100),
                            block({store(counts, threadId(), add(load(counts, threadId()), intLit(1))),
                                   atomicUpdate(Op::Max, total, intLit(0), cast(scalar(DType::Float64), use(i)))}),
                            parallel()),
                    ret()})};
  std::string error = errorOf([&] {
    auto kernel = build(cEngine(), f);
    setNumThreads(7);
    std::vector<int64_t> countv(7, 0);
    std::vector<double> totalv{-1.0};
    check(run(*kernel, {countv.data(), totalv.data()}, {}) == kOk && countv[0] == 100 && totalv[0] == 99.0,
          "c without OpenMP: the loop runs on thread 0");
  });
  check(error.empty(), "c without OpenMP compiles a parallel kernel: " + error);
  unsetenv("COITER_CC");
  std::filesystem::remove_all(script.parent_path());
}

}  // namespace

int main() {
  std::vector<std::pair<std::string, std::function<void()>>> tests{{"runtime", testRuntime},
                                                                   {"c without openmp", testCWithoutOpenmp}};
  for (const EngineCase& e : engines()) {
    for (auto [name, test] :
         std::initializer_list<std::pair<const char*, void (*)(const EngineCase&)>>{{"fill", testFill},
                                                                                    {"captures", testCaptures},
                                                                                    {"slices", testThreadSlices},
                                                                                    {"nested", testNestedParallel},
                                                                                    {"atomics", testAtomics},
                                                                                    {"vectorized", testVectorized},
                                                                                    {"sources", testSources},
                                                                                    {"bound", testBoundReadOnce},
                                                                                    {"rules", testRuleViolations}}) {
      tests.push_back({e.name + " " + name, [test, e] { test(e); }});
    }
  }
  for (auto& [name, test] : tests) {
    // A test that throws is one failure; the others still run.
    try {
      test();
    } catch (const std::exception& e) {
      check(false, name + " threw: " + e.what());
    }
  }
  std::printf("%s\n", failures ? "FAILED" : "all parallel tests passed");
  return failures ? 1 : 0;
}
