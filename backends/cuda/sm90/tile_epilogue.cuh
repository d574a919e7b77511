// The Hopper kernel's epilogue: one consumer warpgroup writes its 64-row accumulator blocks to D.
// The accumulators go through shared-memory chunks of 64 rows x 128 bytes whose 16-byte units
// are XOR-swizzled by row (the TMA 128-byte swizzle pattern), so that both the writes in
// wgmma's register layout and the row-wise reads are free of bank conflicts; each consumer
// alternates between two chunks, so one named barrier per chunk suffices. Three ways out,
// chosen once per launch (uniform branches):
//   - packed: f16/bf16 D with vector-aligned rows, no C, no bias, no activation (the plain
//     GEMM): alpha and the rounding happen in registers, a chunk holds 64 x 64 finished
//     outputs, and each thread stores 16 bytes at a time;
//   - vector: D with vector-aligned rows and no C: a chunk holds 64 x 32 f32 accumulators and
//     each thread finishes four outputs at a time (alpha, bias, activation) into one 8- or
//     16-byte store;
//   - generic (C present, strided or unaligned D): 64 x 32 f32 per chunk through the fully
//     general per-element epilogue, in a function of its own (one copy per translation unit).
// An earlier version sent every chunk through the generic function; at 4096^3 its ~420
// instructions per warp and chunk kept the consumers out of the mainloop a third of the time.
#pragma once
#include <cstdint>

#include "../epilogue.cuh"
#include "device_arch.cuh"
#include "launch.hpp"

