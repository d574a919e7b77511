/* The one epilogue of OmniGEMM: D = act(alpha * acc + beta * C + bias), rounded to D's type.
 *
 * Like tile_schedule.h, this header compiles as C++ (host), CUDA, HIP and GLSL (via
 * GL_GOOGLE_include_directive), so every backend and the test reference compute the same
 * thing: the CPU backend, the CUDA kernels (backends/cuda/epilogue.cuh), the GLSL shaders
 * (shaders/gemm_common.glsl) and tests/common/gemm_check.hpp. The same subset: 32-bit ints,
 * no pointers, no constructors, `OG_FUNC` functions, no names with two consecutive underscores.
 *
 * What it defines:
 *  - the activations and og_epilogue_sum / og_epilogue_apply, written once in epilogue_formulas.h
 *    over a real type: float in every language, and (C++, CUDA, HIP only) double, which the
 *    float64 test reference evaluates;
 *  - the rounding of an f32 result to f16 / bf16 bits, round to nearest even, bit-exact with
 *    omnigemm/numeric.hpp (f32_to_f16, f32_to_bf16) on every input. A backend may use a
 *    hardware conversion in a hot path instead where it is the same rounding on every non-NaN
 *    input (CUDA's __float2half_rn / __float2bfloat16_rn and their paired forms; they return a
 *    NaN, not necessarily the same NaN bits, for a NaN);
 *  - the numeric codes of activations, bias modes and output dtypes, equal to og_activation,
 *    og_bias_mode and og_dtype of omnigemm.h (GLSL cannot include that header; the values are
 *    checked against it in tests/core/test_epilogue.cpp).
 */
#ifndef OMNIGEMM_EPILOGUE_H
#define OMNIGEMM_EPILOGUE_H

#include "lang.h"

/* og_activation */
#define OG_EPI_ACT_NONE 0
#define OG_EPI_ACT_RELU 1
#define OG_EPI_ACT_LEAKY_RELU 2
#define OG_EPI_ACT_GELU_TANH 3
#define OG_EPI_ACT_SILU 4
/* og_bias_mode */
#define OG_EPI_BIAS_NONE 0
#define OG_EPI_BIAS_PER_N 1 /* bias[column] */
#define OG_EPI_BIAS_PER_M 2 /* bias[row] */
/* og_dtype of D */
#define OG_EPI_DTYPE_F32 0
#define OG_EPI_DTYPE_F16 1
#define OG_EPI_DTYPE_BF16 2

#ifndef OG_GLSL
#include <math.h>
#endif

/* The formulas over float, in every language. */
#define OG_REAL float
#ifdef OG_GLSL
#define OG_TANH tanh
#define OG_EXP exp
#else
#define OG_TANH tanhf
#define OG_EXP expf
#endif
#include "epilogue_formulas.h"
#undef OG_REAL
#undef OG_TANH
#undef OG_EXP

/* The same formulas over double (overloads), for the float64 reference. */
#ifndef OG_GLSL
#define OG_REAL double
#define OG_TANH tanh
#define OG_EXP exp
#include "epilogue_formulas.h"
#undef OG_REAL
#undef OG_TANH
#undef OG_EXP
#endif

/* f32 -> f16 bits, round to nearest even: overflow (|f| >= 65520) to inf, NaN to a quiet NaN
 * with f's sign (0x7e00), subnormal results rounded on the 2^-24 grid in integer arithmetic.
 * Branch-free (every candidate computed, one selected): the GPU shaders run it once per output. */
OG_FUNC og_uint og_f32_to_f16_bits(float f) {
  og_uint x = og_float_bits(f);
  og_uint sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  /* normal: rebias by (15 - 127) << 23 (mod 2^32) and round half to even on the 13 bits dropped;
   * a carry into exponent 31 is inf, as it should be */
  og_uint normal = (x + 0xc8000fffu + ((x >> 13) & 1u)) >> 13;
  /* below 2^-14, an f16 subnormal or zero: |f| = mant * 2^(e - 150) with the implicit bit in
   * mant; in units of 2^-24 that is mant >> (126 - e), rounded half to even on the bits shifted
   * out. The shift is clamped to [14, 25] so that it is defined for every x: beyond 25 rounds to
   * zero like 25 does (mant < 2^24); below 14 is a normal result, not selected. */
  og_uint e = x >> 23;
  og_uint shift = 126u - (e > 112u ? 112u : e);
  shift = shift > 25u ? 25u : shift;
  og_uint mant = (x & 0x7fffffu) | 0x800000u;
  og_uint sub = (mant + (1u << (shift - 1u)) - 1u + ((mant >> shift) & 1u)) >> shift; /* may carry into the smallest normal */
  og_uint r = x < 0x38800000u ? sub : normal;
  r = x >= 0x47800000u ? 0x7c00u : r; /* >= 65536, inf */
  r = x > 0x7f800000u ? 0x7e00u : r;  /* NaN */
  return sign | r;
}

/* f32 -> bf16 bits, round to nearest even; NaN stays NaN (quieted), overflow goes to inf. */
OG_FUNC og_uint og_f32_to_bf16_bits(float f) {
  og_uint x = og_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
  return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
}

/* The 16 bits of an f16 (dtype OG_EPI_DTYPE_F16) or bf16 (otherwise) output. */
OG_FUNC og_uint og_f32_to_16bit(int dtype, float f) {
  return dtype == OG_EPI_DTYPE_F16 ? og_f32_to_f16_bits(f) : og_f32_to_bf16_bits(f);
}

#endif /* OMNIGEMM_EPILOGUE_H */
