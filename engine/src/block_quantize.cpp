#include "block_quantize.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "omnigemm/epilogue.h"
#include "omnigemm/numeric.hpp"
#include "problem.hpp"

namespace omnigemm::detail {

namespace {

struct ElementTables {
  float e4m3[256], e5m2[256], e2m1[256];
  ElementTables() {
    for (og_uint c = 0; c < 256; ++c) {
      e4m3[c] = og_bf_e4m3_to_f32(c);
      e5m2[c] = og_bf_e5m2_to_f32(c);
      e2m1[c] = og_bf_e2m1_to_f32(c & 15u);
    }
  }
};

// The f32 bits of source element (r, c) of a plain (f32, f16, bf16) view.
uint32_t source_bits(const KView& v, int64_t r, int64_t c) {
  const int64_t i = r * v.sr + c * v.sk;
  switch (v.dtype) {
    case OG_DTYPE_F16: {
      uint16_t h;
      std::memcpy(&h, v.base + 2 * i, 2);
      return std::bit_cast<uint32_t>(numeric::f16_to_f32(h));
    }
    case OG_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, v.base + 2 * i, 2);
      return uint32_t(h) << 16;
    }
    default: {
      uint32_t u;
      std::memcpy(&u, v.base + 4 * i, 4);
      return u;
    }
  }
}

uint32_t element_code(const KView& v, int64_t r, int64_t c) {
  const int64_t i = r * v.sr + c * v.sk;
  if (dtype_is_fp4(v.dtype)) return (v.base[i >> 1] >> ((i & 1) * 4)) & 15u;
  return v.base[i];
}

uint8_t* scale_ptr(const KView& v, int64_t sr, int64_t sc) {
  return v.scales + v.scale.offset(sr, sc) * v.scale.bytes;
}

void store_scale(const KView& v, int64_t sr, int64_t sc, uint32_t code) {
  uint8_t* p = scale_ptr(v, sr, sc);
  if (v.scale.bytes == 4) std::memcpy(p, &code, 4);
  else *p = uint8_t(code);
}

// The scale code of a block (1-byte code or f32 bits) from its largest |x|.
uint32_t choose_scale(const BlockScale& b, uint32_t amax, uint32_t global_bits) {
  switch (b.mode) {
    case OG_SCALE_MODE_VEC32_UE8M0:
      return og_bf_mx_scale(amax, b.element == OG_BF_ELEM_E4M3 ? 8 : b.element == OG_BF_ELEM_E5M2 ? 15 : 2);
    case OG_SCALE_MODE_VEC16_UE4M3: return og_bf_nvfp4_scale(amax, global_bits);
    default: return og_bf_block128_scale(amax, b.element == OG_BF_ELEM_E5M2);
  }
}

uint32_t nan_scale(const BlockScale& b) { return b.bytes == 4 ? 0x7fc00000u : b.mode == OG_SCALE_MODE_VEC16_UE4M3 ? 0x7fu : 0xffu; }

uint32_t quantize_element(const BlockScale& b, uint32_t x, uint32_t scale, uint32_t global_bits) {
  switch (b.mode) {
    case OG_SCALE_MODE_VEC32_UE8M0: return og_bf_quantize_mx(b.element, x, scale);
    case OG_SCALE_MODE_VEC16_UE4M3: return og_bf_quantize_nvfp4(x, scale, global_bits);
    default: return og_bf_quantize_block128(b.element, x, scale);
  }
}

}  // namespace

KView kview_of(const Operand& o, bool operand_b) {
  KView v;
  v.dtype = o.dtype;
  v.base = static_cast<uint8_t*>(o.mem.ptr) + o.mem.offset;
  v.rows = operand_b ? o.cols : o.rows;
  v.k = operand_b ? o.rows : o.cols;
  v.sr = operand_b ? o.stride_col : o.stride_row;
  v.sk = operand_b ? o.stride_row : o.stride_col;
  v.scale = o.scale;
  if (o.scale.present()) v.scales = static_cast<uint8_t*>(o.scale.mem.ptr) + o.scale.mem.offset;
  return v;
}

const float* element_table(int element) {
  static const ElementTables t;
  return element == OG_BF_ELEM_E4M3 ? t.e4m3 : element == OG_BF_ELEM_E5M2 ? t.e5m2 : t.e2m1;
}

