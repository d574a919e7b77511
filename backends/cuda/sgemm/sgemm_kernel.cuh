// The f32 GEMM kernel of family cuda.sgemm: full f32 FMA on CUDA cores (no TF32), register
// blocked, sm_80 and newer.
//
// Tile: BLOCK_M = 32 WARPS_M rows by BLOCK_N = 64 WARPS_N columns, BLOCK_K 8 or 16 of K per
// step. Each thread owns an 8 x 8 block of outputs as 2 x 2 quads of 4 x 4: rows
// r, r + BLOCK_M / 2 and columns c, c + BLOCK_N / 2 (r = 16 warp_m + 4 (lane / 8),
// c = 32 warp_n + 4 (lane % 8)). Per K step a thread reads two float4 of A and two of B from
// shared memory and issues 64 FFMAs; a warp's A reads are 4 distinct float4 (each a broadcast
// to 8 lanes) and its B reads 8 consecutive float4: one shared-memory wavefront each.
// Shared memory holds both operands K-major-transposed ("[k][mn]", rows padded by 4 floats so
// the transposing stores of a K-major operand hit 32 distinct banks and float4 reads stay
// aligned), double buffered: the next K-tile is loaded into registers while the current one is
// multiplied, then stored into the other buffer; one barrier per K-tile.
// Global loads: each thread moves BLOCK_{M,N} x BLOCK_K / (4 threads) quads per operand and
// K-tile, 4 elements along the operand's contiguous dimension. VEC: one 16-byte load per quad
// (unit stride, 16-byte aligned base, leading dimension and batch stride; the host checks);
// quads crossing the edge of M, N or K are loaded element by element, zeros outside.
// Otherwise every element is a guarded scalar load with the operand's strides (any layout).
// Work items: one block per output tile and K slice (split-K: block x = tile * split + slice,
// tiles in the shared grouped order of tile_schedule.h), batch in grid z. Unsplit, the block
// finishes its tile with the shared epilogue (epilogue.cuh); split, each slice writes its
// partial sums to the workspace and split_reduce.cu sums them in slice order.
#pragma once
#include "../epilogue.cuh"
#include "../split_reduce.hpp"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail::sgemm {

struct Args {
  int m, n, k, num_pid_m, num_pid_n, group_m, batch_base;
  // K slices per tile and the K each covers (a multiple of BLOCK_K; the last one may be short).
  int split, slice_k;
  // split > 1: the slices' partial sums, laid out as split_reduce.hpp says (ld partial_ld).
  float* partials;
  long long partial_ld;
  // Operands as (MN, K) matrices: element (i, kk) of batch b at ptr[b * bs + i * s_mn + kk * s_k].
  const float* a;
  const float* b;
  long long a_mn, a_k, a_bs, b_mn, b_k, b_bs;
  cuda::EpilogueArgs ep;
};

// Registers per thread the kernel is compiled for (launch bounds): 128 in blocks of 256
// threads, 168 in smaller ones (ptxas spilled at 128 there); and the blocks of a row that share
// an SM at that budget (65536 registers).
constexpr int thread_registers(int threads) { return threads >= 256 ? 128 : 168; }
constexpr int blocks_per_sm(int threads) { return 65536 / (threads * thread_registers(threads)); }

template <int WARPS_M_, int WARPS_N_, int BLOCK_K_, bool A_K_MAJOR_, bool B_K_MAJOR_, bool VEC_>
struct Shape {
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, BLOCK_K = BLOCK_K_;
  static constexpr bool A_K_MAJOR = A_K_MAJOR_, B_K_MAJOR = B_K_MAJOR_, VEC = VEC_;
  static constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  static constexpr int BLOCK_M = 32 * WARPS_M, BLOCK_N = 64 * WARPS_N;
  static constexpr int kLdA = BLOCK_M + 4, kLdB = BLOCK_N + 4;  // shared row pitch in floats
  static constexpr int kMinBlocks = blocks_per_sm(kThreads);
  static_assert(BLOCK_K == 8 || BLOCK_K == 16, "BLOCK_K 8 or 16");
};

