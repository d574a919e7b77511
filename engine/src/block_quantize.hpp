// Host implementations of the block-scaled formats over one matrix in host memory: quantise,
// dequantise, scale-layout conversion, and the row dequantiser the CPU backend packs with. The
// arithmetic is omnigemm/block_formats.h's, so results are bit-exact with every device's.
#pragma once

#include <cstdint>

#include "block_scales.hpp"

namespace omnigemm::detail {

// One matrix of a GEMM operand seen along K: rows x k (rows: M for A, N for B), in host memory.
// Element (r, c) is element number r * sr + c * sk from `base` (fp4: byte number / 2, the even
// element in the low nibble); its scale is scale.offset(r / block_rows, c / block_k) scales
// (bytes for 1-byte scales) from `scales`.
struct KView {
  og_dtype dtype = OG_DTYPE_F32;
  uint8_t* base = nullptr;
  int64_t rows = 0, k = 0;
  int64_t sr = 0, sk = 0;
  BlockScale scale;          // present() for block-scaled views
  uint8_t* scales = nullptr;
};

struct Operand;
// The view of a validated operand in host memory (mem.ptr + offset), along op()'s columns, or
// along its rows when operand_b (rows: N, K: op()'s rows).
KView kview_of(const Operand& o, bool operand_b);

// The f32 value of every code of an element format (256 entries; e2m1 uses the first 16).
const float* element_table(int element);

// out[i * out_stride] = the dequantised element (r, k0 + i) of a block-scaled view, i < n.
void dequantize_row(const KView& v, int64_t r, int64_t k0, int64_t n, float* out, int64_t out_stride);

// Quantises rows [r0, r1) of `src` (f32, f16 or bf16) into `dst` (block-scaled, same shape):
// elements and scales (BLK128x128: r0 and r1 multiples of 128 or the end). `global` is the
// nvfp4 global factor to quantise with (1 otherwise). Row ranges may run concurrently.
void quantize_rows(const KView& src, const KView& dst, float global, int64_t r0, int64_t r1);
// The nvfp4 global factor of `src`: amax / 2688 over its finite values (1 when all are 0).
float nvfp4_global(const KView& src);
// Zeroes the padding of a packed scale tensor (quantize_rows writes only real scales).
void clear_packed_scales(const KView& dst);

// Dequantises rows [r0, r1) of `src` (block-scaled) into `dst` (f32, f16 or bf16, same shape).
void dequantize_rows(const KView& src, const KView& dst, int64_t r0, int64_t r1);

// Copies every scale of `from` into `to` (same mode and geometry, other layout or ld);
// packed padding is written as zero.
void convert_scales(const KView& from, const KView& to);

}  // namespace omnigemm::detail
