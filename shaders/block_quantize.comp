#version 450
// Device quantisation of the block-scaled formats (og_quantize / og_dequantize on Vulkan), with
// omnigemm/block_formats.h's integer-exact arithmetic, so codes and scales are bit-exact with the
// host quantiser. One matrix seen along K: element (r, c), r < rows, c < k, at
// off + r * sr + c * sk of its view (fp4: a nibble index, the even element in the low nibble).
// Operations (OP), over units of one row x one K block (short loops: Mesa's lavapipe caps the
// loop iterations of one invocation):
//   0 quantise: per unit, the scale (1 x K blocks) and the elements;
//   1 dequantise: one invocation per element, f32(f32(element * scale) * global) in D's dtype;
//   2 amax: atomicMax of |x|'s bits over the finite source values (the nvfp4 global factor);
//   3 zero: the packed layout's tiles (padding included), or every scale (128 x 128 scale words);
//   4, 5 (128 x 128 blocks): per unit, atomicMax of the row's largest |x| into the block's scale
//   word; then per scale, that maximum becomes the scale.
// Binds the GEMM shaders' descriptor set layout: 0/1 the plain side's 32/16-bit views, 5 the
// block side's elements (8-bit), 8/9 the plain output's 32/16-bit views, 12/13 scales (8/32-bit),
// 14 the amax word. Invocations are numbered over a 2D grid of 64-wide workgroups.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require

#include "omnigemm/block_formats.h"
#include "omnigemm/epilogue.h"

layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 1) const uint PLAIN_TYPE = 0;   // og_dtype of the plain side: 0 f32, 1 f16, 2 bf16
layout(constant_id = 2) const uint BLOCK_TYPE = 5;   // og_dtype of the block-scaled side
layout(constant_id = 3) const uint SCALE_MODE = 1;   // og_scale_mode
layout(constant_id = 4) const uint SCALE_LAYOUT = 0; // og_scale_layout

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) buffer P32 { uint p32[]; };
layout(std430, set = 0, binding = 1) buffer P16 { uint16_t p16[]; };
layout(std430, set = 0, binding = 5) buffer E8 { uint8_t e8[]; };
layout(std430, set = 0, binding = 8) buffer O32 { uint o32[]; };
layout(std430, set = 0, binding = 9) buffer O16 { uint16_t o16[]; };
layout(std430, set = 0, binding = 12) buffer S8 { uint8_t s8[]; };
layout(std430, set = 0, binding = 13) buffer S32 { uint s32[]; };
layout(std430, set = 0, binding = 14) buffer Amax { uint amax_bits[]; };

layout(push_constant) uniform Params {
  uint rows, k;
  uint p_sr, p_sk, p_off;  // the plain side (source of OP 0 / 2, destination of OP 1)
  uint e_sr, e_sk, e_off;  // the block-scaled side's elements
  uint s_off, s_ld;        // its scales (in scales of the 8- or 32-bit view)
  uint s_rows, s_cols;     // scale rows and columns (R x C)
  uint global_bits;        // nvfp4 global factor (OP 0), the dequantised global (OP 1)
  uint count;              // invocations wanted
} p;

uint invocation() { return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x; }

uint block_k() { return SCALE_MODE == 2u ? 16u : (SCALE_MODE == 1u ? 32u : 128u); }
uint block_rows() { return SCALE_MODE == 4u ? 128u : 1u; }
bool f32_scales() { return SCALE_MODE >= 3u; }
bool fp4() { return BLOCK_TYPE == 6u || BLOCK_TYPE == 7u; }
int element_format() {
  if (BLOCK_TYPE == 3u || BLOCK_TYPE == 5u) return OG_BF_ELEM_E4M3;
  if (BLOCK_TYPE == 4u || BLOCK_TYPE == 8u) return OG_BF_ELEM_E5M2;
  return OG_BF_ELEM_E2M1;
}

uint scale_at(uint r, uint c) {
  if (SCALE_LAYOUT == 2u) return p.s_off + uint(og_sf_packed_offset(int(r), int(c), og_sf_padded_cols(int(p.s_cols))));
  return p.s_off + (SCALE_LAYOUT == 1u ? c * p.s_ld + r : r * p.s_ld + c);
}

// f16 bits -> f32 bits, exactly, in integer arithmetic (subnormals included).
uint f16_to_f32_bits(uint h) {
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
  if (e == 31u) return sign | 0x7f800000u | (m << 13);
  if (e != 0u) return sign | ((e + 112u) << 23) | (m << 13);
  if (m == 0u) return sign;
  const int q = og_bf_msb(m);  // m * 2^-24 = 2^(q - 24) * (m / 2^q)
  return sign | (uint(q + 103) << 23) | ((m - (1u << uint(q))) << uint(23 - q));
}

// The f32 bits of plain source element (r, c).
uint source_bits(uint r, uint c) {
  const uint i = p.p_off + r * p.p_sr + c * p.p_sk;
  if (PLAIN_TYPE == 0u) return p32[i];
  const uint h = uint(p16[i]);
  return PLAIN_TYPE == 2u ? h << 16 : f16_to_f32_bits(h);
}

uint nan_scale() { return f32_scales() ? 0x7fc00000u : (SCALE_MODE == 2u ? 0x7fu : 0xffu); }

uint choose_scale(uint amax) {
  if (SCALE_MODE == 1u) return og_bf_mx_scale(amax, element_format() == OG_BF_ELEM_E4M3 ? 8 : (element_format() == OG_BF_ELEM_E5M2 ? 15 : 2));
  if (SCALE_MODE == 2u) return og_bf_nvfp4_scale(amax, p.global_bits);
  return og_bf_block128_scale(amax, element_format() == OG_BF_ELEM_E5M2);
}

