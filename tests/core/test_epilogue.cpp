// omnigemm/epilogue.h: the activations and the alpha/beta/bias sum against float64 formulas
// written here independently (sqrt(2 / pi) computed, not the header's constant), and the f16 /
// bf16 rounding bit for bit against omnigemm/numeric.hpp over every exponent, every rounding
// position's ties, NaN, infinities, overflow and subnormals.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/epilogue.h"
#include "omnigemm/numeric.hpp"
#include "omnigemm/omnigemm.h"

namespace {

// The codes GLSL sees are the C API's.
static_assert(OG_EPI_ACT_NONE == OG_ACT_NONE && OG_EPI_ACT_RELU == OG_ACT_RELU &&
              OG_EPI_ACT_LEAKY_RELU == OG_ACT_LEAKY_RELU && OG_EPI_ACT_GELU_TANH == OG_ACT_GELU_TANH &&
              OG_EPI_ACT_SILU == OG_ACT_SILU);
static_assert(OG_EPI_BIAS_NONE == OG_BIAS_NONE && OG_EPI_BIAS_PER_N == OG_BIAS_PER_N &&
              OG_EPI_BIAS_PER_M == OG_BIAS_PER_M);
static_assert(OG_EPI_DTYPE_F32 == OG_DTYPE_F32 && OG_EPI_DTYPE_F16 == OG_DTYPE_F16 && OG_EPI_DTYPE_BF16 == OG_DTYPE_BF16);
// In C++ the float formulas write their constants as float(<double literal>); GLSL and the
// earlier backends wrote <literal>f. Both must be the same float for results to stay bit-identical.
static_assert(float(0.7978845608) == 0.7978845608f && float(0.044715) == 0.044715f);

double gelu64(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu64(double x) { return x / (1.0 + std::exp(-x)); }

std::mt19937_64& rng() { return omnigemm::test::rng(); }

// Fresh inputs: uniform over [-r, r] for a few ranges (the transition regions of tanh and exp,
// then far into saturation), never exactly 0.
std::vector<float> activation_inputs() {
  std::vector<float> xs;
  for (float r : {0.5f, 4.0f, 12.0f, 60.0f}) {
    std::uniform_real_distribution<float> u(-r, r);
    for (int i = 0; i < 20000; ++i) {
      float x = u(rng());
      xs.push_back(x == 0.0f ? r / 3.0f : x);
    }
  }
  for (float x : {1e-30f, -1e-30f, 1e-8f, -1e-8f, 88.0f, -88.0f, 89.0f, -89.0f, 1e10f, -1e10f}) xs.push_back(x);
  return xs;
}

}  // namespace

TEST_CASE("epilogue: gelu-tanh and silu in f32 are within a few ulps of |x| of the float64 formulas") {
  // gelu(x) = x * g(x) and silu(x) = x * s(x) with g, s in [0, 1] computed from tanh / exp: their
  // f32 error is a few ulps absolute on g and s, so a few ulps of |x| on the result (relative to
  // the result it can be large where g or s cancel towards 0). The header's f32 constant
  // sqrt(2/pi) differs from the real one by 3e-8 relative: within that bound too.
  const double bound = 8.0 * std::ldexp(1.0, -24);
  double worst_gelu = 0, worst_silu = 0;
  for (float x : activation_inputs()) {
    CAPTURE(x);
    const double g = og_gelu_tanh(x), s = og_silu(x);
    const double eg = std::fabs(g - gelu64(x)) / std::fabs(double(x)), es = std::fabs(s - silu64(x)) / std::fabs(double(x));
    worst_gelu = std::max(worst_gelu, eg);
    worst_silu = std::max(worst_silu, es);
    REQUIRE(eg <= bound);
    REQUIRE(es <= bound);
    // og_activate dispatches to the same functions.
    REQUIRE(std::bit_cast<uint32_t>(og_activate(OG_EPI_ACT_GELU_TANH, x, 0.3f)) == std::bit_cast<uint32_t>(og_gelu_tanh(x)));
    REQUIRE(std::bit_cast<uint32_t>(og_activate(OG_EPI_ACT_SILU, x, 0.3f)) == std::bit_cast<uint32_t>(og_silu(x)));
  }
  MESSAGE("worst error / |x|: gelu-tanh " << worst_gelu << ", silu " << worst_silu << " (bound " << bound << ")");
  // Saturation: far out gelu and silu are x (or -0 below).
  CHECK(og_gelu_tanh(30.0f) == 30.0f);
  CHECK(og_silu(100.0f) == 100.0f);
  CHECK(og_gelu_tanh(-30.0f) == 0.0f);
  CHECK(og_silu(-100.0f) == 0.0f);
  CHECK(std::isnan(og_gelu_tanh(NAN)));
  CHECK(std::isnan(og_silu(NAN)));
}

TEST_CASE("epilogue: the float64 overloads (the test reference's) match the float64 formulas") {
  // They differ only in the constant sqrt(2/pi) = 0.7978845608028654 written as 0.7978845608.
  for (float xf : activation_inputs()) {
    const double x = double(xf) * (1.0 + 1e-9);  // not an f32 value
    CAPTURE(x);
    REQUIRE(std::fabs(og_gelu_tanh(x) - gelu64(x)) <= 1e-11 * std::fabs(x));
    REQUIRE(std::fabs(og_silu(x) - silu64(x)) <= 1e-15 * std::fabs(x));
    REQUIRE(og_activate(OG_EPI_ACT_NONE, x, 0.3) == x);
    REQUIRE(og_activate(OG_EPI_ACT_RELU, x, 0.3) == (x > 0 ? x : 0.0));
    REQUIRE(og_activate(OG_EPI_ACT_LEAKY_RELU, x, 0.3) == (x >= 0 ? x : 0.3 * x));
    REQUIRE(og_activate(OG_EPI_ACT_GELU_TANH, x, 0.3) == og_gelu_tanh(x));
    REQUIRE(og_activate(OG_EPI_ACT_SILU, x, 0.3) == og_silu(x));
  }
}

TEST_CASE("epilogue: relu and leaky_relu are exact, and what they do with -0 and NaN") {
  std::uniform_real_distribution<float> u(-10.0f, 10.0f), slope(0.001f, 0.5f);
  for (int i = 0; i < 10000; ++i) {
    const float x = u(rng()), s = slope(rng());
    REQUIRE(og_relu(x) == (x > 0.0f ? x : 0.0f));
    REQUIRE(og_leaky_relu(x, s) == (x >= 0.0f ? x : s * x));
    REQUIRE(og_activate(OG_EPI_ACT_RELU, x, s) == og_relu(x));
    REQUIRE(og_activate(OG_EPI_ACT_LEAKY_RELU, x, s) == og_leaky_relu(x, s));
    REQUIRE(std::bit_cast<uint32_t>(og_activate(OG_EPI_ACT_NONE, x, s)) == std::bit_cast<uint32_t>(x));
  }
  CHECK(!std::signbit(og_relu(-0.0f)));  // relu(-0) = +0
  CHECK(og_relu(NAN) == 0.0f);           // NaN > 0 is false
  CHECK(std::signbit(og_leaky_relu(-0.0f, 0.1f)));  // -0 >= 0: kept
  CHECK(std::isnan(og_leaky_relu(NAN, 0.1f)));
}

TEST_CASE("epilogue: alpha * acc + beta * c + bias in f32, in that order, absent terms not added") {
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  const double eps = std::ldexp(1.0, -24);
  for (int i = 0; i < 20000; ++i) {
    const float alpha = u(rng()), acc = u(rng()), beta = u(rng()), c = u(rng()), bias = u(rng());
    const bool has_c = i % 2, has_bias = i / 2 % 2;
    const float got = og_epilogue_sum(alpha, acc, has_c, beta, c, has_bias, bias);
    // The exact f32 operation sequence (x86-64 without FMA: no contraction in this file).
    float expect = alpha * acc;
    if (has_c) expect = expect + beta * c;
    if (has_bias) expect = expect + bias;
    REQUIRE(std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(expect));
    // And against float64: at most one rounding per operation, relative to the terms' sizes.
    const double exact = double(alpha) * acc + (has_c ? double(beta) * c : 0.0) + (has_bias ? double(bias) : 0.0);
    const double terms = std::fabs(double(alpha) * acc) + (has_c ? std::fabs(double(beta) * c) : 0.0) +
                         (has_bias ? std::fabs(double(bias)) : 0.0);
    REQUIRE(std::fabs(got - exact) <= 3 * eps * terms);
    // The double overload is exact up to float64 rounding.
    const double got64 = og_epilogue_sum(double(alpha), double(acc), has_c, double(beta), double(c), has_bias, double(bias));
    REQUIRE(std::fabs(got64 - exact) <= 4 * std::ldexp(1.0, -53) * terms);
    // The whole epilogue is the activation of the sum.
    for (int act = OG_EPI_ACT_NONE; act <= OG_EPI_ACT_SILU; ++act)
      REQUIRE(std::bit_cast<uint32_t>(og_epilogue_apply(alpha, acc, has_c, beta, c, has_bias, bias, act, 0.2f)) ==
              std::bit_cast<uint32_t>(og_activate(act, got, 0.2f)));
  }
  // An absent term is not an added zero: -0 survives without C and bias, and becomes +0 with
  // a zero C term.
  CHECK(std::signbit(og_epilogue_sum(1.0f, -0.0f, false, 1.0f, 0.0f, false, 0.0f)));
  CHECK(!std::signbit(og_epilogue_sum(1.0f, -0.0f, true, 1.0f, 0.0f, false, 0.0f)));
  CHECK(!std::signbit(og_epilogue_sum(1.0f, -0.0f, false, 1.0f, 0.0f, true, 0.0f)));
  // beta and c are ignored without C, even when they are not finite.
  CHECK(og_epilogue_sum(2.0f, 3.0f, false, NAN, INFINITY, false, NAN) == 6.0f);
}

namespace {

// Every f32 bit pattern in `xs` converts to the same f16 and bf16 bits as numeric.hpp.
void check_conversions(const std::vector<uint32_t>& xs, int64_t& checked) {
  for (uint32_t bits : xs) {
    const float f = std::bit_cast<float>(bits);
    const uint32_t h = og_f32_to_f16_bits(f), b = og_f32_to_bf16_bits(f);
    if (h != omnigemm::numeric::f32_to_f16(f) || b != omnigemm::numeric::f32_to_bf16(f)) {
      CAPTURE(bits);
      CHECK(h == omnigemm::numeric::f32_to_f16(f));
      CHECK(b == omnigemm::numeric::f32_to_bf16(f));
      REQUIRE(false);
    }
    REQUIRE(og_f32_to_16bit(OG_EPI_DTYPE_F16, f) == h);
    REQUIRE(og_f32_to_16bit(OG_EPI_DTYPE_BF16, f) == b);
  }
  checked += int64_t(xs.size());
}

}  // namespace

TEST_CASE("epilogue: f16 and bf16 rounding is bit-exact with numeric.hpp") {
  int64_t checked = 0;
  std::vector<uint32_t> xs;
  // 1. The top 20 bits exhaustively (sign, exponent and the mantissa down to bit 12, the f16
  //    rounding bit of normal results: every f16 result, each tie and its neighbourhood), each
  //    with low bits zero, just above zero, around the middle, all ones and random.
  const uint32_t lows[] = {0x000, 0x001, 0x7ff, 0x800, 0x801, 0xfff};
  for (uint32_t top = 0; top < (1u << 20); ++top) {
    xs.clear();
    for (uint32_t low : lows) xs.push_back((top << 12) | low);
    xs.push_back((top << 12) | uint32_t(rng()() & 0xfff));
    check_conversions(xs, checked);
  }
  // 2. Every rounding position (f16 subnormals round at bits 13..24 of the mantissa, bf16 at 15):
  //    for every sign and exponent, exact ties with odd and even kept parts, and one below/above.
  xs.clear();
  for (uint32_t sign : {0u, 1u})
    for (uint32_t e = 0; e < 256; ++e)
      for (int b = 0; b < 23; ++b)
        for (int trial = 0; trial < 4; ++trial) {
          const uint32_t high = uint32_t(rng()()) & 0x7fffffu & ~((2u << b) - 1u);
          for (uint32_t parity : {0u, 2u << b})
            for (int delta : {-1, 0, 1}) {
              const uint32_t mant = ((high | parity) & 0x7fffffu) | (1u << b);
              xs.push_back((sign << 31) | (e << 23) | ((mant + uint32_t(delta)) & 0x7fffffu));
            }
        }
  check_conversions(xs, checked);
  // 3. Random patterns, NaN payloads and infinities included.
  xs.clear();
  for (int i = 0; i < (1 << 22); ++i) xs.push_back(uint32_t(rng()()));
  for (uint32_t special : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fbfffffu,
                           0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu})
    xs.push_back(special);
  check_conversions(xs, checked);
  MESSAGE(checked << " f32 patterns converted to f16 and bf16 as numeric.hpp does");

