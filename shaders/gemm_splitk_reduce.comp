#version 450
// Split-K's second pass: D = epilogue(sum of the SPLIT slices' f32 partial sums), the slices
// added in order 0, 1, ... SPLIT - 1 (deterministic: the same bits on every run). The first pass
// (gemm_skinny.comp, gemm_coopmat.comp with SPLIT > 1) left slice s of batch b at
// workspace[((b * SPLIT + s) * M_PAD + m) * N_PAD + n], M_PAD and N_PAD being M and N rounded up
// to BLOCK_M and BLOCK_N (that pass's padding, given here as the same specialization constants).
// One invocation per 4 adjacent columns of a row: 16-byte loads of the workspace.
//
// Specialization ids 0..6 (gemm_common.glsl): BLOCK_M, BLOCK_N (the padding), THREADS; the rest
// unused. Id 7: SPLIT.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_control_flow_attributes : require

#include "gemm_common.glsl"  // spec ids 0..6, bindings, push constants, decoders, epilogue

layout(constant_id = 7) const uint SPLIT = 2;

layout(std430, set = 0, binding = 16) readonly buffer Workspace { vec4 ws4[]; };

void main() {
  const uint m_pad = (p.M + BLOCK_M - 1u) / BLOCK_M * BLOCK_M, n_pad = (p.N + BLOCK_N - 1u) / BLOCK_N * BLOCK_N;
  const uint quads = n_pad / 4u;  // BLOCK_N is a multiple of 4
  const uint i = work_item_id() * THREADS + gl_LocalInvocationID.x;
  if (i >= p.M * quads) return;
  const uint m = i / quads, n = (i % quads) * 4u;
  if (n >= p.N) return;
  const uint batch = gl_WorkGroupID.z + p.batch_base;
  vec4 s = vec4(0.0);
  [[unroll]] for (uint t = 0; t < SPLIT; ++t) s += ws4[(((batch * SPLIT + t) * m_pad + m) * n_pad + n) / 4u];
  const uint d = p.d_off + batch * p.d_bs + m * p.d_sr;
  [[dont_unroll]] for (uint j = 0; j < 4u; ++j)  // the epilogue's code once
    if (n + j < p.N) store_d(d + (n + j) * p.d_sc, epilogue_value(batch, m, n + j, s[j]));
}
