/* The language shims of OmniGEMM's shared headers (tile_schedule.h, epilogue.h and the ones that
 * follow them), which compile as C++ (host), CUDA, HIP and GLSL (via GL_GOOGLE_include_directive):
 *   OG_GLSL        defined when compiling GLSL
 *   OG_FUNC        the storage of a shared function: static inline, __host__ __device__ on CUDA/HIP
 *   OG_OUT(T)      an out-parameter: `out T` in GLSL, `T&` elsewhere
 *   og_uint        a 32-bit unsigned integer
 *   og_float_bits  a float's bits as og_uint, og_bits_float the reverse (exact, every language)
 * Keep the shared headers to the common subset: 32-bit ints, float math, plain structs without
 * constructors, no pointers, no names with two consecutive underscores (reserved in GLSL). */
#ifndef OMNIGEMM_LANG_H
#define OMNIGEMM_LANG_H

#if defined(GL_core_profile) || defined(GL_ES) || defined(VULKAN)
#define OG_GLSL 1
#endif

#ifdef OG_GLSL
#define OG_FUNC
#define OG_OUT(T) out T
#else
#if defined(__CUDACC__) || defined(__HIP__) || defined(__HIPCC__)
#define OG_FUNC static inline __host__ __device__
#else
#define OG_FUNC static inline
#endif
#define OG_OUT(T) T&
#endif

#ifdef OG_GLSL
#define og_uint uint
#define og_float_bits(f) floatBitsToUint(f)
#define og_bits_float(u) uintBitsToFloat(u)
#else
#include <string.h>
typedef unsigned int og_uint;
OG_FUNC og_uint og_float_bits(float f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __float_as_uint(f);
#else
  og_uint u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}
OG_FUNC float og_bits_float(og_uint u) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}
#endif

#endif /* OMNIGEMM_LANG_H */
