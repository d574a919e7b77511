// Host-side entry to the mma.sync kernel family (sm_80 and newer): one launch description and
// one launcher per multiplicand type, each in its own translation unit.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "../epilogue.cuh"

namespace omnigemm::detail::sm80 {

// The tile shapes instantiated are the rows of families/sm80_mma.inc (BLOCK_M, BLOCK_N, warps, and
// whether the gathering loader is instantiated for the tile too). BLOCK_K is 32.
constexpr int kBlockK = 32;
constexpr int kMinStages = 2, kMaxStages = 5;
constexpr int kWarpsM = 2;  // every shape: two warps along M, warps / 2 along N

// Both operands are staged in shared memory in rows of their contiguous dimension (K-major: a
// row per M or N index, BLOCK_K long; MN-major: a row per K index), each padded by 8 elements
// (16 bytes) so that the eight 16-byte rows one ldmatrix reads fall in distinct bank groups.
// The gathering loader always stages K-major.
__host__ __device__ constexpr int tile_rows(int block_mn, bool k_major) { return k_major ? block_mn : kBlockK; }
__host__ __device__ constexpr int tile_pitch(int block_mn, bool k_major) { return (k_major ? kBlockK : block_mn) + 8; }
__host__ __device__ constexpr size_t stage_bytes(int block_m, int block_n, bool a_k_major, bool b_k_major) {
  return 2 * (size_t(tile_rows(block_m, a_k_major)) * tile_pitch(block_m, a_k_major) +
              size_t(tile_rows(block_n, b_k_major)) * tile_pitch(block_n, b_k_major));
}
// The epilogue reuses the ring: per warp a 16-row strip of f32 results, rows padded by 8.
__host__ __device__ constexpr size_t epilogue_bytes(int warps, int warp_n) { return size_t(warps) * 16 * (warp_n + 8) * 4; }
__host__ __device__ constexpr size_t shared_bytes(int block_m, int block_n, int warps, bool a_k_major, bool b_k_major, int stages) {
  const size_t ring = size_t(stages) * stage_bytes(block_m, block_n, a_k_major, b_k_major);
  const size_t epilogue = epilogue_bytes(warps, block_n / (warps / kWarpsM));
  return ring > epilogue ? ring : epilogue;
}

struct Launch {
  int m, n, k, batch, group_m, stages;
  int block_m, block_n, warps;
  // cp.async copies 16-byte pieces of operands stored as the multiplicand type, where bases,
  // leading dimensions and batch strides are multiples of 16 bytes; otherwise (gather) every
  // element is loaded on its own, converted and staged K-major.
  bool gather;
  bool a_k_major, b_k_major;  // copy path: A row-major (else column-major), B column-major (else row-major)
  cuda::OperandArgs a, b;
  cuda::EpilogueArgs ep;
  int max_grid_z;
  size_t max_shared;
  cudaStream_t stream;
};

// cudaErrorInvalidValue for a shape, stage count or loader that no table row instantiates.
cudaError_t launch_f16(const Launch& l);   // f16 multiplicands (f16 and fp8 inputs)
cudaError_t launch_bf16(const Launch& l);  // bf16 multiplicands (bf16 and fp8 inputs)

}  // namespace omnigemm::detail::sm80
