// omnigemm/block_formats.h: the element and scale codecs on value tables (bit-exact), the encoders
// against numeric.hpp over a sweep of f32 bit patterns, the exact quotient rounding against a
// wide-precision division, the scale choices, and the packed scale layout's index arithmetic.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/block_formats.h"
#include "omnigemm/blockscaled.h"
#include "omnigemm/numeric.hpp"

namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float value(uint32_t u) { return std::bit_cast<float>(u); }
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }

}  // namespace

TEST_CASE("block formats: constants agree with omnigemm.h") {
  CHECK(OG_BF_MODE_VEC32_UE8M0 == OG_SCALE_MODE_VEC32_UE8M0);
  CHECK(OG_BF_MODE_VEC16_UE4M3 == OG_SCALE_MODE_VEC16_UE4M3);
  CHECK(OG_BF_MODE_VEC128_F32 == OG_SCALE_MODE_VEC128_F32);
  CHECK(OG_BF_MODE_BLK128_F32 == OG_SCALE_MODE_BLK128x128_F32);
  CHECK(OG_BF_ELEM_E4M3 == OG_DTYPE_FP8_E4M3);
  CHECK(OG_BF_ELEM_E5M2 == OG_DTYPE_FP8_E5M2);
  CHECK(OG_BF_ELEM_E2M1 == OG_DTYPE_MXFP4);
}

TEST_CASE("block formats: decoders, every code") {
  const float e2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (uint32_t c = 0; c < 16; ++c) {
    CAPTURE(c);
    const float want = c & 8 ? -e2m1[c & 7] : e2m1[c & 7];
    CHECK(bits(og_bf_e2m1_to_f32(c)) == bits(want));  // -0 for code 8 included
  }
  for (uint32_t c = 0; c < 256; ++c) {
    CAPTURE(c);
    CHECK(same(og_bf_e4m3_to_f32(c), omnigemm::numeric::e4m3_to_f32(uint8_t(c))));
    CHECK(same(og_bf_e5m2_to_f32(c), omnigemm::numeric::e5m2_to_f32(uint8_t(c))));
    if (c == 255) CHECK(std::isnan(og_bf_e8m0_to_f32(c)));
    else CHECK(og_bf_e8m0_to_f32(c) == std::ldexp(1.0f, int(c) - 127));
  }
  // Landmarks written out.
  CHECK(og_bf_e4m3_to_f32(0x7e) == 448.0f);
  CHECK(std::isnan(og_bf_e4m3_to_f32(0x7f)));
  CHECK(std::isnan(og_bf_e4m3_to_f32(0xff)));
  CHECK(og_bf_e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));
  CHECK(og_bf_e4m3_to_f32(0x08) == std::ldexp(1.0f, -6));
  CHECK(og_bf_e4m3_to_f32(0x38) == 1.0f);
  CHECK(og_bf_e5m2_to_f32(0x7b) == 57344.0f);
  CHECK(std::isinf(og_bf_e5m2_to_f32(0x7c)));
  CHECK(og_bf_e5m2_to_f32(0x01) == std::ldexp(1.0f, -16));
  CHECK(og_bf_e8m0_bits(0) == 0x00400000u);  // 2^-127: an f32 subnormal
  CHECK(og_bf_e8m0_to_f32(127) == 1.0f);
  CHECK(og_bf_e8m0_to_f32(254) == std::ldexp(1.0f, 127));
}

TEST_CASE("block formats: plain fp8 encoders equal numeric.hpp over a sweep of f32 bit patterns") {
  // Every 61st pattern of all 2^32 (about 70 million, all classes: zeros, subnormals, normals,
  // Inf, NaN, both signs), plus every pattern within 64 ulps of each midpoint between adjacent
  // codes of both formats (where rounding decides), both signs.
  int64_t mismatches = 0;
  auto check = [&](uint32_t x) {
    const float f = value(x);
    const uint32_t e4 = og_bf_encode_e4m3(x, 1u, 0), e5 = og_bf_encode_e5m2(x, 1u, 0, false);
    if (e4 != omnigemm::numeric::f32_to_e4m3(f) || e5 != omnigemm::numeric::f32_to_e5m2(f)) ++mismatches;
    // The f32 "format" must be the identity on finite values.
    if (!og_bf_is_nan_or_inf(x) && og_bf_encode_f32(x, 1u, 0) != x) ++mismatches;
  };
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 61) check(uint32_t(u));
  for (int c = 0; c < 127; ++c) {
    const float m4 = (omnigemm::numeric::e4m3_to_f32(uint8_t(c)) + omnigemm::numeric::e4m3_to_f32(uint8_t(c + 1))) / 2;
    const float m5 = (omnigemm::numeric::e5m2_to_f32(uint8_t(c)) + omnigemm::numeric::e5m2_to_f32(uint8_t(c + 1))) / 2;
    for (float mid : {m4, m5, -m4, -m5})
      if (std::isfinite(mid))
        for (int d = -64; d <= 64; ++d) check(bits(mid) + uint32_t(d));
  }
  CHECK(mismatches == 0);
}

