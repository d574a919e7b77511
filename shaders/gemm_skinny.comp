#version 450
// Skinny GEMM for few rows of A (LLM decode: M = 1..32), bound by reading B once. One workgroup
// per BLOCK_N columns of D (and batch): its THREADS = CT x KT invocations are CT column threads of
// VEC consecutive columns each, times KT threads along K, each summing every KT-th K; so a
// workgroup streams its columns of B over all of K with KT rows in flight per step, and there are
// N / BLOCK_N workgroups (many more than the 2-D tile families have for small M). The rows of A
// are done BLOCK_M at a time (B is read again for each further chunk, from cache), K in blocks of
// BLOCK_K whose A values the workgroup decodes once into shared memory; the KT partial
// sums of each output are added in a fixed order through shared memory (deterministic), then the
// shared epilogue runs once per row of the chunk.
//
// Specialization ids 0..6 (gemm_common.glsl): BLOCK_M rows of A per pass, BLOCK_N columns per
// workgroup, BLOCK_K the K block (a multiple of KT), GROUP_M (unused), THREADS, A_TYPE, B_TYPE.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_control_flow_attributes : require

#include "gemm_common.glsl"  // spec ids 0..6, bindings, push constants, decoders, epilogue

// 4 consecutive 16-bit elements of B in one load, where B's N index is contiguous and aligned.
layout(std430, set = 0, binding = 4) readonly buffer B16v { uvec2 b_vec[]; };

const uint VEC = 4;
const uint CT = BLOCK_N / VEC;  // column threads
const uint KT = THREADS / CT;   // threads along K
shared float partial[KT * BLOCK_N];
// The chunk's rows of A over one K block, decoded to f32 once per workgroup (every column thread
// reads them from here instead of decoding them itself).
shared float a_stage[BLOCK_M * BLOCK_K];

float load_a(uint i) {
  if (A_TYPE == 0u) return a32[i];
  if (A_TYPE <= 2u) return decode(A_TYPE, uint(a16[i]));
  return decode(A_TYPE, uint(a8[i]));
}
float load_b(uint i) {
  if (B_TYPE == 0u) return b32[i];
  if (B_TYPE <= 2u) return decode(B_TYPE, uint(b16[i]));
  return decode(B_TYPE, uint(b8[i]));
}

void main() {
  const uint tiles_n = (p.N + BLOCK_N - 1u) / BLOCK_N;
  const uint item = work_item_id();
  if (item >= tiles_n) return;  // uniform in the workgroup: before any barrier
  const uint batch = gl_WorkGroupID.z + p.batch_base;
  const uint n0 = item * BLOCK_N;
  const uint tid = gl_LocalInvocationID.x, ct = tid % CT, kt = tid / CT;
  const uint n = n0 + ct * VEC;
  const uint a_base = p.a_off + batch * p.a_bs, b_base = p.b_off + batch * p.b_bs;
  // Vector loads of B: 16-bit B with unit column stride, rows and base multiples of 4 elements
  // and N a multiple of 4 (a vector is then all inside or all outside).
  const bool b_vec_ok = (B_TYPE == 1u || B_TYPE == 2u) && p.b_sc == 1u && p.b_sr % 4u == 0u && b_base % 4u == 0u && p.N % 4u == 0u;

  for (uint m0 = 0; m0 < p.M; m0 += BLOCK_M) {
    float acc[BLOCK_M][VEC];
    [[unroll]] for (uint r = 0; r < BLOCK_M; ++r)
      [[unroll]] for (uint j = 0; j < VEC; ++j) acc[r][j] = 0.0;
    for (uint kb = 0; kb < p.K; kb += BLOCK_K) {
      barrier();  // the previous block's reads of a_stage are done
      for (uint e = tid; e < BLOCK_M * BLOCK_K; e += THREADS) {
        const uint m = m0 + e / BLOCK_K, k = kb + e % BLOCK_K;
        a_stage[e] = m < p.M && k < p.K ? load_a(a_base + m * p.a_sr + k * p.a_sc) : 0.0;
      }
      barrier();
      // BLOCK_K / KT rows of B per thread and block: a constant count, so their loads can be
      // issued ahead of the FMAs.
      for (uint i = 0; i < BLOCK_K / KT; ++i) {
        const uint kk = kt + i * KT, k = kb + kk;
        float b[VEC];
        if (k >= p.K) {
          [[unroll]] for (uint j = 0; j < VEC; ++j) b[j] = 0.0;
        } else if (b_vec_ok) {
          const uvec2 w = n < p.N ? b_vec[(b_base + k * p.b_sr + n) / 4u] : uvec2(0);
          const uint h[4] = uint[4](w.x & 0xffffu, w.x >> 16, w.y & 0xffffu, w.y >> 16);
          [[unroll]] for (uint j = 0; j < VEC; ++j) b[j] = decode(B_TYPE, h[j]);
        } else {
          [[unroll]] for (uint j = 0; j < VEC; ++j) b[j] = n + j < p.N ? load_b(b_base + k * p.b_sr + (n + j) * p.b_sc) : 0.0;
        }
        [[unroll]] for (uint r = 0; r < BLOCK_M; ++r) {
          const float a = a_stage[r * BLOCK_K + kk];
          [[unroll]] for (uint j = 0; j < VEC; ++j) acc[r][j] = fma(a, b[j], acc[r][j]);
        }
      }
    }
    // Row by row: the KT partials of each column summed in order of kt, then the epilogue.
    [[unroll]] for (uint r = 0; r < BLOCK_M; ++r) {
      [[unroll]] for (uint j = 0; j < VEC; ++j) partial[kt * BLOCK_N + ct * VEC + j] = acc[r][j];
      barrier();
      const uint gm = m0 + r;
      for (uint o = tid; o < BLOCK_N; o += THREADS) {
        float s = 0.0;
        for (uint t = 0; t < KT; ++t) s += partial[t * BLOCK_N + o];
        const uint gn = n0 + o;
        if (gm < p.M && gn < p.N) store_d(p.d_off + batch * p.d_bs + gm * p.d_sr + gn * p.d_sc, epilogue_value(batch, gm, gn, s));
      }
      barrier();
    }
  }
}
