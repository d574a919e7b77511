// compute_mode OG_COMPUTE_TF32 on CUDA: the Hopper family's tf32 rows (wgmma .tf32, K-major
// operands) forced on ragged shapes with every output dtype and epilogue; other layouts through
// the repack copy; the choice between them; unrounded inputs within the TF32 bound. Inputs
// pre-rounded to TF32 make the tensor cores' products exact, so those cases meet the f32 bound.
#include <doctest/doctest.h>

#include "config_space.hpp"
#include "cuda_device_support.hpp"
#include "tf32_cases.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda tf32: every tf32 row of sm90_wgmma, forced, on ragged shapes, outputs and epilogues") {
  auto ctx = sm90_context("tf32 rows");
  if (!ctx) return;
  int ran = 0;
  const char* rows[] = {"sm90_wgmma:128x256x32-g16-s4-w12-coop", "sm90_wgmma:256x128x32-g8-s4-w12-coop",
                        "sm90_wgmma:128x192x32-g8-s4-w12-coop",  "sm90_wgmma:128x128x32-g8-s6-w12-coop",
                        "sm90_wgmma:128x64x32-g8-s8-w12-coop",   "sm90_wgmma:128x128x32-g8-s6-w12-pingpong"};
  for (const char* row : rows) {
    const auto cfg = detail::Config::parse(row);
    REQUIRE(cfg);
    for (int i = 0; i < 4; ++i) {
      // M: one row, a tile minus one, a tile plus one, two tiles and a bit; N: a masked column
      // tail; K: partial last K tiles (32 per tile); C, bias and activations on some; D f32 on
      // the generic and vector ways, 16-bit on the packed (deferred) one.
      const int64_t m = i == 0 ? 1 : i == 1 ? cfg->block_m - 1 : i == 2 ? cfg->block_m + 1 : 2 * cfg->block_m + 5;
      Tf32Case c{m, cfg->block_n + (i == 3 ? 8 : 3), 3 * 32 + 1 + 8 * i, i % 2 ? 2 : 1};
      c.config = row;
      c.expect_family = "cuda.sm90_wgmma";
      c.d = i == 3 ? Dtype::f16 : i == 2 ? Dtype::bf16 : Dtype::f32;
      c.epi.alpha = 0.75f;
      c.epi.beta = i == 2 ? -0.5f : 0.0f;
      c.epi.bias_mode = i == 1 ? BiasMode::per_n : i == 0 ? BiasMode::per_m : BiasMode::none;
      c.epi.act = i == 1 ? Activation::silu : i == 0 ? Activation::relu : Activation::none;
      run_tf32_case(*ctx, c);
      ++ran;
    }
    // Many work items per persistent program: several tiles per SM, 2 batches.
    Tf32Case many{1100, 1032, 200, 2};
    many.config = row;
    run_tf32_case(*ctx, many);
    ++ran;
  }
  CHECK(ran == 30);
}

TEST_CASE("cuda tf32: layouts the kernel cannot load go through the repack copy; unrounded inputs") {
  auto ctx = sm90_context("tf32 layouts");
  if (!ctx) return;
  for (int layout = 0; layout < 4; ++layout)
    for (bool aligned : {true, false}) {
      Tf32Case c{1024 + 3, 1024 + 5, 1024 + 7, 1};
      c.ta = layout & 1;
      c.tb = layout & 2;
      c.aligned = aligned;
      c.config = "sm90_repack:128x128x32-g8-s6-w12-coop";
      const bool in_place = !c.ta && c.tb && aligned;
      if (in_place) c.config = "sm90_wgmma:128x128x32-g8-s6-w12-coop";
      run_tf32_case(*ctx, c);
    }
  // Unrounded inputs, the engine's choice (a tensor-core family at this size).
  Tf32Case free{2048, 2048, 2048, 1};
  free.pre_rounded = false;
  free.expect_family = "cuda.sm90_wgmma";
  run_tf32_case(*ctx, free);
  Tf32Case row_b = free;
  row_b.tb = false;
  row_b.expect_family = "cuda.sm90_repack";
  run_tf32_case(*ctx, row_b);
}
