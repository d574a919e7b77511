// The Hopper kernel's packed ways out with fused epilogues: C of D's type (also in place), an f32
// bias (per N or per M) and every activation are finished in registers (tile_epilogue.cuh
// RegisterEpilogue), on the deferred TMA-store way (cooperative tiles, N a multiple of 8), the
// direct packed way (other N, 256x128, ping-pong) and the transposed one (swap: D^T); f32 D
// through TMA-stored chunks. Multi-tile problems, aligned D, every element checked against float64.
#include <doctest/doctest.h>

#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda epilogue: C, bias and every activation fused on the Hopper kernel's packed, deferred and f32 TMA ways") {
  auto ctx = sm90_context("fused packed epilogue");
  if (!ctx) return;
  const char* configs[] = {"sm90_wgmma:128x256x64-g16-s4-w12-coop", "sm90_wgmma:256x128x64-g8-s4-w12-coop",
                           "sm90_wgmma:128x128x64-g8-s6-w12-pingpong", "sm90_wgmma:64x128x64-g8-s8-w12-swap",
                           "sm90_wgmma:128x256x128-g8-s4-w12-coop", "sm90_wgmma:128x192x64-g8-s4-w12-coop",
                           "sm90_wgmma:128x256x64-g8-s4-w12-mcast"};
  int ran = 0;
  for (const char* config : configs) {
    const bool fp8 = std::string(config).find("128x256x128") != std::string::npos;  // BLOCK_K 128: fp8 rows
    for (int i = 0; i < 8; ++i) {
      // N = 1032 (deferred TMA stores where the tile is cooperative) or 1036 (not a multiple of 8:
      // direct packed stores); K = 200 / 264 (the next tile's K-tiles carry the held chunks).
      Case c{i == 5 ? 37 : 700 + 3 * i, i % 2 ? 1036 : 1032, i % 4 < 2 ? 200 : 264, 1 + i % 2};
      c.config = config;
      c.tma_aligned = c.d_aligned = true;
      c.a = c.b = fp8 ? Dtype::fp8_e4m3 : (i % 3 == 2 ? Dtype::bf16 : Dtype::f16);
      c.tb = fp8 || i >= 3;  // fp8 needs B K-major; 16-bit both layouts
      c.d = i >= 6 ? Dtype::f32 : i % 2 ? Dtype::bf16 : Dtype::f16;  // f32: N 1032 / 1036 both multiples of 4
      c.epi.alpha = i == 4 ? -1.25f : 0.5f;
      const Activation acts[] = {Activation::relu,      Activation::leaky_relu, Activation::none, Activation::gelu_tanh,
                                 Activation::silu,      Activation::gelu_tanh,  Activation::silu, Activation::leaky_relu};
      c.epi.act = acts[i];
      c.epi.slope = 0.2f;
      c.epi.bias_mode = i % 3 == 2 ? BiasMode::per_m : i == 0 ? BiasMode::none : BiasMode::per_n;
      CAPTURE(i);
      run_case(*ctx, c);
      ++ran;
    }
    // C (beta) of D's dtype: read in registers on the packed, deferred and f32 TMA ways of the
    // kernels with the register epilogue (f32: up to 192 columns per consumer), through the
    // general epilogue elsewhere (ping-pong, 256x128, multicast, swap: C^T has no unit column
    // stride there, and odd N: C's pairs); with and without bias and activation, N a multiple of
    // 8 (deferred), of 4 (direct) and odd; i = 4: f32 D and C.
    for (int i = 0; i < 5; ++i) {
      Case c{i == 3 ? 301 : 640 + 5 * i, i == 0 || i == 4 ? 1032 : i == 1 ? 1036 : 1035, i % 2 ? 264 : 200, 1 + i % 2};
      c.config = config;
      c.tma_aligned = c.d_aligned = true;
      c.a = c.b = fp8 ? Dtype::fp8_e4m3 : (i == 2 ? Dtype::bf16 : Dtype::f16);
      c.tb = fp8 || i % 2;
      c.d = i == 4 ? Dtype::f32 : i % 2 ? Dtype::bf16 : Dtype::f16;
      c.epi.alpha = 0.75f;
      c.epi.beta = i == 1 ? -1.5f : 0.5f;
      const Activation acts[] = {Activation::none, Activation::gelu_tanh, Activation::relu, Activation::silu,
                                 Activation::leaky_relu};
      c.epi.act = acts[i];
      c.epi.bias_mode = i == 0 ? BiasMode::none : i == 2 ? BiasMode::per_m : BiasMode::per_n;
      CAPTURE(i);
      run_case(*ctx, c);
      ++ran;
    }
  }
  CHECK(ran == 91);
}