uint quantize_element(uint x, uint scale) {
  if (SCALE_MODE == 1u) return og_bf_quantize_mx(element_format(), x, scale);
  if (SCALE_MODE == 2u) return og_bf_quantize_nvfp4(x, scale, p.global_bits);
  return og_bf_quantize_block128(element_format(), x, scale);
}

// The largest |x|'s bits over row r, K block kb (Inf and NaN included: they compare above every
// finite value, 0x7f800000 and up).
uint row_amax(uint r, uint kb) {
  const uint k0 = kb * block_k(), k1 = min(p.k, k0 + block_k());
  uint amax = 0u;
  for (uint c = k0; c < k1; ++c) amax = max(amax, source_bits(r, c) & 0x7fffffffu);
  return amax;
}

// Row r's elements of K block kb under `scale` (a NaN scale stores zeros).
void store_elements(uint r, uint kb, uint scale, bool nan_block) {
  const uint k0 = kb * block_k(), k1 = min(p.k, k0 + block_k());
  const uint row = p.e_off + r * p.e_sr;
  if (fp4()) {  // pairs along K share a byte (blocks hold whole pairs); a lone last element's high nibble is 0
    for (uint c = k0; c < k1; c += 2u) {
      const uint lo = nan_block ? 0u : quantize_element(source_bits(r, c), scale);
      const uint hi = nan_block || c + 1u >= k1 ? 0u : quantize_element(source_bits(r, c + 1u), scale);
      e8[(row + c) >> 1] = uint8_t(lo | (hi << 4));
    }
  } else {
    for (uint c = k0; c < k1; ++c) e8[row + c * p.e_sk] = uint8_t(nan_block ? 0u : quantize_element(source_bits(r, c), scale));
  }
}

// One (row, K block) unit: with 1 x K scales its scale and elements; with 128 x 128 scales (whose
// scale the passes 4 and 5 made) its elements. Units keep each invocation's loops short.
void quantize_unit(uint u) {
  const uint r = u / p.s_cols, kb = u % p.s_cols;
  if (SCALE_MODE == 4u) {
    const uint scale = s32[scale_at(r / 128u, kb)];
    store_elements(r, kb, scale, scale >= 0x7f800000u);
    return;
  }
  const uint amax = row_amax(r, kb);
  const bool nan_block = amax >= 0x7f800000u;
  const uint scale = nan_block ? nan_scale() : choose_scale(amax);
  if (f32_scales()) s32[scale_at(r, kb)] = scale;
  else s8[scale_at(r, kb)] = uint8_t(scale);
  store_elements(r, kb, scale, nan_block);
}

void dequantize_element(uint i) {
  const uint r = i / p.k, c = i % p.k;
  const uint at = p.e_off + r * p.e_sr + c * p.e_sk;
  const uint code = fp4() ? (uint(e8[at >> 1]) >> ((at & 1u) * 4u)) & 15u : uint(e8[at]);
  const uint si = scale_at(SCALE_MODE == 4u ? r / 128u : r, c / block_k());
  const float e = og_bits_float(og_bf_elem_bits(element_format(), code));
  float v;
  if (SCALE_MODE == 1u) {  // a power of two, as an exponent: a 2^-127 scale is no subnormal input
    const uint sbits = uint(s8[si]);
    v = sbits == 255u ? uintBitsToFloat(0x7fc00000u) : ldexp(e, int(sbits) - 127);
  } else if (SCALE_MODE == 2u) {
    v = e * og_bf_e4m3_to_f32(uint(s8[si]) & 0x7fu);
  } else {
    v = e * uintBitsToFloat(s32[si]);
  }
  // A NaN as 0x7fc00000: NVIDIA's arithmetic returns 0x7fffffff from a NaN operand.
  const uint bits = og_bf_nan_canonical(floatBitsToUint(v * uintBitsToFloat(p.global_bits)));
  const uint o = p.p_off + r * p.p_sr + c * p.p_sk;
  if (PLAIN_TYPE == 0u) o32[o] = bits;
  else o16[o] = uint16_t(og_f32_to_16bit(int(PLAIN_TYPE), uintBitsToFloat(bits)));
}

void main() {
  const uint i = invocation();
  if (i >= p.count) return;
  if (OP == 0u) {
    quantize_unit(i);
  } else if (OP == 1u) {
    dequantize_element(i);
  } else if (OP == 2u) {
    const uint a = source_bits(i / p.k, i % p.k) & 0x7fffffffu;
    if (a < 0x7f800000u && a != 0u) atomicMax(amax_bits[0], a);
  } else if (OP == 3u) {  // packed: every byte of the tiles; otherwise every real scale (not the ld gaps)
    if (SCALE_LAYOUT == 2u) s8[p.s_off + i] = uint8_t(0u);
    else if (f32_scales()) s32[scale_at(i / p.s_cols, i % p.s_cols)] = 0u;
    else s8[scale_at(i / p.s_cols, i % p.s_cols)] = uint8_t(0u);
  } else if (OP == 4u) {  // 128 x 128 blocks: each row's largest |x| into its block's scale word
    atomicMax(s32[scale_at((i / p.s_cols) / 128u, i % p.s_cols)], row_amax(i / p.s_cols, i % p.s_cols));
  } else {  // OP 5: 128 x 128 blocks: the largest |x| becomes the scale
    const uint at = scale_at(i / p.s_cols, i % p.s_cols);
    const uint amax = s32[at];
    s32[at] = amax >= 0x7f800000u ? nan_scale() : choose_scale(amax);
  }
}
