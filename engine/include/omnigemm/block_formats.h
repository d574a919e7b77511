/* The block-scaled formats of OmniGEMM: element and scale codecs, the exact quantisation
 * arithmetic, and the index arithmetic of the packed scale layout.
 *
 * Like tile_schedule.h and epilogue.h, this header compiles as C++ (host), CUDA, HIP and GLSL
 * (via GL_GOOGLE_include_directive), so the host quantiser, the CPU reference, the Vulkan shaders
 * and the CUDA kernels decode, encode and index scales with the same code. The same subset:
 * 32-bit ints, no pointers, no constructors, `OG_FUNC` functions, no names with two consecutive
 * underscores. Every conversion works on the bits of f32 values in integer arithmetic, so its
 * result does not depend on a device's float division or on denormal flushing.
 *
 * Element formats (OCP 8-bit floats and OCP Microscaling v1.0):
 *   e2m1  4 bits: sign bit 3, bias 1, no Inf or NaN; codes 0..7 mean 0, 0.5, 1, 1.5, 2, 3, 4, 6.
 *   e4m3  bias 7, largest finite 448, NaN = S.1111.111, no Inf.
 *   e5m2  bias 15, largest finite 57344, Inf = S.11111.00, NaN = S.11111.{01,10,11}.
 * Scale formats:
 *   E8M0  unsigned exponent: 2^(code - 127), code 0..254; code 255 is NaN (code 0 is the f32
 *         subnormal 2^-127).
 *   e4m3  (nvfp4 scales) as above, used unsigned (the quantiser writes positive codes).
 *   f32   (128-blockwise fp8 scales).
 *
 * Quantisation (og_bf_quantize_* below): every element code is the round-to-nearest-even of the
 * EXACT real quotient x / s in the element format, s being the element's scale (times the
 * tensor's global factor for nvfp4), saturated to the format's largest finite value (for e5m2
 * too: OCP MX clamps normal numbers). The scale of a block whose elements include a NaN or an
 * Inf is NaN (E8M0 0xff, e4m3 0x7f, f32 0x7fc00000) and its element codes are 0, so that the
 * whole block dequantises to NaN and a GEMM over it yields NaN.
 *
 * Dequantisation: value = f32(f32(element * scale) * global): the first product is exact for the
 * E8M0 and e4m3 scales (a power of two, or a 4-bit significand times e2m1's 2 bits), the second
 * is one f32 rounding (global is 1 except for nvfp4, and a no-op then). Every NaN result is
 * stored as 0x7fc00000 (og_bf_nan_canonical).
 *
 * Packed scale layout (cuBLASLt VEC16_UE4M3 / VEC32_UE8M0, CUTLASS and the block-scaled
 * tutorial): 512-byte tiles of 128 rows x 4 scale columns, rows padded to a multiple of 128 and
 * scale columns to a multiple of 4 (padding stored as zero bytes); byte offset of (row, col):
 *   ((row / 128) * (padded_cols / 4) + col / 4) * 512 + (row % 32) * 16 + ((row / 32) % 4) * 4 + col % 4
 * i.e. the array (rows/128, padded_cols/4, 32, 4, 4) indexed [row/128][col/4][row%32][(row/32)%4][col%4].
 */
#ifndef OMNIGEMM_BLOCK_FORMATS_H
#define OMNIGEMM_BLOCK_FORMATS_H

#include "lang.h"

/* Elements along K per scale and the scale formats (values of og_scale_mode in omnigemm.h,
 * checked there by tests/core/test_block_formats.cpp). */
#define OG_BF_MODE_VEC32_UE8M0 1
#define OG_BF_MODE_VEC16_UE4M3 2
#define OG_BF_MODE_VEC128_F32 3
#define OG_BF_MODE_BLK128_F32 4

