// Split-K on the cooperative-matrix family (configs with -k > 1; devices with KHR cooperative
// matrices only, else SKIPPED by name): ragged tiles whose K leaves some slices empty, both B
// orientations, f16 and bf16, batches and the full epilogue against float64, and the same bits
// on every run (the slices are added in a fixed order). The skinny family's split-K is tested in
// test_vulkan_skinny.cpp (every device).
#include <doctest/doctest.h>

#include <string>

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
    // The same bits twice.
    HostMatrix A(3 * cfg.block_m / 2, 1000, Dtype::f16), B(1000, cfg.block_n + 4, Dtype::f16), D(3 * cfg.block_m / 2, cfg.block_n + 4, Dtype::f32);
    A.randomize();
    B.randomize();
    std::vector<uint8_t> first;
    for (int run = 0; run < 2; ++run) {
      D.poison();
      Gemm g;
      g.a = A.host_view();
      g.b = B.host_view();
      g.d = D.host_view();
      g.config = cfg.to_string();
      const Status s = ctx->run_host(g);
      REQUIRE_MESSAGE(s.ok(), s.message);
      if (run == 0) first = D.bytes;
      else CHECK(D.bytes == first);
    }
  }
  CHECK(i > 0);
}
