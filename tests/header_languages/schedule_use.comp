#version 450
// tile_schedule.h and epilogue.h compiled as GLSL (Vulkan compute).
#extension GL_GOOGLE_include_directive : require
#include "omnigemm/tile_schedule.h"
#include "omnigemm/epilogue.h"

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
  tile_of_work[w] = (item.pid_m * params.num_pid_n + item.pid_n) * 1000 + begin + int(og_f32_to_16bit(params.group_m % 3, v));
}
