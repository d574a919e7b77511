#include "cpu_epilogue.hpp"

#include "cpu_kernels.hpp"
#include "omnigemm/epilogue.h"

namespace omnigemm::detail::cpu {

namespace {

// v[c] = alpha * t[c] (+ beta * cv[c]) (+ bias), with C and the bias mode fixed at compile
// time so that each variant's loop vectorises.
template <bool HAS_C, og_bias_mode BIAS>
void sum_row(const EpilogueArgs& e, const float* t, const float* cv, const float* bias_n, float bias_m, int cols,
             float* v) {
  for (int c = 0; c < cols; ++c) {
    const float bias = BIAS == OG_BIAS_PER_N ? bias_n[c] : BIAS == OG_BIAS_PER_M ? bias_m : 0.0f;
    v[c] = og_epilogue_sum(e.alpha, t[c], HAS_C, e.beta, HAS_C ? cv[c] : 0.0f, BIAS != OG_BIAS_NONE, bias);
  }
}

template <bool HAS_C>
void sum_row(const EpilogueArgs& e, const float* t, const float* cv, int64_t i, int64_t j0, int cols, float* v) {
  switch (e.bias_mode) {
    case OG_BIAS_PER_N: sum_row<HAS_C, OG_BIAS_PER_N>(e, t, cv, e.bias + j0, 0.0f, cols, v); break;
    case OG_BIAS_PER_M: sum_row<HAS_C, OG_BIAS_PER_M>(e, t, cv, nullptr, e.bias[i], cols, v); break;
    default: sum_row<HAS_C, OG_BIAS_NONE>(e, t, cv, nullptr, 0.0f, cols, v); break;
  }
}

void activate_row(const EpilogueArgs& e, int cols, float* v) {
  switch (e.act) {
    case OG_ACT_NONE: break;
    case OG_ACT_RELU:
      for (int c = 0; c < cols; ++c) v[c] = og_relu(v[c]);
      break;
    case OG_ACT_LEAKY_RELU:
      for (int c = 0; c < cols; ++c) v[c] = og_leaky_relu(v[c], e.slope);
      break;
    default:
      for (int c = 0; c < cols; ++c) v[c] = og_activate(int(e.act), v[c], e.slope);
      break;
  }
}

}  // namespace

void epilogue_tile(const EpilogueArgs& e, const float* tile, int64_t ldt, int64_t i0, int64_t j0, int rows, int cols) {
  float v[kMaxNR];
  float cv[kMaxNR];
  for (int r = 0; r < rows; ++r) {
    const float* t = tile + r * ldt;
    const int64_t i = i0 + r;
    if (e.c.base) {
      with_loader(e.c.dtype, element_ptr(e.c, i, j0), [&](auto load) {
        for (int c = 0; c < cols; ++c) cv[c] = load(c * e.c.sc);
      });
      sum_row<true>(e, t, cv, i, j0, cols, v);
    } else {
      sum_row<false>(e, t, cv, i, j0, cols, v);
    }
    activate_row(e, cols, v);
    const int64_t sc = e.d_sc;
    const int64_t first = i * e.d_sr + j0 * sc;
    switch (e.d_dtype) {
      case OG_DTYPE_F32: {
        float* d = reinterpret_cast<float*>(e.d) + first;
        if (sc == 1) for (int c = 0; c < cols; ++c) d[c] = v[c];  // inlined, unlike a short memcpy
        else for (int c = 0; c < cols; ++c) d[c * sc] = v[c];
        break;
      }
      case OG_DTYPE_F16: {
        uint16_t* d = reinterpret_cast<uint16_t*>(e.d) + first;
        for (int c = 0; c < cols; ++c) d[c * sc] = uint16_t(og_f32_to_f16_bits(v[c]));
        break;
      }
      case OG_DTYPE_BF16: {
        uint16_t* d = reinterpret_cast<uint16_t*>(e.d) + first;
        for (int c = 0; c < cols; ++c) d[c * sc] = uint16_t(og_f32_to_bf16_bits(v[c]));
        break;
      }
      default: break;
    }
  }
}

}  // namespace omnigemm::detail::cpu