// One operand's share of a K-tile: QUADS quads of 4 elements per thread, held in registers
// between the global load and the shared store. K_MAJOR: quads run along K (the operand's
// contiguous dimension), thread quad f covers (row f / (BK / 4), K 4 (f % (BK / 4)) ..);
// otherwise along MN: (rows 4 (f % (MN / 4)) .., K f / (MN / 4)). VEC: the quads' direction
// has unit stride (the host checks), so one 16-byte load takes an in-range quad.
template <int MN, int BK, int THREADS, bool K_MAJOR, bool VEC>
struct TileLoader {
  static constexpr int kQuads = MN * BK / 4 / THREADS;
  static_assert(kQuads >= 1 && MN * BK / 4 % THREADS == 0, "whole quads per thread");
  static constexpr int kLd = MN + 4;
  float4 v[kQuads];
  const float* ptr[kQuads];  // the quad's first element in the current K-tile
  int mn_left[kQuads];       // rows of the operand from the quad's first row to the edge
  long long step;            // element stride along the quad (1 when VEC)
  long long tile_step;       // elements from one K-tile to the next

  __device__ __forceinline__ static void quad_at(int q, int tid, int& row, int& kk) {
    const int f = tid + q * THREADS;
    if constexpr (K_MAJOR) {
      row = f / (BK / 4), kk = 4 * (f % (BK / 4));
    } else {
      row = 4 * (f % (MN / 4)), kk = f / (MN / 4);
    }
  }

  // base: element (mn0, 0) of this batch; strides in elements.
  __device__ __forceinline__ void init(const float* base, long long s_mn, long long s_k, int mn0, int mn_ext, int tid) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      int row, kk;
      quad_at(q, tid, row, kk);
      ptr[q] = base + (long long)row * s_mn + (long long)kk * s_k;
      mn_left[q] = mn_ext - (mn0 + row);
    }
    step = VEC ? 1 : (K_MAJOR ? s_k : s_mn);
    tile_step = (long long)BK * s_k;
  }

  // Global -> registers for the K-tile starting at k0, then advance to the next one.
  __device__ __forceinline__ void load(int k0, int k_ext, int tid) {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      int row, kk;
      quad_at(q, tid, row, kk);
      const int gk = k0 + kk;
      const float* p = ptr[q];
      ptr[q] += tile_step;
      // Quad element e is (row, gk + e) along K or (row + e, gk) along MN.
      const bool full = K_MAJOR ? (mn_left[q] > 0 && gk + 3 < k_ext) : (gk < k_ext && mn_left[q] > 3);
      if (VEC && full) {
        v[q] = __ldg(reinterpret_cast<const float4*>(p));
        continue;
      }
      float e[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool in = K_MAJOR ? (mn_left[q] > 0 && gk + j < k_ext) : (gk < k_ext && mn_left[q] > j);
        e[j] = in ? __ldg(p + j * step) : 0.0f;
      }
      v[q] = make_float4(e[0], e[1], e[2], e[3]);
    }
  }

  // Registers -> shared tile [BK][kLd] (K-major quads transposed on the way).
  __device__ __forceinline__ void store(float* tile, int tid) const {
#pragma unroll
    for (int q = 0; q < kQuads; ++q) {
      int row, kk;
      quad_at(q, tid, row, kk);
      if constexpr (K_MAJOR) {
        tile[(kk + 0) * kLd + row] = v[q].x;
        tile[(kk + 1) * kLd + row] = v[q].y;
        tile[(kk + 2) * kLd + row] = v[q].z;
        tile[(kk + 3) * kLd + row] = v[q].w;
      } else {
        *reinterpret_cast<float4*>(tile + kk * kLd + row) = v[q];
      }
    }
  }
};

