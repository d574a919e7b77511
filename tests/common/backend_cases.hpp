// One GEMM case for the device backends' tests: random inputs of the given dtypes and layouts
// (with ld padding and batch gaps), poisoned D, run through og_gemm_host, every element checked
// against the float64 reference, padding checked untouched.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "gemm_check.hpp"

namespace omnigemm::test {


// A context on `backend`, or a "SKIPPED <backend>: <test>: <reason>" line and nothing.
inline std::optional<Context> backend_context(Backend backend, const char* test_name) {
  auto ctx = Context::create({.backend = backend});
  if (!ctx) {
    MESSAGE("SKIPPED " << std::string(name(backend)) << ": " << std::string(test_name) << ": " << ctx.status().message);
    return std::nullopt;
  }
  return std::move(ctx.value());
}

struct Case {
  int64_t m, n, k, batch = 1;
  Dtype a = Dtype::f32, b = Dtype::f32, d = Dtype::f32;
  bool ta = false, tb = false;
  Layout la = Layout::row_major, lb = Layout::row_major, ld = Layout::row_major;
  EpilogueSpec epi;
  std::string config;
  // Leading-dimension pads and batch gaps of A and B in multiples of 16 bytes (still not zero),
  // so that a TMA-based kernel can take them; otherwise odd element counts.
  bool tma_aligned = false;
  // The same for C and D (so that whole output rows can leave in vector stores).
  bool d_aligned = false;
  // A forced config may refuse this case (StatusCode::unsupported) with a message containing
  // this text, e.g. where the operands it must stage do not fit its shared memory; the refusal
  // is printed. Empty: the case must run.
  std::string may_refuse;
  // The config must refuse this case (StatusCode::unsupported) with a message containing this.
  std::string must_refuse;
};

// Runs one case through og_gemm_host and checks it against the float64 reference.
inline void run_case(Context& ctx, const Case& c) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.batch);
  CAPTURE(std::string(name(c.a)));
  CAPTURE(std::string(name(c.b)));
  CAPTURE(std::string(name(c.d)));
  CAPTURE(c.config);
  CAPTURE(c.ta);
  CAPTURE(c.tb);
  // The ld pad: `odd` elements, or (aligned) up to the next multiple of 16 bytes plus 16 bytes.
  auto pad = [](bool aligned, Dtype t, int64_t rows, int64_t cols, Layout l, int64_t odd) {
    if (!aligned) return odd;
    const int64_t per16 = 16 / dtype_size(t), inner = l == Layout::row_major ? cols : rows;
    return (inner + per16 - 1) / per16 * per16 - inner + per16;
  };
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k, b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  HostMatrix A(a_rows, a_cols, c.a, c.la, pad(c.tma_aligned, c.a, a_rows, a_cols, c.la, 2), c.batch,
               c.tma_aligned ? 16 / dtype_size(c.a) : 3);
  HostMatrix B(b_rows, b_cols, c.b, c.lb, pad(c.tma_aligned, c.b, b_rows, b_cols, c.lb, 1), c.batch,
               c.tma_aligned ? 32 / dtype_size(c.b) : 0);
  const int64_t d_pad = pad(c.d_aligned, c.d, c.m, c.n, c.ld, 1), d_gap = c.d_aligned ? 16 / dtype_size(c.d) : 2;
  HostMatrix C(c.m, c.n, c.d, c.ld, d_pad, c.batch, d_gap), D(c.m, c.n, c.d, c.ld, d_pad, c.batch, d_gap);
  A.transposed = c.ta;
  B.transposed = c.tb;
  A.randomize();
  B.randomize();
  C.randomize();
  std::vector<float> bias(size_t(std::max(c.m, c.n)));
  for (float& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  D.poison();
  const HostMatrix before = D;
  Gemm g = host_gemm(A, B, C, D, c.batch, c.config);
  set_epilogue(g, c.epi, Memory::host(bias.data()));
  Status s = ctx.run_host(g);
  if (!c.must_refuse.empty()) {
    CHECK(s.code == StatusCode::unsupported);
    CHECK_MESSAGE(s.message.find(c.must_refuse) != std::string::npos, s.message);
    return;
  }
  if (!s.ok() && !c.may_refuse.empty() && s.code == StatusCode::unsupported && s.message.find(c.may_refuse) != std::string::npos) {
    MESSAGE("refused, as allowed for this case: " << s.message);
    return;
  }
  REQUIRE_MESSAGE(s.ok(), s.message);
  const ErrorReport r = compare(D, reference_gemm(A, B, &C, &bias, c.epi, c.batch), &before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(c.d, c.k, c.a, c.b));
}

// A case with fresh random sizes in 1..max_dim, 1-3 batches, any input/output dtypes, layouts,
// transposes, alpha, activation and bias mode; beta (and so C) only when with_c.
inline Case random_case(int max_dim, bool with_c) {
  std::uniform_int_distribution<int> dim(1, max_dim), pick(0, 4), bat(1, 3);
  const Dtype ins[] = {Dtype::f32, Dtype::f16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  Case c{dim(rng()), dim(rng()), dim(rng()), bat(rng())};
  c.a = ins[pick(rng())];
  c.b = ins[pick(rng())];
  c.d = outs[pick(rng()) % 3];
  c.ta = pick(rng()) & 1;
  c.tb = pick(rng()) & 1;
  c.la = pick(rng()) & 1 ? Layout::col_major : Layout::row_major;
  c.lb = pick(rng()) & 1 ? Layout::col_major : Layout::row_major;
  c.ld = pick(rng()) & 1 ? Layout::col_major : Layout::row_major;
  c.epi.alpha = std::uniform_real_distribution<float>(-2, 2)(rng());
  c.epi.beta = with_c ? std::uniform_real_distribution<float>(-1, 1)(rng()) : 0.0f;
  c.epi.act = Activation(pick(rng()));
  c.epi.slope = 0.1f;
  c.epi.bias_mode = BiasMode(pick(rng()) % 3);
  return c;
}

// Forces `config` (its text form) on the edge shapes of its tiles: M = 1, BLOCK_M - 1,
// BLOCK_M + 1; N = BLOCK_N + 3; K = 2 BLOCK_K + 1 (a masked K tail), with the given dtypes.
inline void run_edge_shapes(Context& ctx, const std::string& config, int block_m, int block_n, int block_k, Dtype a,
                            Dtype b, Dtype d, Activation act = Activation::none) {
  for (int64_t m : {int64_t(1), int64_t(block_m - 1), int64_t(block_m + 1)}) {
    Case c{m, block_n + 3, 2 * int64_t(block_k) + 1};
    c.config = config;
    c.a = a;
    c.b = b;
    c.d = d;
    c.epi.act = act;
    run_case(ctx, c);
  }
}

}  // namespace omnigemm::test
