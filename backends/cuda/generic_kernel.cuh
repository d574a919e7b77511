// The generic CUDA kernel: shared-memory tiles and FMA on CUDA cores. It runs every dtype,
// layout, batch and epilogue on sm_80 and newer: the correctness baseline and the fallback for
// problems the tensor-core kernels cannot take (mixed 16-bit input types, unaligned operands).
#pragma once
#include "epilogue.cuh"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail::cuda {

struct GenericArgs {
  int m, n, k, num_pid_m, num_pid_n, group_m, block_m, block_n, block_k, batch_base;
  OperandArgs a, b;
  EpilogueArgs ep;
};

// One block computes one BLOCK_M x BLOCK_N tile; thread layout as the portable Vulkan shader:
// COLS = BLOCK_N / 4 thread columns, ROWS = threads / COLS, each thread a THREAD_M x 4 sub-tile.
template <int THREAD_M>
__global__ void gemm_generic(GenericArgs p) {
  extern __shared__ float smem[];
  const int bm = p.block_m, bn = p.block_n, bk = p.block_k;
  float* a_tile = smem;            // [bk][bm]
  float* b_tile = smem + bk * bm;  // [bk][bn]
  // One block per work item of one batch (no split-K: one slice), from the shared scheduler;
  // the batch is grid z (launched in chunks from batch_base).
  const OgWork tile = og_work_item(int(blockIdx.x), p.num_pid_m, p.num_pid_n, p.group_m, 1);
  const long long batch = blockIdx.z + p.batch_base;
  const int m0 = tile.pid_m * bm, n0 = tile.pid_n * bn;
  const int cols = bn / 4, tid = int(threadIdx.x), threads = int(blockDim.x);
  const int tx = tid % cols, ty = tid / cols;
  const char* a_base = static_cast<const char*>(p.a.ptr);
  const char* b_base = static_cast<const char*>(p.b.ptr);

  float acc[THREAD_M][4];
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < p.k; k0 += bk) {
    for (int e = tid; e < bm * bk; e += threads) {
      const int m = e % bm, k = e / bm, gm = m0 + m, gk = k0 + k;
      a_tile[k * bm + m] =
          (gm < p.m && gk < p.k) ? load(p.a.dtype, a_base, batch * p.a.bs + gm * p.a.sr + gk * p.a.sc) : 0.0f;
    }
    for (int e = tid; e < bn * bk; e += threads) {
      const int n = e % bn, k = e / bn, gn = n0 + n, gk = k0 + k;
      b_tile[k * bn + n] =
          (gn < p.n && gk < p.k) ? load(p.b.dtype, b_base, batch * p.b.bs + gk * p.b.sr + gn * p.b.sc) : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < bk; ++k) {
      float b_frag[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) b_frag[j] = b_tile[k * bn + tx * 4 + j];
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i) {
        const float a = a_tile[k * bm + ty * THREAD_M + i];
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a, b_frag[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < THREAD_M; ++i) {
    const int gm = m0 + ty * THREAD_M + i;
    if (gm >= p.m) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gn = n0 + tx * 4 + j;
      if (gn >= p.n) continue;
      epilogue_store(p.ep, batch, gm, gn, acc[i][j]);
    }
  }
}

}  // namespace omnigemm::detail::cuda
