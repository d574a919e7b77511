// AVX-512F micro-kernel, 14 x 32: 28 zmm accumulators + 2 B vectors; A values are broadcast
// straight from memory into the FMAs. Compiled with -mavx512f -mfma; called only when the CPU
// reports AVX-512F (and the OS saves the zmm state, which __builtin_cpu_supports checks).
#include <immintrin.h>

#include "cpu_kernels.hpp"

namespace omnigemm::detail::cpu {

void micro_kernel_avx512(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate) {
  constexpr int MR = kAvx512MR, NV = kAvx512NR / 16;
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  // The tile's rows are usually not in cache (W spans many MiB): fetch them during the k loop.
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(tile + i * ldt), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(tile + i * ldt + 16), _MM_HINT_T0);
  }
  for (int64_t k = 0; k < kc; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += kAvx512NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float* p = tile + i * ldt + 16 * v;
      _mm512_storeu_ps(p, accumulate ? _mm512_add_ps(_mm512_loadu_ps(p), acc[i][v]) : acc[i][v]);
    }
}

}  // namespace omnigemm::detail::cpu
