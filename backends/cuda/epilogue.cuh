// The CUDA kernels' shared pieces: element decoding (the semantics of omnigemm/numeric.hpp),
// operand views, and the fused epilogue D = act(alpha * acc + beta * C + bias), whose math is
// omnigemm/epilogue.h (shared with the CPU backend, the GLSL shaders and the test reference).
// Outputs are rounded by the hardware conversions (__float2half_rn, __float2bfloat16_rn and
// their paired forms): round to nearest even, the same bits as epilogue.h's conversions for
// every non-NaN value.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "omnigemm/epilogue.h"
#include "omnigemm/omnigemm.h"

namespace omnigemm::detail::cuda {

__device__ __forceinline__ float decode_e4m3(unsigned b) {
  const unsigned e = (b >> 3) & 15u, m = b & 7u;
  const float s = (b & 0x80u) ? -1.0f : 1.0f;
  if (e == 15u && m == 7u) return __int_as_float(0x7fc00000);
  if (e == 0u) return s * float(m) * 0x1p-9f;
  return s * (1.0f + float(m) * 0.125f) * exp2f(float(int(e) - 7));
}

__device__ __forceinline__ float load(og_dtype t, const void* base, long long i) {
  switch (t) {
    case OG_DTYPE_F32: return static_cast<const float*>(base)[i];
    case OG_DTYPE_F16: return __half2float(static_cast<const __half*>(base)[i]);
    case OG_DTYPE_BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case OG_DTYPE_FP8_E4M3: return decode_e4m3(static_cast<const unsigned char*>(base)[i]);
    default: {  // e5m2 is the top byte of an f16
      const unsigned short h = static_cast<unsigned short>(static_cast<const unsigned char*>(base)[i]) << 8;
      return __half2float(__ushort_as_half(h));
    }
  }
}

__device__ __forceinline__ void store(og_dtype t, void* base, long long i, float v) {
  if (t == OG_DTYPE_F32) static_cast<float*>(base)[i] = v;
  else if (t == OG_DTYPE_F16) static_cast<__half*>(base)[i] = __float2half_rn(v);
  else static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
}

// Two horizontally adjacent outputs in one store (caller checked alignment and bounds).
__device__ __forceinline__ void store_pair(og_dtype t, void* base, long long i, float v0, float v1) {
  if (t == OG_DTYPE_F32) *reinterpret_cast<float2*>(static_cast<float*>(base) + i) = make_float2(v0, v1);
  else if (t == OG_DTYPE_F16) *reinterpret_cast<__half2*>(static_cast<__half*>(base) + i) = __floats2half2_rn(v0, v1);
  else *reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(base) + i) = __floats2bfloat162_rn(v0, v1);
}

struct OperandArgs {
  const void* ptr;
  og_dtype dtype;
  long long sr, sc, bs;  // strides in elements: row, column, batch
};

struct EpilogueArgs {
  OperandArgs c, d;
  bool has_c;
  float alpha, beta, slope;
  og_activation act;
  og_bias_mode bias_mode;
  og_dtype bias_dtype;
  const void* bias;
  long long bias_bs;
  // No C, D row-major (unit column stride) with 16-byte aligned base, row and batch strides:
  // whole rows of four outputs may leave in one vector store.
  bool d_vector_rows;
  // The same for columns: no C, D column-major (unit row stride) with 16-byte aligned base,
  // column and batch strides (D^T of a row-major D, as the swapped Hopper kernels write it).
  bool d_vector_cols;
  // A 16-bit D with unit column (row) stride, at any alignment and with or without C: the lines
  // the Hopper kernel's packed ways store (sm90/tile_epilogue.cuh copy_packed_lines).
  bool d_16_bit_rows, d_16_bit_cols;
};

// The bias term of output element (gm, gn) (0 without bias: og_epilogue_sum then skips it).
__device__ __forceinline__ float bias_value(const EpilogueArgs& e, long long batch, int gm, int gn) {
  if (e.bias_mode == OG_BIAS_PER_N) return load(e.bias_dtype, e.bias, batch * e.bias_bs + gn);
  if (e.bias_mode == OG_BIAS_PER_M) return load(e.bias_dtype, e.bias, batch * e.bias_bs + gm);
  return 0.0f;
}

