// Hopper (sm_90a) GEMM: TMA loads into a shared-memory ring guarded by mbarriers, wgmma on the
// tensor cores, warp specialisation and a persistent grid walking tiles in the shared grouped
// order. Pieces, CUTLASS-style:
//   - producer (warpgroup 0, one thread): for each work item and K-tile, waits for a free stage
//     and issues the TMA copies of the A and B tiles into it;
//   - mainloop (warpgroups 1 and 2, "consumers"): each owns 64 * WG_M rows of the BLOCK_M x
//     BLOCK_N tile (cooperative), half its columns (column-split 192x192) or every other tile
//     (ping-pong), waits for a full stage, issues BLOCK_K / K_STEP wgmmas per 64-row block and
//     releases the stage once they retired;
//   - epilogue: the accumulators go through a small per-consumer shared-memory chunk to
//     coalesced stores with the shared fused epilogue, while the producer already fills the
//     ring with the next tile's operands; cooperative tiles' 16-bit outputs whose epilogue fits
//     in registers (alpha, C of their type, an f32 bias, any activation) are held (staged, and in
//     registers) and leave by TMA stores during the next tile's first K-tiles (the deferred
//     epilogue).
// Shared-memory tiles use the 128-byte swizzle: every tile row is 128 bytes, so BLOCK_K is 64
// for 16-bit inputs and 128 for fp8. A K-major operand is one TMA box of rows x 128 B; an
// MN-major operand (16-bit only, wgmma's transpose bit) is BLOCK_MN / 64 boxes of BLOCK_K rows
// x 64 elements.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "../epilogue.cuh"
#include "device_arch.cuh"
#include "launch.hpp"
#include "omnigemm/tile_schedule.h"
#include "tile_epilogue.cuh"
#include "wgmma_ops.cuh"

