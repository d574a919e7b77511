#version 450
// The operand copy of vulkan.coopmat_repack: a 16-bit operand (A through binding 1 or B through
// binding 4, any strides, base and alignment) rewritten into the workspace (binding 16) as lines
// of whole 16-byte vectors: per batch `lines` lines, each `line_len` elements of the source
// followed by zeros up to the next multiple of 8, so that the GEMM reads every vector whole,
// the ragged end of a line included (gemm_coopmat.comp's PADDED), and the zeros add nothing.
// One invocation per destination vector; a source run with unit stride is read as the one or two
// aligned vectors that hold it, otherwise element by element. No arithmetic on the values: the
// bits are copied.
//
// Push constants (own block; the pipeline layout's 128 bytes hold it): vulkan_pipelines.hpp's
// CopyPushConstants. Specialization id 0: THREADS.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const uint THREADS = 256;
layout(local_size_x_id = 0) in;

layout(std430, set = 0, binding = 1) readonly buffer A16 { uint16_t a16[]; };
layout(std430, set = 0, binding = 1) readonly buffer A16v { uvec4 a_vec[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16 { uint16_t b16[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16v { uvec4 b_vec[]; };
layout(std430, set = 0, binding = 16) writeonly buffer Copy { uvec4 dst[]; };

layout(push_constant) uniform Params {
  uint operand;                   // 0: A (binding 1), 1: B (binding 4)
  uint lines, line_len;           // per batch
  uint src_off, src_line, src_elem, src_batch;  // elements: first element, strides
  uint dst_off, dst_line, dst_batch;            // 16-byte vectors: first vector, strides
  uint batch_base;
} c;

#include "shift_window.glsl"

uint src_bits(uint i) { return c.operand == 0u ? uint(a16[i]) : uint(b16[i]); }
uvec4 src_vec(uint q) { return c.operand == 0u ? a_vec[q] : b_vec[q]; }
uint src_vecs() { return c.operand == 0u ? uint(a_vec.length()) : uint(b_vec.length()); }

void main() {
  const uint v = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * THREADS + gl_LocalInvocationID.x;
  if (v >= c.lines * c.dst_line) return;
  const uint line = v / c.dst_line, pos = (v % c.dst_line) * 8u;
  const uint batch = gl_WorkGroupID.z + c.batch_base;
  const uint first = c.src_off + batch * c.src_batch + line * c.src_line + pos * c.src_elem;
  uvec4 x;
  const uint q = first / 8u, r = first % 8u;
  if (c.src_elem == 1u && pos + 8u <= c.line_len && (r == 0u || q + 1u < src_vecs())) {
    x = r == 0u ? src_vec(q) : shift_window(src_vec(q), src_vec(q + 1u), r);
  } else {
    uint h[8];
    [[unroll]] for (uint e = 0; e < 8u; ++e) h[e] = pos + e < c.line_len ? src_bits(first + e * c.src_elem) : 0u;
    x = uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
  }
  dst[c.dst_off + batch * c.dst_batch + line * c.dst_line + v % c.dst_line] = x;
}
