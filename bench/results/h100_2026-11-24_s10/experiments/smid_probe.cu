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
  for (int rep = 0; rep < 3; ++rep) {
    record<<<n, 384, 200 * 1024>>>(d);
    cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("rep %d:", rep);
    for (int i = 0; i < n; ++i) printf(" %d", h[i]);
    printf("\n");
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
