// The CUDA backend's kernel families, fastest first: cuda.sm90_wgmma (Hopper), cuda.sm80_mma
// (Ampere and newer), cuda.simt (everything else). Each is defined by its table in families/.
#pragma once
#include <memory>

#include "cuda_device.hpp"

namespace omnigemm::detail {

std::unique_ptr<KernelFamily> make_sm90_wgmma_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_sm80_mma_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_simt_family(CudaDevice& device);

}  // namespace omnigemm::detail
