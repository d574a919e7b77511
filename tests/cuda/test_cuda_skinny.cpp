// cuda.skinny on a GPU: every table row with every split, forced on ragged problems it
// serves (both ends of its row range, K slices with masked tails, batches, every input and output
// dtype, C, bias and activations), bit-identical results run to run with split-K, the refusals,
// and the default choice on unaligned skinny problems. Without an sm_90 device every test prints
// "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "context_internal.hpp"
#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// A case `cfg` serves: its small side (rows, or columns for the t forms) `small`, the long side
// two blocks and a ragged tail, K split into `split` slices with a masked tail, the large
// operand laid out as the form loads it.
Case skinny_case(const detail::Config& cfg, int64_t small, int variant) {
  const std::string form(cfg.form.view());
  const bool t = form[0] == 't', lanes_k = form.ends_with("dot");
  const int64_t cols = 2 * (t ? cfg.block_m : cfg.block_n) + 5 + variant;
  const int64_t k = int64_t(cfg.block_k) * cfg.split_k + 7 + 3 * variant;
  Case c{t ? cols : small, t ? small : cols, k, 1 + variant % 2};
  const Dtype ins[] = {Dtype::f16, Dtype::bf16, Dtype::f32, Dtype::fp8_e4m3};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  c.a = c.b = ins[variant % 4];
  if (variant == 3) c.b = Dtype::fp8_e5m2;  // the untyped loader: fp8 of both kinds
  c.d = outs[variant % 3];
  if (!t) {  // large operand B (K x N): contiguous along N (n) or K (k)
    c.tb = lanes_k;
    c.lb = Layout::row_major;
    c.ta = variant & 1;
  } else {  // large operand A^T: A contiguous along M (tn) or K (tk)
    c.ta = !lanes_k;
    c.la = Layout::row_major;
    c.tb = variant & 1;
  }
  c.ld = variant & 2 ? Layout::col_major : Layout::row_major;
  c.epi.alpha = 0.75f;
  c.epi.beta = variant % 2 ? -0.5f : 0.0f;
  c.epi.act = Activation(variant % 5);
  c.epi.slope = 0.1f;
  c.epi.bias_mode = BiasMode(variant % 3);
  c.config = cfg.to_string();
  return c;
}

}  // namespace

TEST_CASE("cuda: skinny, forced, on every table row and split with ragged problems") {
  auto ctx = sm90_context("skinny rows");
  if (!ctx) return;
  int ran = 0;
  for (const detail::Config& cfg : family_configs(*ctx, "skinny")) {
    const int rows = cfg.form.view()[0] == 't' ? cfg.block_n : cfg.block_m;
    std::vector<int64_t> smalls{rows};
    if (rows / 2 + 1 < rows) smalls.push_back(rows / 2 + 1);
    for (int64_t small : smalls) {
      for (int variant = 0; variant < 2; ++variant) {
        run_case(*ctx, skinny_case(cfg, small, variant + (small % 3)));
        ++ran;
      }
    }
  }
  CHECK(ran >= 4 * 5 * 4 * 2);
}

TEST_CASE("cuda: skinny refuses what it does not serve, naming why") {
  auto ctx = sm90_context("skinny refusals");
  if (!ctx) return;
  Case c{40, 300, 100};  // 40 rows: more than any row of the table
  c.a = c.b = c.d = Dtype::f16;
  c.config = "skinny:16x64x64-g1-s1-w8-axpy";
  c.must_refuse = "serves problems of 9 to 16 rows";
  run_case(*ctx, c);
  Case w{4, 300, 100};  // B contiguous along K: the n form does not load it
  w.a = w.b = w.d = Dtype::bf16;
  w.tb = true;
  w.config = "skinny:4x64x64-g1-s1-w8-axpy";
  w.must_refuse = "the dot forms load it";
  run_case(*ctx, w);
  Case s{4, 300, 100};  // two K chunks cannot make eight slices
  s.a = s.b = s.d = Dtype::bf16;
  s.config = "skinny:4x64x64-g1-s1-w8-k8-axpy";
  s.must_refuse = "split-K 8 needs";
  run_case(*ctx, s);
  Case o{4, 300, 100};  // aligned f16: the TMA kernel streams it in place
  o.a = o.b = o.d = Dtype::f16;
  o.tma_aligned = true;
  o.config = "skinny:4x64x64-g1-s1-w8-axpy";
  o.must_refuse = "streams this problem's 16-bit operands in place";
  run_case(*ctx, o);
}

TEST_CASE("cuda: skinny split-K gives the same bits on every run") {
  auto ctx = sm90_context("skinny determinism");
  if (!ctx) return;
  HostMatrix A(3, 5000, Dtype::bf16, Layout::row_major, 3), B(5000, 333, Dtype::bf16, Layout::row_major, 1),
      D(3, 333, Dtype::f32);
  A.randomize();
  B.randomize();
  // A cluster split (8) and a deep one (32: partial sums in the workspace, summed by the last slice).
  check_same_bits(*ctx, A, B, D, {"skinny:4x64x64-g1-s1-w8-k8-axpy", "skinny:4x64x64-g1-s1-w8-k32-axpy"});
}

