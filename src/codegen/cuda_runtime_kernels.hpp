// CUDA kernels the CUDA engine launches beside a generated one (jit/cuda/cuda_engine.cpp),
// compiled into every module: the offsets of a two-pass assembly (lower/kernel_abi.hpp,
// TwoPassAssembly), a prefix sum of the per-parent counts in pos[1..parents].
#pragma once
#include <string>

namespace coiter::codegen {

// CUDA C++ source of, for each index type T in {int32, int64} (symbols suffixed _int32, _int64):
//   coiter_block_counts_T(const T* pos, long long parents, long long perBlock, long long* sums)
//       grid of B blocks: sums[b] = the counts of block b's parents [1 + b*perBlock, ...);
//   coiter_offsets_T(T* pos, long long parents, long long perBlock, const long long* sums)
//       grid of B blocks: pos[q] = the counts up to q, from block b's exclusive offset sums[b];
// and, between them, coiter_scan_block_sums(long long* sums, int blocks, long long* total):
//   one block: sums turned into exclusive offsets, the whole count in *total.
// Every kernel runs with kOffsetsBlockSize threads per block; B is at most kOffsetsMaxBlocks.
const std::string& cudaOffsetKernels();
constexpr int kOffsetsBlockSize = 256;
constexpr int kOffsetsMaxBlocks = 1024;

}  // namespace coiter::codegen
