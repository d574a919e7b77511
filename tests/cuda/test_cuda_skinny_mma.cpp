// cuda.skinny_mma on a GPU: every table row with every split, forced, on ragged problems it
// serves (both ends of its row range, every unit-stride layout of both operands, odd leading
// dimensions, K slices with masked tails, batches, f16 and bf16, every output dtype, C, bias and
// activations); device pointers with misaligned bases and a broadcast B; bit-identical results
// run to run with split-K; 16-byte aligned operands; the refusals.
// Without an sm_90 device every test prints "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "context_internal.hpp"
#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

int tile_rows(const detail::Config& cfg) { return cfg.form.view()[0] == 't' ? cfg.block_n : cfg.block_m; }

// A case `cfg` serves: `small` rows (columns for tmma), the long side two blocks and a ragged
// tail, K split into the config's slices with a masked tail; `layout` picks A's and B's
// transposition (every unit-stride layout of S and L).
Case mma_case(const detail::Config& cfg, int64_t small, int layout, int variant) {
  const bool t = cfg.form.view()[0] == 't';
  const int64_t cols = 2 * 64 + 5 + 7 * variant;
  const int64_t k = 64 * int64_t(cfg.split_k) + 7 + 3 * variant;
  Case c{t ? cols : small, t ? small : cols, k, 1 + (variant + layout) % 2};
  c.a = c.b = variant % 2 ? Dtype::bf16 : Dtype::f16;
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  c.d = outs[(variant + layout) % 3];
  c.ta = layout & 1;
  c.tb = layout & 2;
  c.ld = variant & 2 ? Layout::col_major : Layout::row_major;
  c.epi.alpha = 0.75f;
  c.epi.beta = (layout + variant) % 2 ? -0.5f : 0.0f;
  c.epi.act = Activation((layout + variant) % 5);
  c.epi.slope = 0.1f;
  c.epi.bias_mode = BiasMode((layout + variant) % 3);
  c.config = cfg.to_string();
  return c;
}


}  // namespace

TEST_CASE("cuda: skinny_mma, forced, on every table row, split and operand layout with ragged problems") {
  auto ctx = sm90_context("skinny_mma rows");
  if (!ctx) return;
  int ran = 0;
  for (const detail::Config& cfg : family_configs(*ctx, "skinny_mma")) {
    const int rows = tile_rows(cfg);
    for (int64_t small : {int64_t(rows == 16 ? 1 : rows / 2 + 1), int64_t(rows)})
      for (int layout = 0; layout < 4; ++layout) {
        run_case(*ctx, mma_case(cfg, small, layout, int(small % 3) + ran % 2));
        ++ran;
      }
  }
  CHECK(ran >= 4 * 7 * 2 * 4);
}

TEST_CASE("cuda: skinny_mma on device pointers: misaligned bases, odd batch strides, a broadcast B") {
  auto ctx = sm90_context("skinny_mma device pointers");
  if (!ctx) return;
  // Offsets of 2, 6 and 14 bytes put the first element anywhere in its 16-byte chunk; the
  // operands' first and last chunks then go element by element.
  struct Row {
    int64_t m, n, k, batch;
    Dtype in, out;
    bool ta, tb;
    uint64_t a_offset, b_offset;
    bool b_broadcast;
    const char* config;
  };
  const Row rows[] = {
      {28, 777, 531, 1, Dtype::f16, Dtype::f32, false, false, 2, 6, false, "skinny_mma:32x64x64-g1-s4-w8-mma"},
      {19, 500, 1000, 3, Dtype::bf16, Dtype::bf16, true, true, 14, 2, true, "skinny_mma:32x64x64-g1-s4-w8-k4-mma"},
      {5, 300, 2049, 2, Dtype::f16, Dtype::f16, false, true, 6, 14, false, "skinny_mma:16x64x64-g1-s4-w8-k16-mma"},
      {333, 12, 700, 2, Dtype::bf16, Dtype::f32, true, false, 2, 2, true, "skinny_mma:64x16x64-g1-s4-w8-k2-tmma"},
      {611, 31, 97, 1, Dtype::f16, Dtype::f16, false, false, 14, 6, false, "skinny_mma:64x32x64-g1-s4-w8-tmma"},
      {50, 900, 1300, 2, Dtype::bf16, Dtype::f32, false, true, 6, 2, false, "skinny_mma:64x64x64-g1-s3-w8-k4-mma"},
      {1000, 45, 1100, 1, Dtype::f16, Dtype::bf16, true, true, 2, 14, false, "skinny_mma:64x64x64-g1-s3-w8-k16-tmma"},
  };
  for (const Row& r : rows)
    run_device_case(*ctx, r.m, r.n, r.k, r.batch, r.in, r.out, r.ta, r.tb, r.a_offset, r.b_offset, r.b_broadcast, r.config,
                    "cuda.skinny_mma");
}

