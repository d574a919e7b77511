// Device quantisation on CUDA (og_quantize / og_dequantize): kernels over omnigemm/block_formats.h's
// integer-exact arithmetic, so codes and scales are bit-exact with the host quantiser (the same
// passes as the Vulkan shader shaders/block_quantize.comp). One matrix seen along K: element
// (r, c), r < rows, c < k, at off + r * sr + c * sk of its view (fp4: a nibble index).
#include <cuda_fp16.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "block_quantize.hpp"
#include "cuda_device.hpp"
#include "omnigemm/block_formats.h"
#include "omnigemm/epilogue.h"

namespace omnigemm::detail {

namespace {

// Everything the kernels need, by value.
struct View {
  og_dtype plain_type, block_type;  // the plain side's dtype (f32/f16/bf16) and the block-scaled one's
  int mode, layout, element;        // og_scale_mode, og_scale_layout, OG_BF_ELEM_*
  int64_t rows, k;
  const void* src;                  // the plain side (quantise, amax) ...
  void* dst;                        // ... or its output (dequantise)
  int64_t p_sr, p_sk;
  uint8_t* e;                       // the block side's elements (byte address of element 0; fp4: nibble 0)
  int64_t e_sr, e_sk;
  uint8_t* s;                       // the scale tensor
  int64_t s_ld, s_rows, s_cols, s_stored_cols;
  uint32_t global_bits;
};

__device__ int64_t block_k(const View& v) { return v.mode == OG_BF_MODE_VEC16_UE4M3 ? 16 : v.mode == OG_BF_MODE_VEC32_UE8M0 ? 32 : 128; }
__device__ bool f32_scales(const View& v) { return v.mode >= OG_BF_MODE_VEC128_F32; }
__device__ bool fp4(const View& v) { return v.block_type == OG_DTYPE_MXFP4 || v.block_type == OG_DTYPE_NVFP4; }

// Scale (r, c)'s index in scales (bytes for 1-byte scales).
__device__ int64_t scale_at(const View& v, int64_t r, int64_t c) {
  if (v.layout == OG_SCALE_PACKED) return (r / 128 * (v.s_stored_cols / 4) + c / 4) * 512 + og_sf_in_tile(int(r % 128), int(c % 4));
  return v.layout == OG_SCALE_COL_MAJOR ? c * v.s_ld + r : r * v.s_ld + c;
}

__device__ uint32_t source_bits(const View& v, int64_t r, int64_t c) {
  const int64_t i = r * v.p_sr + c * v.p_sk;
  if (v.plain_type == OG_DTYPE_F32) return static_cast<const uint32_t*>(v.src)[i];
  const uint32_t h = static_cast<const uint16_t*>(v.src)[i];
  if (v.plain_type == OG_DTYPE_BF16) return h << 16;
  return og_float_bits(__half2float(__ushort_as_half(uint16_t(h))));  // exact, subnormals included
}

__device__ uint32_t nan_scale(const View& v) {
  return f32_scales(v) ? 0x7fc00000u : v.mode == OG_BF_MODE_VEC16_UE4M3 ? 0x7fu : 0xffu;
}
__device__ uint32_t choose_scale(const View& v, uint32_t amax) {
  if (v.mode == OG_BF_MODE_VEC32_UE8M0)
    return og_bf_mx_scale(amax, v.element == OG_BF_ELEM_E4M3 ? 8 : v.element == OG_BF_ELEM_E5M2 ? 15 : 2);
  if (v.mode == OG_BF_MODE_VEC16_UE4M3) return og_bf_nvfp4_scale(amax, v.global_bits);
  return og_bf_block128_scale(amax, v.element == OG_BF_ELEM_E5M2);
}
__device__ uint32_t quantize_element(const View& v, uint32_t x, uint32_t scale) {
  if (v.mode == OG_BF_MODE_VEC32_UE8M0) return og_bf_quantize_mx(v.element, x, scale);
  if (v.mode == OG_BF_MODE_VEC16_UE4M3) return og_bf_quantize_nvfp4(x, scale, v.global_bits);
  return og_bf_quantize_block128(v.element, x, scale);
}
__device__ uint32_t load_scale(const View& v, int64_t at) {
  return f32_scales(v) ? reinterpret_cast<const uint32_t*>(v.s)[at] : v.s[at];
}
__device__ void store_scale(const View& v, int64_t at, uint32_t bits) {
  if (f32_scales(v)) reinterpret_cast<uint32_t*>(v.s)[at] = bits;
  else v.s[at] = uint8_t(bits);
}

// The largest |x|'s bits of row r, K block kb (Inf and NaN compare above every finite value).
__device__ uint32_t row_amax(const View& v, int64_t r, int64_t kb) {
  const int64_t k0 = kb * block_k(v), k1 = min(v.k, k0 + block_k(v));
  uint32_t amax = 0;
  for (int64_t c = k0; c < k1; ++c) amax = max(amax, source_bits(v, r, c) & 0x7fffffffu);
  return amax;
}

__device__ void store_elements(const View& v, int64_t r, int64_t kb, uint32_t scale, bool nan_block) {
  const int64_t k0 = kb * block_k(v), k1 = min(v.k, k0 + block_k(v));
  if (fp4(v)) {  // pairs along K share a byte; a lone last element's high nibble is 0
    for (int64_t c = k0; c < k1; c += 2) {
      const uint32_t lo = nan_block ? 0u : quantize_element(v, source_bits(v, r, c), scale);
      const uint32_t hi = nan_block || c + 1 >= k1 ? 0u : quantize_element(v, source_bits(v, r, c + 1), scale);
      v.e[(r * v.e_sr + c) >> 1] = uint8_t(lo | (hi << 4));
    }
  } else {
    for (int64_t c = k0; c < k1; ++c)
      v.e[r * v.e_sr + c * v.e_sk] = uint8_t(nan_block ? 0u : quantize_element(v, source_bits(v, r, c), scale));
  }
}

// One thread per unit (row, K block); grid-stride loops throughout.
__global__ void quantize_units(View v) {
  const int64_t units = v.rows * v.s_cols;
  for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < units; u += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = u / v.s_cols, kb = u % v.s_cols;
    if (v.mode == OG_BF_MODE_BLK128_F32) {
      const uint32_t scale = load_scale(v, scale_at(v, r / 128, kb));
      store_elements(v, r, kb, scale, scale >= 0x7f800000u);
      continue;
    }
    const uint32_t amax = row_amax(v, r, kb);
    const bool nan_block = amax >= 0x7f800000u;
    const uint32_t scale = nan_block ? nan_scale(v) : choose_scale(v, amax);
    store_scale(v, scale_at(v, r, kb), scale);
    store_elements(v, r, kb, scale, nan_block);
  }
}

// 128 x 128 blocks: each row's largest |x| into its block's scale word, then the scales.
__global__ void block_amax_units(View v) {
  const int64_t units = v.rows * v.s_cols;
  for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < units; u += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = u / v.s_cols, kb = u % v.s_cols;
    atomicMax(reinterpret_cast<unsigned*>(v.s) + scale_at(v, r / 128, kb), row_amax(v, r, kb));
  }
}
__global__ void block_scales(View v) {
  const int64_t n = v.s_rows * v.s_cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = scale_at(v, i / v.s_cols, i % v.s_cols);
    const uint32_t amax = load_scale(v, at);
    store_scale(v, at, amax >= 0x7f800000u ? nan_scale(v) : choose_scale(v, amax));
  }
}

