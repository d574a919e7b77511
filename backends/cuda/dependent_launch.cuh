// Programmatic dependent launch (sm_90): a kernel launched with the attribute may be scheduled
// while the previous kernel on its stream still runs; it waits (griddepcontrol.wait) for that
// kernel to finish and its writes to be visible before touching global memory, then lets the
// next kernel on the stream be scheduled in turn. One launch of a call thus hides its start
// behind the previous launch's tail: the repack copy's behind the previous GEMM, the GEMM's
// behind the copy, back-to-back calls' behind each other.
//
// Safe only where the kernel's binary holds the wait: the sm_90a code of this backend (an sm_90
// device). Elsewhere (sm_80 code, and the compute_80 PTX a newer device compiles) the
// instructions are absent, so the host sets the attribute only on sm_90 devices.
#pragma once
#include <cuda_runtime.h>

namespace omnigemm::detail::cuda {

// First in a kernel: everything before it may overlap the previous kernel; nothing after it does.
// Kernel parameters are not the previous kernel's data and may be read before.
__device__ __forceinline__ void dependent_launch_begin() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Adds the attribute to `config` (its attrs array has room) where `on`.
inline void add_dependent_launch(cudaLaunchConfig_t& config, cudaLaunchAttribute* attrs, bool on) {
  if (!on) return;
  config.attrs = attrs;
  attrs[config.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[config.numAttrs++].val.programmaticStreamSerializationAllowed = 1;
}

}  // namespace omnigemm::detail::cuda
