/* The one tile scheduler of OmniGEMM.
 *
 * This header compiles as C++ (host), CUDA, HIP and GLSL (via GL_GOOGLE_include_directive), so
 * every backend walks output tiles in exactly the same order; it keeps to the common subset
 * that omnigemm/lang.h describes.
 *
 * Work decomposition of one launch (all indices zero-based):
 *   work_id in [0, batch_count * split_k * num_pid_m * num_pid_n)
 *   batch  = outermost, then the split-K slice, then the output tile in GROUPED order, so that
 *   consecutive programs share A row-panels and B column-panels in L2.
 * Who uses what:
 *   - one program per work item (CUDA generic and sm80 kernels, the GLSL shaders): og_work_item
 *     of the program's index within a batch (the batch comes from another grid dimension);
 *   - persistent programs (the Hopper kernel): og_persistent_first / og_persistent_next over
 *     og_work_count items, og_persistent_grid programs; programs grouped in clusters take
 *     og_cluster_work_item / og_cluster_work_count of an og_cluster_grid instead;
 *   - K slices: og_split_k_range; the same even split hands ranges of panels and batches to
 *     the CPU backend's threads, whose thread grids map through og_work_item as well.
 * Callers keep every count below 2^31 (the engine validates this before launching).
 */
#ifndef OMNIGEMM_TILE_SCHEDULE_H
#define OMNIGEMM_TILE_SCHEDULE_H

#include "lang.h"

struct OgTile {
  int pid_m; /* tile row:    rows    [pid_m * BLOCK_M, +BLOCK_M) of C */
  int pid_n; /* tile column: columns [pid_n * BLOCK_N, +BLOCK_N) of C */
};

struct OgWork {
  int pid_m;
  int pid_n;
  int k_slice; /* split-K slice in [0, split_k) */
  int batch;
};

OG_FUNC int og_cdiv(int a, int b) { return (a + b - 1) / b; }
OG_FUNC int og_imin(int a, int b) { return a < b ? a : b; }

/* Grouped ("super-grouped") ordering: GROUP_M tile rows are walked column by column before
 * moving on, so a window of GROUP_M x num_pid_n tiles reuses GROUP_M A-panels; the last group
 * may be short (group_size_m < GROUP_M). group_m == 1 is plain row-major order. */
OG_FUNC OgTile og_grouped_tile(int pid, int num_pid_m, int num_pid_n, int group_m) {
  int num_pid_in_group = group_m * num_pid_n;
  int group_id = pid / num_pid_in_group;
  int first_pid_m = group_id * group_m;
  int group_size_m = og_imin(num_pid_m - first_pid_m, group_m);
  int in_group = pid - group_id * num_pid_in_group; /* pid % num_pid_in_group */
  OgTile t;
  t.pid_m = first_pid_m + (in_group % group_size_m);
  t.pid_n = in_group / group_size_m;
  return t;
}

/* Number of work items of one launch (see the header comment). */
OG_FUNC int og_work_count(int num_pid_m, int num_pid_n, int split_k, int batch_count) {
  return num_pid_m * num_pid_n * split_k * batch_count;
}

/* Work item `work_id` of a launch: its batch, split-K slice and tile (see the header comment). */
OG_FUNC OgWork og_work_item(int work_id, int num_pid_m, int num_pid_n, int group_m, int split_k) {
  int tiles = num_pid_m * num_pid_n;
  int per_batch = tiles * split_k;
  OgWork w;
  w.batch = work_id / per_batch;
  int rest = work_id - w.batch * per_batch;
  w.k_slice = split_k > 1 ? rest / tiles : 0; /* no division where split_k is a constant 1 */
  OgTile t = og_grouped_tile(rest - w.k_slice * tiles, num_pid_m, num_pid_n, group_m);
  w.pid_m = t.pid_m;
  w.pid_n = t.pid_n;
  return w;
}

/* The K-tiles [begin, end) of slice `k_slice` when k_tiles BLOCK_K-steps are split split_k
 * ways as evenly as possible (slice sizes differ by at most one, the larger ones first; a slice
 * may be empty only when split_k > k_tiles). Any count splits this way: the CPU backend hands
 * its threads panels and batches with it. */
