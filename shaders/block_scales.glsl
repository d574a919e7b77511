// Block-scaled operands dequantised on load (omnigemm/blockscaled.h): element (row, k) of A
// (row in M) or B (row in N) times its block's scale, decoded with omnigemm/block_formats.h's
// integer-exact codecs. The per-tensor factors are folded into alpha by the host. The including
// shader includes gemm_common.glsl first and gives these specialization ids 7..10 no other use.
#include "omnigemm/block_formats.h"

layout(constant_id = 7) const uint A_SCALE_MODE = 0;    // og_scale_mode; 0: A has no block scales
layout(constant_id = 8) const uint A_SCALE_LAYOUT = 0;  // og_scale_layout
layout(constant_id = 9) const uint B_SCALE_MODE = 0;
layout(constant_id = 10) const uint B_SCALE_LAYOUT = 0;

layout(std430, set = 0, binding = 12) readonly buffer AS8 { uint8_t as8[]; };
layout(std430, set = 0, binding = 13) readonly buffer AS32 { float as32[]; };
layout(std430, set = 0, binding = 14) readonly buffer BS8 { uint8_t bs8[]; };
layout(std430, set = 0, binding = 15) readonly buffer BS32 { float bs32[]; };

uint scale_block_k(uint mode) { return mode == 2u ? 16u : (mode == 1u ? 32u : 128u); }

// Index of the scale of element (row, k) in its scale view (og_scale_layout: 0 row-major,
// 1 column-major, 2 packed 128 x 4 tiles).
uint scale_index(uint mode, uint layout_, uint off, uint ld, uint bs, uint batch, uint row, uint k) {
  const uint r = mode == 4u ? row / 128u : row;
  const uint c = k / scale_block_k(mode);
  uint at;
  if (layout_ == 2u) {
    const int cols = og_sf_padded_cols(int((p.K + scale_block_k(mode) - 1u) / scale_block_k(mode)));
    at = uint(og_sf_packed_offset(int(r), int(c), cols));
  } else {
    at = layout_ == 1u ? c * ld + r : r * ld + c;
  }
  return off + batch * bs + at;
}

// The f32 value of a block-scaled element of dtype `type` (og_dtype) whose code is `code`, under
// the scale `sbits` (a 1-byte code, or the bits of an f32 scale) of `mode`: element * scale.
// E8M0 scales apply as an exponent (ldexp), so a 2^-127 scale is never an f32 subnormal input.
float dequantize_on_load(uint type, uint code, uint mode, uint sbits) {
  const int elem = (type == 3u || type == 5u) ? OG_BF_ELEM_E4M3 : ((type == 4u || type == 8u) ? OG_BF_ELEM_E5M2 : OG_BF_ELEM_E2M1);
  const float v = og_bits_float(og_bf_elem_bits(elem, code));
  if (mode == 1u) return sbits == 255u ? uintBitsToFloat(0x7fc00000u) : ldexp(v, int(sbits) - 127);
  if (mode == 2u) return v * og_bf_e4m3_to_f32(sbits & 0x7fu);
  return v * uintBitsToFloat(sbits);
}

bool is_fp4(uint type) { return type == 6u || type == 7u; }

// Element (row, k) of batch `batch` of block-scaled A (row in M) / B (row in N); `at` is the
// element's index (fp4: its nibble's; two per byte, the even one low).
float load_scaled_a(uint batch, uint row, uint k, uint at) {
  const uint code = is_fp4(A_TYPE) ? (uint(a8[at >> 1]) >> ((at & 1u) * 4u)) & 15u : uint(a8[at]);
  const uint si = scale_index(A_SCALE_MODE, A_SCALE_LAYOUT, p.as_off, p.as_ld, p.as_bs, batch, row, k);
  const uint sbits = A_SCALE_MODE >= 3u ? floatBitsToUint(as32[si]) : uint(as8[si]);
  return dequantize_on_load(A_TYPE, code, A_SCALE_MODE, sbits);
}
float load_scaled_b(uint batch, uint row, uint k, uint at) {
  const uint code = is_fp4(B_TYPE) ? (uint(b8[at >> 1]) >> ((at & 1u) * 4u)) & 15u : uint(b8[at]);
  const uint si = scale_index(B_SCALE_MODE, B_SCALE_LAYOUT, p.bs_off, p.bs_ld, p.bs_bs, batch, row, k);
  const uint sbits = B_SCALE_MODE >= 3u ? floatBitsToUint(bs32[si]) : uint(bs8[si]);
  return dequantize_on_load(B_TYPE, code, B_SCALE_MODE, sbits);
}
