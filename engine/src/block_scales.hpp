// The scale tensor of a block-scaled operand, resolved and validated once from the public
// og_scales (GEMM validation and the quantisation API share it), and its host-side addressing.
#pragma once

#include <cstdint>
#include <cstring>

#include "omnigemm/block_formats.h"
#include "omnigemm/blockscaled.h"
#include "omnigemm/omnigemm.hpp"

namespace omnigemm::detail {

// Resolved scales of one operand. mode DEFAULT: the operand is not block-scaled (the rest unused).
struct BlockScale {
  og_scale_mode mode = OG_SCALE_MODE_DEFAULT;
  og_scale_layout layout = OG_SCALE_ROW_MAJOR;
  og_memory mem{};
  int64_t ld = 0;            // resolved; 0 for packed
  int64_t batch_stride = 0;  // in scales
  float global = 1.0f;
  int element = 0;           // OG_BF_ELEM_E4M3 / E5M2 / E2M1
  int block_k = 0;           // 16, 32 or 128
  int block_rows = 1;        // 1 or 128
  int bytes = 0;             // bytes per scale: 1 or 4
  int64_t rows = 0, cols = 0;                // R x C
  int64_t stored_rows = 0, stored_cols = 0;  // packed: padded to 128 and 4

  bool present() const { return mode != OG_SCALE_MODE_DEFAULT; }
  // Offset in scales (bytes for the 1-byte formats) of scale (r, c) within one batch's tensor.
  int64_t offset(int64_t r, int64_t c) const {
    switch (layout) {
      case OG_SCALE_COL_MAJOR: return c * ld + r;
      case OG_SCALE_PACKED:
        return int64_t((r / 128) * (stored_cols / 4) + c / 4) * 512 + og_sf_in_tile(int(r % 128), int(c % 4));
      default: return r * ld + c;
    }
  }
  // Scales one batch's tensor spans (first to one past the last), so bytes = extent() * bytes.
  int64_t extent() const;
  // The f32 value of the scale whose bits/byte(s) start at `p` (host memory).
  float load(const uint8_t* p) const {
    if (bytes == 4) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    return mode == OG_SCALE_MODE_VEC16_UE4M3 ? og_bf_e4m3_to_f32(*p & 0x7fu) : og_bf_e8m0_to_f32(*p);
  }
};

bool dtype_is_fp4(og_dtype d);
// The element encoding of a block-scaled dtype (or an fp8 dtype): OG_BF_ELEM_*.
int element_format(og_dtype d);
// The scale mode a dtype takes with `requested` (the og_scale_mode value as stored, maybe out of
// range; DEFAULT resolves to the dtype's own), or an invalid_argument Status naming what the dtype
// takes. `name` prefixes messages ("A").
Status resolve_scale_mode(og_dtype dtype, int64_t requested, const char* name, og_scale_mode& out);

// Resolves and checks the scale fields of a block-scaled operand whose op() view is
// rows_mn x k (M x K for A, N x K for B, after op()): mode, layout, ld, batch stride, global
// factor and the geometry. Memory is not checked here (see check_block_scale_memory).
Status resolve_block_scale(const og_scales& s, og_dtype dtype, int64_t rows_mn, int64_t k, const char* name,
                           BlockScale& out);
// The scale tensor's memory: present, aligned to its scale size, extent within 2^60 bytes over
// `batches` batches.
Status check_block_scale_memory(const BlockScale& b, int64_t batches, const char* name);
// Element-layout rules of fp4 operands: K contiguous, the other stride, the batch stride and the
// element offset of the view even. k_stride / other_stride in elements.
Status check_fp4_layout(int64_t k_stride, int64_t other_stride, int64_t rows_mn, int64_t batch_stride,
                        const char* name);

// og_scale_info of a resolved scale.
og_scale_info scale_info_of(const BlockScale& b);

}  // namespace omnigemm::detail
