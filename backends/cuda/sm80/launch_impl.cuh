// Instantiates gemm_mma_sync for one multiplicand type over the rows of families/sm80_mma.inc and
// the loaders each row names; the launch dispatch is generated from the same rows.
#pragma once
#include <algorithm>
#include <atomic>

#include "../shared_limit.hpp"
#include "gemm_mma_sync.cuh"
#include "launch.hpp"

namespace omnigemm::detail::sm80 {

template <class S>
cudaError_t launch_shape(const Launch& l) {
  const size_t smem = shared_bytes(S::BLOCK_M, S::BLOCK_N, S::THREADS / 32, S::A_K_MAJOR, S::B_K_MAJOR, l.stages);
  if (l.stages < kMinStages || l.stages > kMaxStages || smem > l.max_shared) return cudaErrorInvalidValue;
  static std::atomic<unsigned long long> raised_on{0};
  if (cudaError_t e = raise_shared_limit_once(gemm_mma_sync<S>, int(l.max_shared), raised_on); e != cudaSuccess) return e;
  KernelArgs args{};
  args.m = l.m; args.n = l.n; args.k = l.k;
  args.num_pid_m = (l.m + S::BLOCK_M - 1) / S::BLOCK_M;
  args.num_pid_n = (l.n + S::BLOCK_N - 1) / S::BLOCK_N;
  args.group_m = l.group_m;
  args.stages = l.stages;
  args.a = l.a; args.b = l.b; args.ep = l.ep;
  const unsigned tiles = unsigned(args.num_pid_m * (long long)args.num_pid_n);
  for (int b0 = 0; b0 < l.batch; b0 += l.max_grid_z) {
    args.batch_base = b0;
    const dim3 grid(tiles, 1, unsigned(std::min(l.max_grid_z, l.batch - b0)));
    gemm_mma_sync<S><<<grid, S::THREADS, smem, l.stream>>>(args);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

template <class T, bool A_K_MAJOR, bool B_K_MAJOR, bool GATHER>
cudaError_t launch_loader(const Launch& l) {
#define OG_CUDA_SM80_MMA(BM_, BN_, BK_, GM_, ST_, W_, GATHER_)                                             \
  if constexpr (!GATHER || GATHER_)                                                                         \
    if (l.block_m == BM_ && l.block_n == BN_ && l.warps == W_)                                              \
      return launch_shape<Shape<T, BM_, BN_, kWarpsM, W_ / kWarpsM, A_K_MAJOR, B_K_MAJOR, GATHER>>(l);
#include "../families/sm80_mma.inc"
#undef OG_CUDA_SM80_MMA
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t launch_type(const Launch& l) {
  if (l.gather) return launch_loader<T, true, true, true>(l);
  if (l.a_k_major && l.b_k_major) return launch_loader<T, true, true, false>(l);
  if (l.a_k_major) return launch_loader<T, true, false, false>(l);
  if (l.b_k_major) return launch_loader<T, false, true, false>(l);
  return launch_loader<T, false, false, false>(l);
}

}  // namespace omnigemm::detail::sm80