namespace omnigemm::detail::sm90 {

struct KernelArgs {
  int m, n, k;
  int num_pid_m, num_pid_n, group_m, batch;
  int k_tiles;  // ceil(K / BLOCK_K)
  int stages;   // depth of the shared-memory ring
  // Split-K (split_k > 1): every tile's K-tiles are cut into split_k slices, each a work item
  // of its own; see reduce_slices.
  int split_k;
  float* partials;  // [tile][64-row half][slice][accumulator register][thread]
  int* counters;    // [tile][64-row half], zero between launches
  // The host encoded map_d: a 16-bit row-major D (register epilogue, N a multiple of 8; 64 x 64
  // boxes, the deferred epilogue) or an f32 one (N a multiple of 4; 32 x 64 boxes, f32 TMA stores).
  bool defer_epilogue;
  cuda::EpilogueArgs ep;
};

// PINGPONG: each consumer owns whole tiles (alternate work items), so one consumer's epilogue
// runs while the other's mainloop keeps the tensor cores busy; otherwise both consumers split
// every tile ("cooperative") and their epilogues leave the tensor cores idle.
// CLUSTER_M = 2: two programs of a thread-block cluster work on vertically adjacent tiles with
// the same columns; each loads half of the shared B tile and multicasts it to both, which cuts
// the L2-to-SM traffic per tile by a third for 128x256 tiles.
// SPLIT_N: the cooperative consumers split the tile's columns, not its rows: each owns all
// 64 * WG_M rows and BLOCK_N / 2 columns. So a tile may have 192 rows: 192x192 (three 64-row
// blocks of 96 columns per consumer, 144 accumulators) is 256 tiles at 3072^2, 1.94 waves of
// 132 SMs where 128x192 is 2.91 and 128x256 2.18 (cuBLAS's kernel there: 192x192).
// SPLIT_PAIRS: split-K in two slices whose programs form a cluster and add their partials
// through distributed shared memory (PairExchange), not through global memory (reduce_slices).
template <int BLOCK_N_, int WG_M_, WgmmaType TA_, WgmmaType TB_, bool A_MN_MAJOR_, bool B_MN_MAJOR_, bool PINGPONG_,
          int CLUSTER_M_ = 1, bool SPLIT_N_ = false, bool SPLIT_PAIRS_ = false>
struct Shape {
  static constexpr int BLOCK_N = BLOCK_N_, WG_M = WG_M_, CLUSTER_M = CLUSTER_M_;
  static constexpr bool SPLIT_N = SPLIT_N_, SPLIT_PAIRS = SPLIT_PAIRS_;
  static_assert(CLUSTER_M == 1 || (CLUSTER_M == 2 && !PINGPONG_), "multicast is implemented for cooperative tiles");
  static_assert(!SPLIT_N || (!PINGPONG_ && CLUSTER_M == 1), "column-split tiles are cooperative, without clusters");
  static constexpr WgmmaType TA = TA_, TB = TB_;
  static constexpr bool A_MN_MAJOR = A_MN_MAJOR_, B_MN_MAJOR = B_MN_MAJOR_, PINGPONG = PINGPONG_;
  static constexpr int kThreads = 128 * (1 + sm90::kConsumers);
  static constexpr int kTileConsumers = PINGPONG ? 1 : sm90::kConsumers;  // consumers sharing a tile
  static constexpr int BLOCK_M = 64 * WG_M * (SPLIT_N ? 1 : kTileConsumers);
  static constexpr int CONSUMER_N = SPLIT_N ? BLOCK_N / 2 : BLOCK_N;  // tile columns per consumer
  static constexpr bool kSixteenBit = TA == WgmmaType::f16 || TA == WgmmaType::bf16;
  static constexpr bool kTf32 = TA == WgmmaType::tf32;  // f32 data read as TF32 (OG_COMPUTE_TF32)
  static constexpr int kElemBytes = kSixteenBit ? 2 : kTf32 ? 4 : 1;
  static constexpr int BLOCK_K = 128 / kElemBytes;
  static constexpr int kKSteps = 4;  // wgmma K is 32 bytes: 16 x 16-bit, 32 x fp8 or 8 x tf32
  static constexpr int kABytes = BLOCK_M * 128, kBBytes = BLOCK_N * 128;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static_assert(!(A_MN_MAJOR || B_MN_MAJOR) || kSixteenBit, "fp8 and tf32 wgmma operands must be K-major");
  // An MN-major B tile is loaded as BLOCK_N / 64 boxes of 64 columns; narrow tiles (16 or 32
  // columns, for skinny problems) take K-major B only.
  static_assert(CONSUMER_N % 64 == 0 || !B_MN_MAJOR, "narrow (or column-split 96-column) tiles need a K-major B");
  static constexpr int kAccRegs = WG_M * CONSUMER_N / 2;  // accumulators per consumer thread
  static_assert(kAccRegs <= 144, "accumulators beyond the consumer register budget");
  static_assert(!SPLIT_PAIRS || (!PINGPONG && CLUSTER_M == 1), "split-K pairs are cooperative clusters of their own");
  // Programs per cluster: a multicast tile group (CLUSTER_M), or the two K slices of a split-K
  // pair (CLUSTER_K), as the shared scheduler's cluster grouping lays them out.
  static constexpr int CLUSTER_K = SPLIT_PAIRS ? 2 : 1;
  static constexpr int kClusterSize = CLUSTER_M * CLUSTER_K;
  // Work items of a launch: tile groups (one cluster's at a time); a pair's two slices are one.
  __host__ __device__ static int work_count(int num_pid_m, int num_pid_n, int split_k, int batch) {
    return og_cluster_work_count(og_cluster_grid(num_pid_m, num_pid_n, 1, split_k, CLUSTER_M, CLUSTER_K), batch);
  }
  // Registers per thread after setmaxnreg (128 x producer + 256 x consumer <= 64K): the 144
  // accumulators of 192x192 take 8 more per consumer thread from the producer warpgroup.
  static constexpr int kProducerRegisters = SPLIT_N ? 24 : 40, kConsumerRegisters = SPLIT_N ? 240 : 232;
  __host__ __device__ static size_t shared_bytes(int stages) { return sm90::shared_bytes(BLOCK_M, BLOCK_N, stages); }
};

#ifdef OG_SM90A_DEVICE
__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

// 3-D tiled TMA load (inner coordinate first) completing on `bar`.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// wgmma shared-memory descriptor, 128-byte swizzle. For K-major tiles `stride` is the distance
// between 8-row groups (1024 B) and `leading` is unused; for MN-major tiles `leading` is the
// distance between 64-element column blocks and `stride` the distance between 8-row K groups.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t leading, uint32_t stride) {
  return uint64_t((addr & 0x3ffff) >> 4) | (uint64_t(leading >> 4) << 16) | (uint64_t(stride >> 4) << 32) | (1ull << 62);
}

// A descriptor as its address word (address >> 4 and the leading offset) and its constant
// stride / swizzle word: operands at a fixed distance from `addr` add (distance / 16) to the
// address word. Shared addresses stay below 2^18, so the 14-bit address field never carries.
struct SmemDescriptor {
  uint32_t address_word, stride_word;
  __device__ __forceinline__ SmemDescriptor(uint32_t addr, uint32_t leading, uint32_t stride) {
    const uint64_t d = smem_desc(addr, leading, stride);
    address_word = uint32_t(d), stride_word = uint32_t(d >> 32);
  }
  __device__ __forceinline__ uint64_t at(uint32_t sixteen_byte_offset) const {
    return (uint64_t(stride_word) << 32) | (address_word + sixteen_byte_offset);
  }
};

