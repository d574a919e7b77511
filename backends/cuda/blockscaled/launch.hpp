// Host-side entry to the Hopper block-scaled kernels (gemm_block128.cuh): the kernel's arguments,
// one launch description and the launcher, which dispatches over the rows of
// families/sm90_blockscaled.inc (instances.cu).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "../epilogue.cuh"

namespace omnigemm::detail::sm90 {

// 128-blockwise fp8 scales (f32): A's scale of row r at K block kb is
// sa[batch * sa_batch + (r >> a_shift) * sa_row + kb * sa_col] (a_shift 0: per row, VEC128; 7:
// per 128 rows, BLK128x128); B's of column n is sb[batch * sb_batch + (n >> 7) * sb_row + kb * sb_col].
struct Block128Args {
  int m, n, k, batch;
  int num_pid_m, num_pid_n, group_m;
  int k_tiles;  // ceil(K / 128)
  int stages;
  const float* sa;
  long long sa_row, sa_col, sa_batch;
  int a_shift;
  const float* sb;
  long long sb_row, sb_col, sb_batch;
  cuda::EpilogueArgs ep;
};

// The family's forms (families/sm90_blockscaled.inc): coop (one program per tile), mcast (clusters
// of two programs on vertically adjacent tiles sharing B by multicast), pipe (a second temporary
// accumulator, so that a consumer's next K block runs on the tensor cores while it promotes the
// last one; tiles of at most 128 columns).
enum class BlockscaledForm : int { coop, mcast, pipe };

struct Block128Launch {
  CUtensorMap map_a, map_b;  // K-major fp8 A (M rows) and B (N rows), boxes of 128 x tile rows
  Block128Args args;
  int block_n;               // the row's tile width
  BlockscaledForm form;
  bool a_e5m2, b_e5m2;
  int grid;                  // persistent programs
  size_t max_shared;         // the device's opt-in shared memory per block
  cudaStream_t stream;
};

// cudaErrorInvalidValue for a tile no table row instantiates.
cudaError_t launch_block128(const Block128Launch& l);

}  // namespace omnigemm::detail::sm90
