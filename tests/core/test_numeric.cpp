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
