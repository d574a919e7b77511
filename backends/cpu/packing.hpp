// Packing of the CPU backend's operands into the micro-kernels' f32 panels.
#pragma once

#include <cstdint>

#include "elements.hpp"

namespace omnigemm::detail::cpu {

// Packs rows [r0, r0 + rows) x columns [c0, c0 + cols) of `v` into panels of `w` rows:
// panel p holds rows r0 + p*w ..., stored as dst[p * w * cols + c * w + i]; rows past the end
// are zero. Every element is decoded to f32 exactly (elements.hpp), and block-scaled ones
// dequantised (v.blocked). Used for A (rows = M, cols = K, w = MR) and, through a transposed
// view, for B (w = NR).
void pack_panels(const View& v, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int w, float* dst);

}  // namespace omnigemm::detail::cpu
