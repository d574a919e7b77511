// Blackwell (sm_100a) GEMM on the tcgen05 tensor cores: a persistent, warp-specialised kernel
// whose accumulators live in tensor memory. Six warps per CTA:
//   warp 0     producer: for each work item and K-tile, waits for a free stage of the shared-
//              memory ring and issues the TMA loads of the A and B tiles (and, block-scaled, of
//              their packed scale tiles) into it;
//   warp 1     MMA issuer: allocates tensor memory; per K-tile copies the stage's scale tiles into
//              tensor memory (tcgen05.cp), issues four tcgen05.mma and commits their completion
//              to the stage's empty barrier; after a tile's last K-tile commits to the
//              accumulator's full barrier;
//   warps 2-5  epilogue: wait for a finished accumulator, read it with tcgen05.ld, release it to
//              the MMA warp and store D (tile_store.cuh).
// Two accumulator buffers where tensor memory holds them, so one tile's epilogue overlaps the
// next tile's MMAs. CTA_GROUP 2: two CTAs of a cluster run one 256-row tile (cta_group::2); each
// loads its 128 rows of A and half of B's columns, the first CTA issues the MMAs for both and its
// barriers count both CTAs' loads. Work items are output tiles in the shared scheduler's grouped
// order (omnigemm/tile_schedule.h), one cluster per item. Index arithmetic: layout.h.
#pragma once
#include <cuda.h>

#include "../epilogue.cuh"
#include "layout.h"
#include "omnigemm/tile_schedule.h"
#include "tcgen05_ops.cuh"
#include "tile_store.cuh"

