// The exact overlap decision for D's batches (engine/src/view_overlap.hpp) against brute force:
// random small views of every kind (both layouts, padded leading dimensions, strides that are not
// a view's, interleaved and overlapping batch strides), random large views against an
// independent per-batch-distance check, and the public API's answer for the interleaved heads
// layout and for real overlaps.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm.h"
#include "view_overlap.hpp"

using namespace omnigemm::detail;
using omnigemm::test::rng;

namespace {

// Do two different batches share an element? Every offset of every batch, compared.
bool brute_overlap(const StridedView& v, int64_t batches) {
  std::vector<std::set<int64_t>> sets;
  sets.resize(size_t(batches));
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < v.rows; ++i)
      for (int64_t j = 0; j < v.cols; ++j) sets[size_t(b)].insert(b * v.batch_stride + i * v.stride_row + j * v.stride_col);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = b + 1; c < batches; ++c)
      for (int64_t o : sets[size_t(c)])
        if (sets[size_t(b)].count(o)) return true;
  return false;
}

// Independent exact check for views with a unit inner stride and an outer stride ld >= the inner
// extent: for each batch distance x, the nearest row distances to x * bs / ld.
bool per_distance_overlap(int64_t inner, int64_t outer, int64_t ld, int64_t bs, int64_t batches) {
  for (int64_t x = 1; x < batches; ++x) {
    const int64_t r = x * bs;
    for (int64_t y : {r / ld, r / ld + 1}) {
      if (y > outer - 1) continue;
      const int64_t dj = r - y * ld;
      if (dj <= inner - 1 && dj >= -(inner - 1)) return true;
    }
  }
  return false;
}

int64_t draw(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng()); }

}  // namespace

TEST_CASE("view overlap: the smallest multiple in a residue range matches brute force") {
  for (int t = 0; t < 20000; ++t) {
    const int64_t m = draw(1, 60), a = draw(0, 130);
    const int64_t lo = draw(0, m - 1), hi = draw(lo, m - 1);
    int64_t expected = -1;
    for (int64_t x = 0; x <= 4 * m && expected < 0; ++x)  // residues repeat with period m
      if ((a * x) % m >= lo && (a * x) % m <= hi) expected = x;
    CAPTURE(a);
    CAPTURE(m);
    CAPTURE(lo);
    CAPTURE(hi);
    REQUIRE(min_multiple_in_range(a, m, lo, hi) == expected);
  }
  // Large operands: the answer is checked by its definition and against its predecessors' absence
  // in a window (the full brute force would be too long).
  const int64_t a = 1000000007, m = (int64_t(1) << 40) + 15;
  const int64_t x = min_multiple_in_range(a, m, 5, 9);
  REQUIRE(x > 0);
  const __int128 r = (__int128(a) * x) % m;
  CHECK((r >= 5 && r <= 9));
}

TEST_CASE("view overlap: random small views agree with brute force, in both directions") {
  int overlapping = 0, disjoint = 0, interleaved = 0;
  for (int t = 0; t < 30000; ++t) {
    StridedView v;
    v.rows = draw(1, 6);
    v.cols = draw(1, 6);
    const int kind = int(draw(0, 3));
    if (kind <= 1) {  // a matrix view: row-major (kind 0) or column-major, ld padded or not
      const int64_t inner = kind == 0 ? v.cols : v.rows, outer_extent = kind == 0 ? v.rows : v.cols;
      const int64_t ld = inner + (draw(0, 2) ? draw(0, 12) : 0);
      v.stride_row = kind == 0 ? ld : 1;
      v.stride_col = kind == 0 ? 1 : ld;
      (void)outer_extent;
    } else {  // any strides, unit or not (the enumeration path)
      v.stride_row = draw(0, 9);
      v.stride_col = draw(0, 9);
    }
    const int64_t extent = (v.rows - 1) * v.stride_row + (v.cols - 1) * v.stride_col + 1;
    v.batch_stride = draw(0, 2 * extent + 2);
    const int64_t batches = draw(2, 7);
    const bool expected = brute_overlap(v, batches);
    CAPTURE(v.rows);
    CAPTURE(v.cols);
    CAPTURE(v.stride_row);
    CAPTURE(v.stride_col);
    CAPTURE(v.batch_stride);
    CAPTURE(batches);
    REQUIRE(batches_overlap(v, batches) == expected);
    overlapping += expected;
    disjoint += !expected;
    interleaved += !expected && v.batch_stride < extent;
  }
  // Both answers, and batches that interleave without sharing, were drawn often.
  CHECK(overlapping > 3000);
  CHECK(disjoint > 3000);
  CHECK(interleaved > 500);
}

