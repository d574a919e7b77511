// A validated GEMM problem in the normalised form every backend consumes: op() and the
// row/column-major choice are folded into two element strides per operand.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "block_scales.hpp"
#include "config_space.hpp"
#include "omnigemm/omnigemm.h"

namespace omnigemm::detail {

// op(X) as a logical rows x cols matrix: element (i, j) of batch b sits at element offset
//   b * batch_stride + i * stride_row + j * stride_col   from mem (mem.offset is in bytes).
struct Operand {
  bool present = false;
  og_dtype dtype = OG_DTYPE_F32;
  og_memory mem{};
  int64_t rows = 0, cols = 0;
  int64_t stride_row = 0, stride_col = 0;
  int64_t batch_stride = 0;
  BlockScale scale;  // block-scaled operands only (scale.present())

  // Contiguous along columns (row-major logical view) / along rows (column-major).
  bool row_contiguous() const { return stride_col == 1; }
  bool col_contiguous() const { return stride_row == 1; }
  // Elements from the first to one past the last element touched over `batches` batches.
  int64_t extent_elements(int64_t batches) const;
};

struct Problem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  Operand a;  // M x K
  Operand b;  // K x N
  Operand c;  // M x N, present only when beta != 0
  Operand d;  // M x N
  float alpha = 1.0f, beta = 0.0f;
  og_activation activation = OG_ACT_NONE;
  float leaky_slope = 0.01f;
  og_bias_mode bias_mode = OG_BIAS_NONE;
  // OG_COMPUTE_TF32 (f32 inputs only, validated): the products may use TF32 inputs.
  og_compute_mode compute_mode = OG_COMPUTE_DEFAULT;
  og_dtype bias_dtype = OG_DTYPE_F32;
  og_memory bias{};
  int64_t bias_batch_stride = 0;
  std::optional<Config> forced_config;
  // The caller's device workspace (og_gemm_desc.workspace), validated: kind of the backend's
  // memory, 256-byte aligned address, no overlap with an operand. Kind NONE: the backend's own.
  og_memory workspace{};
  uint64_t workspace_bytes = 0;
  bool has_workspace() const { return workspace.kind != OG_MEMORY_NONE; }

  bool empty() const { return m == 0 || n == 0 || batch == 0; }
  // K == 0 is valid: D = act(beta * C + bias).
};

int dtype_bytes(og_dtype d);        // storage bytes per element (fp4 formats: 1 per 2, reported as 1)
// Bytes that `elements` consecutive elements of d occupy (fp4: two per byte, from an even index).
int64_t storage_bytes(og_dtype d, int64_t elements);
// The dtype is one of the block-scaled ones (mx, nvfp4); fp8 becomes block-scaled through its
// scale mode instead (Operand::scale.present()).
bool dtype_is_block_scaled(og_dtype d);
// The dtype is a plain fp8 one (e4m3 or e5m2).
bool dtype_is_fp8(og_dtype d);

}  // namespace omnigemm::detail
