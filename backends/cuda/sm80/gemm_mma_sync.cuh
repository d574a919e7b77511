// Ampere-style GEMM (sm_80 and newer): cp.async copies into a multi-stage shared-memory ring,
// ldmatrix to fragments, mma.sync.m16n8k16 with f32 accumulators. The portable tensor-core path
// of the CUDA backend (Ampere, Ada) and the fallback on Hopper where TMA cannot take the operands
// (unaligned leading dimensions or bases, arbitrary strides, fp8 not K-major or mixed with f16).
// Pieces:
//   - loader: per K tile, either 16-byte cp.async copies of the operands as they lie in memory
//     (zero outside M/N/K), or (GATHER) element-wise loads with any strides into registers,
//     converted (fp8) and written to shared memory after the MMAs of the current tile;
//   - mainloop: WARPS_M x WARPS_N warps, each a grid of 16x8 accumulator fragments;
//   - epilogue: each warp passes its results through shared memory one 16-row strip at a time,
//     so that lanes finish 4 consecutive outputs of a row (the fused epilogue of epilogue.cuh)
//     and store them together.
// Tiles are visited in the grouped order of the shared scheduler.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "../epilogue.cuh"
#include "../mma_sync.cuh"
#include "launch.hpp"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail::sm80 {

struct KernelArgs {
  int m, n, k, num_pid_m, num_pid_n, group_m, stages, batch_base;
  cuda::OperandArgs a, b;  // strides in elements of their own dtype
  cuda::EpilogueArgs ep;
};

template <class T_, int BLOCK_M_, int BLOCK_N_, int WARPS_M_, int WARPS_N_, bool A_K_MAJOR_, bool B_K_MAJOR_, bool GATHER_>
struct Shape {
  using T = T_;  // multiplicand type: __half or __nv_bfloat16
  static constexpr int BLOCK_M = BLOCK_M_, BLOCK_N = BLOCK_N_, BLOCK_K = kBlockK;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr bool GATHER = GATHER_;
  // Resident blocks per SM the register budget must allow: two of the smaller tiles with the
  // copy loader (one block's barrier waits hide behind the other's MMAs); one 128x256, and one
  // where the gathering loader's registers would otherwise spill.
  static constexpr int MIN_BLOCKS = BLOCK_M * BLOCK_N >= 128 * 256 || GATHER ? 1 : 2;
  static constexpr bool A_K_MAJOR = A_K_MAJOR_ || GATHER, B_K_MAJOR = B_K_MAJOR_ || GATHER;
  static constexpr int WARP_M = BLOCK_M / WARPS_M, WARP_N = BLOCK_N / WARPS_N;
  static constexpr int FRAGS_M = WARP_M / 16, FRAGS_N = WARP_N / 8;  // m16n8 accumulator fragments
  static_assert(WARP_M % 16 == 0 && WARP_N % 16 == 0, "B fragments are loaded two n8 columns at a time");
  static constexpr int A_ROWS = tile_rows(BLOCK_M, A_K_MAJOR), A_PITCH = tile_pitch(BLOCK_M, A_K_MAJOR);
  static constexpr int B_ROWS = tile_rows(BLOCK_N, B_K_MAJOR), B_PITCH = tile_pitch(BLOCK_N, B_K_MAJOR);
  static constexpr int A_BYTES = 2 * A_ROWS * A_PITCH;
  // Epilogue strip per warp: 16 rows of WARP_N f32, padded by 8 (conflict-free float2 writes).
  static constexpr int STRIP_PITCH = WARP_N + 8, STRIP_FLOATS = 16 * STRIP_PITCH;
  static_assert(STRIP_FLOATS * 4 * WARPS_M * WARPS_N == epilogue_bytes(WARPS_M * WARPS_N, WARP_N));
  static constexpr int STAGE_BYTES = int(stage_bytes(BLOCK_M, BLOCK_N, A_K_MAJOR, B_K_MAJOR));
  // Elements per thread per K tile on the gathering path (registers; 1 when unused).
  static constexpr int GATHER_A = GATHER ? BLOCK_M * BLOCK_K / THREADS : 1;
  static constexpr int GATHER_B = GATHER ? BLOCK_N * BLOCK_K / THREADS : 1;
  static_assert(!GATHER || (BLOCK_M * BLOCK_K % THREADS == 0 && BLOCK_N * BLOCK_K % THREADS == 0));
};

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, asynchronously (cp.async.wait_group completes them).
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// Waits until at most stages - 2 copy groups are pending: the oldest K tile in flight landed.
__device__ __forceinline__ void cp_async_wait_oldest(int stages) {
  switch (stages) {
    case 2: cp_async_wait<0>(); break;
    case 3: cp_async_wait<1>(); break;
    case 4: cp_async_wait<2>(); break;
    default: cp_async_wait<3>(); break;
  }
}

