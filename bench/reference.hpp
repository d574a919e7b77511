// Host-side numerics of omnigemm-bench and omnigemm-conformance, on the public headers only:
// element encode/decode of every storage dtype (omnigemm/numeric.hpp), strided host matrices,
// random fills that never produce 0, the float64 reference GEMM with the full epilogue, the
// relative-error check and the per-dtype tolerance it is judged against.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "omnigemm/numeric.hpp"
#include "omnigemm/omnigemm.hpp"

namespace omnigemm::bench {

// Bytes per element of the dtypes the tools store densely (block-scaled ones are not made here).
inline int dtype_size(Dtype d) {
  switch (d) {
    case Dtype::f32: return 4;
    case Dtype::f16:
    case Dtype::bf16: return 2;
    default: return 1;
  }
}
inline int dtype_size(og_dtype d) { return dtype_size(static_cast<Dtype>(d)); }

// The exact value of one stored element.
inline double decode(Dtype d, const uint8_t* p) {
  uint16_t h = 0;
  switch (d) {
    case Dtype::f32: {
      float f;
      std::memcpy(&f, p, sizeof f);
      return f;
    }
    case Dtype::f16: std::memcpy(&h, p, 2); return numeric::f16_to_f32(h);
    case Dtype::bf16: std::memcpy(&h, p, 2); return numeric::bf16_to_f32(h);
    case Dtype::fp8_e4m3: return numeric::e4m3_to_f32(*p);
    case Dtype::fp8_e5m2: return numeric::e5m2_to_f32(*p);
    default: return NAN;
  }
}

// Stores v rounded to nearest even (fp8 e4m3 saturates, as the library's conversions do).
inline void encode(Dtype d, uint8_t* p, float v) {
  uint16_t h = 0;
  switch (d) {
    case Dtype::f32: std::memcpy(p, &v, sizeof v); break;
    case Dtype::f16: h = numeric::f32_to_f16(v); std::memcpy(p, &h, 2); break;
    case Dtype::bf16: h = numeric::f32_to_bf16(v); std::memcpy(p, &h, 2); break;
    case Dtype::fp8_e4m3: *p = numeric::f32_to_e4m3(v); break;
    case Dtype::fp8_e5m2: *p = numeric::f32_to_e5m2(v); break;
    default: break;
  }
}

// A matrix view (rows x cols, leading dimension ld, `batches` copies batch_stride apart) together
// with its storage. Storage outside the view (ld padding, gaps between batches) is real memory:
// outputs are checked to leave it unchanged.
struct HostMatrix {
  Dtype dtype = Dtype::f32;
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0, batches = 1;
  Layout layout = Layout::row_major;
  bool transposed = false;  // the GEMM uses the view's transpose
  std::vector<uint8_t> bytes;

  HostMatrix() = default;
  HostMatrix(int64_t rows, int64_t cols, Dtype dtype, Layout layout = Layout::row_major, int64_t ld_pad = 0,
             int64_t batches = 1, int64_t batch_gap = 0);

  int64_t offset(int64_t b, int64_t r, int64_t c) const {
    return b * batch_stride + (layout == Layout::row_major ? r * ld + c : r + c * ld);
  }
  double get(int64_t b, int64_t r, int64_t c) const {
    return decode(dtype, &bytes[size_t(offset(b, r, c)) * size_t(dtype_size(dtype))]);
  }
  void set(int64_t b, int64_t r, int64_t c, float v) {
    encode(dtype, &bytes[size_t(offset(b, r, c)) * size_t(dtype_size(dtype))], v);
  }
  // Element (i, j) of op(X): the transposed view when `transposed`.
  double op_get(int64_t b, int64_t i, int64_t j) const { return transposed ? get(b, j, i) : get(b, i, j); }
  // The public API's view of this storage at `mem`.
  Matrix view(Memory mem) const;
  Matrix host_view() const { return view(Memory::host(bytes.data())); }
};

// Every stored element (padding included) gets magnitude in [0.05, 1] with a random sign, drawn
// from `g` (so the values depend only on the generator's seed).
void fill_uniform(HostMatrix& m, std::mt19937_64& g);
// The same distribution from a splitmix64 stream seeded with `seed`, fast enough for the LLM
// shapes; fp8 elements are drawn from the codes in that range, so they are exact by construction.
void fill_fast(HostMatrix& m, uint64_t seed);

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct EpilogueSpec {
  float alpha = 1.0f, beta = 0.0f;
  Activation act = Activation::none;
  float slope = 0.01f;
  BiasMode bias_mode = BiasMode::none;
};

// One output element of the epilogue in float64: act(alpha * acc + beta * c + bias), and the
// magnitude |alpha * acc| + |beta * c| + |bias| of the terms it sums (the library's epilogue
// rounds relative to those, not to a result that cancelled or was activated towards 0).
// When the shared epilogue header omnigemm/epilogue.h lands, this is the one function to switch to it.
struct EpilogueValue {
  double value = 0, magnitude = 0;
};
EpilogueValue apply_epilogue(const EpilogueSpec& e, double acc, double c, double bias);

// The float64 reference of D, dense [batch][M][N], with each element's epilogue magnitude.
struct Reference {
  std::vector<double> value, magnitude;
};
// C may be null when beta is 0; bias (length N or M by e.bias_mode) may be null for none.
Reference reference_gemm(const HostMatrix& a, const HostMatrix& b, const HostMatrix* c, const std::vector<float>* bias,
                         const EpilogueSpec& e, int64_t batches);

// ||out - ref|| / max(||ref||, ||magnitude||) over every element of D's view; any element that is
// not finite makes the error +inf and is counted. With `before`, stored elements outside the view
// that differ from `before` byte for byte are counted too.
struct ErrorReport {
  double rel_error = 0;
  int64_t non_finite = 0;
  int64_t padding_touched = 0;
};
ErrorReport compare(const HostMatrix& d, const Reference& ref, const HostMatrix* before = nullptr);

// The bound on compare()'s rel_error for a K-deep product of inputs a x b written as `out`
// (the reasoning is at its definition).
double tolerance(Dtype out, int64_t k, Dtype a, Dtype b);

}  // namespace omnigemm::bench
