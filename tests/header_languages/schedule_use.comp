#version 450
// tile_schedule.h compiled as GLSL (Vulkan compute).
#extension GL_GOOGLE_include_directive : require
#include "omnigemm/tile_schedule.h"

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
  tile_of_work[w] = (item.pid_m * params.num_pid_n + item.pid_n) * 1000 + begin;
}
