// The vector width a kernel's loops are vectorized at (the functions' "prefer-vector-width").
//
// 512-bit vectors (where the CPU has them) speed up the loops that only read: the coordinate
// checks' maximum over a block's or a row's coordinates (16 per instruction, and LLVM then
// vectorizes the remainder too instead of leaving up to 31 coordinates a row to a scalar
// loop) and a CSR row's gathered dot product (8 per instruction). But a loop that updates a
// dense row in place (SpMM's C(i,:) += A(i,k) * B(k,:), MTTKRP's) reads at the next step what
// it stored at this one, and 512-bit stores and loads that cross cache lines stall store
// forwarding: MTTKRP of rank 16 took 1.66-1.93x the time at 512 bits, SpMM at 32 columns
// went 4.6 -> 2.5 ms when 256 bits were chosen for every kernel. So kernels with such a loop
// keep 256 bits, the others get 512. (One thread, thread CPU time, the two widths' kernels
// interleaved in one process, 2026-11-27: CSR SpMV 0.81x the 256-bit time on bcsstk17's
// shape, 0.89-0.95x on cant's and cop20k_A's; SDDMM 0.82x; SpAdd, TTV, SpMM at 128 columns
// 0.97-1.01x.) One case lost: CSR SpMV of a banded matrix with 10 entries a row (200,000
// rows), 1.09-1.11x the 256-bit time (a power-law one of 10 a row: 0.98-1.02x). Its rows are
// checked per block of 32; forcing every coordinate check's maximum to 256-bit vectors gave
// it back but cost bcsstk17's shape most of its gain, and the block pass alone at 256 bits
// did not: which loop of the blocks path loses is not found yet.
#pragma once

#include "ir/ir.hpp"

namespace coiter {

// Whether an innermost for loop of `body` stores into an array at an index that depends on
// the loop's variable (directly or through variables declared in its body) and also loads
// that array: a row updated in place, step after step.
bool updatesRowsInPlace(const ir::Stmt& body);

// "prefer-vector-width" for a kernel whose body is `body`: "256" when it updates rows in
// place, else "512".
const char* preferredVectorWidth(const ir::Stmt& body);

}  // namespace coiter
