// The CUDA backend's kernel families, fastest first: cuda.sm100_tcgen05 (Blackwell, compute
// capability 10.x), cuda.sm90_blockscaled (Hopper, block-scaled operands only), cuda.sm90_wgmma
// (Hopper), cuda.sm90_repack (Hopper, on copies of operands TMA cannot load), cuda.sm80_mma
// (Ampere and newer), cuda.sgemm (f32 inputs, sm_80 and newer), cuda.skinny_mma (at most 64 output
// rows or columns of 16-bit operands TMA cannot load in place, on the tensor cores), cuda.skinny
// (at most 16 output rows or columns, any dtype and strides, f32 FMA), cuda.short_k (K of at most
// 128: D written once in aligned units at any alignment, f32 FMA), cuda.simt (everything else).
// Each is defined by its table in families/.
#pragma once
#include <memory>

#include "cuda_device.hpp"

namespace omnigemm::detail {

std::unique_ptr<KernelFamily> make_sm100_tcgen05_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_sm90_wgmma_family(CudaDevice& device);
// cuda.sm90_blockscaled: 128-blockwise fp8 with promotion per scale block (blockscaled/), the only
// CUDA family besides sm90_dequant that takes block-scaled operands (the others refuse them:
// refuse_block_scales).
std::unique_ptr<KernelFamily> make_sm90_blockscaled_family(CudaDevice& device);
// cuda.sm90_dequant: mxfp8 / mxfp4 / nvfp4 as sm90_wgmma bf16 GEMMs on dequantised copies (blockscaled/).
std::unique_ptr<KernelFamily> make_sm90_dequant_family(CudaDevice& device, KernelFamily& sm90_wgmma);
// Unsupported where an operand is block-scaled (og_scales present), else OK.
Status refuse_block_scales(const Problem& p);
// cuda.sm90_repack: sm90_wgmma on aligned K-major copies of the operands it cannot load (repack/).
std::unique_ptr<KernelFamily> make_sm90_repack_family(CudaDevice& device, KernelFamily& sm90_wgmma);
std::unique_ptr<KernelFamily> make_sm80_mma_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_sgemm_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_skinny_mma_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_skinny_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_short_k_family(CudaDevice& device);
std::unique_ptr<KernelFamily> make_simt_family(CudaDevice& device);

}  // namespace omnigemm::detail
