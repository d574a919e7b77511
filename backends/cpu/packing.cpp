#include "packing.hpp"

#include <algorithm>

#include "cpu_kernels.hpp"

namespace omnigemm::detail::cpu {

namespace {

// One panel of `h` <= w rows x `cols` columns: dst[c * w + i] = X(i, c), zero for i >= h.
// W > 0 is the compile-time panel width (full panels of the kernels' MR / NR); W == 0 is the
// generic version for edge panels and unusual widths.
template <int W, class L>
void pack_one_panel(const L& load, int64_t base, int64_t sr, int64_t sc, int h, int w, int64_t cols, float* dst) {
  if constexpr (W > 0) w = h = W;
  if (sr == 1) {  // the panel's rows are adjacent in memory: copy w values per column
    for (int64_t c = 0; c < cols; ++c) {
      float* d = dst + c * w;
      const int64_t col = base + c * sc;
      for (int i = 0; i < h; ++i) d[i] = load(col + i);
      for (int i = h; i < w; ++i) d[i] = 0.0f;
    }
  } else if (sc == 1) {  // each row is contiguous: transpose blocks of 16 columns
    constexpr int64_t kBlock = 16;
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const int64_t n = std::min(kBlock, cols - c0);
      float* d = dst + c0 * w;
      for (int i = 0; i < h; ++i) {
        const int64_t row = base + i * sr + c0;
        if (n == kBlock) {  // decode 16 contiguous values (vectorisable), then scatter them
          float decoded[kBlock];
          for (int64_t c = 0; c < kBlock; ++c) decoded[c] = load(row + c);
          for (int64_t c = 0; c < kBlock; ++c) d[c * w + i] = decoded[c];
        } else {
          for (int64_t c = 0; c < n; ++c) d[c * w + i] = load(row + c);
        }
      }
      for (int i = h; i < w; ++i)
        for (int64_t c = 0; c < n; ++c) d[c * w + i] = 0.0f;
    }
  } else {
    for (int64_t c = 0; c < cols; ++c) {
      float* d = dst + c * w;
      for (int i = 0; i < h; ++i) d[i] = load(base + i * sr + c * sc);
      for (int i = h; i < w; ++i) d[i] = 0.0f;
    }
  }
}

}  // namespace

void pack_panels(const View& v, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int w, float* dst) {
  if (v.blocked) {  // block-scaled: each row dequantised along K (block_quantize.hpp), bit-exact
    for (int64_t p0 = 0; p0 < rows; p0 += w, dst += int64_t(w) * cols) {
      const int h = int(std::min<int64_t>(w, rows - p0));
      for (int i = 0; i < h; ++i) dequantize_row(*v.blocked, r0 + p0 + i, c0, cols, dst + i, w);
      for (int64_t c = 0; c < cols; ++c)
        for (int i = h; i < w; ++i) dst[c * w + i] = 0.0f;
    }
    return;
  }
  if (v.tf32) {  // the elements of every panel (w x cols each, padding rows are zeros) rounded
    View exact = v;
    exact.tf32 = false;
    pack_panels(exact, r0, rows, c0, cols, w, dst);
    const int64_t n = (rows + w - 1) / w * w * cols;
    for (int64_t i = 0; i < n; ++i) dst[i] = round_to_tf32(dst[i]);
    return;
  }
  with_loader(v.dtype, element_ptr(v, r0, c0), [&](auto load) {
    const int64_t sr = v.sr, sc = v.sc;
    for (int64_t p0 = 0; p0 < rows; p0 += w, dst += int64_t(w) * cols) {
      const int h = int(std::min<int64_t>(w, rows - p0));
      const int64_t base = p0 * sr;
      if (h == w) {
        switch (w) {
          case kAvx512MR: pack_one_panel<kAvx512MR>(load, base, sr, sc, h, w, cols, dst); continue;
          case kAvx512NR: pack_one_panel<kAvx512NR>(load, base, sr, sc, h, w, cols, dst); continue;
          case kAvx2MR: pack_one_panel<kAvx2MR>(load, base, sr, sc, h, w, cols, dst); continue;
          case kAvx2NR: pack_one_panel<kAvx2NR>(load, base, sr, sc, h, w, cols, dst); continue;
          case kScalarMR: pack_one_panel<kScalarMR>(load, base, sr, sc, h, w, cols, dst); continue;
          case kScalarNR: pack_one_panel<kScalarNR>(load, base, sr, sc, h, w, cols, dst); continue;
          default: break;
        }
      }
      pack_one_panel<0>(load, base, sr, sc, h, w, cols, dst);
    }
  });
}

}  // namespace omnigemm::detail::cpu