// The same box multicast into the shared memory (same offset, same barrier) of every program
// of the cluster in `mask`.
__device__ __forceinline__ void tma_load_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2,
                                                   uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4, "
      "%5}], [%2], %6;" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(mask)
      : "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// Arrives on the barrier at the same shared-memory offset in cluster program `rank`. Default
// (CTA-scope) release semantics, as CUTLASS's cluster barrier: the arrival only says that this
// program's wgmmas have finished reading the stage (wgmma.wait_group ordered that), and an
// explicit .release.cluster costs a cluster-wide fence per stage (H100: -x3 ran at 0.6x -x1).
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" ::"r"(smem_addr(bar)),
      "r"(rank)
      : "memory");
}

// Distributed shared memory for the split-K pairs: the address of the same shared-memory
// location in cluster program `rank`, 16-byte stores to it, and cluster-scope barrier
// operations (a release by every thread orders its own stores, or its reads of the buffer
// being handed back, before the waiter's acquire).
__device__ __forceinline__ uint32_t map_to_rank(uint32_t addr, unsigned rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}
__device__ __forceinline__ void st_cluster_f32x4(uint32_t addr, float x, float y, float z, float w) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}
__device__ __forceinline__ void mbar_arrive_release_cluster(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr) : "memory");
}
__device__ __forceinline__ void mbar_wait_acquire_cluster(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Synchronises the 128 threads of one consumer warpgroup (barrier 0 is __syncthreads).
__device__ __forceinline__ void named_barrier(int id) { asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory"); }

// Keeps the compiler from moving accumulator accesses across wgmma fences and waits.
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
#endif

#ifdef OG_SM90A_DEVICE
__device__ __forceinline__ unsigned load_acquire_gpu(const int* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Split-K: a consumer that finished its slice of a tile (its `part`: the tile's 64 * WG_M rows
// it owns) stores its accumulators to `partials` in register order (coalesced, no index math)
// and counts itself on the part's counter. The last slice to arrive sums every slice's
// partials in slice order (the result does not depend on which slice came last), resets the
// counter for the next launch and returns true: it runs the epilogue. No slice ever waits.
// Two slices are the common case (M = 128 problems) and take a shorter path, below.
template <class S>
__device__ __forceinline__ bool reduce_slices(float (&acc)[S::WG_M][S::CONSUMER_N / 2], const KernelArgs& p, long long part,
                                              int k_slice, int consumer, int thread) {
  constexpr int kRegs = S::WG_M * (S::CONSUMER_N / 2), kPartFloats = kRegs * 128;
  float* slices = p.partials + part * p.split_k * kPartFloats;
  float* mine = slices + (long long)k_slice * kPartFloats;
  if (p.split_k == 2) {
    // The first slice to arrive publishes its partials and leaves; the second stores nothing:
    // it waits for the publication (the first has finished its mainloop and only stores, so the
    // wait is short and cannot deadlock) and adds the other's partials to its own registers
    // (addition commutes: the same result whichever came first). Its critical path loses the
    // partial stores and a GPU-scope fence (H100 trace: 2.5-3 us from a 128x64 -k2 tile's last
    // data to its end). counters[part]: +1 per arrival, +4 on publication.
    unsigned arrival = 0;
    if (thread == 0) arrival = unsigned(atomicAdd(p.counters + part, 1));
    if (!consumer_any(consumer, (arrival & 3u) == 1u)) {
#pragma unroll
      for (int r = 0; r < S::WG_M; ++r)
#pragma unroll
        for (int i = 0; i < S::CONSUMER_N / 2; ++i) __stcg(mine + (r * (S::CONSUMER_N / 2) + i) * 128 + thread, acc[r][i]);
      consumer_barrier(consumer);
      if (thread == 0) {
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        atomicAdd(p.counters + part, 4);
      }
      return false;
    }
    if (thread == 0) {
      while ((load_acquire_gpu(p.counters + part) & 4u) == 0) {
      }
      p.counters[part] = 0;  // for the next launch
    }
    consumer_barrier(consumer);
    const float* other = slices + (long long)(k_slice ^ 1) * kPartFloats + thread;
#pragma unroll
    for (int r = 0; r < S::WG_M; ++r)
#pragma unroll
      for (int i = 0; i < S::CONSUMER_N / 2; ++i) acc[r][i] += __ldcg(other + (r * (S::CONSUMER_N / 2) + i) * 128);
    return true;
  }
#pragma unroll
  for (int r = 0; r < S::WG_M; ++r)
#pragma unroll
    for (int i = 0; i < S::CONSUMER_N / 2; ++i) __stcg(mine + (r * (S::CONSUMER_N / 2) + i) * 128 + thread, acc[r][i]);
  // One release and one acquire per consumer, not a fence per thread (ncu: the per-thread
  // __threadfence, MEMBAR.SC.GPU, held 11% of the stall samples of a -k4 decode shape). The
  // barrier orders every thread's partial stores before thread 0's fence, which is cumulative
  // (as CUTLASS's split-K semaphore); the last slice's thread 0 acquires the others' partials
  // and the barrier below orders its consumer's loads after that.
  consumer_barrier(consumer);
  int arrived = 0;
  if (thread == 0) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    arrived = atomicAdd(p.counters + part, 1) + 1;
    if (arrived == p.split_k) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  }
  if (!consumer_any(consumer, arrived == p.split_k)) return false;
  if (thread == 0) p.counters[part] = 0;
#pragma unroll
  for (int r = 0; r < S::WG_M; ++r)
#pragma unroll
    for (int i = 0; i < S::CONSUMER_N / 2; ++i) acc[r][i] = 0.0f;
  for (int slice = 0; slice < p.split_k; ++slice) {
    const float* from = slices + (long long)slice * kPartFloats + thread;
#pragma unroll
    for (int r = 0; r < S::WG_M; ++r)
#pragma unroll
      for (int i = 0; i < S::CONSUMER_N / 2; ++i) acc[r][i] += __ldcg(from + (r * (S::CONSUMER_N / 2) + i) * 128);
  }
  return true;
}
#endif

#ifdef OG_SM90A_DEVICE
// Split-K in pairs (Shape::SPLIT_PAIRS, split_k = 2): the two programs of a cluster run the two
// K slices of the same tile (slice = cluster rank), and consumer c of program c finishes the
// rows of consumer c. The other program's consumer c stores its accumulators into the
// receiver's two staging chunks through distributed shared memory (register order: float4 g
// of thread t at (g * 128 + t) * 16) and arrives on the receiver's `full`; the receiver adds
// them to its own and, after its epilogue (which reuses the chunks), hands the chunks back on
// the sender's `empty`. Against split-K through global memory this saves the partials' round
// trip through L2, a GPU-scope fence and a counter; the sum does not depend on which slice
// finishes first.
template <class S>
struct PairExchange {
  static_assert(!S::SPLIT_PAIRS || (S::kAccRegs % 4 == 0 && S::kAccRegs * 128 * 4 <= 2 * kChunkBytes),
                "one partial fills at most both chunks");
  uint64_t* full;   // this consumer's barriers: full takes the peer's partial,
  uint64_t* empty;  // empty the peer's hand-back
  unsigned exchanges = 0;  // tiles this consumer has sent or received

  __device__ __forceinline__ void send(const float (&acc)[S::WG_M][S::CONSUMER_N / 2], uint32_t chunks, unsigned peer,
                                       int thread) {
    const float* a = &acc[0][0];
    const uint32_t peer_chunks = map_to_rank(chunks, peer);
    mbar_wait_acquire_cluster(empty, (exchanges++ & 1u) ^ 1u);  // a fresh barrier counts as handed back
#pragma unroll
    for (int q = 0; q < S::kAccRegs; q += 4)
      st_cluster_f32x4(peer_chunks + (q / 4 * 128 + thread) * 16, a[q], a[q + 1], a[q + 2], a[q + 3]);
    mbar_arrive_release_cluster(map_to_rank(smem_addr(full), peer));
  }
  __device__ __forceinline__ void receive(float (&acc)[S::WG_M][S::CONSUMER_N / 2], uint32_t chunks, int consumer,
                                          int thread) {
    float* a = &acc[0][0];
    mbar_wait_acquire_cluster(full, exchanges++ & 1u);
#pragma unroll
    for (int q = 0; q < S::kAccRegs; q += 4) {
      const uint4 v = ld_shared_u32x4(chunks + (q / 4 * 128 + thread) * 16);
      a[q] += __uint_as_float(v.x), a[q + 1] += __uint_as_float(v.y);
      a[q + 2] += __uint_as_float(v.z), a[q + 3] += __uint_as_float(v.w);
    }
    consumer_barrier(consumer);  // every thread has its partial before the epilogue reuses the chunks
  }
  // After the receiver's epilogue: the chunks may take the next tile's partial.
  __device__ __forceinline__ void hand_back(unsigned peer) { mbar_arrive_release_cluster(map_to_rank(smem_addr(empty), peer)); }
};
#endif

template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    gemm_tma_wgmma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                   // D in 64 x 64 boxes for the deferred epilogue's TMA stores (valid where
                   // p.defer_epilogue is set)
                   const __grid_constant__ CUtensorMap map_d,
                   // __grid_constant__: the epilogue's out-of-line paths take the arguments by
                   // reference; without it the kernel kept a stack copy of them and read every
                   // epilogue argument from local memory (H100, 4096^3: most of the epilogue's stalls).
                   const __grid_constant__ KernelArgs p) {
#ifdef OG_SM90A_DEVICE
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes; TMA and wgmma agree only on aligned tiles.
  // Offsetting smem_raw itself (not a round trip through an integer) keeps the compiler aware
  // that `smem` points to shared memory: shared loads and stores, 32-bit addresses.
  unsigned char* smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
  const uint32_t smem_base = smem_addr(smem);
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + barrier_offset(S::BLOCK_M, S::BLOCK_N, p.stages));
  uint64_t* empty = full + p.stages;
  // Ping-pong: turn[c] completes a phase when the other consumer has waited on every stage of
  // its previous work item, so consumer c's waits on the ring are never more than one phase
  // ahead of the barrier (parity waits cannot tell phase n from phase n + 2).
  uint64_t* turn = empty + p.stages;
  uint64_t* exchange_full = turn + 2;  // split-K pairs, one full and one empty per consumer
  uint64_t* exchange_empty = exchange_full + sm90::kConsumers;
  // Broadcast from lane 0: the compiler then knows it is warp-uniform and keeps what derives
  // from it (the consumers' wgmma descriptors) in uniform registers. Not for the 192x192 tiles:
  // next to their 144 accumulators that made ptxas spill 36 bytes.
  const int warpgroup = S::SPLIT_N ? int(threadIdx.x) / 128 : __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
  // Work items are groups of CLUSTER_M vertically adjacent tiles, one group per cluster, or
  // (split-K pairs) tiles whose two K slices run in the two programs of a cluster: the shared
  // scheduler's cluster grouping gives each program its tile and K slice (item.pid_m is this
  // program's tile row; beyond M for the second tile of a short last group).
  const int rank = S::kClusterSize > 1 ? int(cluster_rank()) : 0;
  const int rank_m = S::CLUSTER_M > 1 ? rank : 0, rank_k = S::CLUSTER_K > 1 ? rank : 0;  // never both
  const int cluster = int(blockIdx.x) / S::kClusterSize, clusters = int(gridDim.x) / S::kClusterSize;
  // A pair's split_k is 2 (the launcher checks): as a constant, the item arithmetic folds.
  const int split_k = S::SPLIT_PAIRS ? 2 : p.split_k;
  const OgClusterGrid work_grid =
      og_cluster_grid(p.num_pid_m, p.num_pid_n, p.group_m, split_k, S::CLUSTER_M, S::CLUSTER_K);
  const int total_work = og_cluster_work_count(work_grid, p.batch);
  auto work_item = [&](int w) { return og_cluster_work_item(work_grid, w, rank_m, rank_k); };

  if (threadIdx.x == 0) {
    for (int s = 0; s < p.stages; ++s) {
      mbar_init(&full[s], 1);                          // the producer's expect_tx arrival
      // One arrival per warp consuming the stage, in every program the stage is multicast to.
      mbar_init(&empty[s], 4 * S::kTileConsumers * S::CLUSTER_M);
    }
    mbar_init(&turn[0], 1);
    mbar_init(&turn[1], 1);
    if constexpr (S::SPLIT_PAIRS)
      for (int c = 0; c < sm90::kConsumers; ++c) {
        mbar_init(&exchange_full[c], 128);  // every thread of the sending or receiving consumer
        mbar_init(&exchange_empty[c], 128);
      }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if constexpr (S::kClusterSize > 1) cluster_sync();  // the peer's barriers exist before any multicast or exchange
  else __syncthreads();
  // Programmatic dependent launch (the host sets it up): everything above may overlap the tail
  // of the previous kernel on the stream; no thread touches global memory before that kernel
  // has finished and its writes are visible. Then the next kernel may start its own prologue
  // on SMs this grid leaves free. Both are no-ops in an ordinary launch. The tensor maps are
  // kernel parameters, not data of the previous kernel: fetch them while waiting.
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
    if (p.defer_epilogue) asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(&map_d)) : "memory");
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);

  if (warpgroup == 0) {
    // ---- producer --------------------------------------------------------------------------
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(S::kProducerRegisters));
    if (threadIdx.x == 0) {
      int stage = 0;
      unsigned phase = 0;
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters)) {
        const OgWork item = work_item(w);
        const int m0 = item.pid_m * S::BLOCK_M, n0 = item.pid_n * S::BLOCK_N;
        int kt_begin, kt_end;
        og_split_k_range(p.k_tiles, split_k, item.k_slice, kt_begin, kt_end);
        for (int kt = kt_begin; kt < kt_end; ++kt) {
          mbar_wait(&empty[stage], phase ^ 1u);  // a fresh barrier counts as released
          mbar_expect_tx(&full[stage], S::kStageBytes);
          unsigned char* a_tile = smem + size_t(stage) * S::kStageBytes;
          unsigned char* b_tile = a_tile + S::kABytes;
          const int k0 = kt * S::BLOCK_K;
          if constexpr (S::A_MN_MAJOR) {
#pragma unroll
            for (int j = 0; j < S::BLOCK_M / 64; ++j)
              tma_load(a_tile + j * S::BLOCK_K * 128, &map_a, &full[stage], m0 + 64 * j, k0, item.batch);
          } else {
            tma_load(a_tile, &map_a, &full[stage], k0, m0, item.batch);
          }
          if constexpr (S::CLUSTER_M > 1) {
            // This program's half of B, into both programs' stage.
            constexpr int kHalf = S::BLOCK_N / 2;
            if constexpr (S::B_MN_MAJOR) {
#pragma unroll
              for (int j = rank * kHalf / 64; j < (rank + 1) * kHalf / 64; ++j)
                tma_load_multicast(b_tile + j * S::BLOCK_K * 128, &map_b, &full[stage], n0 + 64 * j, k0, item.batch, 0x3);
            } else {
              tma_load_multicast(b_tile + rank * kHalf * 128, &map_b, &full[stage], k0, n0 + rank * kHalf, item.batch, 0x3);
            }
          } else if constexpr (S::B_MN_MAJOR) {
#pragma unroll
            for (int j = 0; j < S::BLOCK_N / 64; ++j)
              tma_load(b_tile + j * S::BLOCK_K * 128, &map_b, &full[stage], n0 + 64 * j, k0, item.batch);
          } else {
            tma_load(b_tile, &map_b, &full[stage], k0, n0, item.batch);
          }
          if (++stage == p.stages) { stage = 0; phase ^= 1u; }
        }
      }
    }
  } else {
    // ---- consumers: mainloop + epilogue -----------------------------------------------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(S::kConsumerRegisters));
    const int consumer = warpgroup - 1;
    const int t = int(threadIdx.x) % 128, lane = t % 32;
    float acc[S::WG_M][S::CONSUMER_N / 2];
    // wgmma descriptors of this consumer's operands in stage 0 at the first K step; stage s,
    // K step kk and (A) 64-row block r are constant offsets of the address field. The A rows
    // it owns: 64-row blocks consumer * WG_M.. (all of them in ping-pong or SPLIT_N). Its
    // columns of B: all, or (SPLIT_N) its half, which starts on a 1024-byte swizzle period
    // (K-major: 96 rows of 128 bytes) or on a 64-column box (MN-major).
    constexpr uint32_t kAStep = S::A_MN_MAJOR ? 16 * 128 : 32, kBStep = S::B_MN_MAJOR ? 16 * 128 : 32;  // per K step
    constexpr uint32_t kABlock = S::A_MN_MAJOR ? S::BLOCK_K * 128 : 64 * 128;  // per 64-row block
    constexpr uint32_t kConsumerBBytes = (S::B_MN_MAJOR ? S::CONSUMER_N / 64 * S::BLOCK_K : S::CONSUMER_N) * 128;
    const SmemDescriptor operand_a(smem_base + (S::PINGPONG || S::SPLIT_N ? 0 : consumer * S::WG_M) * kABlock,
                                   S::A_MN_MAJOR ? S::BLOCK_K * 128 : 16, 1024);
    const SmemDescriptor operand_b(smem_base + S::kABytes + (S::SPLIT_N ? consumer * kConsumerBBytes : 0),
                                   S::B_MN_MAJOR ? S::BLOCK_K * 128 : 16, 1024);
    // A consumed stage is released in every program that multicast into it.
    auto release = [&](uint64_t* bar) {
      mbar_arrive(bar);
      if constexpr (S::CLUSTER_M > 1) mbar_arrive_cluster(bar, unsigned(rank ^ 1));
    };
    const uint32_t chunks =
        smem_base + uint32_t(staging_offset(S::BLOCK_M, S::BLOCK_N, p.stages)) + consumer * 2 * kChunkBytes;
    // The deferred epilogue (tile_epilogue.cuh) for cooperative tiles' plain 16-bit outputs. The
    // consumer loop is compiled twice, with and without it: in one copy the registers of a
    // held tile would stay live through the general epilogue and push the consumers past
    // their register budget (ptxas spilled 160-550 bytes). Not for the 256x128 tiles (two
    // 64-row blocks per consumer): holding raised their spills from 4 / 8 to 12 / 28 bytes.
    // Split-K pairs receive partials in the staging chunks, where a deferred tile would wait.
    constexpr bool kDeferrable = !S::PINGPONG && !S::SPLIT_PAIRS && S::WG_M == 1 && S::CONSUMER_N % 64 == 0;
    // C, bias and activations in registers on the packed ways, and f32 D by TMA stores
    // (store_tile_f32_tma, where the host encoded its map): kernel_key.hpp says for which kernels.
    constexpr bool kRegisterEpilogue = register_epilogue_kernel(S::PINGPONG, S::kClusterSize, S::WG_M, S::CONSUMER_N);
    const CUtensorMap* f32_map = kRegisterEpilogue && S::CONSUMER_N % 32 == 0 && p.defer_epilogue && p.ep.d.dtype == OG_DTYPE_F32 &&
                                         (register_f32_c_kernel(S::CONSUMER_N) || !p.ep.has_c)
                                     ? &map_d
                                     : nullptr;
    auto consume = [&](auto defer_tag) {
      constexpr bool kDefer = kDeferrable && decltype(defer_tag)::value;
      // The producer fills the ring with every work item's K-tiles in order: (stage, phase) is
      // where this consumer's next K-tile lies. It carries over from item to item; in ping-pong
      // it also skips the other consumer's items. (Recomputing it per item from a 64-bit count
      // took two 64-bit divisions in the tile transition.)
      int j = 0, stage = 0;
      unsigned phase = 0, turn_phase = 0, chunk_sequence = 0;
      std::conditional_t<kDefer, DeferredTile<S::WG_M, S::CONSUMER_N>, NoDeferredTile> deferred;
      PairExchange<S> exchange{&exchange_full[consumer], &exchange_empty[consumer]};
      auto flush_deferred = [&] {
        if constexpr (kDefer) deferred.flush(&map_d, chunks, consumer, t);
      };
      for (int w = og_persistent_first(cluster); w < total_work; w = og_persistent_next(w, clusters), ++j) {
        const OgWork item = work_item(w);
        int kt_begin, kt_end;
        og_split_k_range(p.k_tiles, split_k, item.k_slice, kt_begin, kt_end);
        const int item_k_tiles = kt_end - kt_begin;
        if (S::PINGPONG && (j & 1) != consumer) {  // the other consumer's item
          const int laps = item_k_tiles / p.stages;
          stage += item_k_tiles - laps * p.stages;
          phase ^= unsigned(laps) & 1u;
          if (stage >= p.stages) { stage -= p.stages; phase ^= 1u; }
          continue;
        }
        if (S::PINGPONG && j > 0) {
          mbar_wait(&turn[consumer], turn_phase);
          turn_phase ^= 1u;
        }
#pragma unroll
        for (int r = 0; r < S::WG_M; ++r)
#pragma unroll
          for (int i = 0; i < S::CONSUMER_N / 2; ++i) acc[r][i] = 0.0f;

        if (kRegisterEpilogue && p.ep.has_c)  // this consumer's block of C into L2 while the mainloop runs
          prefetch_c_block<64 * S::WG_M, S::CONSUMER_N>(
              p.ep, item.batch, p.m, p.n, item.pid_m * S::BLOCK_M + (S::PINGPONG || S::SPLIT_N ? 0 : consumer * S::WG_M) * 64,
              item.pid_n * S::BLOCK_N + (S::SPLIT_N ? consumer * S::CONSUMER_N : 0), t);
        int previous = -1;
        for (int kt = 0; kt < item_k_tiles; ++kt) {
          mbar_wait(&full[stage], phase);
          // Broadcast, as the warpgroup index: the descriptors then stay in uniform registers (H100,
          // 4096^3 bf16: 12% fewer instructions, the time unchanged). Not for 192x192 (36 bytes of spills).
          const uint32_t stage_offset = uint32_t(S::SPLIT_N ? stage : __shfl_sync(0xffffffffu, stage, 0)) * (S::kStageBytes / 16);
#pragma unroll
          for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < S::kKSteps; ++kk) {
            const uint64_t desc_b = operand_b.at(stage_offset + kk * kBStep / 16);
#pragma unroll
            for (int r = 0; r < S::WG_M; ++r) {
              const uint64_t desc_a = operand_a.at(stage_offset + (r * kABlock + kk * kAStep) / 16);
              wgmma<S::CONSUMER_N, S::TA, S::TB, S::A_MN_MAJOR ? 1 : 0, S::B_MN_MAJOR ? 1 : 0>(acc[r], desc_a, desc_b);
            }
          }
          wgmma_commit();
#pragma unroll
          for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
          if constexpr (kDefer)  // while this K-tile's wgmmas run
            if (deferred.pending()) deferred.step(&map_d, chunks, consumer, t);
          // Keep one K-tile of wgmmas in flight; the one before it has retired, free its stage.
          wgmma_wait<1>();
          if (previous >= 0 && lane == 0) release(&empty[previous]);
          previous = stage;
          if (++stage == p.stages) { stage = 0; phase ^= 1u; }
        }
        flush_deferred();
        // Every thread of this consumer has waited on all of the item's stages: its turn is over.
        if (S::PINGPONG) {
          named_barrier(1 + consumer);
          if (t == 0) mbar_arrive(&turn[consumer ^ 1]);
        }
        wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < S::WG_M; ++r) fence_registers(acc[r]);
        if (previous >= 0 && lane == 0) release(&empty[previous]);

        // A tile of a cluster's group beyond M (odd tile count) computes zeros and stores nothing.
        const int pid_m = item.pid_m;
        if constexpr (S::SPLIT_PAIRS) {
          if (consumer != rank) {  // the other program's consumer finishes these rows
            exchange.send(acc, chunks, unsigned(rank ^ 1), t);
            continue;
          }
          exchange.receive(acc, chunks, consumer, t);
        } else if (p.split_k > 1) {
          const int rows = work_grid.groups_m * S::CLUSTER_M;  // tile rows, padded to whole groups
          const long long tile = ((long long)item.batch * rows + pid_m) * p.num_pid_n + item.pid_n;
          if (!reduce_slices<S>(acc, p, tile * S::kTileConsumers + (S::PINGPONG ? 0 : consumer), item.k_slice, consumer, t))
            continue;  // another slice of this tile finishes it
        }
        const int row0 = pid_m * S::BLOCK_M + (S::PINGPONG || S::SPLIT_N ? 0 : consumer * S::WG_M) * 64;
        const int n0 = item.pid_n * S::BLOCK_N + (S::SPLIT_N ? consumer * S::CONSUMER_N : 0);  // this consumer's columns
        if constexpr (kDefer) {
          const RegisterEpilogue re = register_epilogue(p.ep, item.batch, p.m, p.n);
          if (p.ep.d.dtype == OG_DTYPE_BF16)
            deferred.template hold<true, kRegisterEpilogue>(acc, re, &map_d, row0, n0, item.batch, chunks, consumer, t);
          else
            deferred.template hold<false, kRegisterEpilogue>(acc, re, &map_d, row0, n0, item.batch, chunks, consumer, t);
          continue;
        }
        store_tile<S::WG_M, S::CONSUMER_N, kRegisterEpilogue>(acc, p.ep, item.batch, p.m, p.n, row0, n0, chunks, consumer, t,
                                                              chunk_sequence, f32_map);
        if constexpr (S::SPLIT_PAIRS) exchange.hand_back(unsigned(rank ^ 1));
      }
      flush_deferred();
      if constexpr (kDefer) deferred.drain(t);
      if (f32_map && t == 0) tma_store_wait_read<0>();  // the shared memory outlives the f32 stores' reads
    };
    // Kernels without the register epilogue defer the plain GEMM's outputs only (their hold
    // compiles no fused loops).
    if (kDeferrable && p.defer_epilogue && packed_rows_out(p.ep, p.n) && (kRegisterEpilogue || cuda::epilogue_plain(p.ep)))
      consume(std::true_type{});
    else consume(std::false_type{});
  }
  // No program may leave while its peer can still multicast or store into it or arrive on its
  // barriers.
  if constexpr (S::kClusterSize > 1) cluster_sync();
#endif
}

}  // namespace omnigemm::detail::sm90
