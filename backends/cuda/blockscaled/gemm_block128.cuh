// Hopper (sm_90a) GEMM of 128-blockwise fp8 operands: A's f32 scales per 1 x 128 (row, K block)
// or per 128 x 128, B's per 128 x 128 (N block, K block), D = act(alpha * sum_kb (sa * sb) *
// (A_kb B_kb) + beta * C + bias). The pieces of the sm90 kernel (sm90/gemm_tma_wgmma.cuh: TMA
// into an mbarrier ring, a producer and two consumer warpgroups, the persistent grid in the
// shared grouped order, its epilogue) with one change in the mainloop, promotion:
//   - for each 128-deep K block (one ring stage) a consumer runs four fp8 wgmma m64nNk32 into a
//     temporary f32 accumulator (the first with scale-d = 0: no zeroing), waits for them, frees
//     the stage, then adds tmp * sa[row] * sb to its main accumulators with one FFMA each, in
//     f32 on the CUDA cores: the tensor cores' reduced-precision fp8 accumulation never runs
//     over more than one scale block;
//   - the two consumers own 64 rows each of a 128-row tile and run unsynchronised, so one
//     consumer's promotion overlaps the other's wgmmas;
//   - scales are read from global memory (L2-resident: 4 bytes per 128 x 128 operand bytes) one
//     K block ahead, so their latency hides behind the current block's wgmmas.
// Tiles are 128 x BLOCK_N, BLOCK_N 64, 128 or 256. A 256-column tile runs as two 128-column
// halves, each with its own B scale: wgmma into the 64 temporary accumulators, promotion, then the
// next half (128 main + 64 temporary accumulators per consumer thread: the tile loads 48 KiB per
// K block for 8.4 MFLOP, a third less per FLOP than 128 x 128).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "../sm90/gemm_tma_wgmma.cuh"
#include "launch.hpp"
#include "wgmma_fp8.cuh"

