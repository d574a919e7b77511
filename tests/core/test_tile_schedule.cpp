#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/tile_schedule.h"

namespace {

// Distinct A row-panels' and B column-panels' K-blocks loaded to compute the first `count`
// tiles of a `tiles_m x tiles_n` grid whose K dimension has `k_blocks` blocks.
int blocks_loaded(int tiles_m, int tiles_n, int k_blocks, int group_m, int count) {
  std::set<int> rows, cols;
  for (int pid = 0; pid < count; ++pid) {
    OgTile t = og_grouped_tile(pid, tiles_m, tiles_n, group_m);
    rows.insert(t.pid_m);
    cols.insert(t.pid_n);
  }
  return int(rows.size() + cols.size()) * k_blocks;
}

}  // namespace

TEST_CASE("grouped ordering reproduces the tutorial's 9x9-block example") {
  // Row-major (GROUP_M = 1): the first 9 tiles are one row: 1 A panel + 9 B panels of 9 blocks.
  CHECK(blocks_loaded(9, 9, 9, 1, 9) == 90);
  // GROUP_M = 3: the first 9 tiles form a 3x3 square: 3 A panels + 3 B panels of 9 blocks.
  CHECK(blocks_loaded(9, 9, 9, 3, 9) == 54);
  // And the order itself: down a column of the group first.
  OgTile t0 = og_grouped_tile(0, 9, 9, 3), t1 = og_grouped_tile(1, 9, 9, 3), t3 = og_grouped_tile(3, 9, 9, 3);
  CHECK(t0.pid_m == 0);
  CHECK(t0.pid_n == 0);
  CHECK(t1.pid_m == 1);
  CHECK(t1.pid_n == 0);
  CHECK(t3.pid_m == 0);
  CHECK(t3.pid_n == 1);
}

TEST_CASE("grouped ordering is a bijection over tiles for random shapes and group sizes") {
  std::uniform_int_distribution<int> dim(1, 70), group(1, 12);
  for (int trial = 0; trial < 400; ++trial) {
    const int tm = dim(omnigemm::test::rng()), tn = dim(omnigemm::test::rng()), g = group(omnigemm::test::rng());
    std::vector<int> hits(size_t(tm * tn), 0);
    for (int pid = 0; pid < tm * tn; ++pid) {
      OgTile t = og_grouped_tile(pid, tm, tn, g);
      REQUIRE(t.pid_m >= 0);
      REQUIRE(t.pid_m < tm);
      REQUIRE(t.pid_n >= 0);
      REQUIRE(t.pid_n < tn);
      ++hits[size_t(t.pid_m * tn + t.pid_n)];
    }
    for (int h : hits) REQUIRE_MESSAGE(h == 1, "tiles " << tm << "x" << tn << " group " << g);
  }
}

TEST_CASE("the last group may be short and stays inside the grid") {
  // 10 tile rows, GROUP_M 4: groups of 4, 4, 2 rows.
  OgTile last = og_grouped_tile(10 * 5 - 1, 10, 5, 4);
  CHECK(last.pid_m == 9);
  CHECK(last.pid_n == 4);
  OgTile first_short = og_grouped_tile(8 * 5, 10, 5, 4);
  CHECK(first_short.pid_m == 8);
  CHECK(first_short.pid_n == 0);
  OgTile second_short = og_grouped_tile(8 * 5 + 1, 10, 5, 4);
  CHECK(second_short.pid_m == 9);
  CHECK(second_short.pid_n == 0);
}

TEST_CASE("work items cover batch x split-K x tiles exactly once") {
  std::uniform_int_distribution<int> dim(1, 20), small(1, 5);
  for (int trial = 0; trial < 100; ++trial) {
    const int tm = dim(omnigemm::test::rng()), tn = dim(omnigemm::test::rng());
    const int split = small(omnigemm::test::rng()), batch = small(omnigemm::test::rng()), g = small(omnigemm::test::rng());
    const int total = og_work_count(tm, tn, split, batch);
    REQUIRE(total == tm * tn * split * batch);
    std::vector<int> hits(size_t(total), 0);
    // Walk as a persistent grid of 7 programs would.
    const int programs = og_persistent_grid(total, 7);
    for (int prog = 0; prog < programs; ++prog)
      for (int w = og_persistent_first(prog); w < total; w = og_persistent_next(w, programs)) {
        OgWork item = og_work_item(w, tm, tn, g, split);
        REQUIRE(item.batch < batch);
        REQUIRE(item.k_slice < split);
        ++hits[size_t(((item.batch * split + item.k_slice) * tm + item.pid_m) * tn + item.pid_n)];
      }
    for (int h : hits) REQUIRE(h == 1);
  }
}

TEST_CASE("split-K ranges partition the K tiles evenly") {
  for (int k_tiles = 1; k_tiles < 60; ++k_tiles)
    for (int split = 1; split <= 12; ++split) {
      int expect_begin = 0;
      for (int s = 0; s < split; ++s) {
        int b = -1, e = -1;
        og_split_k_range(k_tiles, split, s, b, e);
        REQUIRE(b == expect_begin);
        REQUIRE(e >= b);
        REQUIRE(e - b >= k_tiles / split);
        REQUIRE(e - b <= k_tiles / split + 1);
        expect_begin = e;
      }
      REQUIRE(expect_begin == k_tiles);
    }
}
