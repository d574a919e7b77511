#include "split_reduce.hpp"

#include <algorithm>

namespace omnigemm::detail::cuda {

namespace {

constexpr int kThreads = 256;

struct ReduceArgs {
  SplitPartials s;
  EpilogueArgs ep;
  long long batch_base;
};

// One thread per quad of four partial columns of one row; consecutive threads take consecutive
// quads of a row, so the partial loads and a row-major D's stores coalesce. Each slice is read
// once (streaming loads: the workspace is not read again).
__global__ void __launch_bounds__(kThreads) split_reduce(const __grid_constant__ ReduceArgs p) {
  const long long quads_per_row = p.s.ld / 4;
  const long long q = (long long)blockIdx.x * kThreads + threadIdx.x;
  if (q >= p.s.m * quads_per_row) return;
  const int gm = int(q / quads_per_row), gn = int(q % quads_per_row) * 4;
  if (gn >= p.s.n) return;
  const long long batch = p.batch_base + blockIdx.z;
  const long long slice_floats = (long long)p.s.m * p.s.ld;
  const float4* at = reinterpret_cast<const float4*>(p.s.partials + batch * p.s.split * slice_floats + gm * p.s.ld + gn);
  float4 sum = __ldcs(at);
#pragma unroll 4
  for (int s = 1; s < p.s.split; ++s) {
    const float4 v = __ldcs(at + s * (slice_floats / 4));
    sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
  }
  epilogue_store_four(p.ep, batch, gm, gn, p.s.n, sum);
}

}  // namespace

cudaError_t launch_split_reduce(const SplitPartials& s, const EpilogueArgs& e, long long batch, long long max_grid_z,
                                cudaStream_t stream) {
  const long long quads = (long long)s.m * (s.ld / 4);
  const unsigned blocks = unsigned((quads + kThreads - 1) / kThreads);
  for (long long b0 = 0; b0 < batch; b0 += max_grid_z) {
    const ReduceArgs args{s, e, b0};
    split_reduce<<<dim3(blocks, 1, unsigned(std::min(max_grid_z, batch - b0))), kThreads, 0, stream>>>(args);
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace omnigemm::detail::cuda
