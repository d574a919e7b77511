// og_quantize / og_dequantize on CUDA (block_quantize.cu): one matrix, validated, in device memory,
// enqueued on `stream`; bit-exact with the host quantiser. quantize with global == 0 (nvfp4) finds
// the global factor on the device first and waits for it.
#pragma once

#include "backend.hpp"

namespace omnigemm::detail {

Status cuda_quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream);
Status cuda_dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream);

}  // namespace omnigemm::detail
