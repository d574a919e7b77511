// Portable micro-kernel (baseline ISA): plain loops over a small accumulator array that the
// compiler keeps in vector registers of whatever the baseline offers (SSE2 on x86-64).
#include "cpu_kernels.hpp"

namespace omnigemm::detail::cpu {

void micro_kernel_scalar(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate) {
  constexpr int MR = kScalarMR, NR = kScalarNR;
  float acc[MR][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int i = 0; i < MR; ++i) {
      const float ai = a[i];
      for (int j = 0; j < NR; ++j) acc[i][j] += ai * b[j];
    }
    a += MR;
    b += NR;
  }
  for (int i = 0; i < MR; ++i) {
    float* row = tile + i * ldt;
    if (accumulate)
      for (int j = 0; j < NR; ++j) row[j] += acc[i][j];
    else
      for (int j = 0; j < NR; ++j) row[j] = acc[i][j];
  }
}

}  // namespace omnigemm::detail::cpu
