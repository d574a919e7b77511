// tile_schedule.h: the grouped order, work items of plain, persistent and clustered launches (each
// tile, slice and batch exactly once; the Hopper kernel's order kept) and the even split of ranges.
#include <doctest/doctest.h>

#include <algorithm>
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

TEST_CASE("work items cover every tile, slice and batch exactly once for random shapes, groups and grids") {
  std::uniform_int_distribution<int> dim(1, 40), small(1, 6), programs(1, 300);
  for (int trial = 0; trial < 300; ++trial) {
    const int tm = dim(omnigemm::test::rng()), tn = dim(omnigemm::test::rng()), g = small(omnigemm::test::rng()) * 2 - 1;
    const int split = small(omnigemm::test::rng()), batch = small(omnigemm::test::rng());
    const int total = og_work_count(tm, tn, split, batch);
    const int grid = og_persistent_grid(total, programs(omnigemm::test::rng()));
    REQUIRE(grid >= 1);
    REQUIRE(grid <= total);
    std::vector<int> hits(size_t(total), 0);
    for (int prog = 0; prog < grid; ++prog)
      for (int w = og_persistent_first(prog); w < total; w = og_persistent_next(w, grid)) {
        const OgWork item = og_work_item(w, tm, tn, g, split);
        REQUIRE(item.pid_m >= 0);
        REQUIRE(item.pid_m < tm);
        REQUIRE(item.pid_n >= 0);
        REQUIRE(item.pid_n < tn);
        REQUIRE(item.k_slice >= 0);
        REQUIRE(item.k_slice < split);
        REQUIRE(item.batch >= 0);
        REQUIRE(item.batch < batch);
        // Batch outermost, then the slice: the item's position says which.
        REQUIRE(item.batch == w / (tm * tn * split));
        REQUIRE(item.k_slice == w / (tm * tn) % split);
        ++hits[size_t(((item.batch * split + item.k_slice) * tm + item.pid_m) * tn + item.pid_n)];
      }
    for (int h : hits) REQUIRE_MESSAGE(h == 1, tm << "x" << tn << " group " << g << " split " << split << " batch " << batch);
  }
}

TEST_CASE("one work item per program of a batch (the non-persistent kernels) is the grouped order") {
  // The CUDA generic and sm80 kernels and the GLSL shaders take og_work_item(program, ..., 1)
  // and the batch from another grid dimension.
  for (int tm : {1, 5, 16})
    for (int tn : {1, 7, 16})
      for (int g : {1, 3, 8})
        for (int pid = 0; pid < tm * tn; ++pid) {
          const OgWork w = og_work_item(pid, tm, tn, g, 1);
          const OgTile t = og_grouped_tile(pid, tm, tn, g);
          REQUIRE(w.pid_m == t.pid_m);
          REQUIRE(w.pid_n == t.pid_n);
          REQUIRE(w.k_slice == 0);
          REQUIRE(w.batch == 0);
        }
}

namespace {

// The Hopper kernel's work items before the cluster grouping moved into the header: tile groups
// of cluster_m rows in a grid of ceil(M / cluster_m) group rows with GROUP_M halved (rounded up)
// for clusters of two, the program's tile row pid_m * cluster_m + rank; a split-K pair (cluster
// of two slices) is one work item whose slice is the rank.
OgWork hopper_item_before(int w, int rank, int num_pid_m, int num_pid_n, int group_m, int split_k, int cluster_m,
                          bool split_pairs) {
  const int pid_groups_m = (num_pid_m + cluster_m - 1) / cluster_m;
  const int group = cluster_m > 1 ? (group_m + 1) / 2 : group_m;
  OgWork item = og_work_item(w, pid_groups_m, num_pid_n, group, split_pairs ? 1 : split_k);
  if (split_pairs) item.k_slice = rank;
  item.pid_m = item.pid_m * cluster_m + (cluster_m > 1 ? rank : 0);
  return item;
}

}  // namespace