OG_FUNC void og_split_k_range(int k_tiles, int split_k, int k_slice, OG_OUT(int) begin,
                              OG_OUT(int) end) {
  int base = k_tiles / split_k;
  int extra = k_tiles - base * split_k; /* the first `extra` slices get one more */
  begin = k_slice * base + og_imin(k_slice, extra);
  end = begin + base + (k_slice < extra ? 1 : 0);
}

/* Persistent loop: program `program_id` of `num_programs` handles work items
 *   for (w = og_persistent_first(program_id); w < total; w = og_persistent_next(w, num_programs))
 * i.e. a grid-stride walk, which keeps concurrently running programs on neighbouring (grouped)
 * tiles. */
OG_FUNC int og_persistent_first(int program_id) { return program_id; }
OG_FUNC int og_persistent_next(int work_id, int num_programs) { return work_id + num_programs; }

/* Grid size for a persistent launch: no more programs than work items. */
OG_FUNC int og_persistent_grid(int total_work, int max_resident_programs) {
  return og_imin(total_work, max_resident_programs);
}

/* Clusters. A cluster of cluster_m * cluster_k programs takes one work item at a time: a group
 * of cluster_m vertically adjacent tiles (same columns, so they can share B), each tile's K
 * range in cluster_k adjacent slices (a split-K pair: cluster_k = 2). The groups are walked in
 * the grouped order of a grid of ceil(num_pid_m / cluster_m) x num_pid_n groups with
 * ceil(group_m / cluster_m) group rows per GROUP_M window, which covers about the same tile rows
 * as an unclustered launch's windows. og_cluster_grid describes that grid once per launch (so
 * a persistent program does not recompute it per item); cluster_m = cluster_k = 1 makes
 * og_cluster_work_item og_work_item. */
struct OgClusterGrid {
  int groups_m;  /* tile groups per column: ceil(num_pid_m / cluster_m) */
  int num_pid_n;
  int group_m;   /* group rows per grouped window: ceil(group_m / cluster_m) */
  int split_k;   /* slice groups per tile: split_k / cluster_k */
  int cluster_m;
  int cluster_k;
};

/* split_k must be a multiple of cluster_k. */
OG_FUNC OgClusterGrid og_cluster_grid(int num_pid_m, int num_pid_n, int group_m, int split_k, int cluster_m,
                                      int cluster_k) {
  OgClusterGrid g;
  g.groups_m = og_cdiv(num_pid_m, cluster_m);
  g.num_pid_n = num_pid_n;
  g.group_m = og_cdiv(group_m, cluster_m);
  g.split_k = split_k / cluster_k;
  g.cluster_m = cluster_m;
  g.cluster_k = cluster_k;
  return g;
}

/* Work items (one per cluster at a time) of a launch of batch_count batches. */
OG_FUNC int og_cluster_work_count(OgClusterGrid g, int batch_count) {
  return og_work_count(g.groups_m, g.num_pid_n, g.split_k, batch_count);
}

/* The cluster's program (rank_m, rank_k), rank_m < cluster_m, rank_k < cluster_k (the caller
 * maps its hardware cluster rank to these; apart, they need no division where the cluster
 * shape is a constant), gets tile row pid_m * cluster_m + rank_m and slice k_slice * cluster_k +
 * rank_k of split_k. Where num_pid_m is not a multiple of cluster_m, the last group's extra
 * programs get tile rows >= num_pid_m: they must store nothing. */
OG_FUNC OgWork og_cluster_work_item(OgClusterGrid g, int work_id, int rank_m, int rank_k) {
  OgWork w = og_work_item(work_id, g.groups_m, g.num_pid_n, g.group_m, g.split_k);
  w.pid_m = w.pid_m * g.cluster_m + rank_m;
  w.k_slice = w.k_slice * g.cluster_k + rank_k;
  return w;
}

#endif /* OMNIGEMM_TILE_SCHEDULE_H */
