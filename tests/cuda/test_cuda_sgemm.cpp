// The f32 family cuda.sgemm (full f32 FMA): every table row and split forced on ragged shapes,
// both layouts of each operand, the vector and the scalar loaders, every output dtype and
// epilogue; and the dispatch of f32 problems to it. Without a CUDA device every test prints SKIPPED.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "backend_cases.hpp"
#include "context_internal.hpp"
#include "cuda_device_support.hpp"
#include "tf32_cases.hpp"
#include "dispatch.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

detail::KernelFamily* find(Context& ctx, const char* name) {
  for (detail::KernelFamily* f : detail::context_backend(ctx.c_handle()).families())
    if (std::string(f->name()) == name) return f;
  return nullptr;
}

}  // namespace

TEST_CASE("cuda sgemm: every table row and split, forced, on ragged shapes, layouts, loaders, outputs and epilogues") {
  auto ctx = backend_context(Backend::cuda, "sgemm rows");
  if (!ctx) return;
  detail::KernelFamily* sgemm = find(*ctx, "sgemm");
  REQUIRE(sgemm != nullptr);
  int ran = 0;
  for (const detail::Config& cfg : sgemm->configs()) {
    const int64_t slices_k = 3 * int64_t(cfg.block_k) * (cfg.split_k - 1);
    for (int layout = 0; layout < 4; ++layout)
      for (int i = 0; i < 4; ++i) {
        // M: one row, a tile minus one, a tile plus one, two tiles and a bit; N: a partial last
        // quad and tile; K: a K tail inside a quad (2 BLOCK_K + 1 ..) and a long K (i == 3).
        // A split config's slices get 3 K-steps each on top (the last one short: the K tail).
        // Aligned operands (i odd) take the vector loader, the others the scalar one; i == 2
        // adds C (beta), i == 1 bias per N and silu into an aligned D (quad stores), i == 3
        // bias per M and gelu, i == 0 leaky_relu into f16.
        const int64_t m = i == 0 ? 1 : i == 1 ? cfg.block_m - 1 : i == 2 ? cfg.block_m + 1 : 2 * cfg.block_m + 5;
        const int64_t k = (i == 3 ? 517 : 2 * int64_t(cfg.block_k) + 1 + 2 * i) + slices_k;
        Case c{m, cfg.block_n + 3 + 4 * i, k, i % 2 ? 2 : 1};
        c.config = cfg.to_string();
        c.tma_aligned = c.d_aligned = i % 2 == 1;
        c.a = c.b = Dtype::f32;
        c.d = i == 0 ? Dtype::f16 : i == 2 ? Dtype::bf16 : Dtype::f32;
        c.ta = layout & 1;
        c.tb = layout & 2;
        c.epi.alpha = 0.75f;
        c.epi.beta = i == 2 ? -0.5f : 0.0f;
        c.epi.bias_mode = i == 1 ? BiasMode::per_n : i == 3 ? BiasMode::per_m : BiasMode::none;
        c.epi.act = i == 0 ? Activation::leaky_relu : i == 1 ? Activation::silu : i == 3 ? Activation::gelu_tanh : Activation::none;
        c.epi.slope = 0.1f;
        run_case(*ctx, c);
        ++ran;
      }
    // Column-major storage of every operand and of D (A and B then walk the other stride).
    Case col{cfg.block_m + 7, 2 * cfg.block_n + 1, 45 + slices_k, 1};
    col.config = cfg.to_string();
    col.la = col.lb = col.ld = Layout::col_major;
    col.tma_aligned = col.d_aligned = true;
    run_case(*ctx, col);
    // Many tiles (several per SM) in the grouped order, 2 batches, aligned: the fast path.
    Case many{1031, cfg.split_k > 8 ? 260 : 1100, 300 + slices_k, 2};  // partials within their bound
    many.config = cfg.to_string();
    many.tma_aligned = many.d_aligned = true;
    run_case(*ctx, many);
    ran += 2;
  }
  CHECK(ran == int(sgemm->configs().size()) * 18);
}

