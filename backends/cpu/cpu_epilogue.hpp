// The CPU backend's epilogue: the math of omnigemm/epilogue.h (shared with every backend and
// the test reference) applied to finished f32 tiles, and the rounding to D's dtype.
#pragma once

#include <cstdint>

#include "elements.hpp"

namespace omnigemm::detail::cpu {

// Everything the epilogue needs for one batch.
struct EpilogueArgs {
  float alpha = 1, beta = 0;
  og_activation act = OG_ACT_NONE;
  float slope = 0.01f;
  og_bias_mode bias_mode = OG_BIAS_NONE;
  const float* bias = nullptr;  // f32 copy of this batch's bias vector
  View c;                       // c.base == nullptr: no C
  og_dtype d_dtype = OG_DTYPE_F32;
  char* d = nullptr;            // element (0, 0) of this batch's D
  int64_t d_sr = 0, d_sc = 0;
};

// D[i0 + r, j0 + c] = act(alpha * tile[r * ldt + c] + beta * C[..] + bias) for r < rows,
// c < cols <= kMaxNR (og_epilogue_sum, og_activate), rounded by og_f32_to_f16_bits /
// og_f32_to_bf16_bits for 16-bit D.
void epilogue_tile(const EpilogueArgs& e, const float* tile, int64_t ldt, int64_t i0, int64_t j0, int rows, int cols);

}  // namespace omnigemm::detail::cpu
