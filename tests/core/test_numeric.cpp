// omnigemm/numeric.hpp defines the reference conversions every backend must match; check them
// exhaustively where the domain is small and against an independent double-based rounding
// elsewhere.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <random>

#include "gemm_check.hpp"
#include "omnigemm/numeric.hpp"

using namespace omnigemm::numeric;

namespace {

// Round x to the nearest value of a binary format with `man` fraction bits, min normal
// exponent `emin`, largest finite `maxv` (ties to even), computed by enumerating the two
// neighbours in double. Returns +-inf past the rounding boundary of maxv.
double round_ref(double x, int man, int emin, double maxv) {
  const double ax = std::fabs(x);
  int e = std::ilogb(ax);
  if (ax == 0) return x;
  if (e < emin) e = emin;
  const double q = std::ldexp(1.0, e - man);
  const double lo = std::floor(ax / q) * q, hi = lo + q;
  double r;
  if (ax - lo < hi - ax) r = lo;
  else if (ax - lo > hi - ax) r = hi;
  else r = std::fmod(lo / q, 2.0) == 0.0 ? lo : hi;
  if (r > maxv) r = INFINITY;
  return std::copysign(r, x);
}

float random_float(std::mt19937_64& g) {
  // Uniform over bit patterns of finite floats in a band of exponents, so that subnormal,
  // normal and overflow boundaries of the small formats are all hit.
  std::uniform_int_distribution<int> exp(-30, 20);
  std::uniform_real_distribution<double> frac(1.0, 2.0);
  std::bernoulli_distribution neg(0.5);
  const float v = float(std::ldexp(frac(g), exp(g)));
  return neg(g) ? -v : v;
}

}  // namespace

TEST_CASE("numeric: every f16 pattern decodes and re-encodes to itself") {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(uint16_t(h));
    const bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (is_nan) {
      CHECK(std::isnan(f));
      CHECK(std::isnan(f16_to_f32(f32_to_f16(f))));
    } else {
      REQUIRE(f32_to_f16(f) == h);
    }
  }
  CHECK(f16_to_f32(0x3c00) == 1.0f);
  CHECK(f16_to_f32(0x7bff) == 65504.0f);
  CHECK(f16_to_f32(0x0001) == std::ldexp(1.0f, -24));
}

