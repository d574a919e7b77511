// What every OmniGEMM GEMM shader shares: specialization ids 0..6, the descriptor bindings, the
// push constants (so one pipeline layout serves every module), the dtype decoders, and the
// epilogue's loads and stores around omnigemm/epilogue.h (the epilogue math and the rounding to
// f16/bf16 every backend shares). The including shader enables GL_GOOGLE_include_directive,
// GL_EXT_shader_16bit_storage and GL_EXT_shader_8bit_storage first; its own specialization
// constants start at id 7.
//
// Specialization constants are what shapes the main loop (tile, threads, A/B dtypes, and each
// shader's own); the epilogue's options (C's presence and dtype, D's dtype, bias mode and dtype,
// activation) are one push-constant word the shader branches on uniformly, so a new epilogue
// combination needs no new pipeline.
//
// Decoders are bit-exact with omnigemm/numeric.hpp: every dtype converts to f32 exactly; outputs
// round to nearest even, bit-exact with numeric.hpp too: bf16 always and f16 by default in
// integer arithmetic (epilogue.h); f16 in one conversion instruction in the modules built with
// OG_F16_ROUND_HW (CMakeLists.txt builds a twin of each module so), whose execution modes fix
// what Vulkan otherwise leaves to the implementation: 16-bit conversions round to nearest even
// (RoundingModeRTE) and keep subnormals (DenormPreserve). The host loads those twins only where
// the device reports both and shaderFloat16 is enabled (vulkan_properties.hpp, f16_rounding_in_hardware).
#ifdef OG_F16_ROUND_HW
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(capabilities = [4467], 4462, 16);  // capability RoundingModeRTE; RoundingModeRTE 16
spirv_execution_mode(capabilities = [4464], 4459, 16);  // capability DenormPreserve; DenormPreserve 16
#endif
#include "omnigemm/epilogue.h"

// Tile shape and input dtypes, fixed per pipeline (the config space maps onto these).
layout(constant_id = 0) const uint BLOCK_M = 64;
layout(constant_id = 1) const uint BLOCK_N = 64;
layout(constant_id = 2) const uint BLOCK_K = 16;
layout(constant_id = 3) const int GROUP_M = 8;
layout(constant_id = 4) const uint THREADS = 128;
layout(constant_id = 5) const uint A_TYPE = 0;    // og_dtype: 0 f32, 1 f16, 2 bf16, 3 e4m3, 4 e5m2
layout(constant_id = 6) const uint B_TYPE = 0;

layout(local_size_x_id = 4) in;

