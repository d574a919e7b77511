#include "launch_impl.cuh"
namespace omnigemm::detail::sm80 {
cudaError_t launch_bf16(const Launch& l) { return launch_type<__nv_bfloat16>(l); }
}  // namespace omnigemm::detail::sm80
