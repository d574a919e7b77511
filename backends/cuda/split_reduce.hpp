// The second launch of a split-K GEMM whose K slices wrote their partial sums to a workspace
// (cuda.sgemm's splits): D = epilogue(sum of the slices), the slices summed in slice order, so D
// does not depend on the order the slices ran in (bitwise-identical run to run).
#pragma once
#include <cuda_runtime.h>

#include "epilogue.cuh"

namespace omnigemm::detail::cuda {

// Slice s of batch b holds the m x n partial sums row-major at
// partials + (b * split + s) * m * ld, ld = n rounded up to a multiple of 4 (16-byte rows; the
// workspace is 256-byte aligned); the kernels store whole quads of four columns (the last
// one's padding included), the reduction reads the same quads and stores only columns < n.
struct SplitPartials {
  const float* partials;
  int m, n, split;
  long long ld;
};
constexpr long long split_partials_ld(long long n) { return (n + 3) / 4 * 4; }
constexpr long long split_partials_floats(long long m, long long n, long long split, long long batch) {
  return batch * split * m * split_partials_ld(n);
}

// Enqueues the reduction and epilogue of `batch` batches on `stream`, in chunks of max_grid_z.
cudaError_t launch_split_reduce(const SplitPartials& s, const EpilogueArgs& e, long long batch, long long max_grid_z,
                                cudaStream_t stream);

}  // namespace omnigemm::detail::cuda
