// vulkan.skinny (few rows of A streamed against B): every config forced on ragged shapes, with
// every epilogue, output dtype, input dtype pair, layout, transpose and batch, D poisoned with NaN
// and every element checked against float64; vector loads of B (aligned 16-bit, N % 4 == 0) and
// the element-wise path; and the cost model's choice: skinny for decode shapes, not above 32 rows.
#include <doctest/doctest.h>

#include <string>

#include "backend_cases.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("vulkan skinny: every config on ragged shapes, epilogues, dtypes, layouts and batches") {
  auto ctx = backend_context(Backend::vulkan, "skinny family");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  detail::KernelFamily* skinny = vulkan_family(be, "skinny");
  REQUIRE(skinny != nullptr);
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh, Activation::silu};
  const Dtype ins[] = {Dtype::f16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::f32};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  int i = 0;
  for (const detail::Config& cfg : skinny->configs()) {
    // M: one row, a ragged chunk, more than one chunk; N: ragged and a multiple of 4 (vector
    // loads); K: odd.
    for (int64_t m : {int64_t(1), int64_t(cfg.block_m - 1 > 0 ? cfg.block_m - 1 : 2), int64_t(2 * cfg.block_m + 3)}) {
      Case c{m, cfg.block_n * 2 + (i % 2 ? 4 : 5), 67 + 8 * (i % 3), 1 + i % 2};
      c.config = cfg.to_string();
      c.a = ins[i % 5];
      c.b = ins[(i + 1) % 5];
      c.d = outs[i % 3];
      c.tb = i % 4 == 3;
      c.lb = i % 3 == 2 ? Layout::col_major : Layout::row_major;
      c.la = i % 5 == 4 ? Layout::col_major : Layout::row_major;
      c.epi.alpha = i % 2 ? -0.75f : 1.0f;
      c.epi.beta = i % 3 == 1 ? 0.5f : 0.0f;
      c.epi.act = acts[i % 5];
      c.epi.slope = 0.1f;
      c.epi.bias_mode = BiasMode(i % 3);
      c.d_aligned = i % 2 == 0;
      c.tma_aligned = i % 2 == 0;  // 16-byte aligned rows of B: the vector-load path
      run_case(*ctx, c);
      ++i;
    }
  }
  // Few columns and more rows: D^T = B^T A^T, with both bias modes and C.
  int j = 0;
  for (const detail::Config& cfg : skinny->configs()) {
    Case t{cfg.block_n * 2 + 7, 1 + j % 5, 75, 1 + j % 2};
    t.config = cfg.to_string();
    t.a = ins[(j + 2) % 5];
    t.b = ins[j % 5];
    t.d = outs[j % 3];
    t.ta = j % 2 == 1;
    t.ld = j % 3 == 0 ? Layout::col_major : Layout::row_major;
    t.epi.beta = 0.25f;
    t.epi.bias_mode = j % 2 ? BiasMode::per_m : BiasMode::per_n;
    t.epi.act = acts[(j + 1) % 5];
    run_case(*ctx, t);
    ++j;
  }
  // K = 0 (D = act(beta C + bias)), and a 16-bit B whose vector loads cover all of N over several K blocks.
  Case k0{5, 64, 0};
  k0.config = skinny->configs()[0].to_string();
  k0.epi.beta = 1.0f;
  k0.epi.bias_mode = BiasMode::per_n;
  run_case(*ctx, k0);
  Case vec{7, 256, 600};  // K over several K blocks
  vec.config = skinny->configs()[0].to_string();
  vec.a = vec.b = Dtype::f16;
  vec.d = Dtype::f16;
  vec.tma_aligned = vec.d_aligned = true;
  run_case(*ctx, vec);
}

TEST_CASE("vulkan skinny: the cost model picks it for decode shapes and not above 32 rows") {
  auto ctx = backend_context(Backend::vulkan, "skinny choice");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  if (detail::vulkan_family_usable(be, vulkan_family(be, "coopmat"))) {
    // Offered only where no cooperative-matrix family runs (see skinny_family.cpp).
    MESSAGE("SKIPPED vulkan skinny: the cost model's choice: " << be.device().name << " runs the coopmat family");
    return;
  }
  auto family_for = [&](int64_t m, int64_t n, int64_t k) {
    HostMatrix A(m, k, Dtype::f16), B(k, n, Dtype::f16), D(m, n, Dtype::f16);
    Gemm g;
    g.a = A.view(Memory::vulkan(0x1000));
    g.b = B.view(Memory::vulkan(0x2000));
    g.d = D.view(Memory::vulkan(0x3000));
    auto e = ctx->explain(g);
    REQUIRE_MESSAGE(e.ok(), e.status().message);
    return e->family();
  };
  for (int64_t m : {1, 16, 32}) {
    CAPTURE(m);
    CHECK(family_for(m, 4096, 4096) == "vulkan.skinny");
    CHECK(family_for(m, 14336, 4096) == "vulkan.skinny");
  }
  CHECK(family_for(4096, 16, 4096) == "vulkan.skinny");  // as D^T = B^T A^T
  CHECK(family_for(128, 4096, 4096) != "vulkan.skinny");
  CHECK(family_for(1024, 1024, 1024) != "vulkan.skinny");
}