TEST_CASE("block formats: og_bf_nan_canonical maps every NaN to 0x7fc00000 and nothing else") {
  // The NaNs devices produce: NVIDIA's canonical 0x7fffffff (CUDA and Vulkan), x86's default
  // 0xffc00000, signalling and payload NaNs of either sign.
  for (og_uint nan : {0x7fffffffu, 0xffc00000u, 0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fa5a5a5u, 0xffffffffu})
    CHECK(og_bf_nan_canonical(nan) == 0x7fc00000u);
  // Infinities, zeros, subnormals and finite values keep their bits.
  for (og_uint x : {0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x3f800000u, 0xff7fffffu})
    CHECK(og_bf_nan_canonical(x) == x);
  std::mt19937 g(7);
  for (int i = 0; i < 100000; ++i) {
    const og_uint x = og_uint(g());
    const bool nan = (x & 0x7fffffffu) > 0x7f800000u;
    CHECK(og_bf_nan_canonical(x) == (nan ? 0x7fc00000u : x));
  }
}

TEST_CASE("block formats: rounding and saturation tables") {
  struct Row { float x; uint32_t e4m3, e5m2_ieee, e5m2_sat, e2m1; };
  const float inf = INFINITY;
  const Row rows[] = {
      {0.0f, 0x00, 0x00, 0x00, 0x0},
      {-0.0f, 0x80, 0x80, 0x80, 0x8},
      {0.25f, 0x28, 0x34, 0x34, 0x0},       // e2m1: tie between 0 and 0.5 -> even 0
      {0.26f, 0x28, 0x34, 0x34, 0x1},
      {0.75f, 0x34, 0x3a, 0x3a, 0x2},       // e2m1: tie between 0.5 (1) and 1 (2) -> 2
      {1.25f, 0x3a, 0x3d, 0x3d, 0x2},       // e2m1: tie 1 / 1.5 -> 1; e5m2: 1.25 exact
      {1.75f, 0x3e, 0x3f, 0x3f, 0x4},       // e2m1: tie 1.5 (3) / 2 (4) -> 2
      {2.5f, 0x42, 0x41, 0x41, 0x4},        // e2m1: tie 2 / 3 -> 2
      {5.0f, 0x4a, 0x45, 0x45, 0x6},        // e2m1: tie 4 (6) / 6 (7) -> 4
      {5.01f, 0x4a, 0x45, 0x45, 0x7},
      {7.0f, 0x4e, 0x47, 0x47, 0x7},        // e2m1 saturates
      {-6.5f, 0xcd, 0xc6, 0xc6, 0xf},
      {464.0f, 0x7e, 0x5f, 0x5f, 0x7},      // e4m3: past 448 saturates (never the NaN code)
      {57344.0f, 0x7e, 0x7b, 0x7b, 0x7},
      {61440.0f, 0x7e, 0x7c, 0x7b, 0x7},    // e5m2: tie 57344 / 65536 -> Inf unless saturating
      {1e30f, 0x7e, 0x7c, 0x7b, 0x7},
      {inf, 0x7e, 0x7c, 0x7b, 0x7},
      {-inf, 0xfe, 0xfc, 0xfb, 0xf},
      {0x1p-10f, 0x00, 0x14, 0x14, 0x0},    // e4m3: half the smallest subnormal, tie -> 0
      {0x1.8p-10f, 0x01, 0x16, 0x16, 0x0},
      {0x1p-17f, 0x00, 0x00, 0x00, 0x0},    // e5m2: half its smallest subnormal -> 0
      {0x1.8p-17f, 0x00, 0x01, 0x01, 0x0},
  };
  for (const Row& r : rows) {
    CAPTURE(r.x);
    CHECK(og_bf_encode_e4m3(bits(r.x), 1u, 0) == r.e4m3);
    CHECK(og_bf_encode_e5m2(bits(r.x), 1u, 0, false) == r.e5m2_ieee);
    CHECK(og_bf_encode_e5m2(bits(r.x), 1u, 0, true) == r.e5m2_sat);
    CHECK(og_bf_encode_e2m1(bits(r.x), 1u, 0) == r.e2m1);
  }
  // NaN: e4m3 and e5m2 keep it (with its sign); e2m1 has none and writes 0.
  CHECK(og_bf_encode_e4m3(0xffc00000u, 1u, 0) == 0xffu);
  CHECK(og_bf_encode_e5m2(0x7fc00000u, 1u, 0, true) == 0x7eu);
  CHECK(og_bf_encode_e2m1(0x7fc00000u, 1u, 0) == 0u);
  // Division by the scale: x / (d * 2^ed).
  CHECK(og_bf_encode_e4m3(bits(3.0f), 3u, 0) == 0x38u);          // 3 / 3 = 1
  CHECK(og_bf_encode_e2m1(bits(1.0f), 1u, -2) == 0x6u);          // 1 / 2^-2 = 4
  CHECK(og_bf_encode_e2m1(bits(1.0f), 3u, -3) == 0x5u);          // 1 / (3/8) = 2.67 -> 3
  CHECK(og_bf_encode_e4m3(bits(-448.0f), 1u, 127) == 0x80u);     // a tiny quotient rounds to -0
}

