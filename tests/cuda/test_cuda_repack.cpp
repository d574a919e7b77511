// cuda.sm90_repack on a GPU: every row of its table forced on operands the Hopper kernel cannot
// load in place (odd leading dimensions in every layout, fp8 with a row-major B), misaligned
// bases, odd batch strides and a broadcast B on device pointers, the default choice on unaligned
// problems of 1024 and more, tall problems of a few columns with an aligned N-major B, operands on
// pitches that straddle 32-byte sectors, and the copies in the caller's workspace. Without an sm_90 device every test prints
// "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "context_internal.hpp"
#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda: sm90_repack, forced, on every table row with odd leading dimensions in every layout") {
  auto ctx = sm90_context("sm90_repack rows");
  if (!ctx) return;
  int ran = 0;
  for (const detail::Config& cfg : family_configs(*ctx, "sm90_repack")) {
    if (cfg.block_k == 32) continue;  // tf32 rows (f32 inputs): test_cuda_tf32.cpp
    const bool fp8 = cfg.block_k == 128;
    for (int layout = 0; layout < 4; ++layout)
      for (int i = 0; i < 2; ++i) {
        // Odd pads (run_case's default): no operand is TMA-loadable in place. M: a tile plus one,
        // or one row; N: a masked column tail; K: a partial last K tile; a second batch on some.
        Case c{i ? cfg.block_m + 1 : 1, cfg.block_n + 3, 2 * int64_t(cfg.block_k) + 1 + 8 * i, 1 + i};
        c.config = cfg.to_string();
        c.a = c.b = fp8 ? (i ? Dtype::fp8_e5m2 : Dtype::fp8_e4m3) : (layout % 2 ? Dtype::bf16 : Dtype::f16);
        c.d = i ? Dtype::bf16 : Dtype::f32;
        c.ta = layout & 1;  // the copies are K-major whatever the source's layout (fp8 included)
        c.tb = layout & 2;
        c.epi.bias_mode = BiasMode(i + 1);
        c.epi.act = i ? Activation::gelu_tanh : Activation::none;
        run_case(*ctx, c);
        ++ran;
      }
  }
  CHECK(ran >= 8 * 30);
}

TEST_CASE("cuda: sm90_repack on device pointers: misaligned bases, odd batch strides, a broadcast B") {
  auto ctx = sm90_context("sm90_repack device pointers");
  if (!ctx) return;
  const std::string tile = "sm90_repack:128x128x64-g8-s6-w12-coop";
  run_device_case(*ctx, 300, 260, 200, 3, Dtype::f16, Dtype::f16, false, true, 2, 0, false, tile, "cuda.sm90_repack");
  run_device_case(*ctx, 300, 260, 200, 3, Dtype::bf16, Dtype::f32, true, false, 6, 0, true, tile, "cuda.sm90_repack");
  run_device_case(*ctx, 129, 70, 300, 2, Dtype::fp8_e4m3, Dtype::bf16, false, false, 1, 0, false,
                  "sm90_repack:128x128x128-g8-s6-w12-coop", "cuda.sm90_repack");
  // Split-K on the copies: the inner call's partials and the copies share the workspace.
  run_device_case(*ctx, 100, 90, 3000, 1, Dtype::f16, Dtype::f16, false, false, 2, 0, false,
                  "sm90_repack:128x64x64-g8-s8-w12-k4-coop", "cuda.sm90_repack");
}

TEST_CASE("cuda: unaligned problems of 1024 and more choose sm90_repack and match float64") {
  auto ctx = sm90_context("sm90_repack default choice");
  if (!ctx) return;
  run_device_case(*ctx, 1030, 1024, 1027, 1, Dtype::bf16, Dtype::bf16, false, false, 0, 0, false, "", "cuda.sm90_repack");
  run_device_case(*ctx, 1024, 2053, 1024, 2, Dtype::f16, Dtype::f16, false, true, 2, 0, false, "", "cuda.sm90_repack");
}

namespace {

// Dense row-major A, B and D in bf16 or f16 (every operand TMA-loadable in place), run with
// `config` (empty: the engine's choice): it must be sm90_repack, its report must hold `copied`,
// and D must match float64.
void run_aligned_on_copies(Context& ctx, int64_t m, int64_t n, int64_t k, int64_t batch, Dtype t, const std::string& config,
                           const char* copied) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  HostMatrix A(m, k, t, Layout::row_major, 0, batch), B(k, n, t, Layout::row_major, 0, batch), D(m, n, t, Layout::row_major, 0, batch);
  A.randomize();
  B.randomize();
  D.poison();
  DeviceCopy da(ctx.c_handle(), A), db(ctx.c_handle(), B), dd(ctx.c_handle(), D);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  g.batch_count = batch;
  g.config = config;
  auto ex = ctx.explain(g);
  REQUIRE_MESSAGE(ex.ok(), ex.status().message);
  CHECK_MESSAGE(ex->family() == "cuda.sm90_repack", ex->report());
  CHECK_MESSAGE(ex->report().find(copied) != std::string::npos, ex->report());
  REQUIRE(ctx.run(g).ok());
  dd.download(D);
  const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, batch));
  CHECK(r.non_finite == 0);
  CHECK(r.rel_error <= tolerance(t, k, t, t));
}

}  // namespace