namespace omnigemm::detail::sm100 {

struct KernelArgs {
  int m, n, k, batch;
  int num_pid_m, num_pid_n, group_m;
  int stages;
  uint32_t idesc;  // formats and shape; the scale-factor ids are set per MMA
  bool tma_store;  // the plain epilogue through map_d (else the general one, element stores)
  cuda::EpilogueArgs ep;
};

template <Kind KIND, int BLOCK_N, int CTA_GROUP, bool B_MN>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_tcgen05(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_sfa, const __grid_constant__ CUtensorMap map_sfb,
                 const __grid_constant__ CUtensorMap map_d, const __grid_constant__ KernelArgs p) {
#ifdef OG_SM100A_DEVICE
  constexpr bool kScaled = block_scaled(KIND);
  static_assert(!B_MN || KIND == Kind::f16, "MN-major B is for 16-bit inputs");
  const Geometry g{KIND, BLOCK_N, CTA_GROUP, p.stages, B_MN};
  const int acc_buffers = acc_stages(g);
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // TMA's 128-byte swizzle and the MMA's descriptors agree only on 1024-byte aligned tiles.
  const uint32_t base = smem_u32(smem_raw) + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
  const uint32_t bars = base + barrier_offset(g);
  auto full = [&](int s) { return bars + 8u * uint32_t(s); };
  auto empty = [&](int s) { return bars + 8u * uint32_t(p.stages + s); };
  auto tmem_full = [&](int a) { return bars + 8u * uint32_t(2 * p.stages + a); };
  auto tmem_empty = [&](int a) { return bars + 8u * uint32_t(2 * p.stages + acc_buffers + a); };
  const uint32_t tmem_slot = bars + 8u * barrier_count(g);

  const int warp = __shfl_sync(0xffffffffu, int(threadIdx.x) / 32, 0), lane = int(threadIdx.x) % 32;
  const int rank = CTA_GROUP > 1 ? int(cluster_rank()) : 0;
  const bool leader = rank == 0;
  const int cluster = int(blockIdx.x) / CTA_GROUP, clusters = int(gridDim.x) / CTA_GROUP;
  const int total_work = og_work_count(p.num_pid_m, p.num_pid_n, 1, p.batch);
  const int tiles_k = k_tiles(KIND, p.k);

  if (threadIdx.x == 0) {
    for (int s = 0; s < p.stages; ++s) {
      mbar_init(full(s), 1);   // the leader producer's expect_tx (the loads of both CTAs complete on it)
      mbar_init(empty(s), 1);  // the MMA warp's commit (multicast to both CTAs of a pair)
    }
    for (int a = 0; a < acc_buffers; ++a) {
      mbar_init(tmem_full(a), 1);                            // the MMA warp's commit
      mbar_init(tmem_empty(a), kEpilogueWarps * CTA_GROUP);  // every epilogue warp of the pair
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    prefetch_tensormap(&map_a);
    prefetch_tensormap(&map_b);
    if (kScaled) {
      prefetch_tensormap(&map_sfa);
      prefetch_tensormap(&map_sfb);
    }
    if (p.tma_store) prefetch_tensormap(&map_d);
  }
  const uint32_t tmem_cols = uint32_t(tmem_columns(g));
  if (warp == 1) tmem_alloc<CTA_GROUP>(tmem_slot, tmem_cols);
  tcgen05_before_sync();
  if constexpr (CTA_GROUP > 1)
    cluster_sync();  // the peer's barriers exist before any load or commit reaches them
  else
    __syncthreads();
  tcgen05_after_sync();
  uint32_t tmem_base;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(tmem_base) : "r"(tmem_slot) : "memory");

  if (warp == 0) {
    // ---- producer ------------------------------------------------------------------------------
    if (lane == 0) {
      int stage = 0;
      unsigned phase = 0;
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
        const OgWork item = og_work_item(w, p.num_pid_m, p.num_pid_n, p.group_m, 1);
        const int m0 = item.pid_m * block_m(g), n0 = item.pid_n * BLOCK_N;
        const int a_row = a_row0(g, m0, rank), b_row = b_row0(g, n0, rank);
        for (int kt = 0; kt < tiles_k; ++kt) {
          mbar_wait(empty(stage), phase ^ 1u);  // a fresh barrier counts as released
          if (leader) mbar_expect_tx(full(stage), stage_tx_bytes(g) * CTA_GROUP);
          const uint32_t bar = CTA_GROUP > 1 ? map_to_rank(full(stage), 0) : full(stage);
          const int kc = k_coordinate(KIND, kt);
          tma_load_3d<CTA_GROUP>(base + a_offset(g, stage), &map_a, bar, kc, a_row, item.batch);
          if constexpr (B_MN) {
            for (int j = 0; j < b_mn_boxes(g); ++j)  // {N, K rows}: 64 columns of the stage's 64 K rows each
              tma_load_3d<CTA_GROUP>(base + b_box_offset(g, stage, j), &map_b, bar, b_row + kMnBoxColumns * j, kc,
                                     item.batch);
          } else {
            tma_load_3d<CTA_GROUP>(base + b_offset(g, stage), &map_b, bar, kc, b_row, item.batch);
          }
          if constexpr (kScaled) {
            const int tc = sf_tile_coordinate(KIND, kt);
            tma_load_4d<CTA_GROUP>(base + sfa_tile_offset(g, stage, 0), &map_sfa, bar, 0, tc, sf_group_coordinate(a_row),
                                   item.batch);
            tma_load_4d<CTA_GROUP>(base + sfb_tile_offset(g, stage, 0, 0), &map_sfb, bar, 0, tc, sf_group_coordinate(n0),
                                   item.batch);
          }
          if (++stage == p.stages) stage = 0, phase ^= 1u;
        }
      }
    }
  } else if (warp == 1) {
    // ---- MMA issuer (the pair's first CTA) ----------------------------------------------------
    if (leader && lane == 0) {
      int stage = 0, acc = 0;
      unsigned phase = 0, acc_phase = 0;
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
        mbar_wait(tmem_empty(acc), acc_phase ^ 1u);  // the epilogue has read this buffer's last tile
        tcgen05_after_sync();
        const uint32_t d = tmem_base + uint32_t(acc_column(g, acc));
        for (int kt = 0; kt < tiles_k; ++kt) {
          mbar_wait(full(stage), phase);
          tcgen05_after_sync();
          if constexpr (kScaled) {
            // The stage's scale tiles into tensor memory; tcgen05 operations of one thread run in
            // order, so the previous stage's MMAs have read the columns these overwrite.
            for (int t = 0; t < sf_tiles_in_stage(KIND, p.k, kt); ++t) {
              copy_scales<CTA_GROUP>(tmem_base + uint32_t(sfa_tile_column(g, t)),
                                     smem_desc_sf(base + sfa_tile_offset(g, stage, t)));
              for (int gb = 0; gb < sfb_groups(g); ++gb)
                copy_scales<CTA_GROUP>(tmem_base + uint32_t(sfb_tile_column(g, t, gb)),
                                       smem_desc_sf(base + sfb_tile_offset(g, stage, t, gb)));
            }
          }
          const uint64_t a_desc = smem_desc_sw128(base + a_offset(g, stage));
          const uint64_t b_desc = b_stage_desc(g, base + b_offset(g, stage));
          const int mmas = mmas_in_stage(KIND, p.k, kt);
#pragma unroll
          for (int kk = 0; kk < kMmasPerStage; ++kk) {
            if (kk >= mmas) break;
            const uint32_t idesc = kScaled ? idesc_with_sf_ids(p.idesc, mma_sf_id(KIND, kk), mma_sf_id(KIND, kk)) : p.idesc;
            mma<KIND, CTA_GROUP>(d, desc_advance(a_desc, kMmaBytesK * kk), desc_advance(b_desc, b_mma_advance_bytes(g) * kk),
                                 idesc, kScaled ? tmem_base + uint32_t(mma_sfa_column(g, kk)) : 0u,
                                 kScaled ? tmem_base + uint32_t(mma_sfb_column(g, kk)) : 0u, kt > 0 || kk > 0);
          }
          commit<CTA_GROUP>(empty(stage));  // the stage is free once these MMAs have read it
          if (++stage == p.stages) stage = 0, phase ^= 1u;
        }
        commit<CTA_GROUP>(tmem_full(acc));  // the tile's accumulator is complete
        if (++acc == acc_buffers) acc = 0, acc_phase ^= 1u;
      }
    }
  } else {
    // ---- epilogue -----------------------------------------------------------------------------
    const int quarter = epilogue_lane_quarter(warp);
    const uint32_t staging = base + staging_offset(g) + uint32_t(warp - 2) * kStagingBytesPerWarp;
    const uint32_t release_to = CTA_GROUP > 1 ? map_to_rank(tmem_empty(0), 0) : tmem_empty(0);
    const bool bf16_or_f16 = p.ep.d.dtype != OG_DTYPE_F32;
    int acc = 0;
    unsigned acc_phase = 0;
    for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
      const OgWork item = og_work_item(w, p.num_pid_m, p.num_pid_n, p.group_m, 1);
      const int row0 = d_row0(g, item.pid_m * block_m(g), rank) + 32 * quarter, n0 = item.pid_n * BLOCK_N;
      mbar_wait(tmem_full(acc), acc_phase);
      tcgen05_after_sync();
      const uint32_t taddr = tmem_base + tmem_addr(32 * quarter, acc_column(g, acc));
      if (p.tma_store) {
        const bool bf16 = p.ep.d.dtype == OG_DTYPE_BF16;
        for (int c = 0; c < BLOCK_N; c += chunk_columns(bf16_or_f16 ? 2 : 4)) {
          if (lane == 0) tma_store_wait_read();
          __syncwarp();
          if (bf16_or_f16)
            store_plain_chunk<2>(p.ep.alpha, bf16, &map_d, taddr + uint32_t(c), staging, item.batch, row0, n0 + c, lane);
          else
            store_plain_chunk<4>(p.ep.alpha, bf16, &map_d, taddr + uint32_t(c), staging, item.batch, row0, n0 + c, lane);
        }
      } else {
        for (int c = 0; c < BLOCK_N; c += 32)
          store_general_chunk(p.ep, taddr + uint32_t(c), staging, item.batch, p.m, p.n, row0, n0 + c, lane);
      }
      // Every tcgen05.ld of this warp has completed (store_chunk waited): the buffer may be reused.
      tcgen05_before_sync();
      __syncwarp();
      if (lane == 0) mbar_arrive_cluster(release_to + 8u * uint32_t(acc));
      if (++acc == acc_buffers) acc = 0, acc_phase ^= 1u;
    }
    if (p.tma_store && lane == 0) tma_store_wait_read();  // shared memory outlives the stores reading it
  }

  // Teardown: every tensor-memory access of both CTAs is done before the allocating warp frees it.
  tcgen05_before_sync();
  if constexpr (CTA_GROUP > 1)
    cluster_sync();
  else
    __syncthreads();
  if (warp == 1) {
    tcgen05_after_sync();
    tmem_dealloc<CTA_GROUP>(tmem_base, tmem_cols);
  }
#endif
}

}  // namespace omnigemm::detail::sm100