// Zero: the packed tiles (padding included), or every real scale (not the gaps of an ld).
__global__ void zero_scales(View v, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    if (v.layout == OG_SCALE_PACKED) v.s[i] = 0;
    else store_scale(v, scale_at(v, i / v.s_cols, i % v.s_cols), 0u);
  }
}

// The largest finite |x| of the plain source (the nvfp4 global factor).
__global__ void tensor_amax(View v, unsigned* out) {
  const int64_t n = v.rows * v.k;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t a = source_bits(v, i / v.k, i % v.k) & 0x7fffffffu;
    if (a < 0x7f800000u && a != 0u) atomicMax(out, a);
  }
}

// f32(f32(element * scale) * global) into the plain output, one element per thread: grid rows
// over the matrix's rows, threads along K (no index division; K-major views read and write
// coalesced); a NaN as 0x7fc00000 (the GPU's own arithmetic returns 0x7fffffff from a NaN operand).
__global__ void dequantize_elements(View v) {
  const int block_shift = v.mode == OG_BF_MODE_VEC16_UE4M3 ? 4 : v.mode == OG_BF_MODE_VEC32_UE8M0 ? 5 : 7;
  for (int64_t r = blockIdx.y; r < v.rows; r += gridDim.y)
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < v.k; c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = r * v.e_sr + c * v.e_sk;
    const uint32_t code = fp4(v) ? (v.e[at >> 1] >> ((at & 1) * 4)) & 15u : v.e[at];
    const uint32_t sbits = load_scale(v, scale_at(v, v.mode == OG_BF_MODE_BLK128_F32 ? r >> 7 : r, c >> block_shift));
    const float e = og_bits_float(og_bf_elem_bits(v.element, code));
    float x;
    if (v.mode == OG_BF_MODE_VEC32_UE8M0) x = sbits == 255u ? __uint_as_float(0x7fc00000u) : ldexpf(e, int(sbits) - 127);
    else if (v.mode == OG_BF_MODE_VEC16_UE4M3) x = __fmul_rn(e, og_bf_e4m3_to_f32(sbits & 0x7fu));
    else x = __fmul_rn(e, __uint_as_float(sbits));
    x = __uint_as_float(og_bf_nan_canonical(__float_as_uint(__fmul_rn(x, __uint_as_float(v.global_bits)))));
    const int64_t o = r * v.p_sr + c * v.p_sk;
    if (v.plain_type == OG_DTYPE_F32) static_cast<float*>(v.dst)[o] = x;
    else static_cast<uint16_t*>(v.dst)[o] = uint16_t(og_f32_to_16bit(int(v.plain_type), x));
  }
}

