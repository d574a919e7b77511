// Instantiates gemm_block128 for each row of families/sm90_blockscaled.inc and each fp8 type
// pair; the launch dispatch is generated from the same rows.
#include <atomic>

#include "../shared_limit.hpp"
#include "gemm_block128.cuh"
#include "launch.hpp"

namespace omnigemm::detail::sm90 {

namespace {

template <class S>
cudaError_t launch_shape(const Block128Launch& l) {
  static std::atomic<unsigned long long> raised_on{0};
  if (cudaError_t e = raise_shared_limit_once(gemm_block128<S>, int(l.max_shared), raised_on); e != cudaSuccess) return e;
  const size_t smem = S::shared_bytes(l.args.stages);
  if (smem > l.max_shared) return cudaErrorInvalidValue;
  if constexpr (S::CLUSTER_M == 1) {
    gemm_block128<S><<<unsigned(l.grid), S::kThreads, smem, l.stream>>>(l.map_a, l.map_b, l.args);
    return cudaGetLastError();
  } else {
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    config.blockDim = dim3(S::kThreads);
    config.dynamicSmemBytes = smem;
    config.stream = l.stream;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = unsigned(S::CLUSTER_M);
    attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
    // As many clusters as fit at once (an odd SM count within a GPC leaves SMs out).
    static std::atomic<int> max_clusters{0};
    if (max_clusters.load(std::memory_order_relaxed) == 0) {
      config.gridDim = dim3(unsigned(S::CLUSTER_M * 64));
      int n = 0;
      if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, gemm_block128<S>, &config); e != cudaSuccess) return e;
      if (n <= 0) return cudaErrorInvalidConfiguration;
      max_clusters.store(n, std::memory_order_relaxed);
    }
    const OgClusterGrid g = og_cluster_grid(l.args.num_pid_m, l.args.num_pid_n, l.args.group_m, 1, S::CLUSTER_M, 1);
    const int groups = og_cluster_work_count(g, l.args.batch);
    config.gridDim = dim3(unsigned(S::CLUSTER_M * og_persistent_grid(groups, max_clusters.load(std::memory_order_relaxed))));
    return cudaLaunchKernelEx(&config, gemm_block128<S>, l.map_a, l.map_b, l.args);
  }
}

template <WgmmaType TA, WgmmaType TB>
cudaError_t launch_types(const Block128Launch& l) {
#define OG_CUDA_SM90_BLOCKSCALED(BM_, BN_, BK_, GM_, ST_, FORM_)                                                  \
  if (l.block_n == BN_ && l.form == BlockscaledForm::FORM_)                                                       \
    return launch_shape<Block128Shape<BN_, TA, TB, BlockscaledForm::FORM_ == BlockscaledForm::mcast ? 2 : 1,      \
                                      BlockscaledForm::FORM_ == BlockscaledForm::pipe>>(l);
#include "../families/sm90_blockscaled.inc"
#undef OG_CUDA_SM90_BLOCKSCALED
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_block128(const Block128Launch& l) {
  using T = WgmmaType;
  if (!l.a_e5m2 && !l.b_e5m2) return launch_types<T::e4m3, T::e4m3>(l);
  if (!l.a_e5m2) return launch_types<T::e4m3, T::e5m2>(l);
  if (!l.b_e5m2) return launch_types<T::e5m2, T::e4m3>(l);
  return launch_types<T::e5m2, T::e5m2>(l);
}

}  // namespace omnigemm::detail::sm90