TEST_CASE("cuda: skinny_mma refuses what it does not serve, naming why") {
  auto ctx = sm90_context("skinny_mma refusals");
  if (!ctx) return;
  Case r{40, 300, 100};  // 40 rows: the 64-row tile's, not the 32-row one's
  r.a = r.b = r.d = Dtype::f16;
  r.config = "skinny_mma:32x64x64-g1-s4-w8-mma";
  r.must_refuse = "serves problems of 17 to 32 rows";
  run_case(*ctx, r);
  Case w{300, 65, 100};  // 65 columns: more than any row of the table
  w.a = w.b = w.d = Dtype::bf16;
  w.config = "skinny_mma:64x64x64-g1-s3-w8-tmma";
  w.must_refuse = "serves problems of 33 to 64 columns";
  run_case(*ctx, w);
  Case f{4, 300, 100};  // f32 inputs: the f32 FMA kernels' (cuda.skinny)
  f.a = f.b = f.d = Dtype::f32;
  f.config = "skinny_mma:16x64x64-g1-s4-w8-mma";
  f.must_refuse = "f16 x f16 or bf16 x bf16";
  run_case(*ctx, f);
  Case x{4, 300, 100};  // mixed inputs
  x.a = Dtype::f16;
  x.b = x.d = Dtype::bf16;
  x.config = "skinny_mma:16x64x64-g1-s4-w8-mma";
  x.must_refuse = "f16 x f16 or bf16 x bf16";
  run_case(*ctx, x);
  Case s{4, 300, 100};  // two K chunks cannot make eight slices
  s.a = s.b = s.d = Dtype::bf16;
  s.config = "skinny_mma:16x64x64-g1-s4-w8-k8-mma";
  s.must_refuse = "split-K 8 needs";
  run_case(*ctx, s);
  Case o{4, 300, 100};  // aligned f16 with a short K: the TMA kernel streams it in place
  o.a = o.b = o.d = Dtype::f16;
  o.tma_aligned = true;
  o.config = "skinny_mma:16x64x64-g1-s4-w8-mma";
  o.must_refuse = "streams this problem's 16-bit operands in place";
  run_case(*ctx, o);
}

TEST_CASE("cuda: skinny_mma runs 16-byte aligned operands of at most 16 rows against a long K") {
  auto ctx = sm90_context("skinny_mma aligned");
  if (!ctx) return;
  // Aligned operands, which sm90_wgmma could also stream through TMA: skinny_mma takes those of
  // at most 16 rows (columns) against K >= 80 chunks of 64, so they must run here too.
  struct Row {
    int64_t m, n, k;
    bool ta, tb;
    const char* config;
  };
  const Row rows[] = {
      {8, 228, 5200, true, true, "skinny_mma:16x64x64-g1-s4-w8-k64-mma"},
      {16, 258, 6000, false, false, "skinny_mma:16x64x64-g1-s4-w8-k32-mma"},
      {841, 1, 5130, true, false, "skinny_mma:64x16x64-g1-s4-w8-k16-tmma"},
      {300, 13, 7000, false, true, "skinny_mma:64x16x64-g1-s4-w8-k8-tmma"},
  };
  int variant = 0;
  for (const Row& r : rows) {
    Case c{r.m, r.n, r.k, 1 + variant % 2};
    c.a = c.b = variant % 2 ? Dtype::bf16 : Dtype::f16;
    c.d = variant % 3 ? c.a : Dtype::f32;
    c.ta = r.ta;
    c.tb = r.tb;
    c.tma_aligned = true;
    c.epi.alpha = 1.25f;
    c.epi.bias_mode = BiasMode(variant % 3);
    c.config = r.config;
    run_case(*ctx, c);
    ++variant;
  }
}

TEST_CASE("cuda: skinny_mma split-K gives the same bits on every run") {
  auto ctx = sm90_context("skinny_mma determinism");
  if (!ctx) return;
  HostMatrix A(27, 5000, Dtype::bf16, Layout::row_major, 3), B(5000, 333, Dtype::bf16, Layout::row_major, 1),
      D(27, 333, Dtype::f32);
  A.randomize();
  B.randomize();
  // A cluster split (8) and a deep one (32: partial sums in the workspace, summed by the last slice).
  check_same_bits(*ctx, A, B, D, {"skinny_mma:32x64x64-g1-s4-w8-k8-mma", "skinny_mma:32x64x64-g1-s4-w8-k32-mma"});
}
