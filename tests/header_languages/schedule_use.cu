// tile_schedule.h and epilogue.h compiled as CUDA (device code) and, with hipcc, as HIP.
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif
#include "omnigemm/tile_schedule.h"
#include "omnigemm/epilogue.h"

// The grouped ordering alone, as a device function.
__device__ int grouped_tile_index(int pid, int num_pid_m, int num_pid_n, int group_m) {
  OgTile t = og_grouped_tile(pid, num_pid_m, num_pid_n, group_m);
  return t.pid_m * num_pid_n + t.pid_n;
}

__global__ void walk(int* out, int num_pid_m, int num_pid_n, int group_m, int split_k, int total) {
  for (int w = og_persistent_first(int(blockIdx.x * blockDim.x + threadIdx.x)); w < total;
       w = og_persistent_next(w, int(gridDim.x * blockDim.x))) {
    OgWork item = og_work_item(w, num_pid_m, num_pid_n, group_m, split_k);
    int begin = 0, end = 0;
    og_split_k_range(64, split_k, item.k_slice, begin, end);
    const OgClusterGrid pairs = og_cluster_grid(num_pid_m, num_pid_n, group_m, 2 * split_k, 1, 2);
    const OgWork pair = og_cluster_work_item(pairs, w / 2, 0, w % 2);
    const float v = og_epilogue_apply(1.5f, float(begin), true, 0.5f, float(end), true, 0.25f, split_k % 5, 0.01f);
    out[w] = (item.pid_m * num_pid_n + item.pid_n) * 1000 + begin + 0 * grouped_tile_index(w, num_pid_m, num_pid_n, group_m) +
             int(og_f32_to_16bit(group_m % 3, v)) + pair.k_slice;
  }
}