TEST_CASE("cluster grouping keeps the Hopper kernel's order (multicast pairs, split-K pairs, no cluster)") {
  std::uniform_int_distribution<int> dim(1, 30), small(1, 5), group(1, 16);
  for (int trial = 0; trial < 300; ++trial) {
    const int tm = dim(omnigemm::test::rng()), tn = dim(omnigemm::test::rng()), g = group(omnigemm::test::rng());
    const int batch = small(omnigemm::test::rng()), split = small(omnigemm::test::rng());
    struct Kind { int cluster_m, cluster_k, split_k; bool pairs; };
    for (const Kind k : {Kind{1, 1, split, false}, Kind{2, 1, split, false}, Kind{1, 2, 2, true}}) {
      const OgClusterGrid grid = og_cluster_grid(tm, tn, g, k.split_k, k.cluster_m, k.cluster_k);
      const int total = og_cluster_work_count(grid, batch);
      const int before = og_work_count((tm + k.cluster_m - 1) / k.cluster_m, tn, k.pairs ? 1 : k.split_k, batch);
      REQUIRE(total == before);
      for (int w = 0; w < total; ++w)
        for (int rank = 0; rank < k.cluster_m * k.cluster_k; ++rank) {
          const OgWork now = og_cluster_work_item(grid, w, rank % k.cluster_m, rank / k.cluster_m);
          const OgWork old = hopper_item_before(w, rank, tm, tn, g, k.split_k, k.cluster_m, k.pairs);
          REQUIRE(now.pid_m == old.pid_m);
          REQUIRE(now.pid_n == old.pid_n);
          REQUIRE(now.k_slice == old.k_slice);
          REQUIRE(now.batch == old.batch);
        }
    }
  }
}

TEST_CASE("cluster work items cover every tile and slice exactly once; a cluster shares columns or a tile") {
  std::uniform_int_distribution<int> dim(1, 25), small(1, 4), group(1, 12), clusters(1, 40);
  for (int trial = 0; trial < 300; ++trial) {
    const int tm = dim(omnigemm::test::rng()), tn = dim(omnigemm::test::rng()), g = group(omnigemm::test::rng());
    const int batch = small(omnigemm::test::rng());
    const int cm = small(omnigemm::test::rng()), ck = small(omnigemm::test::rng()) % 2 + 1;
    const int split = ck * small(omnigemm::test::rng());  // a multiple of the cluster's slices
    const OgClusterGrid cgrid = og_cluster_grid(tm, tn, g, split, cm, ck);
    const int total = og_cluster_work_count(cgrid, batch);
    const int grid = og_persistent_grid(total, clusters(omnigemm::test::rng()));
    CAPTURE(tm); CAPTURE(tn); CAPTURE(g); CAPTURE(batch); CAPTURE(cm); CAPTURE(ck); CAPTURE(split);
    std::vector<int> hits(size_t(batch * split * tm * tn), 0);
    int beyond = 0;
    for (int cluster = 0; cluster < grid; ++cluster)
      for (int w = og_persistent_first(cluster); w < total; w = og_persistent_next(w, grid)) {
        const OgWork first = og_cluster_work_item(cgrid, w, 0, 0);
        for (int rank = 0; rank < cm * ck; ++rank) {
          const OgWork item = og_cluster_work_item(cgrid, w, rank % cm, rank / cm);
          // The cluster's programs: cm adjacent tile rows of the same column, batch and slice
          // group; ck adjacent slices of each tile.
          REQUIRE(item.pid_n == first.pid_n);
          REQUIRE(item.batch == first.batch);
          REQUIRE(item.pid_m == first.pid_m + rank % cm);
          REQUIRE(item.k_slice == first.k_slice + rank / cm);
          REQUIRE(first.pid_m % cm == 0);
          REQUIRE(first.k_slice % ck == 0);
          REQUIRE(item.k_slice < split);
          REQUIRE(item.pid_n < tn);
          REQUIRE(item.batch < batch);
          if (item.pid_m >= tm) {  // the short last group's extra programs: inside the padded grid only
            REQUIRE(item.pid_m < (tm + cm - 1) / cm * cm);
            ++beyond;
            continue;
          }
          ++hits[size_t(((item.batch * split + item.k_slice) * tm + item.pid_m) * tn + item.pid_n)];
        }
      }
    for (int h : hits) REQUIRE(h == 1);
    REQUIRE(beyond == ((tm + cm - 1) / cm * cm - tm) * tn * split * batch);
  }
}

TEST_CASE("split ranges partition any count: large counts, more parts than items, the CPU's shares") {
  std::uniform_int_distribution<int> count(0, 1 << 30), parts(1, 512);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = trial < 50 ? trial : count(omnigemm::test::rng()), p = parts(omnigemm::test::rng());
    int expect_begin = 0, largest = 0, smallest = n;
    for (int s = 0; s < p; ++s) {
      int b = -1, e = -1;
      og_split_k_range(n, p, s, b, e);
      REQUIRE(b == expect_begin);
      REQUIRE(e >= b);
      largest = std::max(largest, e - b);
      smallest = std::min(smallest, e - b);
      expect_begin = e;
    }
    REQUIRE(expect_begin == n);
    REQUIRE(largest - smallest <= 1);
    if (n < p) REQUIRE(smallest == 0);  // some parts get nothing only when there is too little
    else REQUIRE(smallest >= 1);
  }
  // og_persistent_grid never launches more programs than there are items.
  CHECK(og_persistent_grid(3, 132) == 3);
  CHECK(og_persistent_grid(1000, 132) == 132);
}
