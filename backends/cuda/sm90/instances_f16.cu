#include "launch_impl.cuh"
namespace omnigemm::detail::sm90 {
cudaError_t launch_f16(const Launch& l) { return launch_types<WgmmaType::f16, WgmmaType::f16>(l); }
}  // namespace omnigemm::detail::sm90
