// The CUDA backend's kernel families, fastest first: cuda.sm100_tcgen05 (Blackwell, compute
// capability 10.x), cuda.sm90_wgmma (Hopper), cuda.sm90_repack
// (Hopper, on copies of operands TMA cannot load), cuda.sm80_mma (Ampere and newer), cuda.simt
// (everything else). Each is defined by its table in families/.
#pragma once
#include <memory>

#include "cuda_device.hpp"

namespace omnigemm::detail {

std::unique_ptr<KernelFamily> make_sm100_tcgen05_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_sm90_wgmma_family(CudaDevice& device);
// cuda.sm90_repack: sm90_wgmma on aligned K-major copies of the operands it cannot load (repack/).
std::unique_ptr<KernelFamily> make_sm90_repack_family(CudaDevice& device, KernelFamily& sm90_wgmma);
std::unique_ptr<KernelFamily> make_sm80_mma_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_simt_family(CudaDevice& device);

}  // namespace omnigemm::detail
