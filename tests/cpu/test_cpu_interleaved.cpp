// Batched outputs whose batches interleave without sharing an element, as multi-head attention
// writes heads side by side into one output (ld = heads x N, batch stride N), run end to end on
// the CPU backend against the float64 reference: every element of every head checked, the
// columns no head owns checked untouched.
#include <doctest/doctest.h>

#include <string>

#include "gemm_check.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// heads x (M x N) outputs interleaved along the unit-stride dimension of D: row-major D has
// ld = heads * N + pad and batch stride N; column-major D has ld = heads * M + pad and stride M.
void run_interleaved(int64_t m, int64_t n, int64_t k, int64_t heads, int64_t pad, Dtype in, Dtype out, Layout d_layout,
                     float beta) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(heads);
  CAPTURE(std::string(name(in)));
  CAPTURE(std::string(name(out)));
  CAPTURE(int(d_layout));
  auto ctx = Context::create({.backend = Backend::cpu});
  REQUIRE_MESSAGE(ctx.ok(), ctx.status().message);
  HostMatrix A(m, k, in, Layout::row_major, 1, heads, 3);
  HostMatrix B(k, n, in, Layout::col_major, 2, heads, 0);
  A.randomize();
  B.randomize();
  const bool row = d_layout == Layout::row_major;
  HostMatrix D(m, n, out, d_layout);
  D.batches = heads;
  D.ld = (row ? n : m) * heads + pad;
  D.batch_stride = row ? n : m;
  D.bytes.assign(size_t((row ? m : n) * D.ld) * size_t(dtype_size(out)), 0);
  D.randomize();  // C's values in place (beta != 0), and the bytes the unowned columns must keep
  const HostMatrix before = D;
  const HostMatrix C = D;

  Gemm g = host_gemm(A, B, /*C: D itself*/ D, D, heads, "");
  g.epilogue.beta = beta;
  if (beta == 0.0f) {  // nothing read from D: poison what the heads own
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) D.set(h, i, j, NAN);
  }
  const Status s = ctx->run(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  EpilogueSpec e;
  e.beta = beta;
  const Reference ref = reference_gemm(A, B, &C, nullptr, e, heads);
  const ErrorReport r = compare(D, ref, &before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(out, k, in, in));
}

}  // namespace

TEST_CASE("cpu: interleaved heads (M 291, N 251, batch 4, D ld 1006, batch stride 251) match float64") {
  run_interleaved(291, 251, 67, 4, 2, Dtype::f32, Dtype::f32, Layout::row_major, 0.0f);
  run_interleaved(291, 251, 67, 4, 2, Dtype::bf16, Dtype::bf16, Layout::row_major, 0.0f);
}

TEST_CASE("cpu: interleaved heads in place (beta 1), both layouts of D, no padding and padding") {
  run_interleaved(37, 29, 41, 5, 0, Dtype::f16, Dtype::f32, Layout::row_major, 1.0f);
  run_interleaved(37, 29, 41, 5, 3, Dtype::f16, Dtype::f16, Layout::col_major, 1.0f);
  run_interleaved(64, 17, 300, 3, 1, Dtype::fp8_e4m3, Dtype::bf16, Layout::col_major, 0.0f);
}
