// The hip.gfx90a_mfma kernels of one multiplicand type (OG_GFX90A_BF16 = 0: f16, 1: bf16): per
// row of families/gfx90a_mfma.inc, one kernel with the vector loaders and one with the gathering
// loader. Each carries the row's occupancy hint as amdgpu_waves_per_eu(W, W) and launch bounds of
// exactly its workgroup size, so the compiler budgets registers for W waves per SIMD. Compiled
// for gfx90a into a raw code object that the library embeds (backends/hip/CMakeLists.txt) and
// loads with hipModuleLoadData.
#include "gemm_mfma.hip.h"
#include "symbols.h"

#ifndef OG_GFX90A_BF16
#error "compile with -DOG_GFX90A_BF16=0 (f16) or 1 (bf16)"
#endif
#if OG_GFX90A_BF16
#define OG_GFX90A_TYPE bf16
#else
#define OG_GFX90A_TYPE f16
#endif

#define OG_GFX90A_KERNEL(name, BM, BN, BK, W, E, GATHER)                                                 \
  extern "C" __global__ void __launch_bounds__(W * 64) __attribute__((amdgpu_waves_per_eu(E, E)))        \
  name(omnigemm::hip::KernelArgs p) {                                                                    \
    __shared__ __attribute__((aligned(16))) unsigned short lds[omnigemm::hip::kLdsElements<BM, BN, BK>]; \
    omnigemm::hip::gemm_mfma<BM, BN, BK, W, OG_GFX90A_BF16 != 0, GATHER>(p, lds);                       \
  }
#define OG_GFX90A_ROW(type, BM, BN, BK, ST, W, E)                                                \
  static_assert(ST == 0, "the kernel has one LDS buffer and register prefetch: STAGES must be 0"); \
  OG_GFX90A_KERNEL(OG_GFX90A_SYMBOL(type, BM, BN, BK, W, E), BM, BN, BK, W, E, false)              \
  OG_GFX90A_KERNEL(OG_GFX90A_GATHER_SYMBOL(type, BM, BN, BK, W, E), BM, BN, BK, W, E, true)
#define OG_GFX90A_ROW_OF(type, BM, BN, BK, ST, W, E) OG_GFX90A_ROW(type, BM, BN, BK, ST, W, E)
#define OG_HIP_GFX90A_MFMA(BM, BN, BK, GM, ST, W, E) OG_GFX90A_ROW_OF(OG_GFX90A_TYPE, BM, BN, BK, ST, W, E)
#include "../families/gfx90a_mfma.inc"
#undef OG_HIP_GFX90A_MFMA