/* ---- The packed scale layout --------------------------------------------------------------- */
OG_FUNC int og_sf_padded_rows(int rows) { return (rows + 127) / 128 * 128; }
OG_FUNC int og_sf_padded_cols(int cols) { return (cols + 3) / 4 * 4; }
/* The 512-byte tile holding scale (row, col) when scale columns are padded to padded_cols. */
OG_FUNC int og_sf_tile(int row, int col, int padded_cols) { return (row / 128) * (padded_cols / 4) + col / 4; }
/* The byte of (row, col) within its tile. */
OG_FUNC int og_sf_in_tile(int row, int col) { return (row % 32) * 16 + ((row / 32) % 4) * 4 + col % 4; }
/* Byte offset of (row, col); callers keep it below 2^31 (or combine og_sf_tile * 512 and
 * og_sf_in_tile in 64-bit arithmetic, as the host does). */
OG_FUNC int og_sf_packed_offset(int row, int col, int padded_cols) {
  return og_sf_tile(row, col, padded_cols) * 512 + og_sf_in_tile(row, col);
}
/* The inverse: which (row, col) a byte offset holds. */
OG_FUNC int og_sf_packed_row(int offset, int padded_cols) {
  int tile = offset / 512, within = offset % 512;
  return (tile / (padded_cols / 4)) * 128 + ((within / 4) % 4) * 32 + within / 16;
}
OG_FUNC int og_sf_packed_col(int offset, int padded_cols) {
  int tile = offset / 512;
  return (tile % (padded_cols / 4)) * 4 + offset % 4;
}

/* ---- Bits ---------------------------------------------------------------------------------- */
/* Index of the highest set bit of x != 0. */
OG_FUNC int og_bf_msb(og_uint x) {
#if defined(OG_GLSL)
  return findMSB(x);
#elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return 31 - __clz(int(x));
#elif defined(__GNUC__) || defined(__clang__)
  return 31 - __builtin_clz(x);
#else
  int p = 0;
  while ((x >> p) > 1u) p += 1;
  return p;
#endif
}

OG_FUNC bool og_bf_is_nan_or_inf(og_uint f32_bits) { return (f32_bits & 0x7f800000u) == 0x7f800000u; }

/* |x| of finite f32 bits as sig * 2^exp (sig < 2^24; 0 for zero). */
OG_FUNC og_uint og_bf_sig(og_uint abs_bits) {
  og_uint e = abs_bits >> 23;
  return e == 0u ? abs_bits : ((abs_bits & 0x7fffffu) | 0x800000u);
}
OG_FUNC int og_bf_exp(og_uint abs_bits) {
  int e = int(abs_bits >> 23);
  return (e == 0 ? 1 : e) - 150;
}

/* ---- Exact rounding ------------------------------------------------------------------------ */
/* The round-to-nearest-even of the exact quotient (n * 2^en) / (d * 2^ed), n and d in [1, 2^28),
 * as a small float with `man` mantissa bits and exponent bias `bias` (normal exponents from
 * 1 - bias up, subnormals below): the code (exponent field << man) + mantissa, without sign.
 * Codes are unbounded above (a code past a format's largest finite value means the quotient
 * rounded beyond it; the caller saturates or returns Inf); at 0x7fffffff they stop. */
