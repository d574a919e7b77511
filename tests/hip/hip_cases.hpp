// GEMM cases for the HIP tests: random inputs of the given dtypes and layouts (leading-dimension
// padding and batch gaps either in multiples of 16 bytes, so that the dwordx4 loaders take them,
// or odd, so that the gathering loader must), D poisoned with NaN, every element checked against
// the float64 reference (tests/common/gemm_check.hpp), padding checked untouched. The call itself
// is the caller's: the host model of the kernel (test_hip_model.cpp) or a HIP context.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "config_space.hpp"
#include "gemm_check.hpp"

namespace omnigemm::test {

struct HipCase {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  Dtype a = Dtype::f16, b = Dtype::f16, d = Dtype::f32;
  bool ta = false, tb = false;
  Layout la = Layout::row_major, lb = Layout::row_major, ld = Layout::row_major;
  bool aligned = true;  // A and B: 16-byte multiples of padding and batch gap; false: odd ones
  EpilogueSpec epi;
  Dtype bias_dtype = Dtype::f32;
  std::string config;
};

inline std::string describe(const HipCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " b" + std::to_string(c.batch) + " " +
         name(c.a) + (c.ta ? "^T" : "") + (c.la == Layout::col_major ? "(col)" : "(row)") + " x " + name(c.b) +
         (c.tb ? "^T" : "") + (c.lb == Layout::col_major ? "(col)" : "(row)") + " -> " + name(c.d) +
         (c.ld == Layout::col_major ? "(col)" : "(row)") + (c.aligned ? " aligned" : " odd") +
         (c.epi.beta != 0 ? " +C" : "") + (c.epi.bias_mode != BiasMode::none ? " +bias" : "") + " act" +
         std::to_string(int(c.epi.act)) + " " + c.config;
}

// Builds the case, calls `run` on it, and checks D; `tolerance_floor` raises the per-dtype
// tolerance (gemm_check.hpp) where the hardware is allowed to be coarser. Returns the error.
inline double check_case(const HipCase& c, const std::function<Status(const Gemm&)>& run, double tolerance_floor = 0) {
  CAPTURE(describe(c));
  auto pad = [&](Dtype t, int64_t rows, int64_t cols, Layout l, int64_t odd) {
    if (!c.aligned) return odd;
    const int64_t per16 = 16 / dtype_size(t), inner = l == Layout::row_major ? cols : rows;
    return (inner + per16 - 1) / per16 * per16 - inner + per16;
  };
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k, b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  HostMatrix A(a_rows, a_cols, c.a, c.la, pad(c.a, a_rows, a_cols, c.la, 3), c.batch, c.aligned ? 16 / dtype_size(c.a) : 5);
  HostMatrix B(b_rows, b_cols, c.b, c.lb, pad(c.b, b_rows, b_cols, c.lb, 1), c.batch, c.aligned ? 32 / dtype_size(c.b) : 1);
  HostMatrix C(c.m, c.n, c.d, c.ld, 1, c.batch, 2), D(c.m, c.n, c.d, c.ld, 1, c.batch, 2);
  A.transposed = c.ta;
  B.transposed = c.tb;
  A.randomize();
  B.randomize();
  C.randomize();
  // Bias values stored as the bias dtype; the reference reads them back decoded.
  std::vector<float> bias(size_t(std::max(c.m, c.n)));
  std::vector<uint8_t> bias_bytes(bias.size() * size_t(dtype_size(c.bias_dtype)));
  for (size_t i = 0; i < bias.size(); ++i) {
    encode(c.bias_dtype, &bias_bytes[i * size_t(dtype_size(c.bias_dtype))], std::uniform_real_distribution<float>(-1, 1)(rng()));
    bias[i] = float(decode(c.bias_dtype, &bias_bytes[i * size_t(dtype_size(c.bias_dtype))]));
  }
  D.poison();
  const HostMatrix before = D;
  Gemm g = host_gemm(A, B, C, D, c.batch, c.config);
  set_epilogue(g, c.epi, Memory::host(bias_bytes.data()), c.bias_dtype);
  const Status s = run(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  const ErrorReport r = compare(D, reference_gemm(A, B, &C, &bias, c.epi, c.batch), &before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= std::max(tolerance(c.d, c.k), tolerance_floor));
  return r.rel_error;
}

// A case with fresh random sizes in 1..max_dim, 1-3 batches, 16-bit or fp8 inputs of one
// multiplicand family, any output dtype, layouts, transposes, alignment, epilogue.
inline HipCase random_hip_case(int max_dim, const std::string& config) {
  std::uniform_int_distribution<int> dim(1, max_dim), pick(0, 5), bat(1, 3);
  HipCase c;
  c.m = dim(rng());
  c.n = dim(rng());
  c.k = dim(rng());
  c.batch = bat(rng());
  const Dtype f16_family[] = {Dtype::f16, Dtype::f16, Dtype::f16, Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::f16};
  const Dtype bf16_family[] = {Dtype::bf16, Dtype::bf16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::bf16};
  const bool bf16 = pick(rng()) & 1;
  c.a = (bf16 ? bf16_family : f16_family)[pick(rng())];
  c.b = (bf16 ? bf16_family : f16_family)[pick(rng())];
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  c.d = outs[pick(rng()) % 3];
  c.ta = pick(rng()) & 1;
  c.tb = pick(rng()) & 1;
  c.la = pick(rng()) & 1 ? Layout::col_major : Layout::row_major;
  c.lb = pick(rng()) & 1 ? Layout::col_major : Layout::row_major;
  c.ld = pick(rng()) & 1 ? Layout::col_major : Layout::row_major;
  c.aligned = pick(rng()) % 3 != 0;
  c.epi.alpha = std::uniform_real_distribution<float>(-2, 2)(rng());
  c.epi.beta = pick(rng()) & 1 ? std::uniform_real_distribution<float>(-1, 1)(rng()) : 0.0f;
  c.epi.act = Activation(pick(rng()) % 5);
  c.epi.slope = 0.1f;
  c.epi.bias_mode = BiasMode(pick(rng()) % 3);
  const Dtype bias_types[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  c.bias_dtype = bias_types[pick(rng()) % 3];
  c.config = config;
  return c;
}

// An MI200 GCD's limits, as HipDevice::init reads them from an MI250X.
inline detail::DeviceLimits mi200_limits() {
  detail::DeviceLimits l;
  l.max_shared_bytes = 65536;
  l.max_threads_per_group = 1024;
  l.warp_size = 64;
  l.max_registers_per_thread = 512;
  l.max_waves_per_eu = 8;
  l.registers_per_lane_total = 512;
  l.compute_units = 110;
  l.l2_bytes = 8 << 20;
  l.arch = 0x90a;
  l.peak_tflops_16bit = 1024 * 110 * 1.7e-3;
  l.peak_tflops_8bit = l.peak_tflops_16bit;
  l.peak_tflops_f32 = 128 * 110 * 1.7e-3;
  l.memory_gbps = 1638;
  return l;
}

}  // namespace omnigemm::test
