// The element conversions of the repack copy (copy.cu), as bit manipulations that compile for the
// host (tests/cuda/test_cuda_mixed.cpp checks every source code) and the device. Each maps
// every value of its source type to the same value of its destination type, exactly: NaN to NaN,
// Inf to Inf, signed zeros and subnormals included.
//  - fp8 to 16-bit (16-bit x fp8 GEMMs run on the 16-bit kernel): e4m3 has 3 mantissa bits and
//    exponents 2^-9 (subnormal) to 2^8, e5m2 2 bits and 2^-16 to 2^15; f16 (10 bits, 2^-24 to
//    2^15) and bf16 (7 bits, f32's exponents) hold both. e4m3 has no Inf; its NaN (S.1111.111)
//    becomes the quiet NaN.
//  - f16 and bf16 to f32 (f16 x bf16 GEMMs run on the TF32 kernel): the f32 value keeps the
//    source's 10 or 7 mantissa bits at the top of f32's 23, so its low 13 bits are zero and TF32
//    (f32 with 10 mantissa bits) holds it exactly, f16 subnormals included (normal in f32).
#pragma once

#include "omnigemm/block_formats.h"
#include "omnigemm/lang.h"

namespace omnigemm::detail::repack {

enum class Convert : unsigned char { none, e4m3_to_f16, e5m2_to_f16, e4m3_to_bf16, e5m2_to_bf16, f16_to_f32, bf16_to_f32 };

OG_FUNC og_uint e4m3_to_f16_bits(og_uint c) {
  const og_uint sign = (c & 0x80u) << 8, e = (c >> 3) & 15u, m = c & 7u;
  if (e == 15u && m == 7u) return sign | 0x7e00u;
  if (e != 0u) return sign | ((e + 8u) << 10) | (m << 7);  // bias 7 -> 15
  if (m == 0u) return sign;
  const int p = og_bf_msb(m);  // m * 2^-9 = 2^(p - 9) * (m / 2^p): normal in f16
  return sign | (og_uint(p + 6) << 10) | ((m - (1u << og_uint(p))) << og_uint(10 - p));
}

// e5m2 is f16 with the low 8 mantissa bits dropped.
OG_FUNC og_uint e5m2_to_f16_bits(og_uint c) { return c << 8; }

OG_FUNC og_uint f16_to_f32_bits(og_uint h) {
  const og_uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 0x3ffu;
  if (e == 31u) return sign | 0x7f800000u | (m << 13);
  if (e != 0u) return sign | ((e + 112u) << 23) | (m << 13);  // bias 15 -> 127
  if (m == 0u) return sign;
  const int p = og_bf_msb(m);  // m * 2^-24 = 2^(p - 24) * (m / 2^p)
  return sign | (og_uint(p + 103) << 23) | ((m - (1u << og_uint(p))) << og_uint(23 - p));
}

OG_FUNC og_uint bf16_to_f32_bits(og_uint h) { return h << 16; }

// The destination bits of one element (`none`: the same bits).
OG_FUNC og_uint convert_bits(Convert k, og_uint s) {
  switch (k) {
    case Convert::e4m3_to_f16: return e4m3_to_f16_bits(s);
    case Convert::e5m2_to_f16: return e5m2_to_f16_bits(s);
    case Convert::e4m3_to_bf16: return og_bf_e4m3_bits(s) >> 16;  // <= 3 mantissa bits: exact
    case Convert::e5m2_to_bf16: return og_bf_e5m2_bits(s) >> 16;
    case Convert::f16_to_f32: return f16_to_f32_bits(s);
    case Convert::bf16_to_f32: return bf16_to_f32_bits(s);
    default: return s;
  }
}

}  // namespace omnigemm::detail::repack
