// Block-scaled formats in omnigemm-bench and omnigemm-conformance (--format): each format's A / B
// dtypes, scale modes and scale layouts (the ones cuBLASLt reads, so one set of buffers serves
// OmniGEMM and the vendor), and quantised operands made through the public API
// (omnigemm/blockscaled.h) from random f32 values, with their dequantised f32 copies, which the
// float64 reference uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnigemm/blockscaled.h"
#include "reference.hpp"

namespace omnigemm::bench {

struct FormatDef {
  const char* name;
  og_dtype a, b;
  og_scale_mode a_mode, b_mode;
};
// mxfp8, mxfp8_e5m2, mxfp4, nvfp4 (packed scales) and fp8_block128 (A: e4m3 with f32 scales per
// 1 x 128, column-major ld M as cuBLASLt's VEC128_32F; B: e4m3 per 128 x 128, row-major with ld
// rounded up to 4 as its BLK128x128_32F). Null when `name` is none of them.
const FormatDef* find_format(const std::string& name);
std::string format_names();  // "mxfp8, mxfp8_e5m2, mxfp4, nvfp4, fp8_block128"

// One quantised operand in host memory: elements (two per byte for fp4) and scales, and the
// view fields that describe them (A: M x K row-major; B: held N x K row-major, used transposed).
struct BlockOperand {
  og_dtype dtype = OG_DTYPE_MXFP8;
  og_scale_mode mode = OG_SCALE_MODE_DEFAULT;
  og_scale_layout layout = OG_SCALE_PACKED;
  int64_t rows = 0, k = 0, ld = 0, scale_ld = 0;
  float global = 1.0f;
  std::vector<uint8_t> elements, scales;
  // The operand's view with its elements at `e` and scales at `s` (GEMM operand A or B).
  og_matrix view(og_operand which, const og_memory& e, const og_memory& s) const;
};

// Quantises rows x k values drawn from `seed` (magnitudes in [0.05, 1], random sign, every 32nd
// row and every 3rd block of 32 along K scaled by 2^-2..2^2 so that scales vary) into `out` as
// operand `which` of `f`, and dequantises it into `deq` (f32: A as rows x k row-major; B as
// k x rows column-major, the same storage as rows x k row-major).
Status make_block_operand(const FormatDef& f, og_operand which, int64_t rows, int64_t k, uint64_t seed,
                          BlockOperand& out, HostMatrix& deq);

}  // namespace omnigemm::bench
