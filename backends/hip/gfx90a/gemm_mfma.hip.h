// The hip.gfx90a_mfma kernel (AMD MI200, gfx90a): LDS-tiled GEMM on MFMA with f32 accumulators.
// Device code only; every index it uses comes from tile_map.h and every memory access from
// tile_io.h (both also compiled on the host by the model test).
//
// Per workgroup: one BLOCK_M x BLOCK_N tile of D of one batch, in the grouped order of the shared
// scheduler (omnigemm/tile_schedule.h, og_work_item); the batch is grid z. One LDS buffer per
// operand ("num_stages = 0"): the K tile after the current one is loaded into registers while the
// waves run the MFMAs of the current one, then written to LDS between two barriers. The epilogue
// (omnigemm/epilogue.h through tile_io.h) runs from the accumulators straight to D.
#pragma once
#include <hip/hip_runtime.h>

#include <type_traits>

#include "omnigemm/tile_schedule.h"
#include "tile_io.h"

namespace omnigemm::hip {

typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));

template <int MFMA>
using AccBlock = std::conditional_t<MFMA == 32, float16_t, float4_t>;

// One MFMA step: acc += A (4 elements of this lane) x B (4 elements), f32 accumulate. The 4
// elements are half `half` of a Vec8 read by read_operand.
template <int MFMA, bool BF16>
__device__ __forceinline__ AccBlock<MFMA> mfma_step(const Vec8& a, const Vec8& b, int half, AccBlock<MFMA> acc) {
  typedef unsigned short u16x4 __attribute__((vector_size(8)));
  const u16x4 a4 = half ? __builtin_shufflevector(a, a, 4, 5, 6, 7) : __builtin_shufflevector(a, a, 0, 1, 2, 3);
  const u16x4 b4 = half ? __builtin_shufflevector(b, b, 4, 5, 6, 7) : __builtin_shufflevector(b, b, 0, 1, 2, 3);
  if constexpr (BF16) {
    const short4_t x = __builtin_bit_cast(short4_t, a4), y = __builtin_bit_cast(short4_t, b4);
    if constexpr (MFMA == 32) return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(x, y, acc, 0, 0, 0);
    else return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(x, y, acc, 0, 0, 0);
  } else {
    const half4_t x = __builtin_bit_cast(half4_t, a4), y = __builtin_bit_cast(half4_t, b4);
    if constexpr (MFMA == 32) return __builtin_amdgcn_mfma_f32_32x32x8f16(x, y, acc, 0, 0, 0);
    else return __builtin_amdgcn_mfma_f32_16x16x16f16(x, y, acc, 0, 0, 0);
  }
}

// LDS elements the kernel of a tile shape needs; the kernel entry (instances.hip) declares the
// array itself (an LDS variable of a device function would be allocated in every kernel).
template <int BLOCK_M, int BLOCK_N, int BLOCK_K>
constexpr int kLdsElements = (BLOCK_M + BLOCK_N) * BLOCK_K;

template <int BLOCK_M, int BLOCK_N, int BLOCK_K, int WAVES, bool BF16, bool GATHER>
__device__ __forceinline__ void gemm_mfma(const KernelArgs& p, unsigned short* lds) {
  constexpr Geometry G = make_geometry(BLOCK_M, BLOCK_N, BLOCK_K, WAVES);
  static_assert(geometry_ok(G), "a row of families/gfx90a_mfma.inc that the kernel cannot build (tile_map.h)");
  static_assert(kLdsElements<BLOCK_M, BLOCK_N, BLOCK_K> == G.lds_a + G.lds_b);
  unsigned short* const lds_a = lds;
  unsigned short* const lds_b = lds + G.lds_a;

  const int tid = int(threadIdx.x), lane = tid % kWave, wave = tid / kWave;
  const OgWork work = og_work_item(int(blockIdx.x), p.num_pid_m, p.num_pid_n, p.group_m, 1);
  const unsigned batch = blockIdx.z + unsigned(p.batch_base);  // below 2^31 (plan.cpp); zero-extends
  const int m0 = work.pid_m * BLOCK_M, n0 = work.pid_n * BLOCK_N;
  const int row_a0 = wave_row0(G, wave), row_b0 = wave_col0(G, wave);
  const int group = operand_group(G, lane);

  AccBlock<G.mfma> acc[G.frags_m][G.frags_n];
#pragma unroll
  for (int i = 0; i < G.frags_m; ++i)
#pragma unroll
    for (int j = 0; j < G.frags_n; ++j) acc[i][j] = AccBlock<G.mfma>{};

  TileRegs<G.vec_a> ra;
  TileRegs<G.vec_b> rb;
  const int k_tiles = (p.k + BLOCK_K - 1) / BLOCK_K;
  if (k_tiles > 0) {
    fetch_tile<GATHER, BLOCK_M>(G, p.a, batch, m0, p.m, 0, p.k, tid, BF16, ra);
    fetch_tile<GATHER, BLOCK_N>(G, p.b, batch, n0, p.n, 0, p.k, tid, BF16, rb);
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    if (kt > 0) __syncthreads();  // every wave is done reading the previous tile
    store_tile<GATHER, BLOCK_M>(G, lds_a, p.a, tid, ra);
    store_tile<GATHER, BLOCK_N>(G, lds_b, p.b, tid, rb);
    __syncthreads();
    if (kt + 1 < k_tiles) {  // the next tile's loads are in flight during the MFMAs
      const int k0 = (kt + 1) * BLOCK_K;
      fetch_tile<GATHER, BLOCK_M>(G, p.a, batch, m0, p.m, k0, p.k, tid, BF16, ra);
      fetch_tile<GATHER, BLOCK_N>(G, p.b, batch, n0, p.n, k0, p.k, tid, BF16, rb);
    }
#pragma unroll
    for (int pair = 0; pair < G.steps / 2; ++pair) {
      Vec8 fa[G.frags_m], fb[G.frags_n];
#pragma unroll
      for (int i = 0; i < G.frags_m; ++i) fa[i] = read_operand(G, lds_a, operand_row(G, row_a0, i, lane), group, pair);
#pragma unroll
      for (int j = 0; j < G.frags_n; ++j) fb[j] = read_operand(G, lds_b, operand_row(G, row_b0, j, lane), group, pair);
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int i = 0; i < G.frags_m; ++i)
#pragma unroll
          for (int j = 0; j < G.frags_n; ++j) acc[i][j] = mfma_step<G.mfma, BF16>(fa[i], fb[j], half, acc[i][j]);
    }
  }

  // The epilogue's arguments are read from the argument block here, after the main loop, not
  // held in scalar registers through it (the pointer is opaque to the compiler from here on).
  // `p` is the kernel's only argument, at offset 0 of the kernarg segment (hip_codegen checks
  // this in every kernel's metadata).
  typedef const __attribute__((address_space(4))) char* KernargPtr;
  KernargPtr kernarg = (KernargPtr)__builtin_amdgcn_kernarg_segment_ptr();
  asm volatile("" : "+s"(kernarg));
  const EpilogueView* ep = (const EpilogueView*)(kernarg + __builtin_offsetof(KernelArgs, ep));
#pragma unroll
  for (int i = 0; i < G.frags_m; ++i)
#pragma unroll
    for (int j = 0; j < G.frags_n; ++j)
      store_block(G, *ep, batch, p.m, p.n, m0 + row_a0 + i * G.mfma, n0 + row_b0 + j * G.mfma, lane, acc[i][j]);
}

}  // namespace omnigemm::hip
