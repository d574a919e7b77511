// Split-K on the cooperative-matrix family (configs with -k > 1; devices with KHR cooperative
// matrices only, else SKIPPED by name): ragged tiles whose K leaves some slices empty, both B
// orientations, f16 and bf16, batches and the full epilogue against float64, and the same bits
// on every run (the slices are added in a fixed order). The skinny family's split-K is tested in
// test_vulkan_skinny.cpp (every device).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("vulkan split-K: coopmat's split configs on ragged shapes, both B orientations, batches, bitwise repeatable") {
  auto ctx = backend_context(Backend::vulkan, "coopmat split-K");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  detail::KernelFamily* coopmat = vulkan_family(be, "coopmat");
  REQUIRE(coopmat != nullptr);
  if (!detail::vulkan_family_usable(be, coopmat)) {
    MESSAGE("SKIPPED vulkan split-K (coopmat): " << be.device().name << " cannot run the family ("
                                                 << missing_family_reason(be, "coopmat") << ")");
    return;
  }
  int i = 0;
  for (const detail::Config& cfg : coopmat->configs()) {
    if (cfg.split_k == 1) continue;
    CAPTURE(cfg.to_string());
    for (Layout lb : {Layout::row_major, Layout::col_major}) {
      // K = split_k x BLOCK_K x 1.5 + 9: slices of two K tiles, the last ones short or empty.
      Case c{2 * cfg.block_m + 5, cfg.block_n + 9, int64_t(cfg.split_k) * cfg.block_k * 3 / 2 + 9, 1 + i % 2};
      c.config = cfg.to_string();
      c.a = c.b = i % 2 ? Dtype::bf16 : Dtype::f16;
      c.d = i % 3 == 0 ? Dtype::f32 : Dtype::f16;
      c.lb = lb;
      c.tma_aligned = c.d_aligned = lb == Layout::row_major;
      c.epi.alpha = 0.5f;
      c.epi.beta = i % 2 ? 0.25f : 0.0f;
      c.epi.act = i % 2 ? Activation::silu : Activation::relu;
      c.epi.bias_mode = BiasMode(1 + i % 2);
      c.may_refuse = "bf16";  // devices without bf16 cooperative matrices
      run_case(*ctx, c);
      ++i;
    }
    // The same bits on every run, in the context's workspace and in the caller's (at an offset).
    HostMatrix A(3 * cfg.block_m / 2, 1000, Dtype::f16), B(1000, cfg.block_n + 4, Dtype::f16), D(3 * cfg.block_m / 2, cfg.block_n + 4, Dtype::f32);
    A.randomize();
    B.randomize();
    const std::vector<uint8_t> first = run_on_device(*ctx, A, B, D, cfg.to_string(), false);
    const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1), nullptr);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 1000, Dtype::f16, Dtype::f16));
    CHECK(run_on_device(*ctx, A, B, D, cfg.to_string(), false) == first);
    CHECK(run_on_device(*ctx, A, B, D, cfg.to_string(), true) == first);
  }
  CHECK(i > 0);
}
