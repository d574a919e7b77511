#include "bench_formats.hpp"

#include <cmath>
#include <cstring>

namespace omnigemm::bench {

namespace {

const FormatDef kFormats[] = {
    {"mxfp8", OG_DTYPE_MXFP8, OG_DTYPE_MXFP8, OG_SCALE_MODE_VEC32_UE8M0, OG_SCALE_MODE_VEC32_UE8M0},
    {"mxfp8_e5m2", OG_DTYPE_MXFP8_E5M2, OG_DTYPE_MXFP8_E5M2, OG_SCALE_MODE_VEC32_UE8M0, OG_SCALE_MODE_VEC32_UE8M0},
    {"mxfp4", OG_DTYPE_MXFP4, OG_DTYPE_MXFP4, OG_SCALE_MODE_VEC32_UE8M0, OG_SCALE_MODE_VEC32_UE8M0},
    {"nvfp4", OG_DTYPE_NVFP4, OG_DTYPE_NVFP4, OG_SCALE_MODE_VEC16_UE4M3, OG_SCALE_MODE_VEC16_UE4M3},
    {"fp8_block128", OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E4M3, OG_SCALE_MODE_VEC128_F32, OG_SCALE_MODE_BLK128x128_F32},
};

bool fp4(og_dtype d) { return d == OG_DTYPE_MXFP4 || d == OG_DTYPE_NVFP4; }

}  // namespace

const FormatDef* find_format(const std::string& name) {
  for (const FormatDef& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

std::string format_names() {
  std::string s;
  for (const FormatDef& f : kFormats) s += (s.empty() ? "" : ", ") + std::string(f.name);
  return s;
}

og_matrix BlockOperand::view(og_operand which, const og_memory& e, const og_memory& s) const {
  og_matrix m = og_matrix_make(rows, k, dtype, OG_ROW_MAJOR);
  m.ld = ld;
  m.transpose = which == OG_OPERAND_B ? 1 : 0;
  m.mem = e;
  m.scale.mem = s;
  m.scale.mode = mode;
  m.scale.layout = layout;
  m.scale.ld = scale_ld;
  m.scale.global = global;
  return m;
}

Status make_block_operand(const FormatDef& f, og_operand which, int64_t rows, int64_t k, uint64_t seed,
                          BlockOperand& out, HostMatrix& deq) {
  out = BlockOperand{};
  out.dtype = which == OG_OPERAND_A ? f.a : f.b;
  out.mode = which == OG_OPERAND_A ? f.a_mode : f.b_mode;
  out.rows = rows;
  out.k = k;
  out.ld = fp4(out.dtype) ? (k + 1) / 2 * 2 : k;
  const bool f32_scales = out.mode == OG_SCALE_MODE_VEC128_F32 || out.mode == OG_SCALE_MODE_BLK128x128_F32;
  out.layout = !f32_scales ? OG_SCALE_PACKED : which == OG_OPERAND_A ? OG_SCALE_COL_MAJOR : OG_SCALE_ROW_MAJOR;
  if (f32_scales && which == OG_OPERAND_B) out.scale_ld = ((k + 127) / 128 + 3) / 4 * 4;
  out.global = out.dtype == OG_DTYPE_NVFP4 ? 0.0f : 1.0f;  // nvfp4: the quantiser chooses it

  // The f32 source, rows x k row-major, with block magnitudes varying by 2^-2..2^2 (enough for
  // different scales, not so much that f16 outputs leave their normal range).
  HostMatrix src(rows, k, Dtype::f32);
  fill_fast(src, seed);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c)
      if (r % 32 == 0 || (c / 32) % 3 == 0) {
        const int e = int((r / 32 + c / 32) % 5) - 2;
        src.set(0, r, c, float(std::ldexp(src.get(0, r, c), e)));
      }
  og_matrix probe = out.view(which, og_memory_host(nullptr), og_memory_host(nullptr));
  og_scale_info info;
  if (Status s = Status::from_c(og_scale_info_get(&probe, which, &info)); !s) return s;
  out.elements.assign(size_t(fp4(out.dtype) ? rows * out.ld / 2 : rows * out.ld), 0);
  out.scales.assign(size_t(info.bytes), 0);
  og_matrix dst = out.view(which, og_memory_host(out.elements.data()), og_memory_host(out.scales.data()));
  og_matrix from = src.host_view().raw;
  from.transpose = which == OG_OPERAND_B ? 1 : 0;  // the same op() shape as dst
  if (Status s = Status::from_c(og_quantize_host(&from, &dst, which)); !s) return s;
  out.global = dst.scale.global;
  deq = which == OG_OPERAND_A ? HostMatrix(rows, k, Dtype::f32) : HostMatrix(k, rows, Dtype::f32, Layout::col_major);
  og_matrix to = deq.host_view().raw;
  return Status::from_c(og_dequantize_host(&dst, &to, which));
}

}  // namespace omnigemm::bench
