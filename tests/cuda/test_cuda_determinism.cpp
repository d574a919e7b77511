// Deterministic results on the GPU: the same call on the same device gives bitwise-identical D
// run after run, split-K included (partials summed in slice order by the tile's last slice or by
// sgemm's reduction launch, cluster-pair partials, the repack copies), for the default choice and forced configs. Without
// an sm_90 device every test prints "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include <string>

#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda: the same call gives bitwise-identical D run to run, split-K included") {
  auto ctx = sm90_context("determinism");
  if (!ctx) return;
  struct Shape {
    int64_t m, n, k;
    Dtype in, out;
    int64_t pad;          // odd pads: the repack path
    const char* config;   // "" = the default choice
  };
  const Shape shapes[] = {
      {128, 4096, 4096, Dtype::f16, Dtype::f16, 0, ""},
      {16, 4096, 4096, Dtype::bf16, Dtype::bf16, 0, ""},
      {300, 200, 5000, Dtype::f16, Dtype::f32, 0, "sm90_wgmma:128x64x64-g8-s8-w12-k4-coop"},   // global partials
      {300, 200, 5000, Dtype::bf16, Dtype::bf16, 0, "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"}, // cluster pairs
      {1030, 1024, 1027, Dtype::bf16, Dtype::bf16, 3, ""},
      {700, 600, 3000, Dtype::f16, Dtype::f16, 1, "sm90_repack:128x64x64-g8-s8-w12-k4-coop"},
      {39, 315, 5860, Dtype::f32, Dtype::f32, 1, "sgemm:64x64x8-g8-s2-w2-k32"},  // slices reduced by a second launch
  };
  for (const Shape& s : shapes) {
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    CAPTURE(s.config);
    HostMatrix A(s.m, s.k, s.in, Layout::row_major, s.pad), B(s.k, s.n, s.in, Layout::row_major, s.pad),
        D(s.m, s.n, s.out);
    A.randomize();
    B.randomize();
    DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D);
    Gemm g = device_gemm(A, da, B, db, D, dd);
    g.config = s.config;
    std::vector<uint8_t> first;
    for (int run = 0; run < 5; ++run) {
      run_poisoned(*ctx, g, D, dd);
      if (run == 0) first = D.bytes;
      else CHECK_MESSAGE(D.bytes == first, "run " << run << " differs from the first");
    }
    const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1));
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(s.out, s.k, s.in, s.in));
  }
}