TEST_CASE("cuda: unaligned skinny problems choose a family that reads them in place and match float64") {
  auto ctx = sm90_context("skinny default choice");
  if (!ctx) return;
  // Odd leading dimensions (run_case pads by odd element counts): TMA cannot load B in place.
  for (auto [m, n, k, tb] : {std::tuple{int64_t(1), int64_t(7433), int64_t(1290), false},
                             std::tuple{int64_t(3), int64_t(771), int64_t(1360), true},
                             std::tuple{int64_t(4789), int64_t(1), int64_t(4968), false},
                             std::tuple{int64_t(314), int64_t(1), int64_t(1448), false}}) {
    Case c{m, n, k};
    c.a = c.b = c.d = Dtype::bf16;
    c.tb = tb;
    run_case(*ctx, c);
    // The same shapes through explain (device memory): the family chosen.
    HostMatrix A(m, k, Dtype::bf16, Layout::row_major, 2), B(tb ? n : k, tb ? k : n, Dtype::bf16, Layout::row_major, 1),
        D(m, n, Dtype::bf16, Layout::row_major, 1);
    B.transposed = tb;
    A.randomize();
    B.randomize();
    DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D);
    const Gemm g = device_gemm(A, da, B, db, D, dd);
    auto ex = ctx->explain(g);
    REQUIRE_MESSAGE(ex.ok(), ex.status().message);
    // cuda.skinny (f32 FMA) or cuda.skinny_mma (tensor cores): no copy of the large operand.
    CHECK_MESSAGE((ex->family() == "cuda.skinny" || ex->family() == "cuda.skinny_mma"), ex->report());
  }
}

TEST_CASE("cuda: skinny dot forms load four K at a time, the large operand aligned or not") {
  auto ctx = sm90_context("skinny four-element K loads");
  if (!ctx) return;
  int ran = 0;
  for (const detail::Config& cfg : family_configs(*ctx, "skinny")) {
    const std::string form(cfg.form.view());
    if (!form.ends_with("dot")) continue;
    const bool t = form[0] == 't';
    const int rows = t ? cfg.block_n : cfg.block_m;
    for (int variant = 0; variant < 2; ++variant) {
      // Ragged columns, K with a tail of 3 or 2 past a group of four, batches; aligned leading
      // dimensions and batch gaps. L f32, or 16-bit beside an f32 S (16-bit on both sides
      // belongs to sm90_wgmma; sixteen rows of 16-bit L keep the scalar loader).
      Case c = skinny_case(cfg, variant ? rows : rows / 2 + 1, variant);
      c.tma_aligned = true;
      const Dtype large = variant == 1 && rows < 16 ? (cfg.split_k % 2 ? Dtype::f16 : Dtype::bf16) : Dtype::f32;
      (t ? c.a : c.b) = large;
      (t ? c.b : c.a) = Dtype::f32;
      run_case(*ctx, c);
      ++ran;
    }
  }
  CHECK(ran >= 2 * 5 * 2);

  // The explain note says which loader runs: four elements per load where B's columns start on
  // four-element boundaries; off them (a base 1-3 elements on, or an odd leading dimension) 16-bit
  // B of one or two rows still loads four at a time, S staged at the columns' shift, and f32 B
  // (or more rows) element by element.
  const int64_t n = 500, k = 1001;
  for (auto [m, config] : {std::pair{int64_t(2), "skinny:2x32x256-g1-s1-w8-k4-dot"}, std::pair{int64_t(3), "skinny:4x32x256-g1-s1-w8-k4-dot"}}) {
    for (Dtype large : {Dtype::f32, Dtype::bf16}) {
      for (int64_t pad : {3, 2}) {  // ld 1004 (whole groups of four) or 1003
        HostMatrix A(m, k, Dtype::f32), B(n, k, large, Layout::row_major, pad), D(m, n, Dtype::f32);
        B.transposed = true;  // K x N, contiguous along K
        A.randomize();
        B.randomize();
        const Reference ref = reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1);
        for (uint64_t elements : {0, 1, 2, 3}) {
          CAPTURE(config);
          CAPTURE(std::string(name(large)));
          CAPTURE(pad);
          CAPTURE(elements);
          DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B, elements * dtype_size(large)), dd(ctx->c_handle(), D);
          Gemm g = device_gemm(A, da, B, db, D, dd);
          g.config = config;
          auto ex = ctx->explain(g);
          REQUIRE_MESSAGE(ex.ok(), ex.status().message);
          const bool aligned = elements == 0 && pad == 3, shifts = large != Dtype::f32 && m <= 2;
          CHECK_MESSAGE((ex->report().find("four elements per load") != std::string::npos) == (aligned || shifts), ex->report());
          CHECK_MESSAGE((ex->report().find("staged at each column's shift") != std::string::npos) == (!aligned && shifts), ex->report());
          const HostMatrix before = run_poisoned(*ctx, g, D, dd);
          const ErrorReport r = compare(D, ref, &before);
          CHECK(r.non_finite == 0);
          CHECK(r.rel_error <= tolerance(Dtype::f32, k, Dtype::f32, large));
        }
      }
    }
  }
}
