// The HIP backend's kernel families: hip.gfx90a_mfma (AMD MI200), defined by its table in families/.
#pragma once
#include <memory>

#include "hip_device.hpp"

namespace omnigemm::detail {

std::unique_ptr<KernelFamily> make_gfx90a_mfma_family(HipDevice& device);

}  // namespace omnigemm::detail
