#version 450
// tile_schedule.h, epilogue.h and block_formats.h compiled as GLSL (Vulkan compute).
#extension GL_GOOGLE_include_directive : require
#include "omnigemm/tile_schedule.h"
#include "omnigemm/epilogue.h"
#include "omnigemm/block_formats.h"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { int tile_of_work[]; };
layout(push_constant) uniform Params { int num_pid_m; int num_pid_n; int group_m; int split_k; int total; } params;

void main() {
  int w = int(gl_GlobalInvocationID.x);
  if (w >= params.total) return;
  OgWork item = og_work_item(w, params.num_pid_m, params.num_pid_n, params.group_m, params.split_k);
  int begin;
  int end;
  og_split_k_range(64, params.split_k, item.k_slice, begin, end);
  const float v = og_epilogue_apply(1.5, float(begin), true, 0.5, float(end), true, 0.25, params.split_k % 5, 0.01);
  // block_formats.h: the packed scale index and the quantisation arithmetic.
  const og_uint bits = og_float_bits(v);
  const og_uint mx = og_bf_mx_scale(bits & 0x7fffffffu, 8);
  const og_uint nv = og_bf_nvfp4_scale(bits & 0x7fffffffu, og_float_bits(1.0));
  const og_uint f32s = og_bf_block128_scale(bits & 0x7fffffffu, false);
  const og_uint code = og_bf_quantize_mx(OG_BF_ELEM_E4M3, bits, mx) ^ og_bf_quantize_nvfp4(bits, nv, og_float_bits(1.0)) ^
                       og_bf_quantize_block128(OG_BF_ELEM_E5M2, bits, f32s);
  const float dq = og_bf_dequantize(OG_BF_ELEM_E2M1, code & 15u, og_bf_e8m0_to_f32(mx), 1.0);
  tile_of_work[w] = (item.pid_m * params.num_pid_n + item.pid_n) * 1000 + begin + int(og_f32_to_16bit(params.group_m % 3, v)) +
                    og_sf_packed_offset(w, begin, og_sf_padded_cols(end)) + int(code) + int(dq) + og_sf_packed_col(w, 4);
}
