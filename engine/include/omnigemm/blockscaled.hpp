// OmniGEMM block-scaled formats, C++ layer over omnigemm/blockscaled.h (which documents the
// formats, the scale layouts and the quantisation rules). Header-only; failures are Status
// values, no exception crosses the library boundary.
//
//   omnigemm::Matrix w = omnigemm::Matrix::host(q.data(), N, K, omnigemm::Dtype::mxfp8)
//                            .transposed().scale(omnigemm::Memory::host(s.data()));   // op(B) = K x N
//   omnigemm::Status st = omnigemm::quantize_host(weights_f32, w, omnigemm::Operand::b);
#pragma once

#include "omnigemm/blockscaled.h"
#include "omnigemm/omnigemm.hpp"

namespace omnigemm {

enum class Operand : int { a = OG_OPERAND_A, b = OG_OPERAND_B };

inline const char* name(ScaleMode m) { return og_scale_mode_name(static_cast<og_scale_mode>(m)); }

// The scale tensor `m` needs as GEMM operand `which` (og_scale_info).
inline Result<og_scale_info> scale_info(const Matrix& m, Operand which) {
  og_scale_info info{};
  og_status s = og_scale_info_get(&m.raw, static_cast<og_operand>(which), &info);
  if (s != OG_OK) return Status::from_c(s);
  return info;
}

// og_quantize_host: src (f32 / f16 / bf16) into the block-scaled dst; nvfp4 with global 0
// stores the chosen global factor in dst.
inline Status quantize_host(const Matrix& src, Matrix& dst, Operand which) {
  return Status::from_c(og_quantize_host(&src.raw, &dst.raw, static_cast<og_operand>(which)));
}
inline Status dequantize_host(const Matrix& src, const Matrix& dst, Operand which) {
  return Status::from_c(og_dequantize_host(&src.raw, &dst.raw, static_cast<og_operand>(which)));
}
// og_quantize / og_dequantize on the context's device.
inline Status quantize(Context& ctx, const Matrix& src, Matrix& dst, Operand which, void* stream = nullptr) {
  return Status::from_c(og_quantize(ctx.c_handle(), &src.raw, &dst.raw, static_cast<og_operand>(which), stream));
}
inline Status dequantize(Context& ctx, const Matrix& src, const Matrix& dst, Operand which, void* stream = nullptr) {
  return Status::from_c(og_dequantize(ctx.c_handle(), &src.raw, &dst.raw, static_cast<og_operand>(which), stream));
}
// og_convert_scales_host: the scales of `from` into `to`'s layout.
inline Status convert_scales_host(const Matrix& from, const Matrix& to, Operand which) {
  return Status::from_c(og_convert_scales_host(&from.raw, &to.raw, static_cast<og_operand>(which)));
}

}  // namespace omnigemm
