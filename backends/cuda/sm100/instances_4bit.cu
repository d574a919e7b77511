#include "launch_impl.cuh"
namespace omnigemm::detail::sm100 {
cudaError_t launch_4bit(const Launch& l) {
  if (l.kind == Kind::mxf4) return launch_kind<Kind::mxf4>(l);
  if (l.kind == Kind::mxf4nvf4) return launch_kind<Kind::mxf4nvf4>(l);
  return cudaErrorInvalidValue;
}
}  // namespace omnigemm::detail::sm100
