/* The language shims of OmniGEMM's shared headers (tile_schedule.h, epilogue.h and the ones that
 * follow them), which compile as C++ (host), CUDA, HIP and GLSL (via GL_GOOGLE_include_directive):
 *   OG_GLSL        defined when compiling GLSL
 *   OG_FUNC        the storage of a shared function: static inline, __host__ __device__ on CUDA/HIP
 *   OG_OUT(T)      an out-parameter: `out T` in GLSL, `T&` elsewhere
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

#endif /* OMNIGEMM_LANG_H */