// act(alpha * acc + beta * C + bias) for output element (gm, gn) of batch `batch`.
__device__ __forceinline__ float epilogue_value(const EpilogueArgs& e, long long batch, int gm, int gn, float acc) {
  const float c = e.has_c ? load(e.c.dtype, e.c.ptr, batch * e.c.bs + gm * e.c.sr + gn * e.c.sc) : 0.0f;
  return og_epilogue_apply(e.alpha, acc, e.has_c, e.beta, c, e.bias_mode != OG_BIAS_NONE, bias_value(e, batch, gm, gn),
                     int(e.act), e.slope);
}

__device__ __forceinline__ void epilogue_store(const EpilogueArgs& e, long long batch, int gm, int gn, float acc) {
  store(e.d.dtype, const_cast<void*>(e.d.ptr), batch * e.d.bs + gm * e.d.sr + gn * e.d.sc,
        epilogue_value(e, batch, gm, gn, acc));
}

// Outputs (gm, gn) and (gm, gn + 1), bounds-checked against m x n; one vector store where the
// pair is in range, row-contiguous and aligned.
__device__ __forceinline__ void epilogue_store_pair(const EpilogueArgs& e, long long batch, int m, int n, int gm, int gn,
                                                    float acc0, float acc1) {
  if (gm >= m || gn >= n) return;
  const long long i = batch * e.d.bs + gm * e.d.sr + gn;
  const int bytes = e.d.dtype == OG_DTYPE_F32 ? 4 : 2;
  const unsigned long long addr = reinterpret_cast<unsigned long long>(e.d.ptr) + (unsigned long long)(i * bytes);
  if (e.d.sc == 1 && gn + 1 < n && addr % (2 * bytes) == 0) {
    store_pair(e.d.dtype, const_cast<void*>(e.d.ptr), i, epilogue_value(e, batch, gm, gn, acc0),
               epilogue_value(e, batch, gm, gn + 1, acc1));
    return;
  }
  epilogue_store(e, batch, gm, gn, acc0);
  if (gn + 1 < n) epilogue_store(e, batch, gm, gn + 1, acc1);
}

// Whether the epilogue is alpha * acc alone (no C, bias or activation): the run stores below
// then skip the per-element epilogue (the same value: og_epilogue_apply reduces to alpha * acc).
__device__ __forceinline__ bool epilogue_plain(const EpilogueArgs& e) {
  return !e.has_c && e.bias_mode == OG_BIAS_NONE && e.act == OG_ACT_NONE;
}

// The epilogue of `count` (1..4) outputs from (gm, gn) on, consecutive along D's row (ALONG_ROW)
// or column, in place: alpha alone where plain, else per element (C read only where WITH_C: the
// quad's callers have none, and the load's code would cost their kernels registers).
template <bool ALONG_ROW, bool WITH_C>
__device__ __forceinline__ void epilogue_values(const EpilogueArgs& e, long long batch, int gm, int gn, int count, float (&v)[4]) {
  if (epilogue_plain(e)) {
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] *= e.alpha;
    return;
  }
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int r = ALONG_ROW ? gm : gm + q, c = ALONG_ROW ? gn + q : gn;
    if (q >= count) continue;
    if constexpr (WITH_C) v[q] = epilogue_value(e, batch, r, c, v[q]);
    else
      v[q] = og_epilogue_apply(e.alpha, v[q], false, 0.0f, 0.0f, e.bias_mode != OG_BIAS_NONE, bias_value(e, batch, r, c),
                               int(e.act), e.slope);
  }
}