View view_of(const Operand& plain, const Operand& blocked, bool operand_b) {
  View v{};
  v.plain_type = plain.dtype;
  v.block_type = blocked.dtype;
  const BlockScale& s = blocked.scale;
  v.mode = int(s.mode);
  v.layout = int(s.layout);
  v.element = s.element;
  v.rows = operand_b ? plain.cols : plain.rows;
  v.k = operand_b ? plain.rows : plain.cols;
  v.src = static_cast<const char*>(plain.mem.ptr) + plain.mem.offset;
  v.dst = static_cast<char*>(plain.mem.ptr) + plain.mem.offset;
  v.p_sr = operand_b ? plain.stride_col : plain.stride_row;
  v.p_sk = operand_b ? plain.stride_row : plain.stride_col;
  v.e = static_cast<uint8_t*>(blocked.mem.ptr) + blocked.mem.offset;
  v.e_sr = operand_b ? blocked.stride_col : blocked.stride_row;
  v.e_sk = operand_b ? blocked.stride_row : blocked.stride_col;
  v.s = static_cast<uint8_t*>(s.mem.ptr) + s.mem.offset;
  v.s_ld = s.ld;
  v.s_rows = s.rows;
  v.s_cols = s.cols;
  v.s_stored_cols = s.stored_cols;
  v.global_bits = std::bit_cast<uint32_t>(s.global);
  return v;
}

constexpr int kThreads = 256;
int grid_for(int64_t n) { return int(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535 * 8)); }

}  // namespace

Status cuda_quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream) {
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  View v = view_of(src, dst, operand_b);
  const BlockScale& sc = dst.scale;
  if (global == 0.0f) {  // nvfp4's global factor from the tensor's largest finite |x|, read back
    unsigned* word = nullptr;
    OG_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&word), sizeof(unsigned), st), "cudaMallocAsync");
    unsigned amax = 0;
    Status s = cuda_status(cudaMemsetAsync(word, 0, sizeof amax, st), "cudaMemsetAsync");
    if (s) {
      tensor_amax<<<grid_for(v.rows * v.k), kThreads, 0, st>>>(v, word);
      s = cuda_status(cudaGetLastError(), "tensor_amax launch");
    }
    if (s) s = cuda_status(cudaMemcpyAsync(&amax, word, sizeof amax, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    if (s) s = cuda_status(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    cudaFreeAsync(word, st);
    if (!s) return s;
    const uint32_t g = amax == 0 ? 0u : og_bf_encode_f32(amax, 21u, 7);  // amax / 2688, as the host computes it
    global = g == 0 ? 1.0f : std::bit_cast<float>(g);
  }
  v.global_bits = std::bit_cast<uint32_t>(global);
  const bool blk = sc.mode == OG_SCALE_MODE_BLK128x128_F32;
  if (sc.layout == OG_SCALE_PACKED || blk) {
    const int64_t n = sc.layout == OG_SCALE_PACKED ? sc.extent() : sc.rows * sc.cols;
    zero_scales<<<grid_for(n), kThreads, 0, st>>>(v, n);
  }
  const int64_t units = v.rows * v.s_cols;
  if (blk) {
    block_amax_units<<<grid_for(units), kThreads, 0, st>>>(v);
    block_scales<<<grid_for(sc.rows * sc.cols), kThreads, 0, st>>>(v);
  }
  quantize_units<<<grid_for(units), kThreads, 0, st>>>(v);
  return cuda_status(cudaGetLastError(), "quantisation kernel launch");
}

Status cuda_dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream) {
  const View v = view_of(dst, src, operand_b);
  const dim3 grid(unsigned(std::min<int64_t>((v.k + kThreads - 1) / kThreads, 64)), unsigned(std::min<int64_t>(v.rows, 65535)));
  if (v.rows > 0 && v.k > 0) dequantize_elements<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(v);
  return cuda_status(cudaGetLastError(), "dequantisation kernel launch");
}

}  // namespace omnigemm::detail
