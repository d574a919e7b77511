#include "launch_impl.cuh"
namespace omnigemm::detail::sm90 {
cudaError_t launch_fp8(const Launch& l, bool a_e5m2, bool b_e5m2) {
  using T = WgmmaType;
  if (!a_e5m2 && !b_e5m2) return launch_types<T::e4m3, T::e4m3>(l);
  if (!a_e5m2) return launch_types<T::e4m3, T::e5m2>(l);
  if (!b_e5m2) return launch_types<T::e5m2, T::e4m3>(l);
  return launch_types<T::e5m2, T::e5m2>(l);
}
}  // namespace omnigemm::detail::sm90
