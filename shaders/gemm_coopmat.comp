#version 450
// KHR cooperative-matrix GEMM (f16 multiplicands, f32 accumulation). Same bindings, push
// constants and specialization ids 0..11 as gemm_portable.comp, so one descriptor/pipeline layout
// serves both. The fragment shape (CM_M x CM_N x CM_K) comes from
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR at run time (ids 12..14), never hard-coded.
// A and B are staged to shared memory as f16: exact for f16, fp8 e4m3 and e5m2 inputs (both
// fp8 formats are subsets of f16). bf16/f32 inputs stay on the portable path (bf16 coopmat
// needs GL_EXT_bfloat16). One subgroup computes a WARP_M x WARP_N part of the workgroup tile.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

#include "omnigemm/tile_schedule.h"

layout(constant_id = 0) const uint BLOCK_M = 128;
layout(constant_id = 1) const uint BLOCK_N = 128;
layout(constant_id = 2) const uint BLOCK_K = 32;
layout(constant_id = 3) const int GROUP_M = 8;
layout(constant_id = 4) const uint THREADS = 128;
layout(constant_id = 5) const uint A_TYPE = 1;
layout(constant_id = 6) const uint B_TYPE = 1;
layout(constant_id = 7) const uint C_TYPE = 99;
layout(constant_id = 8) const uint D_TYPE = 0;
layout(constant_id = 9) const uint BIAS_MODE = 0;
layout(constant_id = 10) const uint BIAS_TYPE = 0;
layout(constant_id = 11) const uint ACTIVATION = 0;
layout(constant_id = 12) const uint CM_M = 16;
layout(constant_id = 13) const uint CM_N = 16;
layout(constant_id = 14) const uint CM_K = 16;
layout(constant_id = 15) const uint SUBGROUP = 32;  // the device's (required) subgroup size
layout(constant_id = 16) const uint WARPS_M = 2;    // subgroups along M; THREADS/SUBGROUP/WARPS_M along N

layout(local_size_x_id = 4) in;

