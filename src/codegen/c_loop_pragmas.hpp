// The pragmas the C printer puts before a For loop to carry its schedule (ir::LoopSchedule):
// OpenMP's `parallel for` and `simd`, and GCC's `unroll`.
#pragma once
#include <optional>
#include <string>

#include "ir/ir.hpp"

namespace coiter::codegen {

// `#pragma omp parallel for schedule(...) num_threads(coiter_rt_num_threads())` for a Parallel
// loop: the runtime's thread count governs C kernels as it does LLVM ones.
// `chunk`: a C expression for the chunk size, overriding the schedule's.
std::string parallelForPragma(const ir::LoopSchedule& schedule, const std::string& chunk = "");

// `#pragma omp simd`, with the reduction clauses the body of Vectorized loop `n` needs, or
// nothing when OpenMP's simd cannot express the loop: its body leaves it (Break, Return, or the
// failure path of an allocation), updates memory atomically, contains a parallel loop, or
// assigns a variable declared outside it other than as a + or * reduction (`s = s + e`, with
// `s` read nowhere else). The vectorize request is a hint, so such a loop stays serial C.
std::optional<std::string> simdPragma(const ir::ForNode& n);

// `#pragma GCC unroll N` (Clang reads it too). GCC accepts it only right before a loop, so it
// cannot accompany an OpenMP pragma.
std::string unrollPragma(int factor);

}  // namespace coiter::codegen
