// The Hopper epilogue's memory accesses as single PTX instructions: shared memory by 32-bit
// shared-window address, stmatrix, and global loads under a predicate instead of a branch; and
// the hardware tanh. sm_90a device passes only (OG_SM90A_DEVICE).
#pragma once
#include <cstdint>

#include "device_arch.cuh"

namespace omnigemm::detail::sm90 {

#ifdef OG_SM90A_DEVICE
// Shared-memory accesses by 32-bit shared-window address. A generic pointer into the chunks
// compiled to generic ST/LD (and 64-bit address arithmetic) per access: at 4096^3 the
// epilogue then took 17% of the consumers' stall samples.
__device__ __forceinline__ void st_shared_f32x2(uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ uint4 ld_shared_u32x4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ float ld_shared_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ float2 ld_shared_f32x2(uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}
// Four 8x8 matrices of 16-bit values, one 32-bit register each per thread (row lane / 4,
// columns 2 (lane % 4) + 0..1: the accumulator layout of wgmma and mma.sync); lane 8 i + r
// gives the address of row r of matrix i.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2),
               "r"(r3)
               : "memory");
}

__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// A global load where `pred` holds, else `other`: one predicated load, no branch (the fused
// epilogue's bias and C reads at the tile's edges).
__device__ __forceinline__ float ld_f32_if(const float* p, bool pred, float other) {
  float v;
  asm("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\nmov.b32 %0, %3;\n@p ld.global.f32 %0, [%1];\n}"
      : "=f"(v)
      : "l"(p), "r"(int(pred)), "f"(other));
  return v;
}
__device__ __forceinline__ float2 ld_f32x2_if(const float* p, bool pred) {
  float2 v;
  asm("{\n.reg .pred p;\nsetp.ne.b32 p, %3, 0;\nmov.b32 %0, 0;\nmov.b32 %1, 0;\n@p ld.global.v2.f32 {%0, %1}, [%2];\n}"
      : "=f"(v.x), "=f"(v.y)
      : "l"(p), "r"(int(pred)));
  return v;
}
__device__ __forceinline__ uint32_t ld_u32_if(const void* p, bool pred) {
  uint32_t v;
  asm("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\nmov.b32 %0, 0;\n@p ld.global.b32 %0, [%1];\n}"
      : "=r"(v)
      : "l"(p), "r"(int(pred)));
  return v;
}
#endif  // OG_SM90A_DEVICE

}  // namespace omnigemm::detail::sm90