// `count` (1..4) outputs from (gm, gn) on, consecutive along D's row (ALONG_ROW) or column, all
// in range, at any strides and alignment: the epilogue per element (alpha alone where plain),
// the address once per run, and for 16-bit outputs with a unit stride along the run, paired
// 4-byte stores where the address allows. The general stores of the kernels' edge and unaligned
// paths: a per-element epilogue_store costs several times the instructions.
template <bool ALONG_ROW>
__device__ __forceinline__ void epilogue_store_run(const EpilogueArgs& e, long long batch, int gm, int gn, int count, float4 acc) {
  float v[4] = {acc.x, acc.y, acc.z, acc.w};
  epilogue_values<ALONG_ROW, true>(e, batch, gm, gn, count, v);
  const long long step = ALONG_ROW ? e.d.sc : e.d.sr;
  const long long i0 = batch * e.d.bs + (long long)gm * e.d.sr + (long long)gn * e.d.sc;
  if (e.d.dtype == OG_DTYPE_F32) {
    float* d = static_cast<float*>(const_cast<void*>(e.d.ptr)) + i0;
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (q < count) d[q * step] = v[q];
    return;
  }
  const bool bf16 = e.d.dtype == OG_DTYPE_BF16;
  unsigned short* d = static_cast<unsigned short*>(const_cast<void*>(e.d.ptr)) + i0;
  unsigned short h[4];
#pragma unroll
  for (int q = 0; q < 4; ++q)
    h[q] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v[q])) : __half_as_ushort(__float2half_rn(v[q]));
  if (step == 1) {  // static register indices only: a dynamic one would put h in local memory
    auto pair = [](unsigned short lo, unsigned short hi) { return unsigned(lo) | (unsigned(hi) << 16); };
    if ((reinterpret_cast<unsigned long long>(d) & 2u) == 0) {  // 4-byte aligned: (0,1) (2,3)
      if (count >= 2) *reinterpret_cast<unsigned*>(d) = pair(h[0], h[1]);
      else d[0] = h[0];
      if (count == 4) *reinterpret_cast<unsigned*>(d + 2) = pair(h[2], h[3]);
      else if (count == 3) d[2] = h[2];
    } else {  // 2 bytes past a boundary: 0, (1,2), 3
      d[0] = h[0];
      if (count >= 3) *reinterpret_cast<unsigned*>(d + 1) = pair(h[1], h[2]);
      else if (count == 2) d[1] = h[1];
      if (count == 4) d[3] = h[3];
    }
    return;
  }
#pragma unroll
  for (int q = 0; q < 4; ++q)
    if (q < count) d[q * step] = h[q];
}

// Four horizontally adjacent outputs (gm, gn..gn+3), all in range, of a problem whose
// d_vector_rows holds and gn % 4 == 0: alpha, bias and activation, then one 8- or 16-byte store.
__device__ __forceinline__ void epilogue_store_quad(const EpilogueArgs& e, long long batch, int gm, int gn, float4 acc) {
  float v[4] = {acc.x, acc.y, acc.z, acc.w};
  epilogue_values<true, false>(e, batch, gm, gn, 4, v);
  const long long i = batch * e.d.bs + gm * e.d.sr + gn;
  if (e.d.dtype == OG_DTYPE_F32) {
    *reinterpret_cast<float4*>(static_cast<float*>(const_cast<void*>(e.d.ptr)) + i) = make_float4(v[0], v[1], v[2], v[3]);
  } else if (e.d.dtype == OG_DTYPE_F16) {
    const __half2 lo = __floats2half2_rn(v[0], v[1]), hi = __floats2half2_rn(v[2], v[3]);
    *reinterpret_cast<uint2*>(static_cast<__half*>(const_cast<void*>(e.d.ptr)) + i) =
        make_uint2(*reinterpret_cast<const unsigned*>(&lo), *reinterpret_cast<const unsigned*>(&hi));
  } else {
    const __nv_bfloat162 lo = __floats2bfloat162_rn(v[0], v[1]), hi = __floats2bfloat162_rn(v[2], v[3]);
    *reinterpret_cast<uint2*>(static_cast<__nv_bfloat16*>(const_cast<void*>(e.d.ptr)) + i) =
        make_uint2(*reinterpret_cast<const unsigned*>(&lo), *reinterpret_cast<const unsigned*>(&hi));
  }
}

// Four horizontally adjacent outputs (gm, gn..gn+3) of a row n wide, gn % 4 == 0 and gn < n:
// one vector store where D's rows allow it and all four are in range, else a run of those in
// range.
__device__ __forceinline__ void epilogue_store_four(const EpilogueArgs& e, long long batch, int gm, int gn, int n, float4 acc) {
  if (e.d_vector_rows && gn + 4 <= n) epilogue_store_quad(e, batch, gm, gn, acc);
  else epilogue_store_run<true>(e, batch, gm, gn, min(4, n - gn), acc);
}

}  // namespace omnigemm::detail::cuda