// The packed ways to a 16-bit D whose rows are not 16-byte aligned (an odd leading dimension:
// consecutive rows start at every even byte offset modulo 16, so each piece width of
// tile_epilogue.cuh store_unit runs, and an odd batch gap): row-major (coop, ping-pong, 256x128)
// and transposed (swap: D^T), with bias and activations in registers and without.
TEST_CASE("cuda epilogue: the packed ways to an unaligned 16-bit D, straight and transposed") {
  auto ctx = sm90_context("packed epilogue, unaligned D");
  if (!ctx) return;
  const char* configs[] = {"sm90_wgmma:128x256x64-g16-s4-w12-coop", "sm90_wgmma:256x128x64-g8-s4-w12-coop",
                           "sm90_wgmma:128x128x64-g8-s6-w12-pingpong", "sm90_wgmma:64x128x64-g8-s8-w12-swap",
                           "sm90_wgmma:128x192x64-g8-s4-w12-coop"};
  int ran = 0;
  for (const char* config : configs)
    for (int i = 0; i < 3; ++i) {
      Case c{i == 2 ? 61 : 300 + 7 * i, 517 + 8 * i, 200, 1 + i % 2};
      c.config = config;
      c.tma_aligned = true;  // A and B in place; D (and C) with odd pads
      c.a = c.b = i == 1 ? Dtype::bf16 : Dtype::f16;
      c.d = c.a;
      c.tb = i == 1;
      const Activation acts[] = {Activation::none, Activation::gelu_tanh, Activation::leaky_relu};
      c.epi.act = acts[i];
      c.epi.slope = 0.2f;
      c.epi.bias_mode = i == 0 ? BiasMode::none : i == 1 ? BiasMode::per_n : BiasMode::per_m;
      CAPTURE(i);
      run_case(*ctx, c);
      ++ran;
    }
  CHECK(ran == 15);
}

// C given as D itself (in place) on the register ways: the deferred 16-bit way reads each C pair
// before its tile's D leaves by TMA stores, and the f32 TMA way reads an f32 C the same way.
TEST_CASE("cuda epilogue: C in place (C is D) on the register ways") {
  auto ctx = sm90_context("in-place C in registers");
  if (!ctx) return;
  struct InPlace {
    const char* config;
    Dtype d;
    Activation act;
  };
  for (const InPlace& t : {InPlace{"sm90_wgmma:128x256x64-g16-s4-w12-coop", Dtype::f16, Activation::gelu_tanh},
                           InPlace{"sm90_wgmma:128x192x64-g8-s4-w12-coop", Dtype::bf16, Activation::relu},
                           InPlace{"sm90_wgmma:128x128x64-g8-s6-w12-coop", Dtype::f32, Activation::silu}}) {
    CAPTURE(t.config);
    const int64_t m = 300, n = 1032, k = 264;  // N a multiple of 8: deferred TMA stores
    HostMatrix A(m, k, Dtype::f16), B(k, n, Dtype::f16), D(m, n, t.d);
    A.randomize();
    B.randomize();
    D.randomize();
    const HostMatrix C0 = D;
    DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D);
    Gemm g = device_gemm(A, da, B, db, D, dd);
    g.c = g.d;
    g.config = t.config;
    EpilogueSpec e;
    e.alpha = 0.75f;
    e.beta = -0.5f;
    e.act = t.act;
    g.epilogue.alpha = e.alpha;
    g.epilogue.beta = e.beta;
    g.epilogue.activation = e.act;
    REQUIRE(ctx->run(g).ok());
    D.poison();
    dd.download(D);
    const ErrorReport r = compare(D, reference_gemm(A, B, &C0, nullptr, e, 1));
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(t.d, k, Dtype::f16, Dtype::f16));
  }
}