TEST_CASE("numeric: f32 -> f16 and bf16 round to nearest even like a double-based reference") {
  auto& g = omnigemm::test::rng();
  for (int i = 0; i < 400000; ++i) {
    const float x = random_float(g);
    const double r16 = round_ref(x, 10, -14, 65504.0);
    REQUIRE_MESSAGE(double(f16_to_f32(f32_to_f16(x))) == r16, x);
    const double rbf = round_ref(x, 7, -126, 3.3895313892515355e38);
    REQUIRE_MESSAGE(double(bf16_to_f32(f32_to_bf16(x))) == rbf, x);
  }
  CHECK(f32_to_f16(65519.0f) == 0x7bff);  // below the boundary: max finite
  CHECK(f32_to_f16(65520.0f) == 0x7c00);  // the tie rounds to even = inf
  CHECK(f32_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie -> even (1.0)
  CHECK(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie -> even (up)
  CHECK(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  CHECK(f32_to_bf16(-INFINITY) == 0xff80);
}

TEST_CASE("numeric: fp8 e4m3 follows OCP e4m3fn and saturates") {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    const float f = e4m3_to_f32(uint8_t(b));
    if ((b & 0x7f) == 0x7f) { CHECK(std::isnan(f)); continue; }
    ++finite;
    CHECK(std::isfinite(f));
    CHECK(std::fabs(f) <= 448.0f);
    CHECK(f32_to_e4m3(f) == ((b == 0x80) ? 0x80 : b));  // -0 keeps its sign too
  }
  CHECK(finite == 254);
  CHECK(e4m3_to_f32(0x7e) == 448.0f);
  CHECK(e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));   // smallest subnormal
  CHECK(e4m3_to_f32(0x08) == std::ldexp(1.0f, -6));   // smallest normal
  CHECK(e4m3_to_f32(0x38) == 1.0f);
  CHECK(f32_to_e4m3(1e6f) == 0x7e);
  CHECK(f32_to_e4m3(-1e6f) == 0xfe);
  CHECK(f32_to_e4m3(INFINITY) == 0x7e);
  CHECK(f32_to_e4m3(-INFINITY) == 0xfe);
  CHECK(f32_to_e4m3(464.0f) == 0x7e);  // would round to 480 (NaN encoding): saturates
  CHECK((f32_to_e4m3(NAN) & 0x7f) == 0x7f);
  CHECK(f32_to_e4m3(1.0625f) == 0x38);  // midpoint of 1.0 and 1.125: even (1.0)
  CHECK(f32_to_e4m3(1.1875f) == 0x3a);  // midpoint of 1.125 and 1.25: even (1.25)
  auto& g = omnigemm::test::rng();
  for (int i = 0; i < 200000; ++i) {
    const float x = random_float(g);
    double r = round_ref(x, 3, -6, 448.0);
    if (std::isinf(r)) r = std::copysign(448.0, x);
    REQUIRE_MESSAGE(double(e4m3_to_f32(f32_to_e4m3(x))) == r, x);
  }
}

TEST_CASE("numeric: fp8 e5m2 is IEEE-like") {
  for (int b = 0; b < 256; ++b) {
    const float f = e5m2_to_f32(uint8_t(b));
    const int exp = (b >> 2) & 0x1f, man = b & 3;
    if (exp == 31 && man) { CHECK(std::isnan(f)); continue; }
    if (exp == 31) { CHECK(std::isinf(f)); continue; }
    CHECK(f32_to_e5m2(f) == b);
    CHECK(f == f16_to_f32(uint16_t(b << 8)));  // e5m2 is the top byte of an f16
  }
  CHECK(e5m2_to_f32(0x7b) == 57344.0f);
  CHECK(f32_to_e5m2(61439.0f) == 0x7b);
  CHECK(f32_to_e5m2(61440.0f) == 0x7c);  // the tie rounds to even = inf
  CHECK(f32_to_e5m2(-1e9f) == 0xfc);
  CHECK((f32_to_e5m2(NAN) & 0x7f) > 0x7c);
  auto& g = omnigemm::test::rng();
  for (int i = 0; i < 200000; ++i) {
    const float x = random_float(g);
    REQUIRE_MESSAGE(double(e5m2_to_f32(f32_to_e5m2(x))) == round_ref(x, 2, -14, 57344.0), x);
  }
}

TEST_CASE("numeric: f32 -> f16 / bf16 over random bit patterns of all finite f32, subnormals included") {
  auto& g = omnigemm::test::rng();
  std::uniform_int_distribution<uint32_t> bits;
  long checked = 0;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t u = bits(g);
    if (i % 4 == 1) u &= 0x807fffffu;                          // f32 subnormals (and zeros)
    if (i % 4 == 2) u = (u & 0x83ffffffu) | (uint32_t(100 + (i / 4) % 50) << 23);  // f16's whole range
    const float x = std::bit_cast<float>(u);
    if (!std::isfinite(x)) continue;
    ++checked;
    REQUIRE_MESSAGE(double(f16_to_f32(f32_to_f16(x))) == round_ref(x, 10, -14, 65504.0), u);
    REQUIRE_MESSAGE(double(bf16_to_f32(f32_to_bf16(x))) == round_ref(x, 7, -126, 3.3895313892515355e38), u);
  }
  CHECK(checked > 1900000);
  // Neighbours of the f16 overflow boundary 65520 (the tie between 65504 and the next step).
  CHECK(f32_to_f16(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  CHECK(f32_to_f16(std::nextafter(65520.0f, INFINITY)) == 0x7c00);
  CHECK(f32_to_f16(-65520.0f) == 0xfc00);
  CHECK(f32_to_f16(65504.0f) == 0x7bff);
  // Half of the smallest f16 subnormal is a tie with zero (even): 0; just above it: 2^-24.
  CHECK(f32_to_f16(std::ldexp(1.0f, -25)) == 0x0000);
  CHECK(f32_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(f32_to_f16(-std::ldexp(1.0f, -26)) == 0x8000);  // sign of an underflow kept
  // bf16: the largest finite and the tie above it.
  CHECK(f32_to_bf16(std::bit_cast<float>(0x7f7f0000u)) == 0x7f7f);
  CHECK(f32_to_bf16(std::bit_cast<float>(0x7f7f8000u)) == 0x7f80);  // tie to even = inf
  CHECK(f32_to_bf16(std::bit_cast<float>(0x7f7e8000u)) == 0x7f7e);  // tie to even (down)
  CHECK(f32_to_bf16(std::bit_cast<float>(0x00000001u)) == 0x0000);  // tiny subnormal rounds to 0
  CHECK(f32_to_bf16(std::bit_cast<float>(0x00008000u)) == 0x0000);  // tie with 0: even
  CHECK(f32_to_bf16(std::bit_cast<float>(0x00018000u)) == 0x0002);  // tie with odd 1: up to 2
}

TEST_CASE("numeric: all 256 e4m3 patterns decode to the OCP e4m3fn table") {
  for (int b = 0; b < 256; ++b) {
    const int sign = b >> 7, exp = (b >> 3) & 0xf, man = b & 7;
    const float f = e4m3_to_f32(uint8_t(b));
    CAPTURE(b);
    if (exp == 15 && man == 7) { CHECK(std::isnan(f)); continue; }
    // bias 7; exponent field 0 is subnormal: man * 2^-9.
    const double mag = exp == 0 ? man * std::ldexp(1.0, -9) : (1.0 + man / 8.0) * std::ldexp(1.0, exp - 7);
    CHECK(double(f) == (sign ? -mag : mag));
    CHECK(std::signbit(f) == bool(sign));
  }
  CHECK(e4m3_to_f32(0xfe) == -448.0f);
  CHECK(std::isnan(e4m3_to_f32(0xff)));
  CHECK(e4m3_to_f32(0x78) == 256.0f);  // exponent 15 with mantissa < 7 is finite in e4m3fn
  // Below the smallest subnormal: the tie 2^-10 goes to zero, above it to 2^-9.
  CHECK(f32_to_e4m3(std::ldexp(1.0f, -10)) == 0x00);
  CHECK(f32_to_e4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)) == 0x01);
  CHECK(f32_to_e4m3(3 * std::ldexp(1.0f, -10)) == 0x02);  // 1.5 quanta: tie to even (2)
}

TEST_CASE("numeric: all 256 e5m2 patterns decode to the IEEE-like table") {
  for (int b = 0; b < 256; ++b) {
    const int sign = b >> 7, exp = (b >> 2) & 0x1f, man = b & 3;
    const float f = e5m2_to_f32(uint8_t(b));
    CAPTURE(b);
    if (exp == 31) {
      CHECK(man ? std::isnan(f) : std::isinf(f));
      if (!man) CHECK(std::signbit(f) == bool(sign));
      continue;
    }
    const double mag = exp == 0 ? man * std::ldexp(1.0, -16) : (1.0 + man / 4.0) * std::ldexp(1.0, exp - 15);
    CHECK(double(f) == (sign ? -mag : mag));
  }
  CHECK(f32_to_e5m2(INFINITY) == 0x7c);
  CHECK(f32_to_e5m2(-61440.0f) == 0xfc);
  CHECK(f32_to_e5m2(-61439.0f) == 0xfb);
  CHECK(std::isnan(e5m2_to_f32(f32_to_e5m2(NAN))));
}