OG_FUNC og_uint og_bf_round_quotient(og_uint n, int en, og_uint d, int ed, int man, int bias) {
  int pn = og_bf_msb(n), pd = og_bf_msb(d);
  n = n << og_uint(27 - pn); /* both now in [2^27, 2^28): n / d in (1/2, 2) */
  d = d << og_uint(27 - pd);
  int e = en + pn - ed - pd;       /* quotient = (n / d) * 2^e */
  int lead = n >= d ? e : e - 1;   /* floor(log2(quotient)) */
  int emin = 1 - bias;
  int q_exp = (lead > emin ? lead : emin) - man; /* exponent of the quantum */
  if (q_exp + man + bias >= 255) return 0x7fffffffu;
  int k = e - q_exp; /* quotient / 2^q_exp = (n / d) * 2^k, k <= man + 1 */
  if (k < -1) return 0u; /* below half a quantum */
  og_uint q = 0u;
  bool up = false;
  if (k == -1) {
    up = n > d; /* (n / d) / 2 against 1/2; a tie rounds to the even 0 */
  } else if (d == 0x8000000u) { /* a power of two: a shift */
    og_uint drop = og_uint(27 - k);
    q = n >> drop;
    og_uint rem = n & ((1u << drop) - 1u), tie = 1u << (drop - 1u);
    up = rem > tie || (rem == tie && (q & 1u) != 0u);
  } else { /* long division, one quotient bit per step */
    q = n >= d ? 1u : 0u;
    og_uint r = n - q * d;
    for (int i = 0; i < k; ++i) {
      r = r << 1u;
      q = q << 1u;
      if (r >= d) {
        r -= d;
        q |= 1u;
      }
    }
    up = 2u * r > d || (2u * r == d && (q & 1u) != 0u);
  }
  if (up) q += 1u;
  if (q == 0u) return 0u;
  /* Normal: ((E - 1) << man) + q with q in [2^man, 2^(man+1)] is (E << man) + (q - 2^man), a carry
   * included; subnormal (exponent emin): E - 1 = 0 and q <= 2^man, 2^man being the smallest normal. */
  return (og_uint(q_exp + man + bias - 1) << og_uint(man)) + q;
}

/* The code of |x| / (d * 2^ed) for finite f32 bits x (sign ignored). */
OG_FUNC og_uint og_bf_round_abs(og_uint x_bits, og_uint d, int ed, int man, int bias) {
  og_uint a = x_bits & 0x7fffffffu;
  if (a == 0u) return 0u;
  return og_bf_round_quotient(og_bf_sig(a), og_bf_exp(a), d, ed, man, bias);
}

/* ---- Element encoders: x / (d * 2^ed), round to nearest even ------------------------------- */
/* e4m3: saturates to +-448 (Inf too); NaN -> 0x7f with x's sign. */
OG_FUNC og_uint og_bf_encode_e4m3(og_uint x_bits, og_uint d, int ed) {
  og_uint sign = (x_bits >> 24) & 0x80u;
  if ((x_bits & 0x7fffffffu) > 0x7f800000u) return sign | 0x7fu;
  if ((x_bits & 0x7fffffffu) == 0x7f800000u) return sign | 0x7eu;
  og_uint c = og_bf_round_abs(x_bits, d, ed, 3, 7);
  return sign | (c > 0x7eu ? 0x7eu : c);
}
/* e5m2: beyond the largest finite value -> Inf (saturate false, IEEE-like) or +-57344
 * (saturate true, as MX quantisation clamps); Inf stays Inf unless saturating; NaN -> 0x7e. */
OG_FUNC og_uint og_bf_encode_e5m2(og_uint x_bits, og_uint d, int ed, bool saturate) {
  og_uint sign = (x_bits >> 24) & 0x80u;
  if ((x_bits & 0x7fffffffu) > 0x7f800000u) return sign | 0x7eu;
  if ((x_bits & 0x7fffffffu) == 0x7f800000u) return sign | (saturate ? 0x7bu : 0x7cu);
  og_uint c = og_bf_round_abs(x_bits, d, ed, 2, 15);
  if (c > 0x7bu) c = saturate ? 0x7bu : 0x7cu;
  return sign | c;
}
/* e2m1 (4-bit code, sign bit 3): saturates to +-6 (Inf too); NaN, which e2m1 cannot hold, -> 0. */
OG_FUNC og_uint og_bf_encode_e2m1(og_uint x_bits, og_uint d, int ed) {
  og_uint sign = (x_bits >> 28) & 0x8u;
  if ((x_bits & 0x7fffffffu) > 0x7f800000u) return 0u;
  if ((x_bits & 0x7fffffffu) == 0x7f800000u) return sign | 0x7u;
  og_uint c = og_bf_round_abs(x_bits, d, ed, 1, 1);
  return sign | (c > 0x7u ? 0x7u : c);
}
/* f32 (for the f32 scales): round to nearest even, overflow to Inf. Finite x only. */
OG_FUNC og_uint og_bf_encode_f32(og_uint x_bits, og_uint d, int ed) {
  og_uint sign = x_bits & 0x80000000u;
  og_uint c = og_bf_round_abs(x_bits, d, ed, 23, 127);
  return sign | (c > 0x7f800000u ? 0x7f800000u : c);
}

