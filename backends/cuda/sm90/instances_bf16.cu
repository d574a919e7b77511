#include "launch_impl.cuh"
namespace omnigemm::detail::sm90 {
cudaError_t launch_bf16(const Launch& l) { return launch_types<WgmmaType::bf16, WgmmaType::bf16>(l); }
}  // namespace omnigemm::detail::sm90
