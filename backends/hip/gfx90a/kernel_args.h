// The hip.gfx90a_mfma kernel's argument block and element codecs. Host C++ and HIP compile it
// alike: the host (family.cpp, built by the C++ compiler) fills KernelArgs and passes its bytes to
// hipModuleLaunchKernel; the kernel reads the same layout (fixed-width fields only, checked by
// the static_assert on both sides). The codecs are integer arithmetic, bit-exact with
// omnigemm/numeric.hpp and the rounding of omnigemm/epilogue.h on every input.
#ifndef OMNIGEMM_HIP_KERNEL_ARGS_H
#define OMNIGEMM_HIP_KERNEL_ARGS_H

#include "omnigemm/epilogue.h"
#include "omnigemm/omnigemm.h"
#include "tile_map.h"

namespace omnigemm::hip {

// One input operand as the kernel sees it: op(A) as M x K or op(B)^T as N x K ("rows" are M or
// N), element (r, k) of batch b at  b * batch_stride + r * stride_row + k * stride_k  elements
// from ptr. mode: LoadMode (tile_map.h); k_fastest: gather walks K first (stride_k <= stride_row).
struct OperandView {
  const void* ptr;
  long long batch_stride;
  int stride_row, stride_k;  // the host refuses operands whose strides do not fit
  int dtype;  // og_dtype
  int mode;   // LoadMode
  int k_fastest;
  int pad0;
};

// D = act(alpha * acc + beta * C + bias), element (i, j) of batch b at b * *_bs + i * *_sr + j * *_sc.
struct EpilogueView {
  void* d;
  const void* c;
  const void* bias;
  long long d_bs, c_bs, bias_bs;
  int d_sr, d_sc, c_sr, c_sc;  // the host refuses outputs whose strides do not fit
  int d_dtype, c_dtype, bias_dtype;
  int has_c, act, bias_mode;
  float alpha, beta, slope;
  int pad0;
};

struct KernelArgs {
  OperandView a, b;
  EpilogueView ep;
  int m, n, k;
  int num_pid_m, num_pid_n, group_m;
  int batch_base;  // the batch of blockIdx.z == 0 (launches of more than 65535 batches go in chunks)
  int bf16;        // multiplicand type: 1 bf16, 0 f16 (what fp8 inputs are converted to)
};
static_assert(sizeof(OperandView) == 40 && sizeof(EpilogueView) == 104 && sizeof(KernelArgs) == 216,
              "KernelArgs is shared by the host compiler and the device compiler: fixed layout");

// ---- element codecs ----------------------------------------------------------------------------

OG_HIP_FN float bits_float(unsigned x) {
#if defined(__HIP_DEVICE_COMPILE__)
  return __uint_as_float(x);
#else
  return __builtin_bit_cast(float, x);
#endif
}

// The decoders below compute every case and select one (no branches in the kernel's loaders).

// f16 bits -> f32, exact (subnormals, infinities and NaNs included).
OG_HIP_FN float f16_value(unsigned h) {
  const unsigned sign = (h & 0x8000u) << 16, exp = (h >> 10) & 31u, man = h & 1023u;
  const unsigned normal = sign | ((exp + 112u) << 23) | (man << 13);
  const unsigned special = sign | 0x7f800000u | (man << 13);
  const unsigned subnormal = sign | og_float_bits(float(man) * 0x1p-24f);  // man * 2^-24, exact
  return bits_float(exp == 31u ? special : exp != 0u ? normal : subnormal);
}

OG_HIP_FN float bf16_value(unsigned h) { return bits_float((h & 0xffffu) << 16); }

// fp8 bits -> f32, exact. e4m3 (OCP e4m3fn): bias 7, no infinities, S.1111.111 is NaN;
// e5m2: bias 15, IEEE-like (the top byte of an f16).
OG_HIP_FN float e4m3_value(unsigned b) {
  const unsigned sign = (b & 0x80u) << 24, exp = (b >> 3) & 15u, man = b & 7u;
  const unsigned normal = sign | ((exp + 120u) << 23) | (man << 20);
  const unsigned subnormal = sign | og_float_bits(float(man) * 0x1p-9f);
  return bits_float(exp == 15u && man == 7u ? (sign | 0x7fc00000u) : exp != 0u ? normal : subnormal);
}
OG_HIP_FN float e5m2_value(unsigned b) { return f16_value((b & 0xffu) << 8); }

// The 16-bit multiplicand bits (bf16 or f16) of an input element's raw bits. Inputs of the
// multiplicand's own type pass unchanged; fp8 values are exact in either type: e5m2 is the top
// byte of an f16, and an fp8 value's f32 bits end in 16 zero bits; e4m3 in f16 is rebiased,
// its subnormals (m * 2^-9) being f16 normals.
OG_HIP_FN unsigned short multiplicand_bits(int dtype, unsigned raw, bool bf16) {
  if (dtype == OG_DTYPE_F16 || dtype == OG_DTYPE_BF16) return (unsigned short)raw;
  if (!bf16 && dtype == OG_DTYPE_FP8_E5M2) return (unsigned short)((raw & 0xffu) << 8);
  if (!bf16) {  // e4m3 -> f16
    const unsigned sign = (raw & 0x80u) << 8, exp = (raw >> 3) & 15u, man = raw & 7u;
    const unsigned normal = sign | ((exp + 8u) << 10) | (man << 7);
    const unsigned subnormal = sign | (og_float_bits(float(man) * 0x1p-9f) >> 13) - (112u << 10) * (man != 0u);
    return (unsigned short)(exp == 15u && man == 7u ? (sign | 0x7e00u) : exp != 0u ? normal : subnormal);
  }
  return (unsigned short)(og_float_bits(dtype == OG_DTYPE_FP8_E4M3 ? e4m3_value(raw) : e5m2_value(raw)) >> 16);
}

// Element i of a C or bias array of dtype f32, f16 or bf16, as f32.
OG_HIP_FN float load_value(int dtype, const void* base, long long i) {
  if (dtype == OG_DTYPE_F32) return static_cast<const float*>(base)[i];
  const unsigned h = static_cast<const unsigned short*>(base)[i];
  return dtype == OG_DTYPE_F16 ? f16_value(h) : bf16_value(h);
}

// Stores v as element i of a D array of dtype f32, f16 or bf16 (round to nearest even).
OG_HIP_FN void store_value(int dtype, void* base, long long i, float v) {
  if (dtype == OG_DTYPE_F32) static_cast<float*>(base)[i] = v;
  else static_cast<unsigned short*>(base)[i] = (unsigned short)og_f32_to_16bit(dtype, v);
}

// The fused epilogue for output element (i, j) of batch `batch` (omnigemm/epilogue.h's math).
OG_HIP_FN void epilogue_store(const EpilogueView& e, long long batch, int i, int j, float acc) {
  const float c = e.has_c ? load_value(e.c_dtype, e.c, batch * e.c_bs + i * (long long)e.c_sr + j * (long long)e.c_sc) : 0.0f;
  const bool has_bias = e.bias_mode != OG_BIAS_NONE;
  const float bias = !has_bias ? 0.0f
                               : load_value(e.bias_dtype, e.bias, batch * e.bias_bs + (e.bias_mode == OG_BIAS_PER_N ? j : i));
  const float v = og_epilogue_apply(e.alpha, acc, e.has_c != 0, e.beta, c, has_bias, bias, e.act, e.slope);
  store_value(e.d_dtype, e.d, batch * e.d_bs + i * (long long)e.d_sr + j * (long long)e.d_sc, v);
}

}  // namespace omnigemm::hip

#endif  // OMNIGEMM_HIP_KERNEL_ARGS_H