TEST_CASE("view overlap: random large views agree with the per-distance check") {
  int interleaved = 0, overlapping = 0;
  for (int t = 0; t < 4000; ++t) {
    const bool row_major = draw(0, 1);
    const int64_t rows = draw(1, 5000), cols = draw(1, 5000), batches = draw(0, 1) ? draw(2, 3000) : draw(2, 10);
    const int64_t inner = row_major ? cols : rows, outer = row_major ? rows : cols;
    const int64_t ld = inner * (draw(0, 1) ? draw(1, 8) : 1) + draw(0, 40);
    // Batch strides near the ones that interleave (inner, inner + a little) and anything below a matrix.
    const int64_t bs = draw(0, 2) ? inner + draw(-2, 2) : draw(0, outer * ld);
    StridedView v{rows, cols, row_major ? ld : 1, row_major ? 1 : ld, std::max<int64_t>(bs, 0)};
    const bool expected = per_distance_overlap(inner, outer, ld, v.batch_stride, batches);
    CAPTURE(rows);
    CAPTURE(cols);
    CAPTURE(ld);
    CAPTURE(v.batch_stride);
    CAPTURE(batches);
    REQUIRE(batches_overlap(v, batches) == expected);
    interleaved += !expected && v.batch_stride < outer * ld;
    overlapping += expected;
  }
  CHECK(interleaved > 200);
  CHECK(overlapping > 200);
  // 2^31 - 1 batches of one row each, 3 elements apart, 2 wide: they share elements; 3 wide at a
  // stride of 3 they only touch. Decided in logarithmic time.
  CHECK(batches_overlap(StridedView{1, 4, 4, 1, 3}, (int64_t(1) << 31) - 1));
  CHECK_FALSE(batches_overlap(StridedView{1, 3, 3, 1, 3}, (int64_t(1) << 31) - 1));
  // Heads side by side in one output: 32 heads of 128 columns in rows of 4096.
  CHECK_FALSE(batches_overlap(StridedView{100000, 128, 4096, 1, 128}, 32));
  CHECK(batches_overlap(StridedView{100000, 128, 4096, 1, 128}, 33));  // the 33rd head wraps into row 1
}

TEST_CASE("view overlap: the API takes interleaved heads and refuses outputs whose batches share elements") {
  og_context* ctx = nullptr;
  og_context_options o;
  og_context_options_init(&o);
  o.backend = OG_BACKEND_CPU;
  REQUIRE(og_context_create(&o, &ctx) == OG_OK);
  std::vector<float> a(291 * 8, 0.5f), b(8 * 251, 0.25f), d(291 * 1006 + 16, 0.0f);
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.batch_count = 4;
  g.a = og_matrix_make(291, 8, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a.data());
  g.b = og_matrix_make(8, 251, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b.data());
  g.d = og_matrix_make(291, 251, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d.data());
  g.d.ld = 1006;
  g.d.batch_stride = 251;
  og_explanation ex;
  CHECK(og_gemm_explain(ctx, &g, &ex) == OG_OK);
  g.d.ld = 1004;  // four heads exactly fill a row
  CHECK(og_gemm_explain(ctx, &g, &ex) == OG_OK);
  g.d.ld = 1003;  // the last head's last column is the next row's first element
  CHECK(og_gemm_explain(ctx, &g, &ex) == OG_ERROR_INVALID_ARGUMENT);
  const std::string msg = og_last_error_message();
  CHECK(msg.find("overlap") != std::string::npos);
  CHECK(msg.find("share an output element") != std::string::npos);
  g.d.ld = 1006;
  g.d.batch_stride = 250;  // heads one column apart from overlapping
  CHECK(og_gemm_explain(ctx, &g, &ex) == OG_ERROR_INVALID_ARGUMENT);
  og_context_destroy(ctx);
}
