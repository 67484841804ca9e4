// The IR as text of its own: what `kern.stages` shows after lowering and after the IR passes,
// what tests compare, and what the disk cache key hashes (a change to the IR changes the key,
// whatever a code generator would print for it).
//
// One statement a line, blocks indented by two spaces; expressions infix with parentheses
// around nested operators. Types are NumPy names (`float64`, `int32*` for a pointer);
// literals of a type other than int64, float64 and bool carry it (`3:int32`). The text is
// deterministic and complete: two functions print alike only when they are the same IR,
// comments aside (variables are told apart by name, which is unique within a function).
// IRNames::Numbered prints variables as v0, v1, ... in order of first appearance and leaves out
// comments: two kernels that differ only in the names of their tensors and index variables then
// print alike (the disk cache's key, which kernels are shared by, docs/reference.md, "Kernels and the cache").
#pragma once
#include <string>

#include "ir/ir.hpp"

namespace coiter::ir {

enum class IRNames { AsGiven, Numbered };

// A header line with the kernel's name, one line per parameter (its slot, and whether it is
// written back), then the body.
std::string printIR(const Function& f, IRNames names = IRNames::AsGiven);

}  // namespace coiter::ir
