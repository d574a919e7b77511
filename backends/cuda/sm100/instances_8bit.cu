#include "launch_impl.cuh"
namespace omnigemm::detail::sm100 {
cudaError_t launch_8bit(const Launch& l) {
  if (l.kind == Kind::f8f6f4) return launch_kind<Kind::f8f6f4>(l);
  if (l.kind == Kind::mxf8f6f4) return launch_kind<Kind::mxf8f6f4>(l);
  return cudaErrorInvalidValue;
}
}  // namespace omnigemm::detail::sm100