/* ---- Decoders: exact f32 bits -------------------------------------------------------------- */
OG_FUNC og_uint og_bf_e2m1_bits(og_uint c) {
  og_uint sign = (c & 0x8u) << 28;
  og_uint e = (c >> 1) & 3u, m = c & 1u;
  if (e == 0u) return sign | (m == 0u ? 0u : 0x3f000000u); /* 0 or 0.5 */
  return sign | ((e + 126u) << 23) | (m << 22);
}
OG_FUNC og_uint og_bf_e4m3_bits(og_uint c) {
  og_uint sign = (c & 0x80u) << 24;
  og_uint e = (c >> 3) & 15u, m = c & 7u;
  if (e == 15u && m == 7u) return sign | 0x7fc00000u;
  if (e != 0u) return sign | ((e + 120u) << 23) | (m << 20);
  if (m == 0u) return sign;
  int p = og_bf_msb(m); /* m * 2^-9 = 2^(p - 9) * (m / 2^p) */
  return sign | (og_uint(p + 118) << 23) | ((m - (1u << og_uint(p))) << og_uint(23 - p));
}
OG_FUNC og_uint og_bf_e5m2_bits(og_uint c) {
  og_uint sign = (c & 0x80u) << 24;
  og_uint e = (c >> 2) & 31u, m = c & 3u;
  if (e == 31u) return sign | (m == 0u ? 0x7f800000u : 0x7fc00000u);
  if (e != 0u) return sign | ((e + 112u) << 23) | (m << 21);
  if (m == 0u) return sign;
  int p = og_bf_msb(m); /* m * 2^-16 */
  return sign | (og_uint(p + 111) << 23) | ((m - (1u << og_uint(p))) << og_uint(23 - p));
}
OG_FUNC og_uint og_bf_e8m0_bits(og_uint c) {
  if (c == 255u) return 0x7fc00000u;
  if (c == 0u) return 0x00400000u; /* 2^-127, an f32 subnormal */
  return c << 23;
}
OG_FUNC float og_bf_e2m1_to_f32(og_uint c) { return og_bits_float(og_bf_e2m1_bits(c)); }
OG_FUNC float og_bf_e4m3_to_f32(og_uint c) { return og_bits_float(og_bf_e4m3_bits(c)); }
OG_FUNC float og_bf_e5m2_to_f32(og_uint c) { return og_bits_float(og_bf_e5m2_bits(c)); }
OG_FUNC float og_bf_e8m0_to_f32(og_uint c) { return og_bits_float(og_bf_e8m0_bits(c)); }

/* ---- Scale choice -------------------------------------------------------------------------- */
/* The E8M0 code of an MX block whose largest |x| has f32 bits amax (finite): OCP's
 * 2^(floor(log2(amax)) - emax_elem), clamped to [2^-127, 2^127]; an all-zero block gets 2^-127.
 * emax_elem: 8 for e4m3, 15 for e5m2, 2 for e2m1. */
OG_FUNC og_uint og_bf_mx_scale(og_uint amax_bits, int emax_elem) {
  if (amax_bits == 0u) return 0u;
  int e = int(amax_bits >> 23);
  int lg = e == 0 ? og_bf_msb(amax_bits) - 149 : e - 127;
  int s = lg - emax_elem;
  s = s < -127 ? -127 : (s > 127 ? 127 : s);
  return og_uint(s + 127);
}
/* The e4m3 code of an nvfp4 block: amax / (6 * global) rounded to nearest even and saturated
 * to 448 (global: positive finite f32 bits). 0 when the quotient is below 2^-10 (the block then
 * stores zeros). */
