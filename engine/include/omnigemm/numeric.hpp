// Scalar conversions between float and OmniGEMM's storage types, bit-exact and
// round-to-nearest-even. These define the reference semantics every backend must match.
//
//   f16   IEEE binary16; overflow -> inf.
//   bf16  upper half of binary32; overflow -> inf.
//   e4m3  OCP FP8 E4M3 ("e4m3fn"): bias 7, max 448, no infinities, NaN only S.1111.111.
//         Conversion SATURATES: finite values beyond 448 and +-inf become +-448; NaN -> 0x7F|sign.
//   e5m2  OCP FP8 E5M2, IEEE-like: bias 15, max 57344, overflow -> inf, NaN kept.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace omnigemm::numeric {

// ---- f16 ----
inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    float v = std::ldexp(float(man), -24);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32_to_f16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return uint16_t(sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00));
  if (x >= 0x47800000u) return uint16_t(sign | 0x7c00);  // >= 65536: inf
  if (x < 0x38800000u) {  // below the smallest normal 2^-14: let the FPU round to the 2^-24 grid
    const float magic = 0.5f;  // ulp(0.5) = 2^-24, the f16 subnormal quantum
    const float v = std::bit_cast<float>(x) + magic;
    return uint16_t(sign | (std::bit_cast<uint32_t>(v) - std::bit_cast<uint32_t>(magic)));
  }
  const uint32_t odd = (x >> 13) & 1;
  x += (uint32_t(15 - 127) << 23) + 0xfff + odd;  // rebias and round half to even
  return uint16_t(sign | (x >> 13));  // may carry into exponent 31 = inf, as it should
}

// ---- bf16 ----
inline float bf16_to_f32(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

inline uint16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

// ---- small floats (shared by the fp8 formats) ----
namespace detail {
// Round |v| (finite, >= 0) to a float with `man_bits` mantissa bits whose smallest normal
// exponent is `min_exp`, ties to even. Returns the rounded magnitude.
inline double round_minifloat(double v, int man_bits, int min_exp) {
  if (v == 0.0) return 0.0;
  int e;
  std::frexp(v, &e);  // v = f * 2^e, f in [0.5, 1): exponent of leading bit is e - 1
  int lead = e - 1;
  if (lead < min_exp) lead = min_exp;  // subnormal range: fixed quantum
  const double quantum = std::ldexp(1.0, lead - man_bits);
  return std::nearbyint(v / quantum) * quantum;  // default rounding mode: half to even
}
// Encode an exactly representable magnitude `v` (already rounded, within range).
inline uint8_t pack_minifloat(double v, int man_bits, int bias) {
  if (v == 0.0) return 0;
  int e;
  const double f = std::frexp(v, &e);  // v = f * 2^e
  int exp_field = e - 1 + bias;
  if (exp_field <= 0) {  // subnormal: v = man * 2^(1 - bias - man_bits)
    return uint8_t(std::lround(std::ldexp(v, bias - 1 + man_bits)));
  }
  const int man = int(std::lround((f * 2.0 - 1.0) * double(1 << man_bits)));
  return uint8_t((exp_field << man_bits) | man);
}
inline float unpack_minifloat(uint8_t bits, int exp_bits, int man_bits, int bias) {
  const int man_mask = (1 << man_bits) - 1;
  const int exp_field = (bits >> man_bits) & ((1 << exp_bits) - 1);
  const int man = bits & man_mask;
  const float mag = exp_field == 0 ? std::ldexp(float(man), 1 - bias - man_bits)
                                   : std::ldexp(1.0f + float(man) / float(1 << man_bits), exp_field - bias);
  return (bits & 0x80) ? -mag : mag;
}
}  // namespace detail

// ---- fp8 e4m3 (OCP, saturating) ----
inline constexpr float kE4M3Max = 448.0f;
inline float e4m3_to_f32(uint8_t b) {
  if ((b & 0x7f) == 0x7f) return std::bit_cast<float>(0x7fc00000u | (uint32_t(b & 0x80) << 24));
  return detail::unpack_minifloat(b, 4, 3, 7);
}
inline uint8_t f32_to_e4m3(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  if (std::isnan(f)) return uint8_t(sign | 0x7f);
  double v = std::fabs(double(f));
  v = std::isinf(v) ? kE4M3Max : detail::round_minifloat(v, 3, -6);
  if (v > kE4M3Max) v = kE4M3Max;
  return uint8_t(sign | detail::pack_minifloat(v, 3, 7));
}

// ---- fp8 e5m2 (OCP, IEEE-like) ----
inline constexpr float kE5M2Max = 57344.0f;
inline float e5m2_to_f32(uint8_t b) {
  const uint32_t sign = uint32_t(b & 0x80) << 24;
  if ((b & 0x7c) == 0x7c) {
    return std::bit_cast<float>(sign | ((b & 0x03) ? 0x7fc00000u : 0x7f800000u));
  }
  return detail::unpack_minifloat(b, 5, 2, 15);
}
inline uint8_t f32_to_e5m2(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  if (std::isnan(f)) return uint8_t(sign | 0x7e);
  double v = std::fabs(double(f));
  if (std::isinf(v)) return uint8_t(sign | 0x7c);
  v = detail::round_minifloat(v, 2, -14);
  if (v > kE5M2Max) return uint8_t(sign | 0x7c);  // rounds past the largest finite: inf
  return uint8_t(sign | detail::pack_minifloat(v, 2, 15));
}

}  // namespace omnigemm::numeric