namespace omnigemm::detail::sm90 {

// CLUSTER_M = 2 (the mcast form): two programs of a cluster work on vertically adjacent tiles with
// the same columns; each loads half of the B tile and multicasts it to both (sm90_wgmma's mcast),
// a third fewer L2-to-SM bytes per 128 x 256 tile.
// PIPE (the pipe form): two temporary accumulators; a consumer issues K block kt + 1's wgmmas
// before it promotes block kt, so its own next block keeps the tensor cores busy while it
// promotes (64 main + 2 x 64 temporary accumulators at 128 columns).
template <int BLOCK_N_, WgmmaType TA_, WgmmaType TB_, int CLUSTER_M_ = 1, bool PIPE_ = false>
struct Block128Shape {
  static constexpr int BLOCK_M = 128, BLOCK_N = BLOCK_N_, BLOCK_K = 128, CLUSTER_M = CLUSTER_M_;
  static constexpr bool PIPE = PIPE_;
  static_assert(CLUSTER_M == 1 || CLUSTER_M == 2, "clusters of one or two programs");
  static_assert(!PIPE || (BLOCK_N <= 128 && CLUSTER_M == 1), "the pipe form: at most 128 columns, no cluster");
  static constexpr WgmmaType TA = TA_, TB = TB_;
  // wgmma N and column halves: each half lies in one 128-column scale block of B.
  static constexpr int kWgmmaN = BLOCK_N < 128 ? BLOCK_N : 128, kHalves = BLOCK_N / kWgmmaN;
  static_assert(128 % kWgmmaN == 0 && kHalves * kWgmmaN == BLOCK_N && kHalves <= 2, "tiles of 64, 128 or 256 columns");
  static constexpr int kThreads = 128 * (1 + kConsumers);
  static constexpr int kABytes = BLOCK_M * 128, kBBytes = BLOCK_N * 128, kStageBytes = kABytes + kBBytes;
  static constexpr int kAccRegs = BLOCK_N / 2, kTmpRegs = kWgmmaN / 2;  // per consumer thread: main, temporary
  static constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
  __host__ __device__ static size_t shared_bytes(int stages) { return sm90::shared_bytes(BLOCK_M, BLOCK_N, stages); }
};

#ifdef OG_SM90A_DEVICE
// Scale of rows >> shift (shift 0: per row, 7: per 128 rows) at K block kb, batch `base` applied.
__device__ __forceinline__ float load_scale(const float* base, long long row_offset, long long col_stride, int kb) {
  return __ldg(base + row_offset + (long long)kb * col_stride);
}
#endif

#ifdef OG_SM90A_DEVICE
// The pipe form's K loop over one tile: block kt's wgmmas go into one temporary accumulator while
// the other still holds block kt - 1, which the consumer promotes once wgmma.wait_group 1 says it is
// complete (block kt stays in flight); its stage is released then. (stage, phase) carry over.
template <class S>
__device__ __forceinline__ void pipelined_mainloop(float (&acc)[S::kAccRegs], float (&tmp0)[S::kTmpRegs],
                                                   const Block128Args& p, uint64_t* full, uint64_t* empty, int& stage,
                                                   unsigned& phase, const SmemDescriptor& operand_a,
                                                   const SmemDescriptor& operand_b, const float* sa, long long sa_lo,
                                                   long long sa_hi, const float* sb, int lane) {
  float tmp1[S::kTmpRegs];
#pragma unroll
  for (int i = 0; i < S::kTmpRegs; ++i) tmp1[i] = 0.0f;
  // Scales of the block in flight (promoted next) and of the block being issued.
  float in_flight_lo = 0, in_flight_hi = 0, in_flight_b = 0;
  int in_flight_stage = 0;
  auto promote = [&](float (&t)[S::kTmpRegs], float s_lo, float s_hi) {
#pragma unroll
    for (int i = 0; i < S::kTmpRegs; ++i) acc[i] = fmaf(t[i], (i & 2) ? s_hi : s_lo, acc[i]);
  };
  // One K block into `cur`; then the block before it (in `prev`) is promoted.
  auto step = [&](int kt, float (&cur)[S::kTmpRegs], float (&prev)[S::kTmpRegs]) {
    const float a_lo = load_scale(sa, sa_lo, p.sa_col, kt), a_hi = load_scale(sa, sa_hi, p.sa_col, kt);
    const float b = load_scale(sb, 0, p.sb_col, kt);
    mbar_wait(&full[stage], phase);
    const uint32_t stage_offset = uint32_t(__shfl_sync(0xffffffffu, stage, 0)) * (S::kStageBytes / 16);
    fence_registers(cur);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_fp8<S::kWgmmaN, S::TA, S::TB>(cur, operand_a.at(stage_offset + 2 * kk), operand_b.at(stage_offset + 2 * kk),
                                          kk > 0 ? 1u : 0u);
    wgmma_commit();
    fence_registers(cur);
    if (kt > 0) {
      wgmma_wait<1>();  // block kt - 1 complete, block kt in flight
      fence_registers(prev);
      if (lane == 0) mbar_arrive(&empty[in_flight_stage]);
      promote(prev, in_flight_lo * in_flight_b, in_flight_hi * in_flight_b);
    }
    in_flight_lo = a_lo, in_flight_hi = a_hi, in_flight_b = b, in_flight_stage = stage;
    if (++stage == p.stages) { stage = 0; phase ^= 1u; }
  };
  int kt = 0;
  for (; kt + 1 < p.k_tiles; kt += 2) {
    step(kt, tmp0, tmp1);
    step(kt + 1, tmp1, tmp0);
  }
  if (kt < p.k_tiles) step(kt, tmp0, tmp1);
  wgmma_wait<0>();
  const bool last_in_tmp0 = (p.k_tiles - 1) % 2 == 0;
  fence_registers(tmp0);
  fence_registers(tmp1);
  if (lane == 0) mbar_arrive(&empty[in_flight_stage]);
  if (last_in_tmp0) promote(tmp0, in_flight_lo * in_flight_b, in_flight_hi * in_flight_b);
  else promote(tmp1, in_flight_lo * in_flight_b, in_flight_hi * in_flight_b);
}
#endif

template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    gemm_block128(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                  const __grid_constant__ Block128Args p) {
#ifdef OG_SM90A_DEVICE
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
  const uint32_t smem_base = smem_addr(smem);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + barrier_offset(S::BLOCK_M, S::BLOCK_N, p.stages));
  uint64_t* empty = full + p.stages;
  const int warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
  // Work items are groups of CLUSTER_M vertically adjacent tiles, one group per cluster, in the
  // shared scheduler's grouped order (item.pid_m is this program's tile row; beyond M for the
  // second tile of a short last group: it loads zeros and stores nothing).
  const int rank = S::CLUSTER_M > 1 ? int(cluster_rank()) : 0;
  const int cluster = int(blockIdx.x) / S::CLUSTER_M, clusters = int(gridDim.x) / S::CLUSTER_M;
  const OgClusterGrid work_grid = og_cluster_grid(p.num_pid_m, p.num_pid_n, p.group_m, 1, S::CLUSTER_M, 1);
  const int total_work = og_cluster_work_count(work_grid, p.batch);

