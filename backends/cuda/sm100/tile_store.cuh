// The Blackwell family's epilogue: each of the four epilogue warps reads its 32 accumulator rows
// out of tensor memory (tcgen05.ld 32x32b, one row per thread), 128 bytes of D per row at a
// time, and applies the shared epilogue (omnigemm/epilogue.h through ../epilogue.cuh):
//   - the plain GEMM (alpha only) into a D that TMA can store: alpha and the rounding in
//     registers, the 32 x 128-byte box staged in shared memory with the 128-byte swizzle (each
//     thread's eight 16-byte units land in eight different bank groups), one TMA store;
//   - everything else (C, bias, activation, strided or unaligned D): the f32 accumulators
//     through shared memory to the general per-element epilogue, a warp's stores along rows.
#pragma once
#include "../epilogue.cuh"
#include "tcgen05_ops.cuh"

namespace omnigemm::detail::sm100 {

#ifdef OG_SM100A_DEVICE
__device__ __forceinline__ void st_shared_u32x4(uint32_t addr, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}

template <bool BF16>
__device__ __forceinline__ uint32_t pack_16(float x0, float x1) {
  if constexpr (BF16) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __half2 h = __floats2half2_rn(x0, x1);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

// The plain GEMM (no C, bias or activation) into a D that TMA can store (row-major, 16-byte
// aligned): one warp's chunk, its 32 rows (D rows row0.., thread `lane` row row0 + lane) x 128
// bytes of columns col0.. from tensor memory at `taddr` (the warp's lane quarter, the chunk's
// first accumulator column), times alpha and rounded, staged at `staging` (4 KiB, 1024-byte
// aligned) and stored by one TMA store, which drops what lies beyond D. The caller's lane 0 has
// waited for the previous store of `staging` to read it.
template <int D_BYTES>
__device__ __forceinline__ void store_plain_chunk(float alpha, bool bf16, const CUtensorMap* map_d, uint32_t taddr,
                                                  uint32_t staging, int batch, int row0, int col0, int lane) {
  uint32_t lo[32], hi[32];
  tmem_load_32(taddr, lo);
  if constexpr (D_BYTES == 2) tmem_load_32(taddr + 32, hi);
  tmem_load_wait();
  auto value = [&](int i) {  // constant indices once unrolled
    uint32_t bits = lo[i % 32];
    if constexpr (D_BYTES == 2) bits = i < 32 ? lo[i] : hi[i - 32];
    return og_epilogue_sum(alpha, __uint_as_float(bits), false, 0.0f, 0.0f, false, 0.0f);
  };
  uint32_t words[32];  // eight 16-byte units of the row
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    if constexpr (D_BYTES == 4)
      words[i] = __float_as_uint(value(i));
    else
      words[i] = bf16 ? pack_16<true>(value(2 * i), value(2 * i + 1)) : pack_16<false>(value(2 * i), value(2 * i + 1));
  }
#pragma unroll
  for (int u = 0; u < 8; ++u)
    st_shared_u32x4(staging + sw128_offset(lane, 16 * u), words[4 * u], words[4 * u + 1], words[4 * u + 2],
                    words[4 * u + 3]);
  fence_proxy_async_shared();
  __syncwarp();
  if (lane == 0) tma_store_3d(map_d, staging, col0, row0, batch);
}

__device__ __forceinline__ float ld_shared_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

// The staged 32 x 32 f32 block through the general epilogue (C, bias, activation, any D):
// lane l takes column col0 + l of each row, so a warp's stores cover consecutive columns. Not
// inlined: one copy serves every chunk.
static __device__ __noinline__ void finish_general_block(const cuda::EpilogueArgs& args, uint32_t staging, int batch, int m,
                                                         int n, int row0, int col0, int lane) {
  const cuda::EpilogueArgs e = args;
  const int gn = col0 + lane;
  if (gn >= n) return;
#pragma unroll 1
  for (int r = 0; r < 32 && row0 + r < m; ++r)
    cuda::epilogue_store(e, batch, row0 + r, gn, ld_shared_f32(staging + sw128_offset(r, 4 * lane)));
}

// Any other epilogue: 32 accumulator columns of the warp's 32 rows through shared memory (the
// 128-byte swizzle keeps the row-wise writes and the column-wise reads free of bank conflicts)
// to finish_general_block.
__device__ __forceinline__ void store_general_chunk(const cuda::EpilogueArgs& e, uint32_t taddr, uint32_t staging, int batch,
                                                    int m, int n, int row0, int col0, int lane) {
  uint32_t v[32];
  tmem_load_32(taddr, v);
  tmem_load_wait();
  __syncwarp();  // every lane has read the previous block
#pragma unroll
  for (int u = 0; u < 8; ++u)
    st_shared_u32x4(staging + sw128_offset(lane, 16 * u), v[4 * u], v[4 * u + 1], v[4 * u + 2], v[4 * u + 3]);
  __syncwarp();
  finish_general_block(e, staging, batch, m, n, row0, col0, lane);
}
#endif

}  // namespace omnigemm::detail::sm100
