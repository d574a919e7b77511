#include "kernel_registry.hpp"

#include <cstring>

namespace omnigemm::detail::cpu {

bool cpu_has(KernelKind k) {
  switch (k) {
    case KernelKind::scalar: return true;
#if defined(OMNIGEMM_CPU_X86_KERNELS)
    case KernelKind::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case KernelKind::avx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
    default: return false;
  }
}

MicroKernel kernel_of(KernelKind k) {
  switch (k) {
#if defined(OMNIGEMM_CPU_X86_KERNELS)
    case KernelKind::avx512: return {k, "avx512", kAvx512MR, kAvx512NR, micro_kernel_avx512};
    case KernelKind::avx2: return {k, "avx2", kAvx2MR, kAvx2NR, micro_kernel_avx2};
#endif
    default: return {KernelKind::scalar, "scalar", kScalarMR, kScalarNR, micro_kernel_scalar};
  }
}

KernelKind best_kernel() {
  for (KernelKind k : {KernelKind::avx512, KernelKind::avx2})
    if (cpu_has(k)) return k;
  return KernelKind::scalar;
}

const char* kernel_name(KernelKind k) {
  switch (k) {
    case KernelKind::scalar: return "scalar";
    case KernelKind::avx2: return "avx2";
    case KernelKind::avx512: return "avx512";
    default: return "auto";
  }
}

std::string supported_kernels() {
  std::string s;
  for (KernelKind k : {KernelKind::scalar, KernelKind::avx2, KernelKind::avx512})
    if (cpu_has(k)) s += std::string(s.empty() ? "" : ", ") + kernel_name(k);
  return s;
}

KernelKind parse_kernel_name(const char* s, bool& ok) {
  ok = true;
  if (!s || !*s || !std::strcmp(s, "auto")) return KernelKind::automatic;
  if (!std::strcmp(s, "scalar")) return KernelKind::scalar;
  if (!std::strcmp(s, "avx2")) return KernelKind::avx2;
  if (!std::strcmp(s, "avx512")) return KernelKind::avx512;
  ok = false;
  return KernelKind::automatic;
}

}  // namespace omnigemm::detail::cpu
