// AVX2 + FMA micro-kernel, 6 x 16: 12 ymm accumulators, 2 B vectors, 1 broadcast.
// Compiled with -mavx2 -mfma; called only when the CPU reports both.
#include <immintrin.h>

#include "cpu_kernels.hpp"

namespace omnigemm::detail::cpu {

void micro_kernel_avx2(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate) {
  constexpr int MR = kAvx2MR, NV = kAvx2NR / 8;
  __m256 acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
  // The tile's rows are usually not in cache when it is a slice of the partial-sum buffer.
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) _mm_prefetch(reinterpret_cast<const char*>(tile + i * ldt), _MM_HINT_T0);
  for (int64_t k = 0; k < kc; ++k) {
    __m256 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += kAvx2NR;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* p = tile + i * ldt + 8 * v;
      _mm256_storeu_ps(p, accumulate ? _mm256_add_ps(_mm256_loadu_ps(p), acc[i][v]) : acc[i][v]);
    }
}

}  // namespace omnigemm::detail::cpu
