// The CPU backend's micro-kernels by name: which ones this CPU and build can run, their tile
// shapes, and the names OMNIGEMM_CPU_KERNEL and a config's form use (scalar, avx2, avx512).
#pragma once

#include <string>

#include "cpu_kernels.hpp"

namespace omnigemm::detail::cpu {

enum class KernelKind : int { automatic = 0, scalar = 1, avx2 = 2, avx512 = 3 };

struct MicroKernel {
  KernelKind kind;
  const char* name;
  int mr, nr;
  MicroKernelFn fn;
};

bool cpu_has(KernelKind k);                     // the CPU and the build can run it
MicroKernel kernel_of(KernelKind k);            // the scalar kernel for automatic / unavailable
KernelKind best_kernel();                       // the widest available
const char* kernel_name(KernelKind k);          // "auto" for automatic
std::string supported_kernels();                // "scalar, avx2, ..." of those available
KernelKind parse_kernel_name(const char* s, bool& ok);  // null, "" and "auto": automatic

}  // namespace omnigemm::detail::cpu
