// Links the factories of the backends compiled into this build (CMake defines
// OMNIGEMM_WITH_<NAME> for each). The only place the engine names a backend.
#include "backend.hpp"

namespace omnigemm::detail {

#define OG_DECLARE_FACTORY(name) Status name(const BackendOptions&, std::unique_ptr<Backend>&);
OG_DECLARE_FACTORY(make_cpu_backend)
#ifdef OMNIGEMM_WITH_VULKAN
OG_DECLARE_FACTORY(make_vulkan_backend)
#endif
#ifdef OMNIGEMM_WITH_CUDA
OG_DECLARE_FACTORY(make_cuda_backend)
#endif
#ifdef OMNIGEMM_WITH_HIP
OG_DECLARE_FACTORY(make_hip_backend)
#endif
#undef OG_DECLARE_FACTORY

BackendFactory backend_factory(og_backend kind) {
  switch (kind) {
    case OG_BACKEND_CPU: return &make_cpu_backend;
#ifdef OMNIGEMM_WITH_VULKAN
    case OG_BACKEND_VULKAN: return &make_vulkan_backend;
#endif
#ifdef OMNIGEMM_WITH_CUDA
    case OG_BACKEND_CUDA: return &make_cuda_backend;
#endif
#ifdef OMNIGEMM_WITH_HIP
    case OG_BACKEND_HIP: return &make_hip_backend;
#endif
    default: return nullptr;
  }
}

}  // namespace omnigemm::detail