void dequantize_row(const KView& v, int64_t r, int64_t k0, int64_t n, float* out, int64_t out_stride) {
  const BlockScale& b = v.scale;
  const float* table = element_table(b.element);
  const int64_t srow = r / b.block_rows;
  const bool fp4 = dtype_is_fp4(v.dtype);
  const float g = b.global;
  for (int64_t k = k0, end = k0 + n; k < end;) {
    const int64_t cb = k / b.block_k;
    const int64_t seg = std::min(end, (cb + 1) * b.block_k);
    const float s = b.load(scale_ptr(v, srow, cb));
    const int64_t row = r * v.sr;
    // (element * scale) * global: two f32 roundings (the first exact but for f32 scales); a
    // global of 1 changes nothing.
    // A NaN result (a NaN scale or element) as og_bf_nan_canonical's one pattern.
    auto canonical = [](float x) { return std::bit_cast<float>(og_bf_nan_canonical(std::bit_cast<uint32_t>(x))); };
    if (fp4) {
      for (; k < seg; ++k, out += out_stride) {
        const int64_t i = row + k;
        *out = canonical((table[(v.base[i >> 1] >> ((i & 1) * 4)) & 15u] * s) * g);
      }
    } else {
      for (; k < seg; ++k, out += out_stride) *out = canonical((table[v.base[row + k * v.sk]] * s) * g);
    }
  }
}

float nvfp4_global(const KView& src) {
  uint32_t amax = 0;
  for (int64_t r = 0; r < src.rows; ++r)
    for (int64_t c = 0; c < src.k; ++c) {
      const uint32_t x = source_bits(src, r, c) & 0x7fffffffu;
      if (x < 0x7f800000u) amax = std::max(amax, x);
    }
  const uint32_t g = amax == 0 ? 0 : og_bf_encode_f32(amax, 21u, 7);  // amax / 2688, 2688 = 21 * 2^7
  return g == 0 ? 1.0f : std::bit_cast<float>(g);
}

void clear_packed_scales(const KView& dst) {
  if (dst.scale.layout == OG_SCALE_PACKED) std::memset(dst.scales, 0, size_t(dst.scale.extent()));
}

void quantize_rows(const KView& src, const KView& dst, float global, int64_t r0, int64_t r1) {
  const BlockScale& b = dst.scale;
  const uint32_t global_bits = std::bit_cast<uint32_t>(global);
  const bool fp4 = dtype_is_fp4(dst.dtype);
  std::vector<uint32_t> bits(size_t(b.block_rows * b.block_k));
  std::vector<uint32_t> codes(bits.size());
  for (int64_t rb = r0; rb < r1; rb += b.block_rows) {
    const int64_t rows = std::min<int64_t>(b.block_rows, r1 - rb);
    for (int64_t cb = 0; cb < b.cols; ++cb) {
      const int64_t k0 = cb * b.block_k, len = std::min<int64_t>(b.block_k, src.k - k0);
      uint32_t amax = 0;
      bool nonfinite = false;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t c = 0; c < len; ++c) {
          const uint32_t x = source_bits(src, rb + i, k0 + c);
          bits[size_t(i * len + c)] = x;
          const uint32_t a = x & 0x7fffffffu;
          if (a >= 0x7f800000u) nonfinite = true;
          else amax = std::max(amax, a);
        }
      const uint32_t scale = nonfinite ? nan_scale(b) : choose_scale(b, amax, global_bits);
      store_scale(dst, rb / b.block_rows, cb, scale);
      for (size_t i = 0; i < size_t(rows * len); ++i)
        codes[i] = nonfinite ? 0u : quantize_element(b, bits[i], scale, global_bits);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t row = (rb + i) * dst.sr;
        const uint32_t* c = codes.data() + i * len;
        if (fp4) {  // pairs along K share a byte; a lone last element gets a zero high nibble
          for (int64_t j = 0; j < len; j += 2) {
            const uint32_t hi = j + 1 < len ? c[j + 1] : 0u;
            dst.base[(row + k0 + j) >> 1] = uint8_t(c[j] | (hi << 4));
          }
        } else {
          for (int64_t j = 0; j < len; ++j) dst.base[row + (k0 + j) * dst.sk] = uint8_t(c[j]);
        }
      }
    }
  }
}

void dequantize_rows(const KView& src, const KView& dst, int64_t r0, int64_t r1) {
  std::vector<float> row(size_t(std::max<int64_t>(src.k, 1)));
  for (int64_t r = r0; r < r1; ++r) {
    dequantize_row(src, r, 0, src.k, row.data(), 1);
    for (int64_t c = 0; c < src.k; ++c) {
      const int64_t i = r * dst.sr + c * dst.sk;
      const float v = row[size_t(c)];
      if (dst.dtype == OG_DTYPE_F32) {
        std::memcpy(dst.base + 4 * i, &v, 4);
      } else {
        const uint16_t h = uint16_t(dst.dtype == OG_DTYPE_F16 ? og_f32_to_f16_bits(v) : og_f32_to_bf16_bits(v));
        std::memcpy(dst.base + 2 * i, &h, 2);
      }
    }
  }
}

void convert_scales(const KView& from, const KView& to) {
  clear_packed_scales(to);
  const int bytes = from.scale.bytes;
  for (int64_t r = 0; r < from.scale.rows; ++r)
    for (int64_t c = 0; c < from.scale.cols; ++c) std::memcpy(scale_ptr(to, r, c), scale_ptr(from, r, c), size_t(bytes));
}

}  // namespace omnigemm::detail