namespace omnigemm::detail::sm90 {

#ifdef OG_SM90A_DEVICE
// Byte offset of byte `byte` of row `row` in a 64 x 128-byte swizzled chunk.
__device__ __forceinline__ int chunk_offset(int row, int byte) {
  return row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
}

__device__ __forceinline__ uint32_t pack_pair(og_dtype t, float x0, float x1) {
  if (t == OG_DTYPE_F16) {
    const __half2 h = __floats2half2_rn(x0, x1);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
  const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// Packed chunk (64 x 64 16-bit outputs) to D rows row0.., columns col0.. .
__device__ __forceinline__ void copy_packed_chunk(const cuda::EpilogueArgs& e, int batch, int m, int n, int row0, int col0,
                                                  const unsigned char* chunk, int thread) {
  uint16_t* d = static_cast<uint16_t*>(const_cast<void*>(e.d.ptr)) + (long long)batch * e.d.bs;
#pragma unroll
  for (int i = thread; i < 64 * 8; i += 128) {
    const int row = i / 8, unit = i % 8;
    const int gm = row0 + row, gn = col0 + 8 * unit;
    if (gm >= m || gn >= n) continue;
    const uint4 v = *reinterpret_cast<const uint4*>(chunk + chunk_offset(row, 16 * unit));
    uint16_t* dst = d + (long long)gm * e.d.sr + gn;
    if (gn + 8 <= n) {
      *reinterpret_cast<uint4*>(dst) = v;
    } else {
      const uint16_t* h = reinterpret_cast<const uint16_t*>(&v);
      for (int q = 0; q < n - gn; ++q) dst[q] = h[q];
    }
  }
}

// f32 chunk (64 x 32 accumulators) through the quad epilogue (D rows vector-aligned, no C).
__device__ __forceinline__ void finish_vector_chunk(const cuda::EpilogueArgs& e, int batch, int m, int n, int row0, int col0,
                                                    const unsigned char* chunk, int thread) {
#pragma unroll 1
  for (int i = thread; i < 64 * 8; i += 128) {
    const int row = i / 8, unit = i % 8;
    const int gm = row0 + row, gn = col0 + 4 * unit;
    if (gm >= m || gn >= n) continue;
    const float4 v = *reinterpret_cast<const float4*>(chunk + chunk_offset(row, 16 * unit));
    if (gn + 4 <= n) {
      cuda::epilogue_store_quad(e, batch, gm, gn, v);
    } else {
      const float q[4] = {v.x, v.y, v.z, v.w};
      for (int j = 0; j < n - gn; ++j) cuda::epilogue_store(e, batch, gm, gn + j, q[j]);
    }
  }
}

// f32 chunk through the general epilogue (C, any strides, any alignment). Not inlined: one copy
// serves every chunk of every kernel in the translation unit. The arguments are copied into
// locals first: read through the reference, every output store (a generic pointer) could alias
// them and the compiler would reload them per element.
static __device__ __noinline__ void finish_generic_chunk(const cuda::EpilogueArgs& args, int batch, int m, int n, int row0,
                                                         int col0, const unsigned char* chunk, int thread) {
  const cuda::EpilogueArgs e = args;
#pragma unroll 1
  for (int i = thread; i < 64 * 16; i += 128) {
    const int row = i / 16, c = 2 * (i % 16);
    const float2 v = *reinterpret_cast<const float2*>(chunk + chunk_offset(row, 4 * c));
    cuda::epilogue_store_pair(e, batch, m, n, row0 + row, col0 + c, v.x, v.y);
  }
}

__device__ __forceinline__ void consumer_barrier(int consumer) {
  asm volatile("bar.sync %0, 128;" ::"r"(1 + consumer) : "memory");
}
// A consumer-wide barrier that also tells every thread whether `pred` held for any of them.
__device__ __forceinline__ bool consumer_any(int consumer, bool pred) {
  uint32_t any;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, 128, p;\nselp.u32 %0, 1, 0, q;\n}"
      : "=r"(any)
      : "r"(uint32_t(pred)), "r"(1 + consumer)
      : "memory");
  return any != 0;
}

// Writes one consumer's WG_M x (64 x BLOCK_N) accumulator blocks: block r covers rows
// row0 + 64 r .. and columns col0 .. col0 + BLOCK_N - 1. Accumulator register 4j + 2h + e of
// thread (warp, lane) is row 16 warp + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + e of its
// block (wgmma's layout). `chunks` are this consumer's two staging chunks; `sequence` counts
// the chunks it has used, so the double buffering carries across tiles.
template <int WG_M, int BLOCK_N>
__device__ __forceinline__ void store_tile(float (&acc)[WG_M][BLOCK_N / 2], const cuda::EpilogueArgs& e, int batch, int m,
                                           int n, int row0, int col0, unsigned char* chunks, int consumer, int thread,
                                           unsigned& sequence) {
  const int warp = thread / 32, lane = thread % 32;
  const bool packed =
      e.d_vector_rows && e.d.dtype != OG_DTYPE_F32 && e.bias_mode == OG_BIAS_NONE && e.act == OG_ACT_NONE;
#pragma unroll
  for (int r = 0; r < WG_M; ++r) {
    const int block_row0 = row0 + 64 * r;
    if (packed) {
#pragma unroll
      for (int c = 0; c < BLOCK_N / 64; ++c) {
        unsigned char* chunk = chunks + (sequence++ & 1u) * kChunkBytes;
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int q = 4 * (8 * c + j) + 2 * h;
            const uint32_t bits = pack_pair(e.d.dtype, e.alpha * acc[r][q], e.alpha * acc[r][q + 1]);
            *reinterpret_cast<uint32_t*>(chunk + chunk_offset(16 * warp + lane / 4 + 8 * h, 16 * j + 4 * (lane % 4))) = bits;
          }
        consumer_barrier(consumer);
        copy_packed_chunk(e, batch, m, n, block_row0, col0 + 64 * c, chunk, thread);
      }
    } else {
#pragma unroll
      for (int c = 0; c < BLOCK_N / 32; ++c) {
        unsigned char* chunk = chunks + (sequence++ & 1u) * kChunkBytes;
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int q = 4 * (4 * c + j) + 2 * h;
            *reinterpret_cast<float2*>(chunk + chunk_offset(16 * warp + lane / 4 + 8 * h, 32 * j + 8 * (lane % 4))) =
                make_float2(acc[r][q], acc[r][q + 1]);
          }
        consumer_barrier(consumer);
        if (e.d_vector_rows) finish_vector_chunk(e, batch, m, n, block_row0, col0 + 32 * c, chunk, thread);
        else finish_generic_chunk(e, batch, m, n, block_row0, col0 + 32 * c, chunk, thread);
      }
    }
  }
}
#endif

}  // namespace omnigemm::detail::sm90