template <bool TRANS>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

using cuda::mma_16816;

__device__ __forceinline__ void store_shared_16(unsigned dst, unsigned x, unsigned y, unsigned z, unsigned w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(x), "r"(y), "r"(z), "r"(w));
}

// One operand tile (ROWS rows of COLS contiguous elements in shared memory, pitch PITCH) from
// global rows [row0, row0 + ROWS) x columns [col0, col0 + COLS), zero at rows >= row_end or
// columns >= col_end; row_stride in elements. Whole 8-element vectors go by cp.async; a ragged
// end (fewer than 8 elements left in the row) is loaded element by element and nothing outside
// the operand is ever read (cp.async's zero-fill would still address the whole vector).
template <int ROWS, int COLS, int PITCH, int THREADS, class T>
__device__ __forceinline__ void copy_tile(unsigned dst, const T* src, long long row_stride, int row0, int row_end, int col0,
                                          int col_end) {
  constexpr int kVectors = COLS / 8, kTotal = ROWS * kVectors;
#pragma unroll
  for (int i = 0; i < (kTotal + THREADS - 1) / THREADS; ++i) {
    const int v = int(threadIdx.x) + i * THREADS;
    if (kTotal % THREADS == 0 || v < kTotal) {
      const int r = v / kVectors, c = (v % kVectors) * 8;
      const int left = row0 + r < row_end ? col_end - (col0 + c) : 0;  // valid elements from here
      const unsigned to = dst + unsigned(r * PITCH + c) * 2u;
      if (left >= 8) {
        cp_async_16(to, src + (row0 + r) * row_stride + (col0 + c));
      } else {
        const unsigned short* from = reinterpret_cast<const unsigned short*>(src + (row0 + r) * row_stride + (col0 + c));
        auto word = [&](int e) {  // elements e and e + 1, zero where absent
          return (e < left ? unsigned(from[e]) : 0u) | (e + 1 < left ? unsigned(from[e + 1]) << 16 : 0u);
        };
        store_shared_16(to, word(0), word(2), word(4), word(6));
      }
    }
  }
}

// Gathering loader: element (r, c) of a K-major tile (ROWS of the M or N index x BLOCK_K) is
// op[(row0 + r) * row_stride + (k0 + c) * k_stride], zero outside; threads walk the dimension
// that is contiguous in memory first so that the loads coalesce. The registers keep the raw
// bits (16-bit, or an fp8 byte); the element width is one uniform branch per tile, so the
// loads of a tile are independent of each other and all in flight during the MMAs.
template <int ROWS, int COUNT, int THREADS>
__device__ __forceinline__ void gather_tile(unsigned short (&raw)[COUNT], const cuda::OperandArgs& op, long long base,
                                            long long row_stride, long long k_stride, int row0, int row_end, int k0, int k_end) {
  const bool k_fastest = k_stride <= row_stride;
  auto gather = [&](const auto* elements) {
#pragma unroll
    for (int i = 0; i < COUNT; ++i) {
      const int e = int(threadIdx.x) + i * THREADS;
      const int r = k_fastest ? e / kBlockK : e % ROWS, c = k_fastest ? e % kBlockK : e / ROWS;
      raw[i] = row0 + r < row_end && k0 + c < k_end ? elements[base + (row0 + r) * row_stride + (k0 + c) * k_stride] : 0;
    }
  };
  if (op.dtype == OG_DTYPE_FP8_E4M3 || op.dtype == OG_DTYPE_FP8_E5M2) gather(static_cast<const unsigned char*>(op.ptr));
  else gather(static_cast<const unsigned short*>(op.ptr));
}