layout(std430, set = 0, binding = 0) readonly buffer A32 { float a32[]; };
layout(std430, set = 0, binding = 1) readonly buffer A16 { uint16_t a16[]; };
layout(std430, set = 0, binding = 2) readonly buffer A8 { uint8_t a8[]; };
layout(std430, set = 0, binding = 3) readonly buffer B32 { float b32[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16 { uint16_t b16[]; };
layout(std430, set = 0, binding = 5) readonly buffer B8 { uint8_t b8[]; };
layout(std430, set = 0, binding = 6) readonly buffer C32 { float c32[]; };
layout(std430, set = 0, binding = 7) readonly buffer C16 { uint16_t c16[]; };
layout(std430, set = 0, binding = 8) buffer D32 { float d32[]; };
layout(std430, set = 0, binding = 9) buffer D16 { uint16_t d16[]; };
layout(std430, set = 0, binding = 10) readonly buffer Bias32 { float bias32[]; };
layout(std430, set = 0, binding = 11) readonly buffer Bias16 { uint16_t bias16[]; };
// 16-byte views of A's and B's 16-bit bindings (descriptor aliasing): 8 f16 per load when the
// contiguous dimension, the strides and the base are multiples of 8 elements.
layout(std430, set = 0, binding = 1) readonly buffer A16v { uvec4 a_vec[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16v { uvec4 b_vec[]; };

layout(push_constant) uniform Params {
  uint M, N, K;
  uint num_pid_m, num_pid_n, pid_base;
  uint a_sr, a_sc, a_bs, b_sr, b_sc, b_bs;
  uint c_sr, c_sc, c_bs, d_sr, d_sc, d_bs;
  uint bias_bs, batch_base;
  uint a_off, b_off, c_off, d_off, bias_off;
  float alpha, beta, slope;
} p;

// Decoders/encoders: the same definitions as gemm_portable.comp (omnigemm/numeric.hpp semantics).
float decode_f16(uint h) {
  uint e = (h >> 10) & 31u, m = h & 1023u;
  float s = (h & 0x8000u) != 0u ? -1.0 : 1.0;
  if (e == 0u) return s * float(m) * exp2(-24.0);
  if (e == 31u) return m == 0u ? s * uintBitsToFloat(0x7f800000u) : uintBitsToFloat(0x7fc00000u);
  return uintBitsToFloat(((h & 0x8000u) << 16) | ((e + 112u) << 23) | (m << 13));
}
float decode_bf16(uint h) { return uintBitsToFloat(h << 16); }
float decode_e4m3(uint b) {
  uint e = (b >> 3) & 15u, m = b & 7u;
  float s = (b & 0x80u) != 0u ? -1.0 : 1.0;
  if (e == 15u && m == 7u) return uintBitsToFloat(0x7fc00000u);
  if (e == 0u) return s * float(m) * exp2(-9.0);
  return s * (1.0 + float(m) / 8.0) * exp2(float(int(e) - 7));
}
float decode(uint type, uint bits) {
  if (type == 1u) return decode_f16(bits);
  if (type == 2u) return decode_bf16(bits);
  if (type == 3u) return decode_e4m3(bits);
  return decode_f16(bits << 8);  // e5m2 is the top byte of an f16
}
float load_c(uint i) { return C_TYPE == 0u ? c32[i] : decode(C_TYPE, uint(c16[i])); }
float load_bias(uint i) { return BIAS_TYPE == 0u ? bias32[i] : decode(BIAS_TYPE, uint(bias16[i])); }

// f16 bits of an A/B element: f16 passes through; fp8 converts exactly.
uint16_t a_bits(uint i) {
  if (A_TYPE == 1u) return a16[i];
  return float16BitsToUint16(float16_t(decode(A_TYPE, uint(a8[i]))));
}
uint16_t b_bits(uint i) {
  if (B_TYPE == 1u) return b16[i];
  return float16BitsToUint16(float16_t(decode(B_TYPE, uint(b8[i]))));
}

uint encode_f16(float f) {
  uint x = floatBitsToUint(f);
  uint sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (x >= 0x47800000u) return sign | 0x7c00u;
  if (x < 0x38800000u) {
    uint shift = 126u - (x >> 23);
    if (shift > 24u) return sign;
    uint mant = (x & 0x7fffffu) | 0x800000u;
    uint q = mant >> shift, rem = mant & ((1u << shift) - 1u), tie = 1u << (shift - 1u);
    if (rem > tie || (rem == tie && (q & 1u) != 0u)) q += 1u;
    return sign | q;
  }
  uint odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;
  return sign | (x >> 13);
}
uint encode_bf16(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}
float activate(float x) {
  if (ACTIVATION == 1u) return x > 0.0 ? x : 0.0;
  if (ACTIVATION == 2u) return x >= 0.0 ? x : p.slope * x;
  if (ACTIVATION == 3u) return 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)));
  if (ACTIVATION == 4u) return x / (1.0 + exp(-x));
  return x;
}

const uint WARPS = THREADS / SUBGROUP;
const uint WARPS_N = WARPS / WARPS_M;
const uint WARP_M = BLOCK_M / WARPS_M, WARP_N = BLOCK_N / WARPS_N;
const uint FRAG_M = WARP_M / CM_M, FRAG_N = WARP_N / CM_N;
// Rows padded by 8 halves (16 bytes) against shared-memory bank conflicts.
const uint A_LD = BLOCK_K + 8u, B_LD = BLOCK_N + 8u;

shared float16_t a_tile[BLOCK_M * A_LD];  // row-major M x K
shared float16_t b_tile[BLOCK_K * B_LD];  // row-major K x N
shared float out_frag[WARPS * CM_M * CM_N];  // one accumulator fragment per subgroup, for the epilogue

void store8(bool to_a, uint at, uvec4 v) {
  [[unroll]] for (uint i = 0; i < 4u; ++i) {
    const f16vec2 h = unpackFloat2x16(v[i]);
    if (to_a) { a_tile[at + 2u * i] = h.x; a_tile[at + 2u * i + 1u] = h.y; }
    else { b_tile[at + 2u * i] = h.x; b_tile[at + 2u * i + 1u] = h.y; }
  }
}

void main() {
  const OgTile tile = og_grouped_tile(int(gl_WorkGroupID.x + p.pid_base), int(p.num_pid_m), int(p.num_pid_n), GROUP_M);
  const uint batch = gl_WorkGroupID.z + p.batch_base;
  const uint m0 = uint(tile.pid_m) * BLOCK_M, n0 = uint(tile.pid_n) * BLOCK_N;
  const uint tid = gl_LocalInvocationID.x;
  const uint warp = tid / SUBGROUP, lane = tid % SUBGROUP;
  const uint wm = warp % WARPS_M, wn = warp / WARPS_M;
  const uint a_base = p.a_off + batch * p.a_bs, b_base = p.b_off + batch * p.b_bs;

  coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> acc[FRAG_M][FRAG_N];
  [[unroll]] for (uint i = 0; i < FRAG_M; ++i)
    [[unroll]] for (uint j = 0; j < FRAG_N; ++j) acc[i][j] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);

  const bool a_vec_ok = A_TYPE == 1u && BLOCK_K % 8u == 0u && p.a_sc == 1u && p.a_sr % 8u == 0u &&
                        a_base % 8u == 0u && p.K % 8u == 0u;
  const bool b_vec_ok = B_TYPE == 1u && BLOCK_N % 8u == 0u && p.b_sc == 1u && p.b_sr % 8u == 0u &&
                        b_base % 8u == 0u && p.N % 8u == 0u;
  for (uint k0 = 0; k0 < p.K; k0 += BLOCK_K) {
    if (a_vec_ok) {
      for (uint e = tid; e < BLOCK_M * BLOCK_K / 8u; e += THREADS) {
        const uint m = e / (BLOCK_K / 8u), k = (e % (BLOCK_K / 8u)) * 8u;
        const uint gm = m0 + m, gk = k0 + k;
        store8(true, m * A_LD + k, (gm < p.M && gk < p.K) ? a_vec[(a_base + gm * p.a_sr + gk) / 8u] : uvec4(0));
      }
    }
    if (b_vec_ok) {
      for (uint e = tid; e < BLOCK_N * BLOCK_K / 8u; e += THREADS) {
        const uint k = e / (BLOCK_N / 8u), n = (e % (BLOCK_N / 8u)) * 8u;
        const uint gn = n0 + n, gk = k0 + k;
        store8(false, k * B_LD + n, (gn < p.N && gk < p.K) ? b_vec[(b_base + gk * p.b_sr + gn) / 8u] : uvec4(0));
      }
    }
    // Masked loads (zeros outside M/N/K); consecutive threads walk the contiguous dimension.
    const bool a_k_contig = p.a_sc == 1u;
    for (uint e = tid; !a_vec_ok && e < BLOCK_M * BLOCK_K; e += THREADS) {
      const uint m = a_k_contig ? e / BLOCK_K : e % BLOCK_M, k = a_k_contig ? e % BLOCK_K : e / BLOCK_M;
      const uint gm = m0 + m, gk = k0 + k;
      a_tile[m * A_LD + k] = uint16BitsToFloat16((gm < p.M && gk < p.K) ? a_bits(a_base + gm * p.a_sr + gk * p.a_sc) : uint16_t(0));
    }
    const bool b_n_contig = p.b_sc == 1u;
    for (uint e = tid; !b_vec_ok && e < BLOCK_N * BLOCK_K; e += THREADS) {
      const uint n = b_n_contig ? e % BLOCK_N : e / BLOCK_K, k = b_n_contig ? e / BLOCK_N : e % BLOCK_K;
      const uint gn = n0 + n, gk = k0 + k;
      b_tile[k * B_LD + n] = uint16BitsToFloat16((gn < p.N && gk < p.K) ? b_bits(b_base + gk * p.b_sr + gn * p.b_sc) : uint16_t(0));
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < BLOCK_K; kk += CM_K) {
      coopmat<float16_t, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b_frag[FRAG_N];
      [[unroll]] for (uint j = 0; j < FRAG_N; ++j)
        coopMatLoad(b_frag[j], b_tile, kk * B_LD + wn * WARP_N + j * CM_N, B_LD, gl_CooperativeMatrixLayoutRowMajor);
      [[unroll]] for (uint i = 0; i < FRAG_M; ++i) {
        coopmat<float16_t, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a_frag;
        coopMatLoad(a_frag, a_tile, (wm * WARP_M + i * CM_M) * A_LD + kk, A_LD, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint j = 0; j < FRAG_N; ++j) acc[i][j] = coopMatMulAdd(a_frag, b_frag[j], acc[i][j]);
      }
    }
    barrier();
  }

  // Epilogue per fragment: the subgroup stores it to its shared slot, then each lane applies
  // alpha, beta*C, bias, activation and rounding to its elements, masked at the edges.
  const uint slot = warp * CM_M * CM_N;
  [[unroll]] for (uint i = 0; i < FRAG_M; ++i) {
    [[unroll]] for (uint j = 0; j < FRAG_N; ++j) {
      coopMatStore(acc[i][j], out_frag, slot, CM_N, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      for (uint e = lane; e < CM_M * CM_N; e += SUBGROUP) {
        const uint gm = m0 + wm * WARP_M + i * CM_M + e / CM_N;
        const uint gn = n0 + wn * WARP_N + j * CM_N + e % CM_N;
        if (gm >= p.M || gn >= p.N) continue;
        float v = p.alpha * out_frag[slot + e];
        if (C_TYPE != 99u) v += p.beta * load_c(p.c_off + batch * p.c_bs + gm * p.c_sr + gn * p.c_sc);
        if (BIAS_MODE == 1u) v += load_bias(p.bias_off + batch * p.bias_bs + gn);
        if (BIAS_MODE == 2u) v += load_bias(p.bias_off + batch * p.bias_bs + gm);
        v = activate(v);
        const uint di = p.d_off + batch * p.d_bs + gm * p.d_sr + gn * p.d_sc;
        if (D_TYPE == 0u) d32[di] = v;
        else if (D_TYPE == 1u) d16[di] = uint16_t(encode_f16(v));
        else d16[di] = uint16_t(encode_bf16(v));
      }
      subgroupMemoryBarrierShared();  // the slot is rewritten by the next fragment
    }
  }
}
