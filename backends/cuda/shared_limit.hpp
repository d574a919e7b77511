// A kernel's dynamic shared-memory limit, raised once per kernel and device: the attribute is
// kept per function and device, and setting it at every launch would cost a driver call each.
#pragma once
#include <cuda_runtime.h>

#include <atomic>

namespace omnigemm::detail {

// Raises `kernel`'s limit to `bytes` on the current device unless `raised_on` (the kernel's own
// record, bit d: device d) says it was done there.
template <class Kernel>
inline cudaError_t raise_shared_limit_once(Kernel kernel, int bytes, std::atomic<unsigned long long>& raised_on) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  const unsigned long long bit = 1ull << (device & 63);
  if (raised_on.load(std::memory_order_acquire) & bit) return cudaSuccess;
  if (cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes); e != cudaSuccess) return e;
  raised_on.fetch_or(bit, std::memory_order_acq_rel);
  return cudaSuccess;
}

}  // namespace omnigemm::detail
