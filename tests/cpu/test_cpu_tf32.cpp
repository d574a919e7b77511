// compute_mode OG_COMPUTE_TF32 on the CPU backend, the reference semantics: the inputs are
// rounded to nearest TF32 before the products (so the f32 bound holds against the float64 GEMM of
// the rounded inputs, and not against that of the exact ones); the default mode stays full f32;
// the mode is validated for every backend before anything runs.
#include <doctest/doctest.h>

#include "backend_cases.hpp"
#include "tf32_cases.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cpu tf32: inputs rounded to nearest TF32, every layout, epilogue and batch") {
  auto ctx = backend_context(Backend::cpu, "tf32");
  if (!ctx) return;
  for (int i = 0; i < 8; ++i) {
    Tf32Case c{17 + 31 * i, 40 + 13 * i, 7 + 41 * i, 1 + i % 2};
    c.ta = i & 1;
    c.tb = i & 2;
    c.aligned = i & 4;
    c.pre_rounded = false;
    c.rounds_to_nearest = true;
    c.d = i % 3 == 0 ? Dtype::f32 : i % 3 == 1 ? Dtype::f16 : Dtype::bf16;
    c.epi.alpha = 0.5f;
    c.epi.beta = i == 3 ? 0.25f : 0.0f;
    c.epi.act = Activation(i % 5);
    c.epi.bias_mode = BiasMode(i % 3);
    c.expect_family = "cpu.";
    run_tf32_case(*ctx, c);
  }
}

TEST_CASE("cpu tf32: the rounding is real, and the default compute mode is full f32") {
  auto ctx = backend_context(Backend::cpu, "tf32 vs f32");
  if (!ctx) return;
  const int64_t m = 64, n = 48, k = 300;
  HostMatrix A(m, k, Dtype::f32), B(k, n, Dtype::f32), D(m, n, Dtype::f32);
  A.randomize();
  B.randomize();
  const Reference exact = reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1);
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  REQUIRE(ctx->run_host(g).ok());  // default: full f32
  CHECK(compare(D, exact).rel_error <= tolerance(Dtype::f32, k));
  g.compute_mode = ComputeMode::tf32;
  REQUIRE(ctx->run_host(g).ok());
  const double tf32_error = compare(D, exact).rel_error;
  CHECK(tf32_error > 10 * tolerance(Dtype::f32, k));  // inputs lost 13 bits each
  CHECK(tf32_error <= tf32_tolerance(Dtype::f32, k));
}

TEST_CASE("tf32 validation: f32 inputs only, known values only, shown by explain") {
  auto ctx = backend_context(Backend::cpu, "tf32 validation");
  if (!ctx) return;
  HostMatrix A(8, 8, Dtype::f16), B(8, 8, Dtype::f16), D(8, 8, Dtype::f32);
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  g.compute_mode = ComputeMode::tf32;
  Status s = ctx->run_host(g);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK_MESSAGE(s.message.find("f32 x f32 inputs only") != std::string::npos, s.message);
  CHECK(ctx->explain(g).status().code == StatusCode::invalid_argument);
  // Mixed f32 x f16 is refused too.
  HostMatrix A32(8, 8, Dtype::f32), B32(8, 8, Dtype::f32);
  g.a = A32.host_view();
  CHECK(ctx->run_host(g).code == StatusCode::invalid_argument);
  // An unknown value, through the C API.
  og_gemm_desc d = g.to_c();
  d.a = A32.host_view().raw;
  d.b = B32.host_view().raw;
  d.compute_mode = static_cast<og_compute_mode>(7);
  CHECK(og_gemm_host(ctx->c_handle(), &d) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(og_last_error_message()).find("compute_mode") != std::string::npos);
  // A zero-filled descriptor's compute mode is the default.
  og_gemm_desc init;
  og_gemm_desc_init(&init);
  CHECK(init.compute_mode == OG_COMPUTE_DEFAULT);
}