TEST_CASE("cuda sgemm: split-K slices in the caller's workspace, summed with the epilogue by a second launch") {
  auto ctx = backend_context(Backend::cuda, "sgemm split-K workspace");
  if (!ctx) return;
  // Few tiles against a long K, unaligned leading dimensions, C, bias and gelu into bf16.
  const int64_t m = 39, n = 315, k = 5860;
  HostMatrix A(m, k, Dtype::f32, Layout::row_major, 1), B(k, n, Dtype::f32, Layout::row_major, 3),
      C(m, n, Dtype::bf16, Layout::row_major, 5), bias_m(1, n, Dtype::f32), D(m, n, Dtype::bf16, Layout::row_major, 5);
  A.randomize();
  B.randomize();
  C.randomize();
  std::vector<float> bias(static_cast<size_t>(n));
  for (float& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  std::memcpy(bias_m.bytes.data(), bias.data(), bias.size() * sizeof(float));
  DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dc(ctx->c_handle(), C), dbias(ctx->c_handle(), bias_m),
      dd(ctx->c_handle(), D);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  g.c = C.view(dc.memory());
  EpilogueSpec e;
  e.alpha = 0.5f;
  e.beta = -1.0f;
  e.bias_mode = BiasMode::per_n;
  e.act = Activation::gelu_tanh;
  set_epilogue(g, e, dbias.memory());
  g.config = "sgemm:64x64x8-g8-s2-w2-k16";
  auto need = ctx->workspace_size(g);
  REQUIRE_MESSAGE(need.ok(), need.status().message);
  CHECK(*need == (16 * m * 316 * 4 + 255) / 256 * 256);  // 16 slices of m rows padded to 316 floats
  auto ex = ctx->explain(g);
  REQUIRE_MESSAGE(ex.ok(), ex.status().message);
  CHECK(uint64_t(ex->workspace_bytes()) == *need);
  CHECK_MESSAGE(ex->report().find("summed in slice order by a second launch") != std::string::npos, ex->report());
  HostMatrix garbage(1, int64_t(*need), Dtype::fp8_e4m3);
  garbage.randomize();
  DeviceCopy ws(ctx->c_handle(), garbage);
  g.workspace = ws.memory();
  g.workspace_bytes = *need;
  const Reference ref = reference_gemm(A, B, &C, &bias, e, 1);
  for (int run = 0; run < 2; ++run) {
    const HostMatrix before = run_poisoned(*ctx, g, D, dd);
    const ErrorReport r = compare(D, ref, &before);
    CHECK(r.non_finite == 0);
    CHECK(r.padding_touched == 0);
    CHECK(r.rel_error <= tolerance(Dtype::bf16, k, Dtype::f32, Dtype::f32));
  }
}

TEST_CASE("cuda sgemm: f32 problems dispatch to the f32 family, others do not") {
  auto ctx = backend_context(Backend::cuda, "sgemm dispatch");
  if (!ctx) return;
  const auto& be = detail::context_backend(ctx->c_handle());
  if (be.device().limits.arch < 80) {
    MESSAGE("SKIPPED cuda: sgemm dispatch: " << be.device().name << " is older than sm_80");
    return;
  }
  // From 1000 up (at 64^3 both are launch-bound and the cost model ranks simt's small tiles about
  // equal; the H100 run of 2026-11-25 chose simt there).
  for (int64_t size : {1024, 4096}) {
    HostMatrix a(size, size, Dtype::f32), d(size, size, Dtype::f32);
    Gemm g;
    g.a = a.host_view();
    g.b = a.host_view();
    g.c = d.host_view();
    g.d = d.host_view();
    auto e = explain_on_device(*ctx, g);  // device operands: explain plans on the backend's memory
    REQUIRE_MESSAGE(e.ok(), e.status().message);
    CAPTURE(size);
    CHECK_MESSAGE(e.value().config().find("sgemm:") == 0, e.value().config());
  }
  // f16 inputs never reach it.
  auto s = run_probe(*ctx, Dtype::f16, "sgemm:128x128x8-g8-s2-w8");
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("f32 x f32") != std::string::npos);
}

TEST_CASE("cuda sgemm: refusals name the rule") {
  auto ctx = backend_context(Backend::cuda, "sgemm refusals");
  if (!ctx) return;
  CHECK(run_probe(*ctx, Dtype::f32, "sgemm:128x128x8-g8-s2-w8").ok());
  const struct { const char* config; const char* rule; } cases[] = {
      {"sgemm:128x128x8-g8-s3-w8", "stages must be 2"},
      {"sgemm:128x128x8-g8-s2-w8-k2", "1 on the 256-thread row"},
      {"sgemm:64x64x8-g8-s2-w2-k5", "split-K must be 1, 2, 3"},
      {"sgemm:64x64x8-g8-s2-w2-k64", "split-K 64 needs as many K-steps of 8"},
      {"sgemm:96x128x8-g8-s2-w8", "table's rows"},
  };
  for (const auto& c : cases) {
    const Status s = run_probe(*ctx, Dtype::f32, c.config);
    CAPTURE(c.config);
    CHECK(s.code == StatusCode::unsupported);
    CHECK_MESSAGE(s.message.find(c.rule) != std::string::npos, s.message);
  }
}
