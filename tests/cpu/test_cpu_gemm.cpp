#include <doctest/doctest.h>

#include "gemm_check.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

struct Case {
  int64_t m, n, k, batch;
  Dtype a, b, d;
  bool ta, tb;
  Layout la, lb, ld_layout;
  EpilogueSpec epi;
};

void run_case(Context& ctx, const Case& c) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.batch);
  CAPTURE(name(c.a));
  CAPTURE(name(c.d));
  HostMatrix A(c.ta ? c.k : c.m, c.ta ? c.m : c.k, c.a, c.la, 3, c.batch, 5);
  HostMatrix B(c.tb ? c.n : c.k, c.tb ? c.k : c.n, c.b, c.lb, 1, c.batch, 0);
  A.transposed = c.ta;
  B.transposed = c.tb;
  HostMatrix C(c.m, c.n, c.d, c.ld_layout, 2, c.batch, 3);
  HostMatrix D(c.m, c.n, c.d, c.ld_layout, 2, c.batch, 3);
  A.randomize();
  B.randomize();
  C.randomize();
  std::vector<float> bias(size_t(std::max(c.m, c.n)));
  for (auto& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  D.poison();
  const HostMatrix d_before = D;

  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.c = C.host_view();
  g.d = D.host_view();
  g.batch_count = c.batch;
  g.epilogue.alpha = c.epi.alpha;
  g.epilogue.beta = c.epi.beta;
  g.epilogue.activation = c.epi.act;
  g.epilogue.leaky_slope = c.epi.slope;
  g.epilogue.bias_mode = c.epi.bias_mode;
  g.epilogue.bias = Memory::host(bias.data());
  Status s = ctx.run_host(g);
  REQUIRE_MESSAGE(s.ok(), s.message);

  auto ref = reference_gemm(A, B, &C, &bias, c.epi, c.batch);
  ErrorReport r = compare(D, ref, &d_before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(c.d, c.k));
}

}  // namespace

TEST_CASE("cpu: random shapes, dtypes, layouts, transposes, batches and epilogues match float64") {
  auto ctx = Context::create({.backend = Backend::cpu});
  REQUIRE_MESSAGE(ctx.ok(), ctx.status().message);
  std::uniform_int_distribution<int> dim(1, 97), bat(1, 3), pick(0, 4);
  const Dtype ins[] = {Dtype::f32, Dtype::f16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh,
                             Activation::silu};
  for (int trial = 0; trial < 60; ++trial) {
    Case c;
    c.m = dim(rng()); c.n = dim(rng()); c.k = dim(rng()); c.batch = bat(rng());
    c.a = ins[pick(rng())]; c.b = ins[pick(rng())]; c.d = outs[pick(rng()) % 3];
    c.ta = pick(rng()) & 1; c.tb = pick(rng()) & 1;
    c.la = pick(rng()) & 1 ? Layout::row_major : Layout::col_major;
    c.lb = pick(rng()) & 1 ? Layout::row_major : Layout::col_major;
    c.ld_layout = pick(rng()) & 1 ? Layout::row_major : Layout::col_major;
    c.epi.alpha = std::uniform_real_distribution<float>(-2, 2)(rng());
    c.epi.beta = trial % 3 == 0 ? 0.0f : std::uniform_real_distribution<float>(-1, 1)(rng());
    c.epi.act = acts[pick(rng())];
    c.epi.slope = 0.1f;
    c.epi.bias_mode = BiasMode(pick(rng()) % 3);
    run_case(*ctx, c);
  }
}
