#include "launch_impl.cuh"
namespace omnigemm::detail::sm90 {
cudaError_t launch_tf32(const Launch& l) { return launch_types<WgmmaType::tf32, WgmmaType::tf32>(l); }
}  // namespace omnigemm::detail::sm90
