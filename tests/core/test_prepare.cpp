// og_gemm_prepare (C) / Context::prepare (C++) on the CPU backend, which has nothing to compile:
// descriptors without memory are planned as og_gemm would plan them, a bad one is refused with its
// index and og_gemm's message, argument errors are named, and prepared problems then run right.
// (What a backend with pipelines makes is tested with it: tests/vulkan/test_vulkan_pipelines.cpp.)
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm.h"
#include "omnigemm/omnigemm.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("og_gemm_prepare: descriptors without memory, errors by index, then the runs") {
  auto ctx = Context::create({.backend = Backend::cpu});
  REQUIRE(ctx.ok());
  std::vector<Gemm> named(3);
  named[0].a = Matrix(33, 17, Dtype::bf16, Memory{});
  named[0].b = Matrix(17, 9, Dtype::f16, Memory{});
  named[0].d = Matrix(33, 9, Dtype::f32, Memory{});
  named[1].a = Matrix(8, 300, Dtype::fp8_e4m3, Memory{});
  named[1].b = Matrix(300, 64, Dtype::fp8_e4m3, Memory{});
  named[1].c = Matrix(8, 64, Dtype::bf16, Memory{});
  named[1].d = Matrix(8, 64, Dtype::bf16, Memory{});
  named[1].epilogue.beta = 0.5f;
  named[1].epilogue.bias_mode = BiasMode::per_m;
  named[1].epilogue.activation = Activation::silu;
  named[2].a = Matrix(0, 5, Dtype::f32, Memory{});  // empty: nothing to prepare
  named[2].b = Matrix(5, 4, Dtype::f32, Memory{});
  named[2].d = Matrix(0, 4, Dtype::f32, Memory{});
  Status s = ctx->prepare(named);
  CHECK_MESSAGE(s.ok(), s.message);
  CHECK(ctx->prepare(std::span<const Gemm>{}).ok());

  // A descriptor og_gemm refuses: the same status, its message, and its index.
  named[1].b = Matrix(301, 64, Dtype::fp8_e4m3, Memory{});
  s = ctx->prepare(named);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK_MESSAGE(s.message.find("descriptor 1") != std::string::npos, s.message);
  og_gemm_desc d;
  og_gemm_desc_init(&d);
  CHECK(og_gemm_prepare(nullptr, &d, 1) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_prepare(ctx->c_handle(), nullptr, 1) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(og_last_error_message()).find("null descriptor array") != std::string::npos);
  CHECK(og_gemm_prepare(ctx->c_handle(), nullptr, 0) == OG_OK);

  // The prepared problem runs and is right (memory given now).
  HostMatrix A(33, 17, Dtype::bf16), B(17, 9, Dtype::f16), D(33, 9, Dtype::f32);
  A.randomize();
  B.randomize();
  D.poison();
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  REQUIRE(ctx->run_host(g).ok());
  const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, {}, 1));
  CHECK(r.non_finite == 0);
  CHECK(r.rel_error <= tolerance(Dtype::f32, 17, Dtype::bf16, Dtype::f16));
}
