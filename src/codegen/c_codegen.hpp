// Prints an IR function as self-contained C source: the text the C engine compiles and what
// users read through `kern.source("c")`. The output needs only the C standard headers and the
// GNU/Clang dialect accepted by `cc` (visibility attribute, CMPLX or __builtin_complex).
#pragma once
#include <string>

#include "ir/ir.hpp"

namespace coiter::codegen {

// The C translation unit for `f`: includes, the small static helpers it uses (NaN-propagating
// min/max, division guarded against zero divisors), and the exported entry point
//     int32_t NAME(void** pointer_slots, int64_t* integer_slots)
// Throws CoiterError for IR that breaks the contract of ir.hpp (a lowering bug).
std::string printC(const ir::Function& f);

}  // namespace coiter::codegen