TEST_CASE("block formats: the quotient rounding is the exact quotient's, against a 64-bit-significand division") {
  // f32 results (23 mantissa bits, the subnormal range and overflow included): long double's
  // 64-bit quotient rounds to f32 exactly like the exact quotient except within 2^-64 of a tie,
  // which random operands do not reach.
  std::mt19937_64 rng(omnigemm::test::test_seed());
  int64_t mismatches = 0;
  for (int i = 0; i < 3000000; ++i) {
    const uint32_t x = uint32_t(rng()) & 0x7fffffffu;
    if (og_bf_is_nan_or_inf(x) || x == 0) continue;
    uint32_t d = uint32_t(rng()) & ((1u << 28) - 1);
    if (!d) d = 1;
    const int ed = int(rng() % 120) - 60;
    const long double q = (long double)value(x) / ((long double)d * std::ldexp((long double)1, ed));
    if (bits(float(q)) != og_bf_encode_f32(x, d, ed)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("block formats: scale choice tables") {
  // MX: 2^(floor(log2(amax)) - emax_elem), clamped to [2^-127, 2^127].
  CHECK(og_bf_mx_scale(bits(1.0f), 8) == 127 - 8);
  CHECK(og_bf_mx_scale(bits(1.99f), 8) == 127 - 8);
  CHECK(og_bf_mx_scale(bits(448.0f), 8) == 127);
  CHECK(og_bf_mx_scale(bits(6.0f), 2) == 127);
  CHECK(og_bf_mx_scale(bits(57344.0f), 15) == 127);
  CHECK(og_bf_mx_scale(0u, 8) == 0);                            // all zero: 2^-127
  CHECK(og_bf_mx_scale(bits(0x1p-140f), 2) == 0);               // clamped below
  CHECK(og_bf_mx_scale(0x00000001u, 8) == 0);                   // smallest subnormal
  CHECK(og_bf_mx_scale(bits(0x1p-120f), 2) == 127 - 122);
  CHECK(og_bf_mx_scale(bits(3.0e38f), 2) == 127 + 125);
  CHECK(og_bf_mx_scale(bits(3.0e38f), 15) == 127 + 112);
  // nvfp4: e4m3(amax / (6 * global)), saturating; 0 below 2^-10.
  CHECK(og_bf_nvfp4_scale(bits(6.0f), bits(1.0f)) == 0x38u);            // 1
  CHECK(og_bf_nvfp4_scale(bits(3.0f), bits(1.0f)) == 0x30u);            // 0.5
  CHECK(og_bf_nvfp4_scale(bits(6.0f * 448.0f), bits(1.0f)) == 0x7eu);   // 448
  CHECK(og_bf_nvfp4_scale(bits(1e9f), bits(1.0f)) == 0x7eu);            // saturates
  CHECK(og_bf_nvfp4_scale(bits(1.0f), bits(1.0f / 24.0f)) == 0x48u);    // 1 / (6 / 24) = 4
  CHECK(og_bf_nvfp4_scale(bits(6e-4f), bits(1.0f)) == 0u);              // 1e-4 < 2^-10: zero block
  CHECK(og_bf_nvfp4_scale(0u, bits(1.0f)) == 0u);
  // 128-blockwise: amax / 448 or / 57344 in f32, 1 for an all-zero block.
  CHECK(og_bf_block128_scale(bits(448.0f), false) == bits(1.0f));
  CHECK(og_bf_block128_scale(bits(57344.0f), true) == bits(1.0f));
  CHECK(og_bf_block128_scale(bits(1.0f), false) == bits(float(1.0L / 448.0L)));
  CHECK(og_bf_block128_scale(0u, false) == bits(1.0f));
}

TEST_CASE("packed scale layout: the 5D index, a bijection onto the padded tensor, and its inverse") {
  for (int rows : {1, 127, 128, 130, 300}) {
    for (int cols : {1, 3, 4, 5, 13}) {
      const int pr = og_sf_padded_rows(rows), pc = og_sf_padded_cols(cols);
      CHECK(pr % 128 == 0);
      CHECK(pc % 4 == 0);
      CHECK(pr >= rows);
      CHECK(pr < rows + 128);
      CHECK(pc >= cols);
      CHECK(pc < cols + 4);
      std::vector<int> hits(size_t(pr * pc), 0);
      for (int r = 0; r < pr; ++r)
        for (int c = 0; c < pc; ++c) {
          // The (rows/128, cols/4, 32, 4, 4) array of the tutorial and cuBLASLt, written out.
          const int want = (((r / 128) * (pc / 4) + c / 4) * 32 + r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
          const int off = og_sf_packed_offset(r, c, pc);
          REQUIRE(off == want);
          ++hits[size_t(off)];
          CHECK(og_sf_packed_row(off, pc) == r);
          CHECK(og_sf_packed_col(off, pc) == c);
        }
      for (int h : hits) REQUIRE(h == 1);
    }
  }
}