TEST_CASE("cuda: tall problems of a few columns with an aligned N-major B run on its K-major copy and match float64") {
  auto ctx = sm90_context("sm90_repack narrow N-major B");
  if (!ctx) return;
  // Every operand is 16-byte aligned; B's lines of 8 and 24 elements TMA could load in place, line
  // by line; over 512 tiles the model takes the copy. A second batch on the second.
  run_aligned_on_copies(*ctx, 65536, 8, 256, 1, Dtype::bf16, "", "B copied K-major");
  run_aligned_on_copies(*ctx, 65536, 24, 256, 2, Dtype::bf16, "", "B copied K-major");
}

TEST_CASE("cuda: operands on pitches that straddle 32-byte sectors run on sm90_repack's 128-byte-pitch copies") {
  auto ctx = sm90_context("sm90_repack sector-straddling pitches");
  if (!ctx) return;
  // Every operand is 16-byte aligned and TMA could load it in place, but A's rows of K = 1000
  // (2000 bytes) and B's rows of N = 264 (528 bytes) each lie 16 bytes past a 32-byte boundary:
  // sm90_repack, forced, copies both (tma_lines.hpp); two batches. Over 512 tiles of 128 rows,
  // B's 136 columns (272 bytes) are copied by the engine's own choice.
  run_aligned_on_copies(*ctx, 300, 264, 1000, 2, Dtype::f16, "sm90_repack:128x128x64-g8-s6-w12-coop", "A copied K-major and B copied N-major");
  run_aligned_on_copies(*ctx, 65536, 136, 256, 1, Dtype::f16, "", "B copied");
}

TEST_CASE("cuda: sm90_repack's copies live in the caller's workspace when one is given") {
  auto ctx = sm90_context("sm90_repack caller workspace");
  if (!ctx) return;
  HostMatrix A(520, 333, Dtype::bf16, Layout::row_major, 1), B(333, 250, Dtype::bf16, Layout::col_major, 1),
      D(520, 250, Dtype::bf16);
  A.randomize();
  B.randomize();
  D.poison();
  DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  g.config = "sm90_repack:128x128x64-g8-s6-w12-coop";
  auto need = ctx->workspace_size(g);
  REQUIRE(need.ok());
  // A's copy: 520 rows of K = 333 on a pitch of 384 elements (768 bytes, a multiple of 128);
  // B's: 250 columns of 384; each rounded to 256 bytes.
  const uint64_t a_copy = (520 * 384 * 2 + 255) / 256 * 256, b_copy = (250 * 384 * 2 + 255) / 256 * 256;
  CHECK(*need == a_copy + b_copy);
  auto ex = ctx->explain(g);
  REQUIRE(ex.ok());
  CHECK(ex->workspace_from_engine());
  HostMatrix garbage(1, int64_t(*need), Dtype::fp8_e4m3);
  garbage.randomize();
  DeviceCopy ws(ctx->c_handle(), garbage);
  g.workspace = ws.memory();
  g.workspace_bytes = *need - 256;  // too small: refused before anything runs
  Status s = ctx->run(g);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK(s.message.find("workspace") != std::string::npos);
  CHECK(ctx->explain(g).status().code == StatusCode::invalid_argument);  // explain refuses it as og_gemm does
  auto again = ctx->workspace_size(g);  // the query still answers
  REQUIRE(again.ok());
  CHECK(*again == *need);
  dd.download(D);
  for (int64_t i = 0; i < D.rows; ++i) REQUIRE(std::isnan(D.get(0, i, 0)));
  g.workspace_bytes = *need;
  ex = ctx->explain(g);
  REQUIRE(ex.ok());
  CHECK(ex->raw.workspace_source == OG_WORKSPACE_CALLER);
  s = ctx->run(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  dd.download(D);
  const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1));
  CHECK(r.non_finite == 0);
  CHECK(r.rel_error <= tolerance(Dtype::bf16, 333, Dtype::bf16, Dtype::bf16));
}
