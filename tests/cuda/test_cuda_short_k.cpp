// cuda.short_k on a GPU: each table row forced on ragged problems it serves (several column
// blocks and a ragged last one, ragged row blocks, K of one to 128 with a partial chunk, D's rows
// at every offset through odd leading dimensions or aligned, D row- or column-major, batches,
// every input and output dtype, C, bias and activations), and its refusals. Without an sm_90
// device every test prints "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include <string>

#include "context_internal.hpp"
#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda: short_k, forced, on every table row with ragged problems at every D offset") {
  auto ctx = sm90_context("short_k rows");
  if (!ctx) return;
  const Dtype ins[] = {Dtype::f16, Dtype::bf16, Dtype::f32, Dtype::fp8_e4m3};
  const Dtype outs[] = {Dtype::f16, Dtype::bf16, Dtype::f32};
  const int64_t ks[] = {1, 3, 16, 17, 40, 128};
  int ran = 0;
  for (const detail::Config& cfg : family_configs(*ctx, "short_k")) {
    const bool mma = cfg.form == "mma";  // f16 x f16, bf16 x bf16, fp8 x fp8 only
    for (int variant = 0; variant < 12; ++variant) {
      const bool col_d = variant % 4 == 3;  // D column-major: the kernel runs D^T = B^T A^T
      const int64_t wide = 2 * cfg.block_n + 37 + variant, tall = cfg.block_m * 2 + 5 + variant;
      Case c{col_d ? wide : tall, col_d ? tall : wide, ks[variant % 6], 1 + variant % 3 / 2};
      c.a = ins[variant % 4];
      c.b = variant == 5 ? Dtype::fp8_e5m2 : ins[(variant + 1) % 4];
      if (mma) {
        c.a = variant % 4 == 2 ? Dtype::fp8_e5m2 : ins[variant % 4];
        c.b = c.a == Dtype::fp8_e5m2 ? Dtype::fp8_e4m3 : c.a;
      }
      c.d = outs[variant % 3];
      c.ta = variant & 1;
      c.tb = variant & 2;
      c.ld = col_d ? Layout::col_major : Layout::row_major;
      c.d_aligned = variant % 5 == 4;
      c.epi.alpha = 0.75f;
      c.epi.beta = variant % 2 ? -0.5f : 0.0f;
      c.epi.act = Activation(variant % 5);
      c.epi.slope = 0.1f;
      c.epi.bias_mode = BiasMode(variant % 3);
      c.config = cfg.to_string();
      run_case(*ctx, c);
      ++ran;
    }
  }
  CHECK(ran == 4 * 12);
}

TEST_CASE("cuda: short_k on one-column and one-row problems and every row offset of a 16-bit D") {
  auto ctx = sm90_context("short_k edges");
  if (!ctx) return;
  for (const detail::Config& cfg : family_configs(*ctx, "short_k")) {
    // Widths around the 8-output chunks and the block's edge; odd leading dimensions put the rows
    // at every 2-byte offset of a 16-byte unit.
    for (int64_t n : {int64_t(1), int64_t(9), int64_t(cfg.block_n - 1), int64_t(cfg.block_n + 1)}) {
      Case c{41, n, 2};
      c.a = c.b = c.d = Dtype::bf16;
      c.config = cfg.to_string();
      run_case(*ctx, c);
    }
    Case one{1, 3001, 5};
    one.a = one.b = one.d = Dtype::f16;
    one.config = cfg.to_string();
    run_case(*ctx, one);
  }
}

TEST_CASE("cuda: short_k refuses what it does not serve, naming why") {
  auto ctx = sm90_context("short_k refusals");
  if (!ctx) return;
  Case c{40, 300, 129};
  c.a = c.b = c.d = Dtype::f16;
  c.config = "short_k:32x256x16-g1-s1-w8";
  c.must_refuse = "K from 1 to 128";
  run_case(*ctx, c);
  Case mixed{40, 300, 20};
  mixed.a = Dtype::f16;
  mixed.b = Dtype::bf16;
  mixed.d = Dtype::f16;
  mixed.config = "short_k:32x256x16-g1-s1-w8-mma";
  mixed.must_refuse = "the mma form takes f16 x f16, bf16 x bf16 or fp8 x fp8";
  run_case(*ctx, mixed);
}
