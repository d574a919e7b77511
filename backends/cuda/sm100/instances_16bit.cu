#include "launch_impl.cuh"
namespace omnigemm::detail::sm100 {
cudaError_t launch_16bit(const Launch& l) { return l.kind == Kind::f16 ? launch_kind<Kind::f16>(l) : cudaErrorInvalidValue; }
}  // namespace omnigemm::detail::sm100
