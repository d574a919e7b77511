// Host-side entry to the Hopper kernel family: one launch description, and one launcher per
// input-type pair (each compiled in its own translation unit so the instantiations build in
// parallel). The launchers dispatch over the rows of families/sm90_wgmma.inc (launch_impl.cuh).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "../epilogue.cuh"
#include "kernel_key.hpp"

namespace omnigemm::detail::sm90 {

struct KernelArgs;  // gemm_tma_wgmma.cuh

struct Launch {
  CUtensorMap map_a, map_b;
  CUtensorMap map_d;  // D in 64 x 64 boxes, 128-byte swizzle: the deferred epilogue's TMA stores
  int m, n, k, batch, group_m, stages;
  KernelKey key;                // the instantiation (tile, form, cluster) in the kernel's orientation
  bool a_mn_major, b_mn_major;  // operand layout in global (and shared) memory
  int split_k;                  // K slices per tile (1: none)
  float* partials;              // split-K workspace (split_k > 1): partial_floats(...) floats
  int* counters;                // ... and counter_count(...) ints, zero between launches
  int grid;                     // persistent programs
  bool dependent_launch;        // programmatic dependent launch (overlaps the previous kernel's tail)
  bool defer_epilogue;          // cooperative tiles' plain 16-bit outputs leave during the next tile (map_d encoded)
  size_t max_shared;            // the device's opt-in shared memory per block
  cuda::EpilogueArgs ep;
  cudaStream_t stream;
};

// Whether e's epilogue fits the packed ways' RegisterEpilogue (tile_epilogue.cuh) for a problem
// of n columns (in the kernel's orientation): an f32 bias or none, any activation, and C only of
// D's own type (f16, bf16 or f32), read two elements per load: unit column stride, N and the row
// and batch strides even, a base aligned to two elements.
__host__ __device__ inline bool register_epilogue_fits(const cuda::EpilogueArgs& e, int n) {
  const int size = e.d.dtype == OG_DTYPE_F32 ? 4 : 2;
  const bool c_fits = !e.has_c || ((e.d.dtype == OG_DTYPE_F16 || e.d.dtype == OG_DTYPE_BF16 || e.d.dtype == OG_DTYPE_F32) &&
                                   e.c.dtype == e.d.dtype && e.c.sc == 1 && n % 2 == 0 && e.c.sr % 2 == 0 &&
                                   e.c.bs % 2 == 0 && reinterpret_cast<unsigned long long>(e.c.ptr) % (2 * size) == 0);
  return c_fits && (e.bias_mode == OG_BIAS_NONE || e.bias_dtype == OG_DTYPE_F32);
}

// A 16-bit or f32 D whose rows (COLS: columns) are 16-byte vectors: unit stride along them,
// 16-byte aligned base, other stride and batch stride. e.d_vector_rows / cols say the same for a
// D without C; this also holds with C, which the packed and f32 TMA ways read element pairs of.
template <bool COLS>
__host__ __device__ inline bool d_16_byte_lines(const cuda::EpilogueArgs& e) {
  const long long unit = COLS ? e.d.sr : e.d.sc, other = COLS ? e.d.sc : e.d.sr;
  if (e.d.dtype != OG_DTYPE_F16 && e.d.dtype != OG_DTYPE_BF16 && e.d.dtype != OG_DTYPE_F32) return false;
  const int size = e.d.dtype == OG_DTYPE_F32 ? 4 : 2;
  return unit == 1 && reinterpret_cast<unsigned long long>(e.d.ptr) % 16 == 0 && other * size % 16 == 0 &&
         e.d.bs * size % 16 == 0;
}
__host__ __device__ inline bool d_rows_packable(const cuda::EpilogueArgs& e) {
  return e.d_vector_rows || (e.has_c && d_16_byte_lines<false>(e));
}
__host__ __device__ inline bool d_cols_packable(const cuda::EpilogueArgs& e) {
  return e.d_vector_cols || (e.has_c && d_16_byte_lines<true>(e));
}

// Every launcher returns cudaErrorInvalidValue for a key/layout no table row instantiates.
cudaError_t launch_f16(const Launch& l);
cudaError_t launch_bf16(const Launch& l);
cudaError_t launch_fp8(const Launch& l, bool a_e5m2, bool b_e5m2);
cudaError_t launch_tf32(const Launch& l);  // f32 operands (K-major) read as TF32

// Shared memory, 1024-byte aligned (the 128-byte swizzle's period): a ring of `stages` (A, B)
// tiles of 128-byte rows; per consumer warpgroup two 64 x 128-byte epilogue chunks (double
// buffered, tile_epilogue.cuh); then a full and an empty mbarrier per stage, two ping-pong
// turn mbarriers and per consumer a full and an empty mbarrier of the split-K pair exchange.
// Plus 1 KiB of slack to align the dynamic shared memory.
constexpr int kConsumers = 2;
constexpr int kChunkBytes = 64 * 128;
__host__ __device__ constexpr size_t ring_bytes(int block_m, int block_n, int stages) {
  return size_t(stages) * size_t(block_m + block_n) * 128;
}
__host__ __device__ constexpr size_t staging_offset(int block_m, int block_n, int stages) {
  return ring_bytes(block_m, block_n, stages);
}
__host__ __device__ constexpr size_t barrier_offset(int block_m, int block_n, int stages) {
  return staging_offset(block_m, block_n, stages) + size_t(kConsumers) * 2 * kChunkBytes;
}
__host__ __device__ constexpr size_t shared_bytes(int block_m, int block_n, int stages) {
  return 1024 + barrier_offset(block_m, block_n, stages) + size_t(stages) * 16 + 16 + size_t(kConsumers) * 16;
}

// Split-K workspace of a launch: the f32 partial accumulators of every slice of every tile
// (tile rows rounded up to whole clusters) and one arrival counter per 64 * WG_M-row part.
constexpr long long split_tiles(long long num_pid_m, long long num_pid_n, long long batch, int cluster_m) {
  return (num_pid_m + cluster_m - 1) / cluster_m * cluster_m * num_pid_n * batch;
}
constexpr long long partial_floats(long long tiles, int block_m, int block_n, int split_k) {
  return tiles * block_m * block_n * split_k;
}
constexpr long long counter_count(long long tiles) { return tiles * kConsumers; }

}  // namespace omnigemm::detail::sm90
