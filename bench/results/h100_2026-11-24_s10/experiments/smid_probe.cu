// Which SM runs which block of a 132-block grid with one block per SM (as the Hopper GEMM's
// persistent grid), launched back to back several times.
#include <cstdio>
#include <vector>
__global__ void record(int* out) {
  extern __shared__ unsigned char smem[];
  if (threadIdx.x == 0) {
    unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    out[blockIdx.x] = int(s);
    smem[0] = 1;
  }
  __syncthreads();
  // keep the block resident a little so that all 132 are co-resident
  long long t0 = clock64(); while (clock64() - t0 < 200000) {}
}
int main() {
  int n = 132; int* d; cudaMalloc(&d, n * sizeof(int));
  cudaFuncSetAttribute(record, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
  std::vector<int> h(n);
  for (int rep = 0; rep < 4; ++rep) {
    if (rep < 2) {
      record<<<n, 384, 200 * 1024>>>(d);
    } else {  // the same grid in clusters of two
      cudaLaunchConfig_t config{};
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = 2; attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
      config.gridDim = dim3(n); config.blockDim = dim3(384); config.dynamicSmemBytes = 200 * 1024;
      config.attrs = &attr; config.numAttrs = 1;
      cudaLaunchKernelEx(&config, record, d);
    }
    cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%s %d:", rep < 2 ? "plain" : "cluster2", rep);
    for (int i = 0; i < n; ++i) printf(" %d", h[i]);
    printf("\n");
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
