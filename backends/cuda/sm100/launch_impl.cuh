// Instantiates gemm_tcgen05 for the kinds of one input width: one kernel per table row whose
// BLOCK_K is 128 bytes of that width (families/sm100_tcgen05.inc), and for kind::f16 one more with
// an MN-major B; dispatched from the same rows.
#pragma once
#include <atomic>

#include "../shared_limit.hpp"
#include "gemm_tcgen05.cuh"
#include "launch.hpp"

namespace omnigemm::detail::sm100 {

template <Kind KIND, int BLOCK_N, int CTA_GROUP, bool B_MN>
cudaError_t launch_tile(const Launch& l) {
  auto kernel = gemm_tcgen05<KIND, BLOCK_N, CTA_GROUP, B_MN>;
  static std::atomic<unsigned long long> raised_on{0};
  if (cudaError_t e = raise_shared_limit_once(kernel, int(l.max_shared), raised_on); e != cudaSuccess) return e;
  const Geometry g{KIND, BLOCK_N, CTA_GROUP, l.stages, B_MN};
  const size_t smem = shared_bytes(g);
  if (smem > l.max_shared) return cudaErrorInvalidValue;
  KernelArgs args{};
  args.m = l.m, args.n = l.n, args.k = l.k, args.batch = l.batch;
  args.num_pid_m = (l.m + block_m(g) - 1) / block_m(g);
  args.num_pid_n = (l.n + BLOCK_N - 1) / BLOCK_N;
  args.group_m = l.group_m;
  args.stages = l.stages;
  args.idesc = l.idesc;
  args.tma_store = l.tma_store;
  args.ep = l.ep;
  const int work = og_work_count(args.num_pid_m, args.num_pid_n, 1, l.batch);
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = smem;
  config.stream = l.stream;
  int clusters = l.max_clusters;
  if constexpr (CTA_GROUP > 1) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = CTA_GROUP;
    attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    // As many pairs as fit at once (an odd SM count within a GPC leaves SMs out).
    static std::atomic<int> max_pairs{0};
    if (max_pairs.load(std::memory_order_relaxed) == 0) {
      config.gridDim = dim3(unsigned(CTA_GROUP * 64));
      int n = 0;
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kernel, &config); e != cudaSuccess) return e;
      if (n <= 0) return cudaErrorInvalidConfiguration;
      max_pairs.store(n, std::memory_order_relaxed);
    }
    clusters = max_pairs.load(std::memory_order_relaxed);
  }
  config.gridDim = dim3(unsigned(CTA_GROUP * og_persistent_grid(work, clusters)));
  return cudaLaunchKernelEx(&config, kernel, l.map_a, l.map_b, l.map_sfa, l.map_sfb, l.map_d, args);
}

// The rows whose BLOCK_K is 128 bytes of KIND's elements.
template <Kind KIND>
cudaError_t launch_kind(const Launch& l) {
#define OG_CUDA_SM100_TCGEN05(BM_, BN_, BK_, GM_, ST_, FORM_)                                               \
  if constexpr (BK_ == block_k(KIND)) {                                                                     \
    constexpr int kGroup = parse_cta_group(#FORM_);                                                         \
    static_assert(kGroup > 0 && BM_ == 128 * kGroup, "families/sm100_tcgen05.inc: a row without a kernel"); \
    if (l.block_n == BN_ && l.cta_group == kGroup) {                                                        \
      if constexpr (KIND == Kind::f16)                                                                      \
        if (l.b_mn_major) return launch_tile<KIND, BN_, kGroup, true>(l);                                   \
      return launch_tile<KIND, BN_, kGroup, false>(l);                                                      \
    }                                                                                                       \
  }
#include "../families/sm100_tcgen05.inc"
#undef OG_CUDA_SM100_TCGEN05
  return cudaErrorInvalidValue;
}

}  // namespace omnigemm::detail::sm100