// The bits of the multiplicand type T for raw input bits: T's own, or an fp8 byte (exact in
// f16 and in bf16; e5m2 is the top byte of an f16).
template <class T>
__device__ __forceinline__ unsigned short multiplicand_bits(og_dtype dtype, unsigned short raw) {
  if (dtype != OG_DTYPE_FP8_E4M3 && dtype != OG_DTYPE_FP8_E5M2) return raw;
  if (std::is_same_v<T, __half> && dtype == OG_DTYPE_FP8_E5M2) return static_cast<unsigned short>(raw << 8);
  const float x = dtype == OG_DTYPE_FP8_E4M3 ? cuda::decode_e4m3(raw) : __half2float(__ushort_as_half(static_cast<unsigned short>(raw << 8)));
  if constexpr (std::is_same_v<T, __half>) return __half_as_ushort(__float2half_rn(x));
  else return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

template <int ROWS, int COUNT, int THREADS, int PITCH, class T>
__device__ __forceinline__ void deposit_tile(unsigned short* dst, const unsigned short (&raw)[COUNT], og_dtype dtype, bool k_fastest) {
#pragma unroll
  for (int i = 0; i < COUNT; ++i) {
    const int e = int(threadIdx.x) + i * THREADS;
    const int r = k_fastest ? e / kBlockK : e % ROWS, c = k_fastest ? e % kBlockK : e / ROWS;
    dst[r * PITCH + c] = multiplicand_bits<T>(dtype, raw[i]);
  }
}

template <class S>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS) gemm_mma_sync(KernelArgs p) {
  using T = typename S::T;
  extern __shared__ __align__(128) unsigned char smem[];
  // One block per work item of one batch (no split-K: one slice), from the shared scheduler;
  // the batch is grid z (launched in chunks from batch_base).
  const OgWork tile = og_work_item(int(blockIdx.x), p.num_pid_m, p.num_pid_n, p.group_m, 1);
  const long long batch = blockIdx.z + p.batch_base;
  const int m0 = tile.pid_m * S::BLOCK_M, n0 = tile.pid_n * S::BLOCK_N;
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const int warp_m0 = (warp % S::WARPS_M) * S::WARP_M, warp_n0 = (warp / S::WARPS_M) * S::WARP_N;
  const unsigned smem_base = shared_address(smem);
  const int k_tiles = (p.k + S::BLOCK_K - 1) / S::BLOCK_K;

  // Copy path: the operands are arrays of T; a tile is rows of the operand's contiguous index.
  const T* a = static_cast<const T*>(p.a.ptr) + batch * p.a.bs;
  const T* b = static_cast<const T*>(p.b.ptr) + batch * p.b.bs;
  auto copy_stage = [&](int kt, int slot) {
    const unsigned at = smem_base + unsigned(slot * S::STAGE_BYTES), bt = at + S::A_BYTES;
    const int k0 = kt * S::BLOCK_K;
    if constexpr (S::A_K_MAJOR) copy_tile<S::A_ROWS, S::BLOCK_K, S::A_PITCH, S::THREADS>(at, a, p.a.sr, m0, p.m, k0, p.k);
    else copy_tile<S::A_ROWS, S::BLOCK_M, S::A_PITCH, S::THREADS>(at, a, p.a.sc, k0, p.k, m0, p.m);
    if constexpr (S::B_K_MAJOR) copy_tile<S::B_ROWS, S::BLOCK_K, S::B_PITCH, S::THREADS>(bt, b, p.b.sc, n0, p.n, k0, p.k);
    else copy_tile<S::B_ROWS, S::BLOCK_N, S::B_PITCH, S::THREADS>(bt, b, p.b.sr, k0, p.k, n0, p.n);
  };
  // Gathering path: registers hold the K tile in flight.
  unsigned short a_regs[S::GATHER_A], b_regs[S::GATHER_B];
  const bool a_k_fastest = p.a.sc <= p.a.sr, b_k_fastest = p.b.sr <= p.b.sc;
  auto gather_stage = [&](int kt) {
    const int k0 = kt * S::BLOCK_K;
    gather_tile<S::BLOCK_M, S::GATHER_A, S::THREADS>(a_regs, p.a, batch * p.a.bs, p.a.sr, p.a.sc, m0, p.m, k0, p.k);
    gather_tile<S::BLOCK_N, S::GATHER_B, S::THREADS>(b_regs, p.b, batch * p.b.bs, p.b.sc, p.b.sr, n0, p.n, k0, p.k);
  };
  auto deposit_stage = [&](int slot) {
    unsigned short* at = reinterpret_cast<unsigned short*>(smem + slot * S::STAGE_BYTES);
    deposit_tile<S::BLOCK_M, S::GATHER_A, S::THREADS, S::A_PITCH, T>(at, a_regs, p.a.dtype, a_k_fastest);
    deposit_tile<S::BLOCK_N, S::GATHER_B, S::THREADS, S::B_PITCH, T>(at + S::A_BYTES / 2, b_regs, p.b.dtype, b_k_fastest);
  };

  float acc[S::FRAGS_M][S::FRAGS_N][4];
#pragma unroll
  for (int i = 0; i < S::FRAGS_M; ++i)
#pragma unroll
    for (int j = 0; j < S::FRAGS_N; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // ldmatrix.x4 lanes: lane / 8 picks one of four 8x8 matrices, lane % 8 its row.
  const int quad = lane / 8, row8 = lane % 8;
  auto mma_stage = [&](int slot) {
    const unsigned at = smem_base + unsigned(slot * S::STAGE_BYTES), bt = at + S::A_BYTES;
#pragma unroll
    for (int ks = 0; ks < S::BLOCK_K; ks += 16) {
      unsigned af[S::FRAGS_M][4], bf[S::FRAGS_N][2];
#pragma unroll
      for (int i = 0; i < S::FRAGS_M; ++i) {
        // Matrices: (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
        const int m = warp_m0 + i * 16 + (quad % 2) * 8, k = ks + (quad / 2) * 8;
        if constexpr (S::A_K_MAJOR) ldmatrix_x4<false>(af[i], at + unsigned((m + row8) * S::A_PITCH + k) * 2u);
        else ldmatrix_x4<true>(af[i], at + unsigned((k + row8) * S::A_PITCH + m) * 2u);
      }
#pragma unroll
      for (int j = 0; j < S::FRAGS_N; j += 2) {
        // Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
        const int n = warp_n0 + j * 8 + (quad / 2) * 8, k = ks + (quad % 2) * 8;
        unsigned r[4];
        if constexpr (S::B_K_MAJOR) ldmatrix_x4<false>(r, bt + unsigned((n + row8) * S::B_PITCH + k) * 2u);
        else ldmatrix_x4<true>(r, bt + unsigned((k + row8) * S::B_PITCH + n) * 2u);
        bf[j][0] = r[0]; bf[j][1] = r[1]; bf[j + 1][0] = r[2]; bf[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < S::FRAGS_M; ++i)
#pragma unroll
        for (int j = 0; j < S::FRAGS_N; ++j) mma_16816<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }
  };

  // Prologue: stages - 1 K tiles in flight (one copy group each, possibly empty).
  for (int s = 0; s < p.stages - 1; ++s) {
    if (s < k_tiles) {
      if constexpr (S::GATHER) {
        gather_stage(s);
        deposit_stage(s);
      } else {
        copy_stage(s, s);
      }
    }
    cp_async_commit();
  }
  int read_slot = 0, write_slot = p.stages - 1;
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait_oldest(p.stages);  // this thread's copies of tile kt landed ...
    __syncthreads();                 // ... everyone's; and every warp is done with tile kt - 1's slot
    const int next = kt + p.stages - 1;
    if constexpr (S::GATHER) {
      if (next < k_tiles) gather_stage(next);  // loads in flight during the MMAs
    } else {
      if (next < k_tiles) copy_stage(next, write_slot);
      cp_async_commit();
    }
    mma_stage(read_slot);
    if constexpr (S::GATHER)
      if (next < k_tiles) deposit_stage(write_slot);
    read_slot = read_slot + 1 == p.stages ? 0 : read_slot + 1;
    write_slot = write_slot + 1 == p.stages ? 0 : write_slot + 1;
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is reused for the epilogue strips

  // Epilogue, per 16-row strip of the warp's tile: fragment (i, j) holds rows g and g + 8,
  // columns 2t and 2t + 1 (g = lane / 4, t = lane % 4); they go to the warp's strip in shared
  // memory, then each lane takes 4 consecutive columns of a row at a time.
  float* strip = reinterpret_cast<float*>(smem) + warp * S::STRIP_FLOATS;
  const int g = lane / 4, t = lane % 4;
  constexpr int kQuads = S::WARP_N / 4;
#pragma unroll
  for (int i = 0; i < S::FRAGS_M; ++i) {
#pragma unroll
    for (int j = 0; j < S::FRAGS_N; ++j) {
      *reinterpret_cast<float2*>(strip + g * S::STRIP_PITCH + j * 8 + 2 * t) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(strip + (g + 8) * S::STRIP_PITCH + j * 8 + 2 * t) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
    __syncwarp();
#pragma unroll 1
    for (int e = lane; e < 16 * kQuads; e += 32) {
      const int r = e / kQuads, c = (e % kQuads) * 4;
      const int gm = m0 + warp_m0 + i * 16 + r, gn = n0 + warp_n0 + c;
      if (gm >= p.m || gn >= p.n) continue;
      const float4 v = *reinterpret_cast<const float4*>(strip + r * S::STRIP_PITCH + c);
      cuda::epilogue_store_four(p.ep, batch, gm, gn, p.n, v);
    }
    __syncwarp();  // the strip is rewritten for the next i
  }
}

}  // namespace omnigemm::detail::sm80