  // Known answers, so that the comparison above is not between two equal mistakes.
  CHECK(og_f32_to_f16_bits(1.0f) == 0x3c00u);
  CHECK(og_f32_to_f16_bits(65504.0f) == 0x7bffu);
  CHECK(og_f32_to_f16_bits(65519.996f) == 0x7bffu);     // below the midpoint to 65536
  CHECK(og_f32_to_f16_bits(65520.0f) == 0x7c00u);       // the midpoint rounds to even: inf
  CHECK(og_f32_to_f16_bits(-1e6f) == 0xfc00u);
  CHECK(og_f32_to_f16_bits(std::ldexp(1.0f, -24)) == 0x0001u);   // smallest subnormal
  CHECK(og_f32_to_f16_bits(std::ldexp(1.0f, -25)) == 0x0000u);   // tie to even: 0
  CHECK(og_f32_to_f16_bits(std::ldexp(3.0f, -25)) == 0x0002u);   // 1.5 quanta: tie to even 2
  CHECK(og_f32_to_f16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001u);
  CHECK(og_f32_to_f16_bits(-std::ldexp(1023.5f, -24)) == 0x8400u);  // carries into the smallest normal
  CHECK(og_f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3c00u);  // tie, even kept
  CHECK(og_f32_to_f16_bits(1.0f + std::ldexp(3.0f, -11)) == 0x3c02u);  // tie, odd rounded up
  CHECK(og_f32_to_f16_bits(NAN) == 0x7e00u);
  CHECK(og_f32_to_f16_bits(-NAN) == 0xfe00u);
  CHECK(og_f32_to_f16_bits(-INFINITY) == 0xfc00u);
  CHECK(og_f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3f80u);  // tie, even kept
  CHECK(og_f32_to_bf16_bits(1.0f + std::ldexp(3.0f, -8)) == 0x3f82u);  // tie, odd rounded up
  CHECK(og_f32_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7f80u);  // rounds to inf
  CHECK(og_f32_to_bf16_bits(std::bit_cast<float>(0x7f800001u)) == 0x7fc0u);  // NaN stays NaN
  CHECK(og_f32_to_bf16_bits(std::bit_cast<float>(0x00010000u)) == 0x0001u);  // subnormal kept
}