  if (threadIdx.x == 0) {
    for (int s = 0; s < p.stages; ++s) {
      mbar_init(&full[s], 1);  // the producer's expect_tx arrival
      // One arrival per consumer warp, in every program the stage is multicast to.
      mbar_init(&empty[s], 4 * kConsumers * S::CLUSTER_M);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
  }
  if constexpr (S::CLUSTER_M > 1) cluster_sync();  // the peer's barriers exist before any multicast
  else __syncthreads();

  if (warpgroup == 0) {
    // ---- producer: the A and B tiles of every K block into the ring ---------------------------
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(S::kProducerRegisters));
    if (threadIdx.x == 0) {
      int stage = 0;
      unsigned phase = 0;
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
        const OgWork item = og_cluster_work_item(work_grid, w, rank, 0);
        const int m0 = item.pid_m * S::BLOCK_M, n0 = item.pid_n * S::BLOCK_N;
        for (int kt = 0; kt < p.k_tiles; ++kt) {
          mbar_wait(&empty[stage], phase ^ 1u);  // a fresh barrier counts as released
          mbar_expect_tx(&full[stage], S::kStageBytes);
          unsigned char* a_tile = smem + size_t(stage) * S::kStageBytes;
          tma_load(a_tile, &map_a, &full[stage], kt * S::BLOCK_K, m0, item.batch);
          if constexpr (S::CLUSTER_M > 1) {  // this program's half of B, into both programs' stage
            constexpr int kHalf = S::BLOCK_N / 2;
            tma_load_multicast(a_tile + S::kABytes + rank * kHalf * 128, &map_b, &full[stage], kt * S::BLOCK_K,
                               n0 + rank * kHalf, item.batch, 0x3);
          } else {
            tma_load(a_tile + S::kABytes, &map_b, &full[stage], kt * S::BLOCK_K, n0, item.batch);
          }
          if (++stage == p.stages) { stage = 0; phase ^= 1u; }
        }
      }
    }
  } else {
    // ---- consumers: 64 rows each, wgmma per K block, promotion, epilogue ------------------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(S::kConsumerRegisters));
    const int consumer = warpgroup - 1;
    const int t = int(threadIdx.x) % 128, warp = t / 32, lane = t % 32;
    float acc[1][S::kAccRegs], tmp[S::kTmpRegs];
#pragma unroll
    for (int i = 0; i < S::kTmpRegs; ++i) tmp[i] = 0.0f;
    const SmemDescriptor operand_a(smem_base + consumer * 64 * 128, 16, 1024);
    const SmemDescriptor operand_b(smem_base + S::kABytes, 16, 1024);
    const uint32_t chunks = smem_base + uint32_t(staging_offset(S::BLOCK_M, S::BLOCK_N, p.stages)) + consumer * 2 * kChunkBytes;
    int stage = 0;
    unsigned phase = 0, sequence = 0;
    for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
      const OgWork item = og_cluster_work_item(work_grid, w, rank, 0);
      const int row0 = item.pid_m * S::BLOCK_M + consumer * 64, n0 = item.pid_n * S::BLOCK_N;
      // This thread's two accumulator rows (wgmma's layout: 16 warp + lane / 4, and 8 below),
      // clamped into A for the scale reads (rows past M are never stored).
      const int r_lo = row0 + 16 * warp + lane / 4;
      const long long sa_lo = (long long)(min(r_lo, p.m - 1) >> p.a_shift) * p.sa_row;
      const long long sa_hi = (long long)(min(r_lo + 8, p.m - 1) >> p.a_shift) * p.sa_row;
      const float* sa = p.sa + (long long)item.batch * p.sa_batch;
      // B's scale rows of the halves (a half past N reads the last row; its columns are never stored).
      const float* sb[S::kHalves];
#pragma unroll
      for (int h = 0; h < S::kHalves; ++h)
        sb[h] = p.sb + (long long)item.batch * p.sb_batch + (long long)(min(n0 + 128 * h, p.n - 1) >> 7) * p.sb_row;
#pragma unroll
      for (int i = 0; i < S::kAccRegs; ++i) acc[0][i] = 0.0f;
      float a_lo = load_scale(sa, sa_lo, p.sa_col, 0), a_hi = load_scale(sa, sa_hi, p.sa_col, 0), b[S::kHalves];
#pragma unroll
      for (int h = 0; h < S::kHalves; ++h) b[h] = load_scale(sb[h], 0, p.sb_col, 0);
      if constexpr (S::PIPE) {
        pipelined_mainloop<S>(acc[0], tmp, p, full, empty, stage, phase, operand_a, operand_b, sa, sa_lo, sa_hi, sb[0], lane);
      } else {
      for (int kt = 0; kt < p.k_tiles; ++kt) {
        // The next K block's scales (the last block reads its own again), in flight during this one.
        const int kn = kt + 1 < p.k_tiles ? kt + 1 : kt;
        const float next_a_lo = load_scale(sa, sa_lo, p.sa_col, kn), next_a_hi = load_scale(sa, sa_hi, p.sa_col, kn);
        float next_b[S::kHalves];
#pragma unroll
        for (int h = 0; h < S::kHalves; ++h) next_b[h] = load_scale(sb[h], 0, p.sb_col, kn);
        mbar_wait(&full[stage], phase);
        const uint32_t stage_offset = uint32_t(__shfl_sync(0xffffffffu, stage, 0)) * (S::kStageBytes / 16);
#pragma unroll
        for (int h = 0; h < S::kHalves; ++h) {
          fence_registers(tmp);
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < 4; ++kk)  // 32 bytes of K per wgmma: 2 sixteen-byte units; a half is 128 rows of B
            wgmma_fp8<S::kWgmmaN, S::TA, S::TB>(tmp, operand_a.at(stage_offset + 2 * kk),
                                                operand_b.at(stage_offset + h * (128 * 128 / 16) + 2 * kk), kk > 0 ? 1u : 0u);
          wgmma_commit();
          fence_registers(tmp);
          wgmma_wait<0>();
          fence_registers(tmp);
          if (h == S::kHalves - 1 && lane == 0) {  // every wgmma of the stage has read it: free it in every program
            mbar_arrive(&empty[stage]);
            if constexpr (S::CLUSTER_M > 1) mbar_arrive_cluster(&empty[stage], unsigned(rank ^ 1));
          }
          // Promotion: register 4j + 2h' + e of the half holds row r_lo + 8h', column 128 h + 8j + 2 (lane % 4) + e.
          const float s_lo = a_lo * b[h], s_hi = a_hi * b[h];
#pragma unroll
          for (int i = 0; i < S::kTmpRegs; ++i)
            acc[0][h * S::kTmpRegs + i] = fmaf(tmp[i], (i & 2) ? s_hi : s_lo, acc[0][h * S::kTmpRegs + i]);
        }
        if (++stage == p.stages) { stage = 0; phase ^= 1u; }
        a_lo = next_a_lo, a_hi = next_a_hi;
#pragma unroll
        for (int h = 0; h < S::kHalves; ++h) b[h] = next_b[h];
      }
      }
      store_tile<1, S::BLOCK_N>(acc, p.ep, item.batch, p.m, p.n, row0, n0, chunks, consumer, t, sequence);
    }
  }
  // No program may leave while its peer can still multicast into it or arrive on its barriers.
  if constexpr (S::CLUSTER_M > 1) cluster_sync();
#endif
}

}  // namespace omnigemm::detail::sm90
