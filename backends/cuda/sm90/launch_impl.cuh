// Instantiates gemm_tma_wgmma for one input-type pair: one instantiation per distinct kernel key
// of the rows of families/sm90_wgmma.inc whose BLOCK_K is 128 bytes of this input type, for each
// operand layout the key supports; the launch dispatch is generated from the same rows.
#pragma once
#include <algorithm>
#include <atomic>

#include "../shared_limit.hpp"
#include "gemm_tma_wgmma.cuh"
#include "launch.hpp"

namespace omnigemm::detail::sm90 {

template <class S>
cudaError_t launch_shape(const Launch& l) {
  static std::atomic<unsigned long long> raised_on{0};
  if (cudaError_t e = raise_shared_limit_once(gemm_tma_wgmma<S>, int(l.max_shared), raised_on); e != cudaSuccess) return e;
  const size_t smem = S::shared_bytes(l.stages);
  if (smem > l.max_shared) return cudaErrorInvalidValue;
  if (S::SPLIT_PAIRS && l.split_k != 2) return cudaErrorInvalidValue;
  KernelArgs args{};
  args.m = l.m; args.n = l.n; args.k = l.k; args.batch = l.batch;
  args.num_pid_m = (l.m + S::BLOCK_M - 1) / S::BLOCK_M;
  args.num_pid_n = (l.n + S::BLOCK_N - 1) / S::BLOCK_N;
  args.group_m = l.group_m;
  args.k_tiles = (l.k + S::BLOCK_K - 1) / S::BLOCK_K;
  args.stages = l.stages;
  args.split_k = l.split_k;
  args.partials = l.partials;
  args.counters = l.counters;
  args.defer_epilogue = l.defer_epilogue;
  args.ep = l.ep;
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attributes[2]{};
  config.blockDim = dim3(S::kThreads);
  config.dynamicSmemBytes = smem;
  config.stream = l.stream;
  config.attrs = attributes;
  // Programmatic dependent launch: the kernel may be scheduled before the previous kernel on
  // the stream has finished (it waits with griddepcontrol.wait before touching memory), which
  // hides the launch and prologue of back-to-back GEMMs.
  if (l.dependent_launch) {
    attributes[config.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[config.numAttrs++].val.programmaticStreamSerializationAllowed = 1;
  }
  // Clusters of two: multicast tiles (CLUSTER_M) or split-K pairs, never both.
  if constexpr (S::kClusterSize == 1) {
    config.gridDim = dim3(unsigned(l.grid));
  } else {
    attributes[config.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attributes[config.numAttrs].val.clusterDim.x = unsigned(S::kClusterSize);
    attributes[config.numAttrs].val.clusterDim.y = attributes[config.numAttrs].val.clusterDim.z = 1;
    ++config.numAttrs;
    // As many clusters as fit at once (an SM count that is odd within a GPC leaves SMs out).
    static std::atomic<int> max_clusters{0};
    if (max_clusters.load(std::memory_order_relaxed) == 0) {
      config.gridDim = dim3(unsigned(S::kClusterSize * 64));
      int n = 0;
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, gemm_tma_wgmma<S>, &config); e != cudaSuccess) return e;
      if (n <= 0) return cudaErrorInvalidConfiguration;
      max_clusters.store(n, std::memory_order_relaxed);
    }
    const int groups = S::work_count(args.num_pid_m, args.num_pid_n, args.split_k, args.batch);
    config.gridDim = dim3(unsigned(S::kClusterSize * og_persistent_grid(groups, max_clusters.load(std::memory_order_relaxed))));
  }
  return cudaLaunchKernelEx(&config, gemm_tma_wgmma<S>, l.map_a, l.map_b, l.map_d, args);
}

template <KernelKey K, WgmmaType TA, WgmmaType TB, bool A_MN, bool B_MN>
cudaError_t launch_key(const Launch& l) {
  if constexpr (B_MN && K.needs_k_major_b()) return cudaErrorInvalidValue;
  else
    return launch_shape<Shape<K.block_n, K.wg_m, TA, TB, A_MN, B_MN, K.pingpong, K.cluster_m, K.split_n, K.split_pairs>>(l);
}

// BLOCK_K of the rows instantiated for input type T: 128 bytes of K.
template <WgmmaType T>
constexpr int kRowBlockK = (T == WgmmaType::f16 || T == WgmmaType::bf16) ? 64 : T == WgmmaType::tf32 ? 32 : 128;

template <WgmmaType TA, WgmmaType TB, bool A_MN, bool B_MN>
cudaError_t launch_layout(const Launch& l) {
  // One test per table row (rows sharing a key share the instantiation).
#define OG_CUDA_SM90_WGMMA(BM_, BN_, BK_, GM_, ST_, SK_, FORM_)                            \
  if constexpr (BK_ == kRowBlockK<TA>) {                                                    \
    constexpr KernelKey kRow = kernel_key(BM_, BN_, SK_, Form::FORM_);                      \
    static_assert(kRow.wg_m > 0, "families/sm90_wgmma.inc: a row without a kernel");       \
    if (l.key == kRow) return launch_key<kRow, TA, TB, A_MN, B_MN>(l);                       \
  }
#include "../families/sm90_wgmma.inc"
#undef OG_CUDA_SM90_WGMMA
  return cudaErrorInvalidValue;
}

template <WgmmaType TA, WgmmaType TB>
cudaError_t launch_types(const Launch& l) {
  constexpr bool kSixteenBit = TA == WgmmaType::f16 || TA == WgmmaType::bf16;
  if constexpr (kSixteenBit) {
    if (l.a_mn_major && l.b_mn_major) return launch_layout<TA, TB, true, true>(l);
    if (l.a_mn_major) return launch_layout<TA, TB, true, false>(l);
    if (l.b_mn_major) return launch_layout<TA, TB, false, true>(l);
  } else {
    if (l.a_mn_major || l.b_mn_major) return cudaErrorInvalidValue;
  }
  return launch_layout<TA, TB, false, false>(l);
}

}  // namespace omnigemm::detail::sm90