template <class S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks) gemm_sgemm(const __grid_constant__ Args p) {
  constexpr int BM = S::BLOCK_M, BN = S::BLOCK_N, BK = S::BLOCK_K;
  __shared__ __align__(16) float a_tiles[2][BK * S::kLdA];
  __shared__ __align__(16) float b_tiles[2][BK * S::kLdB];

  const int slice = int(blockIdx.x) % p.split;
  const OgWork tile = og_work_item(int(blockIdx.x) / p.split, p.num_pid_m, p.num_pid_n, p.group_m, 1);
  const long long batch = blockIdx.z + p.batch_base;
  const int kb = slice * p.slice_k, k_len = min(p.k - kb, p.slice_k);  // this slice's K
  const int m0 = tile.pid_m * BM, n0 = tile.pid_n * BN;
  const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int row = 16 * (warp % S::WARPS_M) + 4 * (lane / 8);  // first row of this thread's first quad
  const int col = 32 * (warp / S::WARPS_M) + 4 * (lane % 8);  // first column

  TileLoader<BM, BK, S::kThreads, S::A_K_MAJOR, S::VEC> la;
  la.init(p.a + batch * p.a_bs + (long long)m0 * p.a_mn + (long long)kb * p.a_k, p.a_mn, p.a_k, m0, p.m, tid);
  TileLoader<BN, BK, S::kThreads, S::B_K_MAJOR, S::VEC> lb;
  lb.init(p.b + batch * p.b_bs + (long long)n0 * p.b_mn + (long long)kb * p.b_k, p.b_mn, p.b_k, n0, p.n, tid);

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  const int k_tiles = (k_len + BK - 1) / BK;
  if (k_tiles > 0) {
    la.load(0, k_len, tid);
    lb.load(0, k_len, tid);
    la.store(a_tiles[0], tid);
    lb.store(b_tiles[0], tid);
  }
  __syncthreads();
#pragma unroll 1
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool more = kt + 1 < k_tiles;
    if (more) {  // in flight while this K-tile is multiplied
      la.load((kt + 1) * BK, k_len, tid);
      lb.load((kt + 1) * BK, k_len, tid);
    }
    const float* at = a_tiles[kt & 1];
    const float* bt = b_tiles[kt & 1];
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(at + kk * S::kLdA + row);
      const float4 a1 = *reinterpret_cast<const float4*>(at + kk * S::kLdA + row + BM / 2);
      const float4 b0 = *reinterpret_cast<const float4*>(bt + kk * S::kLdB + col);
      const float4 b1 = *reinterpret_cast<const float4*>(bt + kk * S::kLdB + col + BN / 2);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) {  // the other buffer was last read before the previous barrier
      la.store(a_tiles[(kt + 1) & 1], tid);
      lb.store(b_tiles[(kt + 1) & 1], tid);
    }
    __syncthreads();
  }

  // Split-K (rows below 256 threads only: the 256-thread row's main loop measured slower with
  // any change to its epilogue): whole quads, the partial rows are padded to a multiple of 4.
  if (S::kThreads < 256 && p.split > 1) {
    float* part = p.partials + (batch * p.split + slice) * p.m * p.partial_ld;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int gm = m0 + row + (i % 4) + (i / 4) * (BM / 2), gn = n0 + col + h * (BN / 2);
        if (gm < p.m && gn < p.n)
          *reinterpret_cast<float4*>(part + gm * p.partial_ld + gn) =
              make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
      }
    return;
  }
  // Epilogue. Quad t = 2 i + h holds tile row row + (i % 4) + BM / 2 (i / 4), columns from
  // col + BN / 2 h; whole in-range quads of a vector-aligned D leave in one 16-byte (8-byte for
  // 16-bit D) store. The 256-thread row, chosen for large problems, stores every quad unrolled
  // and the rest element by element (its main loop measured slower with the loop below).
  // Smaller rows, which small problems run, store an f32 D with alpha alone on a whole tile
  // unrolled and everything else in a loop that is not unrolled (a row-major D without 16-byte
  // rows or with C staged row by row, below; the rest as quads or runs, epilogue_store_run):
  // the general epilogue (C, bias, activations, every D dtype) inlined for each quad made
  // those kernels outgrow the instruction cache, and launches of a few K-steps waited on
  // instruction fetches.
  const cuda::EpilogueArgs& e = p.ep;
  if constexpr (S::kThreads >= 256) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int gm = m0 + row + (i % 4) + (i / 4) * (BM / 2);
      if (gm >= p.m) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int gn = n0 + col + h * (BN / 2);
        if (gn >= p.n) continue;
        if (e.d_vector_rows && gn + 4 <= p.n) {
          cuda::epilogue_store_quad(e, batch, gm, gn,
                                    make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]));
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (gn + j < p.n) cuda::epilogue_store(e, batch, gm, gn + j, acc[i][4 * h + j]);
        }
      }
    }
    return;
  }
  if (e.d.dtype == OG_DTYPE_F32 && e.d_vector_rows && cuda::epilogue_plain(e) && m0 + BM <= p.m && n0 + BN <= p.n) {
    float* d = static_cast<float*>(const_cast<void*>(e.d.ptr)) + batch * e.d.bs;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long at = (long long)(m0 + row + (i % 4) + (i / 4) * (BM / 2)) * e.d.sr + n0 + col + h * (BN / 2);
        *reinterpret_cast<float4*>(d + at) =
            make_float4(e.alpha * acc[i][4 * h], e.alpha * acc[i][4 * h + 1], e.alpha * acc[i][4 * h + 2], e.alpha * acc[i][4 * h + 3]);
      }
    return;
  }
  float4 quads[16];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) quads[2 * i + h] = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
  if (e.d.sc == 1 && !e.d_vector_rows) {
    // A row-major D without 16-byte rows, or with C: quad t of a warp's lanes is 4 rows (4 apart)
    // by 32 consecutive columns. Staged through shared memory (the tiles are free after the
    // main loop's last barrier), each store instruction then writes 32 consecutive outputs of
    // one row, where per-lane runs of four wrote every 32-byte sector four times.
    static_assert(S::kThreads / 32 * 4 * 32 <= 2 * BK * S::kLdA, "the warps' staging fits the A tiles");
    float* stage = &a_tiles[0][0] + warp * (4 * 32);
    const int r0 = m0 + 16 * (warp % S::WARPS_M), c0 = n0 + 32 * (warp / S::WARPS_M);
    const bool plain = cuda::epilogue_plain(e);
#pragma unroll 1
    for (int t = 0; t < 16; ++t) {
      const int i = t / 2, h = t % 2;
      const int gm = r0 + (i % 4) + (i / 4) * (BM / 2), gn = c0 + h * (BN / 2) + lane;
      __syncwarp();
      *reinterpret_cast<float4*>(stage + 32 * (lane / 8) + 4 * (lane % 8)) = quads[t];
      __syncwarp();
      if (gn >= p.n) continue;
#pragma unroll
      for (int g = 0; g < 4; ++g) {
        const int r = gm + 4 * g;
        if (r >= p.m) break;
        const float v = stage[32 * g + lane];
        cuda::store(e.d.dtype, const_cast<void*>(e.d.ptr), batch * e.d.bs + (long long)r * e.d.sr + gn,
                    plain ? e.alpha * v : cuda::epilogue_value(e, batch, r, gn, v));
      }
    }
    return;
  }
#pragma unroll 1
  for (int t = 0; t < 16; ++t) {
    const int i = t / 2, h = t % 2;
    const int gm = m0 + row + (i % 4) + (i / 4) * (BM / 2), gn = n0 + col + h * (BN / 2);
    if (gm >= p.m || gn >= p.n) continue;
    cuda::epilogue_store_four(e, batch, gm, gn, p.n, quads[t]);
  }
}

}  // namespace omnigemm::detail::sgemm
