#include "launch_impl.cuh"
namespace omnigemm::detail::sm80 {
cudaError_t launch_f16(const Launch& l) { return launch_type<__half>(l); }
}  // namespace omnigemm::detail::sm80
