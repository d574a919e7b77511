// The cuda.skinny kernel for short K: each block computes a 64 x 128 tile of D as a sum of a
// few outer products on CUDA cores (f32 FMA), every output written once, so the run is bound by
// D's bytes rather than by FLOPs. Tiles come from the shared scheduler (grouped order); any
// dtype, layout, stride and alignment (operands are read element by element into shared memory).
#pragma once
#include "../epilogue.cuh"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail::cuda {

namespace outer {
constexpr int kThreads = 256;
constexpr int kBlockM = 64, kBlockN = 128, kBlockK = 16;
constexpr int kPad = 4;  // keeps rows 16-byte aligned for float4 reads and spreads banks
}  // namespace outer

struct OuterArgs {
  int m, n, k, num_pid_m, num_pid_n, group_m, batch_base;
  OperandArgs a, b;
  EpilogueArgs ep;
};

__global__ void __launch_bounds__(outer::kThreads, 2) skinny_outer(OuterArgs p) {
  using namespace outer;
  __shared__ __align__(16) float a_sm[kBlockK][kBlockM + kPad];
  __shared__ __align__(16) float b_sm[kBlockK][kBlockN + kPad];
  const OgWork tile = og_work_item(int(blockIdx.x), p.num_pid_m, p.num_pid_n, p.group_m, 1);
  const long long batch = blockIdx.z + p.batch_base;
  const int m0 = tile.pid_m * kBlockM, n0 = tile.pid_n * kBlockN;
  const int tid = int(threadIdx.x), ty = tid / 16, tx = tid % 16;
  const char* a_base = static_cast<const char*>(p.a.ptr);
  const char* b_base = static_cast<const char*>(p.b.ptr);

  // Rows ty*4 .. ty*4+3; columns tx*4 .. tx*4+3 and 64 + tx*4 .. 64 + tx*4+3 (two runs of four,
  // so a warp's stores cover 64 contiguous columns per row).
  float acc[4][8];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < p.k; k0 += kBlockK) {
    for (int e = tid; e < kBlockM * kBlockK; e += kThreads) {
      const int mm = e % kBlockM, kk = e / kBlockM, gm = m0 + mm, gk = k0 + kk;
      a_sm[kk][mm] = (gm < p.m && gk < p.k) ? load(p.a.dtype, a_base, batch * p.a.bs + gm * p.a.sr + gk * p.a.sc) : 0.0f;
    }
    for (int e = tid; e < kBlockN * kBlockK; e += kThreads) {
      const int nn = e % kBlockN, kk = e / kBlockN, gn = n0 + nn, gk = k0 + kk;
      b_sm[kk][nn] = (gn < p.n && gk < p.k) ? load(p.b.dtype, b_base, batch * p.b.bs + gk * p.b.sr + gn * p.b.sc) : 0.0f;
    }
    __syncthreads();
    const int steps = min(kBlockK, p.k - k0);
    for (int kk = 0; kk < steps; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(&a_sm[kk][ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&b_sm[kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&b_sm[kk][64 + tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int gm = m0 + ty * 4 + i;
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int j = 0; j < 4; j += 2) {
        const int gn = n0 + half * 64 + tx * 4 + j;
        epilogue_store_pair(p.ep, batch, p.m, p.n, gm, gn, acc[i][half * 4 + j], acc[i][half * 4 + j + 1]);
      }
  }
}

}  // namespace omnigemm::detail::cuda