// Each operand is bound once per element width it may have (the same VkBuffer every time).
layout(std430, set = 0, binding = 0) readonly buffer A32 { float a32[]; };
layout(std430, set = 0, binding = 1) readonly buffer A16 { uint16_t a16[]; };
layout(std430, set = 0, binding = 2) readonly buffer A8 { uint8_t a8[]; };
layout(std430, set = 0, binding = 3) readonly buffer B32 { float b32[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16 { uint16_t b16[]; };
layout(std430, set = 0, binding = 5) readonly buffer B8 { uint8_t b8[]; };
layout(std430, set = 0, binding = 6) readonly buffer C32 { float c32[]; };
layout(std430, set = 0, binding = 7) readonly buffer C16 { uint16_t c16[]; };
layout(std430, set = 0, binding = 8) buffer D32 { float d32[]; };
layout(std430, set = 0, binding = 9) buffer D16 { uint16_t d16[]; };
layout(std430, set = 0, binding = 10) readonly buffer Bias32 { float bias32[]; };
layout(std430, set = 0, binding = 11) readonly buffer Bias16 { uint16_t bias16[]; };

// Element strides and offsets (in elements) of op(X); all < 2^31 (checked by the backend).
// as_* / bs_*: block-scaled A / B's scale tensors (block_scales.glsl), in scales.
layout(push_constant) uniform Params {
  uint M, N, K;
  uint epilogue;  // C, D, bias and activation options: see C_TYPE .. ACTIVATION below
  uint a_sr, a_sc, a_bs, b_sr, b_sc, b_bs;
  uint c_sr, c_sc, c_bs, d_sr, d_sc, d_bs;
  uint bias_bs, batch_base;
  uint a_off, b_off, c_off, d_off, bias_off;
  float alpha, beta, slope;
  uint as_off, as_ld, as_bs, bs_off, bs_ld, bs_bs;
} p;

// The epilogue word's fields (vulkan_pipelines.hpp, epilogue_word): 3 bits C's og_dtype (7: no C
// term), 2 bits D's, 2 bits og_bias_mode (0 none, 1 per N, 2 per M), 3 bits the bias dtype, 3 bits
// og_activation. Uniform across the dispatch, so every branch on them is uniform.
#define C_TYPE (p.epilogue & 7u)
#define HAS_C (C_TYPE != 7u)
#define D_TYPE ((p.epilogue >> 3) & 3u)
#define BIAS_MODE ((p.epilogue >> 5) & 3u)
#define BIAS_TYPE ((p.epilogue >> 7) & 7u)
#define ACTIVATION ((p.epilogue >> 10) & 7u)

// Output tiles along M and N, as the host counts them for the grid.
int num_pid_m() { return int((p.M + BLOCK_M - 1u) / BLOCK_M); }
int num_pid_n() { return int((p.N + BLOCK_N - 1u) / BLOCK_N); }
// This workgroup's work item: the host lays the items out over x and y (x * y may exceed their
// count by less than one row of x; the workgroups past the end have nothing to do).
uint work_item_id() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }

#include "shift_window.glsl"

float decode_f16(uint h) {
  uint e = (h >> 10) & 31u, m = h & 1023u;
  float s = (h & 0x8000u) != 0u ? -1.0 : 1.0;
  if (e == 0u) return s * float(m) * exp2(-24.0);
  if (e == 31u) return m == 0u ? s * uintBitsToFloat(0x7f800000u) : uintBitsToFloat(0x7fc00000u);
  return uintBitsToFloat(((h & 0x8000u) << 16) | ((e + 112u) << 23) | (m << 13));
}
float decode_bf16(uint h) { return uintBitsToFloat(h << 16); }
float decode_e4m3(uint b) {
  uint e = (b >> 3) & 15u, m = b & 7u;
  float s = (b & 0x80u) != 0u ? -1.0 : 1.0;
  if (e == 15u && m == 7u) return uintBitsToFloat(0x7fc00000u);
  if (e == 0u) return s * float(m) * exp2(-9.0);
  return s * (1.0 + float(m) / 8.0) * exp2(float(int(e) - 7));
}
float decode_e5m2(uint b) { return decode_f16(b << 8); }  // e5m2 is the top byte of an f16

// The bits of an f16/bf16 (16-bit) or e4m3/e5m2 (8-bit) element of dtype `type` as f32.
float decode(uint type, uint bits) {
  if (type == 1u) return decode_f16(bits);
  if (type == 2u) return decode_bf16(bits);
  if (type == 3u) return decode_e4m3(bits);
  return decode_e5m2(bits);
}
float load_c(uint i) { return C_TYPE == 0u ? c32[i] : decode(C_TYPE, uint(c16[i])); }
float load_bias(uint i) { return BIAS_TYPE == 0u ? bias32[i] : decode(BIAS_TYPE, uint(bias16[i])); }

// The bits of `f` rounded to f16, to nearest even (see the top of this file).
// out_f16x2_bits: two of them, v.x in the low half. F16_ROUND_HW: which of the two this module does.
#ifdef OG_F16_ROUND_HW
const bool F16_ROUND_HW = true;
uint out_f16_bits(float f) { return packFloat2x16(f16vec2(float16_t(f), float16_t(0.0))); }
uint out_f16x2_bits(vec2 v) { return packFloat2x16(f16vec2(v)); }
#else
const bool F16_ROUND_HW = false;
uint out_f16_bits(float f) { return og_f32_to_f16_bits(f); }
uint out_f16x2_bits(vec2 v) { return og_f32_to_f16_bits(v.x) | (og_f32_to_f16_bits(v.y) << 16); }
#endif
// The 16 bits of an f16/bf16 output (D_TYPE 1 or 2).
uint encode_out16(float f) { return D_TYPE == 1u ? out_f16_bits(f) : og_f32_to_bf16_bits(f); }

// Element (gm, gn) < (M, N) of the epilogue before rounding: act(alpha * acc + beta * C + bias).
float epilogue_value(uint batch, uint gm, uint gn, float acc) {
  const bool has_c = HAS_C, has_bias = BIAS_MODE != 0u;
  const float c = has_c ? load_c(p.c_off + batch * p.c_bs + gm * p.c_sr + gn * p.c_sc) : 0.0;
  const float bias = has_bias ? load_bias(p.bias_off + batch * p.bias_bs + (BIAS_MODE == 1u ? gn : gm)) : 0.0;
  return og_epilogue_apply(p.alpha, acc, has_c, p.beta, c, has_bias, bias, int(ACTIVATION), p.slope);
}
// D element `at` (an element index of D's buffer) in D's dtype.
void store_d(uint at, float v) {
  if (D_TYPE == 0u) d32[at] = v;
  else d16[at] = uint16_t(encode_out16(v));
}

// The plain GEMM's epilogue, D = alpha * acc (no C, bias or activation), has a kind per D dtype;
// EPI_ANY reads every option from the epilogue word. A shader takes epilogue_kind() once and
// branches on it (uniformly) per output: the plain kinds skip the run-time options, which are
// most of an output's instructions where K is short.
const uint EPI_ANY = 0u, EPI_PLAIN_F32 = 1u, EPI_PLAIN_F16 = 2u, EPI_PLAIN_BF16 = 3u;
uint epilogue_kind() { return HAS_C || BIAS_MODE != 0u || ACTIVATION != 0u ? EPI_ANY : EPI_PLAIN_F32 + D_TYPE; }
// D element (gm, gn) < (M, N), at element `at` of D's buffer, from its accumulator.
void finish_d(uint kind, uint batch, uint gm, uint gn, uint at, float acc) {
  if (kind == EPI_ANY) store_d(at, epilogue_value(batch, gm, gn, acc));
  else if (kind == EPI_PLAIN_F32) d32[at] = p.alpha * acc;
  else if (kind == EPI_PLAIN_F16) d16[at] = uint16_t(out_f16_bits(p.alpha * acc));
  else d16[at] = uint16_t(og_f32_to_bf16_bits(p.alpha * acc));
}
