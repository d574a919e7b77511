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

// block_formats.h: the packed scale index, MX / nvfp4 / 128-blockwise quantisation and
// dequantisation, as device code.
#include "omnigemm/block_formats.h"

__global__ void block_formats_use(unsigned* out, const float* x, int rows, int cols) {
  const int r = int(blockIdx.x), c = int(threadIdx.x);
  const og_uint bits = og_float_bits(x[r * cols + c]);
  const og_uint mx = og_bf_mx_scale(bits & 0x7fffffffu, 8);
  const og_uint nv = og_bf_nvfp4_scale(bits & 0x7fffffffu, og_float_bits(1.0f));
  const og_uint f32s = og_bf_block128_scale(bits & 0x7fffffffu, false);
  og_uint code = og_bf_quantize_mx(OG_BF_ELEM_E4M3, bits, mx) ^ og_bf_quantize_nvfp4(bits, nv, og_float_bits(1.0f)) ^
                 og_bf_quantize_block128(OG_BF_ELEM_E5M2, bits, f32s);
  const float v = og_bf_dequantize(OG_BF_ELEM_E2M1, code & 15u, og_bf_e8m0_to_f32(mx), 1.0f);
  out[og_sf_packed_offset(r, c, og_sf_padded_cols(cols))] = code + og_float_bits(v) + unsigned(og_sf_packed_row(r, 4));
}
