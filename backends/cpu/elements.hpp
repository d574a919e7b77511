// Element access of the CPU backend: every input dtype decoded to f32 exactly as
// omnigemm/numeric.hpp decodes it, and strided matrix views of one batch.
#pragma once

#include <bit>
#include <cstdint>

#include "omnigemm/numeric.hpp"
#include "block_quantize.hpp"
#include "omnigemm/omnigemm.h"
#include "problem.hpp"

namespace omnigemm::detail::cpu {

// Every fp8 byte's f32 value (numeric.hpp's decoders, tabulated once).
struct Fp8Tables {
  float e4m3[256];
  float e5m2[256];
  Fp8Tables() {
    for (int i = 0; i < 256; ++i) {
      e4m3[i] = numeric::e4m3_to_f32(uint8_t(i));
      e5m2[i] = numeric::e5m2_to_f32(uint8_t(i));
    }
  }
};
inline const Fp8Tables& fp8_tables() {
  static const Fp8Tables t;
  return t;
}

// numeric::f16_to_f32, branch-free (selects only, so packing loops vectorise and random bit
// patterns do not mispredict): subnormals come out as (2^-14 + man * 2^-24) - 2^-14, which is
// exact because every f16 subnormal is a normal f32.
inline float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t shifted = uint32_t(h & 0x7fff) << 13;  // exponent and mantissa in f32 position
  const uint32_t exp = shifted & 0x0f800000u;
  const uint32_t normal = shifted + (112u << 23);       // rebias 15 -> 127
  const uint32_t inf_nan = normal + (112u << 23);       // exponent 31 -> 255
  const float subnormal = std::bit_cast<float>(normal + (1u << 23)) - 0x1p-14f;
  const uint32_t magnitude = exp == 0x0f800000u ? inf_nan : exp == 0 ? std::bit_cast<uint32_t>(subnormal) : normal;
  return std::bit_cast<float>(magnitude | sign);
}

// Loads element i (in elements) of a typed array as f32.
template <og_dtype T>
struct Loader;
template <>
struct Loader<OG_DTYPE_F32> {
  const float* p;
  explicit Loader(const void* base) : p(static_cast<const float*>(base)) {}
  float operator()(int64_t i) const { return p[i]; }
};
template <>
struct Loader<OG_DTYPE_F16> {
  const uint16_t* p;
  explicit Loader(const void* base) : p(static_cast<const uint16_t*>(base)) {}
  float operator()(int64_t i) const { return f16_bits_to_f32(p[i]); }
};
template <>
struct Loader<OG_DTYPE_BF16> {
  const uint16_t* p;
  explicit Loader(const void* base) : p(static_cast<const uint16_t*>(base)) {}
  float operator()(int64_t i) const { return numeric::bf16_to_f32(p[i]); }
};
template <>
struct Loader<OG_DTYPE_FP8_E4M3> {
  const uint8_t* p;
  const float* table;
  explicit Loader(const void* base) : p(static_cast<const uint8_t*>(base)), table(fp8_tables().e4m3) {}
  float operator()(int64_t i) const { return table[p[i]]; }
};
template <>
struct Loader<OG_DTYPE_FP8_E5M2> {
  const uint8_t* p;
  const float* table;
  explicit Loader(const void* base) : p(static_cast<const uint8_t*>(base)), table(fp8_tables().e5m2) {}
  float operator()(int64_t i) const { return table[p[i]]; }
};

// Calls f(Loader<T>) for the runtime dtype `t` (one of the five input dtypes).
template <class F>
void with_loader(og_dtype t, const void* base, F&& f) {
  switch (t) {
    case OG_DTYPE_F32: f(Loader<OG_DTYPE_F32>(base)); break;
    case OG_DTYPE_F16: f(Loader<OG_DTYPE_F16>(base)); break;
    case OG_DTYPE_BF16: f(Loader<OG_DTYPE_BF16>(base)); break;
    case OG_DTYPE_FP8_E4M3: f(Loader<OG_DTYPE_FP8_E4M3>(base)); break;
    case OG_DTYPE_FP8_E5M2: f(Loader<OG_DTYPE_FP8_E5M2>(base)); break;
    default: break;  // rejected by validation / input_dtypes()
  }
}

// op(X) of one batch as a strided matrix: element (r, c) at base[r * sr + c * sc].
struct View {
  og_dtype dtype = OG_DTYPE_F32;
  const char* base = nullptr;  // points at element (0, 0)
  int64_t sr = 0, sc = 0;
  // Block-scaled operands: the same matrix as rows x K with its scales (rows and columns as
  // this view's, so K runs along the columns); packing dequantises through it. Null otherwise.
  const KView* blocked = nullptr;
  // OG_COMPUTE_TF32: packing rounds every element to TF32 (round_to_tf32).
  bool tf32 = false;
};

// f32 rounded to nearest TF32 (10 mantissa bits, ties to even); inf and NaN unchanged, a carry
// past the largest finite TF32 gives inf (as a TF32 conversion does).
inline float round_to_tf32(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7f800000u) == 0x7f800000u) return f;
  x = (x + 0xfffu + ((x >> 13) & 1u)) & ~0x1fffu;
  return std::bit_cast<float>(x);
}

inline const char* element_ptr(const View& v, int64_t r, int64_t c) {
  return v.base + (r * v.sr + c * v.sc) * dtype_bytes(v.dtype);
}

}  // namespace omnigemm::detail::cpu
