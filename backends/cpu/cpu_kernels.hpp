// Register-blocked f32 micro-kernels of the CPU backend's packed GEMM.
//
// Each kernel computes one MR x NR tile from a packed A micro-panel (kc rows of MR values,
// a[k * MR + i]) and a packed B micro-panel (kc rows of NR values, b[k * NR + j]):
//   tile[i * ldt + j] (+)= sum_k a[k * MR + i] * b[k * NR + j]     for all i < MR, j < NR
// overwriting the tile when `accumulate` is 0 and adding to it otherwise. Panels are padded
// with zeros to full MR / NR, so kernels never see edges. b must be 64-byte aligned.
//
// The AVX2 and AVX-512 kernels live in their own translation units compiled with those ISA
// flags; they include only intrinsics headers (no inline library code that the linker could
// pick up in place of a baseline copy) and are only called after a run-time CPU check.
#pragma once

#include <cstdint>

namespace omnigemm::detail::cpu {

using MicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate);

// Tile shapes (rows x columns) of each kernel.
inline constexpr int kScalarMR = 4, kScalarNR = 8;
inline constexpr int kAvx2MR = 6, kAvx2NR = 16;
inline constexpr int kAvx512MR = 14, kAvx512NR = 32;
inline constexpr int kMaxMR = 16, kMaxNR = 32;  // bounds for scratch tiles

void micro_kernel_scalar(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate);
#if defined(OMNIGEMM_CPU_X86_KERNELS)
void micro_kernel_avx2(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate);
void micro_kernel_avx512(int64_t kc, const float* a, const float* b, float* tile, int64_t ldt, int accumulate);
#endif

}  // namespace omnigemm::detail::cpu
