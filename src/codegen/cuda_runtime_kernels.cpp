#include "codegen/cuda_runtime_kernels.hpp"

namespace coiter::codegen {

const std::string& cudaOffsetKernels() {
  // Each block owns a contiguous range of parents, each thread a contiguous part of it (its
  // warp reads neighbouring parts, so the loads stay in the same cache lines). Block sums are
  // scanned by one block (at most kOffsetsMaxBlocks of them). Counts add up in 64 bits.
  static const std::string source = R"(
#define COITER_OFFSETS_THREADS 256
// The parents [lo, hi) of this thread in its block's range.
__device__ inline void coiter_thread_range(long long parents, long long perBlock, long long& lo, long long& hi) {
  const long long blockLo = 1 + (long long)blockIdx.x * perBlock;
  const long long blockHi = min(blockLo + perBlock, parents + 1);
  const long long perThread = (perBlock + blockDim.x - 1) / blockDim.x;
  lo = min(blockLo + (long long)threadIdx.x * perThread, blockHi);
  hi = min(lo + perThread, blockHi);
}
// Exclusive prefix sum of the threads' values across the block; the block's total in *total.
__device__ inline long long coiter_block_exclusive(long long value, long long* total) {
  __shared__ long long sums[COITER_OFFSETS_THREADS];
  sums[threadIdx.x] = value;
  __syncthreads();
  for (unsigned step = 1; step < blockDim.x; step <<= 1) {
    long long add = threadIdx.x >= step ? sums[threadIdx.x - step] : 0;
    __syncthreads();
    sums[threadIdx.x] += add;
    __syncthreads();
  }
  *total = sums[blockDim.x - 1];
  long long exclusive = threadIdx.x > 0 ? sums[threadIdx.x - 1] : 0;
  __syncthreads();
  return exclusive;
}
template <typename T>
__device__ void coiter_block_counts(const T* pos, long long parents, long long perBlock, long long* sums) {
  long long lo, hi, sum = 0, total;
  coiter_thread_range(parents, perBlock, lo, hi);
  for (long long q = lo; q < hi; ++q) sum += (long long)pos[q];
  coiter_block_exclusive(sum, &total);
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}
template <typename T>
__device__ void coiter_offsets(T* pos, long long parents, long long perBlock, const long long* sums) {
  long long lo, hi, sum = 0, total;
  coiter_thread_range(parents, perBlock, lo, hi);
  for (long long q = lo; q < hi; ++q) sum += (long long)pos[q];
  long long run = sums[blockIdx.x] + coiter_block_exclusive(sum, &total);
  for (long long q = lo; q < hi; ++q) {
    run += (long long)pos[q];
    pos[q] = (T)run;
  }
}
extern "C" __global__ void coiter_scan_block_sums(long long* sums, int blocks, long long* total) {
  long long carry = 0;  // blocks beyond the block's threads are scanned in rounds
  for (int first = 0; first < blocks; first += blockDim.x) {
    const int b = first + threadIdx.x;
    long long value = b < blocks ? sums[b] : 0, roundTotal;
    long long exclusive = coiter_block_exclusive(value, &roundTotal);
    if (b < blocks) sums[b] = carry + exclusive;
    carry += roundTotal;
  }
  if (threadIdx.x == 0) *total = carry;
}
extern "C" __global__ void coiter_block_counts_int32(const int* pos, long long parents, long long perBlock,
                                                     long long* sums) {
  coiter_block_counts(pos, parents, perBlock, sums);
}
extern "C" __global__ void coiter_block_counts_int64(const long long* pos, long long parents, long long perBlock,
                                                     long long* sums) {
  coiter_block_counts(pos, parents, perBlock, sums);
}
extern "C" __global__ void coiter_offsets_int32(int* pos, long long parents, long long perBlock,
                                                const long long* sums) {
  coiter_offsets(pos, parents, perBlock, sums);
}
extern "C" __global__ void coiter_offsets_int64(long long* pos, long long parents, long long perBlock,
                                                const long long* sums) {
  coiter_offsets(pos, parents, perBlock, sums);
}
)";
  return source;
}

}  // namespace coiter::codegen