OG_FUNC og_uint og_bf_nvfp4_scale(og_uint amax_bits, og_uint global_bits) {
  if (amax_bits == 0u) return 0u;
  og_uint c = og_bf_round_abs(amax_bits, 3u * og_bf_sig(global_bits), og_bf_exp(global_bits) + 1, 3, 7);
  return c > 0x7eu ? 0x7eu : c;
}
/* The f32 bits of a 128-blockwise scale: amax / 448 (e4m3 elements) or amax / 57344 (e5m2),
 * rounded to nearest even; 1.0 for an all-zero block. */
OG_FUNC og_uint og_bf_block128_scale(og_uint amax_bits, bool e5m2) {
  if (amax_bits == 0u) return 0x3f800000u;
  return og_bf_encode_f32(amax_bits, 7u, e5m2 ? 13 : 6);
}

/* ---- Element quantisation per scale format ------------------------------------------------- */
/* Element formats (the og_dtype values of the fp8 elements; e2m1 has none). */
#define OG_BF_ELEM_E4M3 3
#define OG_BF_ELEM_E5M2 4
#define OG_BF_ELEM_E2M1 6

OG_FUNC og_uint og_bf_encode_elem(int elem, og_uint x_bits, og_uint d, int ed) {
  if (elem == OG_BF_ELEM_E4M3) return og_bf_encode_e4m3(x_bits, d, ed);
  if (elem == OG_BF_ELEM_E5M2) return og_bf_encode_e5m2(x_bits, d, ed, true);
  return og_bf_encode_e2m1(x_bits, d, ed);
}
OG_FUNC og_uint og_bf_elem_bits(int elem, og_uint c) {
  if (elem == OG_BF_ELEM_E4M3) return og_bf_e4m3_bits(c);
  if (elem == OG_BF_ELEM_E5M2) return og_bf_e5m2_bits(c);
  return og_bf_e2m1_bits(c);
}
/* An element under an E8M0 scale code (not 255): x / 2^(scale - 127). */
OG_FUNC og_uint og_bf_quantize_mx(int elem, og_uint x_bits, og_uint scale) {
  return og_bf_encode_elem(elem, x_bits, 1u, int(scale) - 127);
}
/* An nvfp4 element under e4m3 scale code `scale` (not 0x7f) and the global factor's f32 bits:
 * x / (scale * global); 0 when the scale is 0. */
OG_FUNC og_uint og_bf_quantize_nvfp4(og_uint x_bits, og_uint scale, og_uint global_bits) {
  og_uint s = og_bf_e4m3_bits(scale & 0x7fu);
  if (s == 0u) return 0u;
  /* e4m3 values have 4 significant bits: the product of significands stays below 2^28. */
  return og_bf_encode_e2m1(x_bits, (og_bf_sig(s) >> 20) * og_bf_sig(global_bits),
                           og_bf_exp(s) + 20 + og_bf_exp(global_bits));
}
/* A 128-blockwise element under the f32 scale bits `scale` (positive, finite): x / scale. */
OG_FUNC og_uint og_bf_quantize_block128(int elem, og_uint x_bits, og_uint scale) {
  return og_bf_encode_elem(elem, x_bits, og_bf_sig(scale), og_bf_exp(scale));
}

/* ---- Dequantisation ------------------------------------------------------------------------ */
/* Every NaN a dequantisation yields (a NaN scale, a NaN element code) as the one f32 pattern
 * 0x7fc00000 (positive quiet NaN), so that host and devices agree bit for bit: arithmetic on a
 * NaN keeps the operand's payload and sign on x86 and lavapipe but returns 0x7fffffff on NVIDIA
 * GPUs, CUDA and Vulkan alike. */
OG_FUNC og_uint og_bf_nan_canonical(og_uint f32_bits) {
  return (f32_bits & 0x7fffffffu) > 0x7f800000u ? 0x7fc00000u : f32_bits;
}
/* f32(f32(element * scale) * global), scale and global as f32 values; a NaN result as above. */
OG_FUNC float og_bf_dequantize(int elem, og_uint code, float scale, float global) {
  return og_bits_float(og_bf_nan_canonical(og_float_bits((og_bits_float(og_bf_elem_bits(elem, code)) * scale) * global)));
}

#endif /* OMNIGEMM_BLOCK_FORMATS_H */
