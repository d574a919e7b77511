// The PTX the Blackwell family is built on (sm_100a): mbarriers, TMA tensor loads and stores,
// cluster addressing, and the tcgen05 instructions: tensor-memory allocation, MMA of every kind
// the family runs, scale-factor copies into tensor memory, completion (commit), accumulator
// loads and the ordering fences. Compiled only in the sm_100a pass (OG_SM100A_DEVICE).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "layout.h"

#if defined(__CUDA_ARCH__) && (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_SPECIFIC__))
#define OG_SM100A_DEVICE 1
#endif

namespace omnigemm::detail::sm100 {

#ifdef OG_SM100A_DEVICE
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// ---- mbarriers ------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint32_t bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}
// Arrival on a barrier given by its shared::cluster address (this CTA's or the peer's).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}

// ---- Clusters -------------------------------------------------------------------------------
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// The shared::cluster address of the same shared-memory location in CTA `rank` of the cluster.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t addr, unsigned rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
  return remote;
}

// ---- TMA --------------------------------------------------------------------------------------
// Tiled loads completing on `bar` (a shared::cluster address). CTA_GROUP 2: the barrier may be in
// the peer CTA of the pair (the MMA-issuing CTA counts both CTAs' bytes).
template <int CTA_GROUP>
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2) {
  if constexpr (CTA_GROUP == 1)
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(
            dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
        "[%2];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}
template <int CTA_GROUP>
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, int c2,
                                            int c3) {
  if constexpr (CTA_GROUP == 1)
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];" ::
            "r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.4d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
        "%6}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}
// Tiled store of a staged box; its completion is tracked by the bulk group of this thread.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Waits until this thread's stores have read their staging (it may then be rewritten).
__device__ __forceinline__ void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
// Writes of the generic proxy to shared memory become visible to the TMA (async proxy).
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- tcgen05: tensor memory -------------------------------------------------------------------
// One warp allocates `columns` (a power of two >= 32) and writes the address to shared memory at
// `slot`; then gives up the right to allocate, so that a co-resident CTA is not blocked.
template <int CTA_GROUP>
__device__ __forceinline__ void tmem_alloc(uint32_t slot, uint32_t columns) {
  if constexpr (CTA_GROUP == 1) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(columns) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  } else {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot), "r"(columns) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
  }
}
template <int CTA_GROUP>
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr, uint32_t columns) {
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(columns) : "memory");
  else
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(columns) : "memory");
}
// Orders tcgen05 operations around a thread synchronisation (barrier, mbarrier wait).
__device__ __forceinline__ void tcgen05_before_sync() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void tcgen05_after_sync() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }

// ---- tcgen05: MMA -----------------------------------------------------------------------------
// D[tmem] (+)= A[smem desc] x B[smem desc]^T as the instruction descriptor says; `accumulate`
// false overwrites D. Block-scaled kinds also read A's and B's scale factors from tensor memory
// (the descriptor's scale-factor ids say which byte of the column).
template <Kind K, int CTA_GROUP>
__device__ __forceinline__ void mma(uint32_t d, uint64_t a, uint64_t b, uint32_t idesc, uint32_t sfa, uint32_t sfb,
                                    bool accumulate) {
  const uint32_t acc = accumulate ? 1u : 0u;
#define OG_SM100_MMA_DENSE(KIND_TEXT)                                          \
  asm volatile(                                                                \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                              \
      "tcgen05.mma.cta_group::" KIND_TEXT " [%0], %1, %2, %3, p;\n}" ::"r"(d), \
      "l"(a), "l"(b), "r"(idesc), "r"(acc)                                     \
      : "memory")
#define OG_SM100_MMA_SCALED(KIND_TEXT)                                                     \
  asm volatile(                                                                            \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                          \
      "tcgen05.mma.cta_group::" KIND_TEXT " [%0], %1, %2, %3, [%5], [%6], p;\n}" ::"r"(d), \
      "l"(a), "l"(b), "r"(idesc), "r"(acc), "r"(sfa), "r"(sfb)                             \
      : "memory")
  if constexpr (CTA_GROUP == 1) {
    if constexpr (K == Kind::f16)
      OG_SM100_MMA_DENSE("1.kind::f16");
    else if constexpr (K == Kind::f8f6f4)
      OG_SM100_MMA_DENSE("1.kind::f8f6f4");
    else if constexpr (K == Kind::mxf8f6f4)
      OG_SM100_MMA_SCALED("1.kind::mxf8f6f4.block_scale.scale_vec::1X");
    else if constexpr (K == Kind::mxf4)
      OG_SM100_MMA_SCALED("1.kind::mxf4.block_scale.scale_vec::2X");
    else
      OG_SM100_MMA_SCALED("1.kind::mxf4nvf4.block_scale.scale_vec::4X");
  } else {
    if constexpr (K == Kind::f16)
      OG_SM100_MMA_DENSE("2.kind::f16");
    else if constexpr (K == Kind::f8f6f4)
      OG_SM100_MMA_DENSE("2.kind::f8f6f4");
    else if constexpr (K == Kind::mxf8f6f4)
      OG_SM100_MMA_SCALED("2.kind::mxf8f6f4.block_scale.scale_vec::1X");
    else if constexpr (K == Kind::mxf4)
      OG_SM100_MMA_SCALED("2.kind::mxf4.block_scale.scale_vec::2X");
    else
      OG_SM100_MMA_SCALED("2.kind::mxf4nvf4.block_scale.scale_vec::4X");
  }
#undef OG_SM100_MMA_DENSE
#undef OG_SM100_MMA_SCALED
}

// The mbarrier at `bar` (this CTA's shared address) tracks the completion of every tcgen05
// operation this thread issued before. CTA_GROUP 2: it arrives on the barrier at the same offset
// in both CTAs of the pair.
template <int CTA_GROUP>
__device__ __forceinline__ void commit(uint32_t bar) {
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(bar) : "memory");
  else
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(bar),
        "h"(uint16_t(3))
        : "memory");
}

// A packed 512-byte scale tile (32 rows x 16 bytes, descriptor smem_desc_sf) into four columns of
// tensor memory from `taddr`, the same 32 rows in each lane quarter.
template <int CTA_GROUP>
__device__ __forceinline__ void copy_scales(uint32_t taddr, uint64_t desc) {
  if constexpr (CTA_GROUP == 1)
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(desc) : "memory");
  else
    asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(desc) : "memory");
}

// 32 consecutive columns of this warp's lane quarter: lane l gets lane (32 q + l)'s columns
// taddr.. taddr + 31 (q: the warp's index modulo 4, which the address's lane field must name).
__device__ __forceinline__ void tmem_load_32(uint32_t taddr, uint32_t (&v)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, "
      "%17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]), "=r"(v[17]),
        "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]), "=r"(v[25]), "=r"(v[26]),
        "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr)
      : "memory");
}
__device__ __forceinline__ void tmem_load_wait() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }
#endif

}  // namespace omnigemm::detail::sm100
