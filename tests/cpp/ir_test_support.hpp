// What the C++ tests of hand-built IR share: a failure counter with `check`, and shorthands
// for building IR. Include it once per test program (it defines the counter).
#pragma once
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "ir/ir.hpp"

namespace coiter_test {

using namespace coiter;
using namespace coiter::ir;

inline int failures = 0;

inline void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::printf("FAILED: %s\n", what.c_str());
}

inline Var ptr(const char* name, DType t) { return makeVar(name, pointerTo(t)); }
inline Var var(const char* name, DType t = DType::Int64) { return makeVar(name, scalar(t)); }
// The value of a variable (ir::ref; unqualified `ref` would find std::ref by ADL).
inline Expr use(const Var& v) { return ir::ref(v); }
inline Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr f64(double v) { return litReal(scalar(DType::Float64), v); }
inline Param arg(const Var& v, int slot, bool writeBack = false) { return Param{v, slot, writeBack}; }

// A stand-in for the system C compiler that rejects -fopenmp (like clang without libomp):
// a script in a fresh temporary folder named after `tag`.
inline std::filesystem::path compilerWithoutOpenmp(const std::string& tag) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / (tag + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::path script = dir / "cc-without-openmp";
  std::FILE* out = std::fopen(script.c_str(), "w");
  std::fputs(
      "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = -fopenmp ]; then\n"
      "    echo \"unsupported option '-fopenmp'\" >&2; exit 1\n  fi\ndone\n"
      "exec cc \"$@\"\n",
      out);
  std::fclose(out);
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

}  // namespace coiter_test
