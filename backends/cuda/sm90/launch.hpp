// Host-side entry to the Hopper kernel family: one launch description, and one launcher per
// input-type pair (each compiled in its own translation unit so the instantiations build in
// parallel).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "../epilogue.cuh"

namespace omnigemm::detail::sm90 {

struct KernelArgs;  // gemm_tma_wgmma.cuh

struct Launch {
  CUtensorMap map_a, map_b;
  int m, n, k, batch, group_m, stages;
  int block_n, wg_m;            // tile: (128 * wg_m) x block_n, or (64 * wg_m) x block_n in ping-pong
  bool pingpong;                // each consumer warpgroup owns whole tiles
  int cluster_m;                // 2: clusters of two programs share (multicast) the B tile
  bool a_mn_major, b_mn_major;  // operand layout in global (and shared) memory
  int grid;                     // persistent programs
  size_t max_shared;            // the device's opt-in shared memory per block
  cuda::EpilogueArgs ep;
  cudaStream_t stream;
};

// Every launcher returns cudaErrorInvalidValue for a shape/layout it was not instantiated for.
cudaError_t launch_f16(const Launch& l);
cudaError_t launch_bf16(const Launch& l);
cudaError_t launch_fp8(const Launch& l, bool a_e5m2, bool b_e5m2);

// The shapes instantiated: (block_n, wg_m, ping-pong, cluster_m).
constexpr int kShapes[][4] = {{256, 1, 0, 1}, {128, 1, 0, 1}, {128, 2, 0, 1}, {64, 1, 0, 1},
                              {256, 1, 1, 1}, {128, 2, 1, 1}, {256, 1, 0, 2}};

// Shared memory: a ring of `stages` (A, B) tiles of 128-byte rows, a full and an empty mbarrier
// per stage, two ping-pong turn mbarriers, and per consumer warpgroup one 64 x 32 f32 epilogue chunk whose rows are padded by
// 8 floats (so that the register-layout writes and the row-wise reads hit each bank once per
// wavefront); plus 1 KiB to align the ring to the 128-byte swizzle's 1024-byte period.
constexpr int kConsumers = 2;
constexpr int kChunkPitch = 40, kChunkFloats = 64 * kChunkPitch;
__host__ __device__ constexpr size_t ring_bytes(int block_m, int block_n, int stages) {
  return size_t(stages) * size_t(block_m + block_n) * 128;
}
// After the ring: full[stages], empty[stages], turn[2] mbarriers (8 bytes each), 16-byte aligned.
__host__ __device__ constexpr size_t staging_offset(int block_m, int block_n, int stages) {
  return ring_bytes(block_m, block_n, stages) + size_t(stages) * 16 + 16;
}
__host__ __device__ constexpr size_t shared_bytes(int block_m, int block_n, int stages) {
  return 1024 + staging_offset(block_m, block_n, stages) + size_t(kConsumers) * kChunkFloats * sizeof(float);
}

}  // namespace omnigemm::detail::sm90
