// The C API of omnigemm/blockscaled.h: validation of the quantisation descriptors, then the host
// implementation (block_quantize.cpp) or the context's backend.
#include <bit>
#include <string>

#include "api_guard.hpp"
#include "block_quantize.hpp"
#include "context_internal.hpp"
#include "omnigemm/blockscaled.h"
#include "validate.hpp"

using namespace omnigemm::detail;
using omnigemm::Status;
using omnigemm::StatusCode;

namespace {

Status invalid(std::string msg) { return error(StatusCode::invalid_argument, std::move(msg)); }

constexpr uint32_t kPlainDtypes = (1u << OG_DTYPE_F32) | (1u << OG_DTYPE_F16) | (1u << OG_DTYPE_BF16);

// The operand a caller named, read without loading an out-of-range enum value (undefined in C++).
Status check_which(const og_operand& which, og_operand& out) {
  const int64_t w = enum_int(which);
  if (w != OG_OPERAND_A && w != OG_OPERAND_B) return invalid("operand must be OG_OPERAND_A or OG_OPERAND_B, not " + std::to_string(w));
  out = w == OG_OPERAND_B ? OG_OPERAND_B : OG_OPERAND_A;
  return {};
}

// A block-scaled view: folded, scales resolved (rows: M for A, N for B), fp4 layout checked.
// auto_global: an nvfp4 destination whose global 0 asks the quantiser to choose it.
Status block_view(const og_matrix& m, og_operand which, const char* name, bool auto_global, Operand& o) {
  Status s;
  if (!(s = fold_view(m, name, false, o))) return s;
  const bool b = which == OG_OPERAND_B;
  const int64_t rows = b ? o.cols : o.rows, k = b ? o.rows : o.cols;
  og_scales sc = m.scale;
  if (auto_global && m.dtype == OG_DTYPE_NVFP4 && sc.global == 0.0f) sc.global = 1.0f;
  if (!(s = resolve_block_scale(sc, o.dtype, rows, k, name, o.scale))) return s;
  if (!o.scale.present())
    return invalid(std::string(name) + ": dtype " + og_dtype_name(o.dtype) +
                   " with scale mode " + og_scale_mode_name(m.scale.mode) +
                   " is not block-scaled (mxfp8, mxfp8_e5m2, mxfp4, nvfp4, or fp8 with VEC128_F32 / BLK128x128_F32)");
  if (dtype_is_fp4(o.dtype) &&
      !(s = check_fp4_layout(b ? o.stride_row : o.stride_col, b ? o.stride_col : o.stride_row, rows, 0, name)))
    return s;
  return {};
}

Status plain_view(const og_matrix& m, const char* name, Operand& o) {
  Status s;
  if (!(s = fold_view(m, name, false, o))) return s;
  const int64_t d = enum_int(m.dtype);
  if (d < 0 || d >= OG_DTYPE_COUNT || !(kPlainDtypes & (1u << d)))
    return invalid(std::string(name) + ": dtype must be f32, f16 or bf16 (it is " +
                   (d >= 0 && d < OG_DTYPE_COUNT ? og_dtype_name(m.dtype) : std::to_string(d).c_str()) + ")");
  return {};
}

// The shared checks of a (plain, block-scaled) pair: shapes, memory, kinds, overlaps. `kind`:
// the memory kind both must live in (OG_MEMORY_NONE: the plain one's).
Status check_pair(const Operand& plain, const Operand& blocked, const char* plain_name, const char* blocked_name,
                  bool blocked_is_output) {
  if (plain.rows != blocked.rows || plain.cols != blocked.cols)
    return invalid(std::string("shape mismatch: ") + plain_name + " is " + std::to_string(plain.rows) + " x " +
                   std::to_string(plain.cols) + " but " + blocked_name + " is " + std::to_string(blocked.rows) + " x " +
                   std::to_string(blocked.cols) + " (after op())");
  if (plain.rows == 0 || plain.cols == 0) return {};
  Status s;
  if (!(s = check_operand_memory(plain, 1, plain_name))) return s;
  if (!(s = check_operand_memory(blocked, 1, blocked_name))) return s;
  if (plain.mem.kind != blocked.mem.kind || blocked.scale.mem.kind != blocked.mem.kind)
    return invalid("the matrices and the scales live in different kinds of memory");
  const bool overlap = operands_overlap(plain, false, blocked, false, 1) || operands_overlap(plain, false, blocked, true, 1) ||
                       (blocked_is_output && operands_overlap(blocked, false, blocked, true, 1));
  if (overlap) return invalid(std::string("the output ") + (blocked_is_output ? blocked_name : plain_name) + " overlaps an input");
  return {};
}

Status quantize(og_context* ctx, const og_matrix* src, og_matrix* dst, const og_operand& given, void* stream) {
  if (!src || !dst) return invalid("null matrix");
  Status s;
  og_operand which;
  if (!(s = check_which(given, which))) return s;
  Operand in, out;
  if (!(s = plain_view(*src, "src", in))) return s;
  if (!(s = block_view(*dst, which, "dst", true, out))) return s;
  if (out.scale.mode != OG_SCALE_MODE_VEC16_UE4M3 && out.scale.global != 1.0f)
    return invalid("dst scales: the quantiser writes " + std::string(og_dtype_name(out.dtype)) +
                   " tensors with global factor 1 (only nvfp4 quantises with another)");
  if (!(s = check_pair(in, out, "src", "dst", true))) return s;
  const bool b = which == OG_OPERAND_B;
  const bool auto_global = out.scale.mode == OG_SCALE_MODE_VEC16_UE4M3 && dst->scale.global == 0.0f;
  float global = auto_global ? 0.0f : out.scale.global;
  if (in.rows == 0 || in.cols == 0) {
    if (auto_global) dst->scale.global = 1.0f;
    return {};
  }
  if (ctx) {
    Backend& be = context_backend(ctx);
    if (!(be.memory_kinds() & (1u << out.mem.kind)))
      return invalid(std::string("og_quantize: the matrices are not in memory of backend ") + og_backend_name(be.kind()));
    if (!(s = be.quantize(in, out, b, global, stream))) return s;
  } else {
    if (out.mem.kind != OG_MEMORY_HOST) return invalid("og_quantize_host needs host memory (OG_MEMORY_HOST)");
    const KView sv = kview_of(in, b), dv = kview_of(out, b);
    if (auto_global) global = nvfp4_global(sv);
    clear_packed_scales(dv);
    quantize_rows(sv, dv, global, 0, dv.rows);
  }
  if (auto_global) dst->scale.global = global;
  return {};
}

Status dequantize(og_context* ctx, const og_matrix* src, const og_matrix* dst, const og_operand& given, void* stream) {
  if (!src || !dst) return invalid("null matrix");
  Status s;
  og_operand which;
  if (!(s = check_which(given, which))) return s;
  Operand in, out;
  if (!(s = block_view(*src, which, "src", false, in))) return s;
  if (!(s = plain_view(*dst, "dst", out))) return s;
  if (!(s = check_pair(out, in, "dst", "src", false))) return s;
  if (in.rows == 0 || in.cols == 0) return {};
  const bool b = which == OG_OPERAND_B;
  if (ctx) {
    Backend& be = context_backend(ctx);
    if (!(be.memory_kinds() & (1u << out.mem.kind)))
      return invalid(std::string("og_dequantize: the matrices are not in memory of backend ") + og_backend_name(be.kind()));
    return be.dequantize(in, out, b, stream);
  }
  if (out.mem.kind != OG_MEMORY_HOST) return invalid("og_dequantize_host needs host memory (OG_MEMORY_HOST)");
  const KView sv = kview_of(in, b);
  dequantize_rows(sv, kview_of(out, b), 0, sv.rows);
  return {};
}

Status convert(const og_matrix* from, const og_matrix* to, const og_operand& given) {
  if (!from || !to) return invalid("null matrix");
  Status s;
  og_operand which;
  if (!(s = check_which(given, which))) return s;
  Operand f, t;
  if (!(s = block_view(*from, which, "from", false, f))) return s;
  if (!(s = block_view(*to, which, "to", false, t))) return s;
  if (f.dtype != t.dtype || f.scale.mode != t.scale.mode || f.rows != t.rows || f.cols != t.cols)
    return invalid(std::string("from and to must describe the same operand (dtype, scale mode, shape): ") +
                   og_dtype_name(f.dtype) + " " + og_scale_mode_name(f.scale.mode) + " " + std::to_string(f.rows) + " x " +
                   std::to_string(f.cols) + " vs " + og_dtype_name(t.dtype) + " " + og_scale_mode_name(t.scale.mode) +
                   " " + std::to_string(t.rows) + " x " + std::to_string(t.cols));
  if (f.scale.rows == 0 || f.scale.cols == 0) return {};
  if (!(s = check_block_scale_memory(f.scale, 1, "from"))) return s;
  if (!(s = check_block_scale_memory(t.scale, 1, "to"))) return s;
  if (f.scale.mem.kind != OG_MEMORY_HOST || t.scale.mem.kind != OG_MEMORY_HOST)
    return invalid("og_convert_scales_host needs host memory (OG_MEMORY_HOST)");
  if (operands_overlap(f, true, t, true, 1)) return invalid("the two scale tensors overlap");
  const bool b = which == OG_OPERAND_B;
  KView fv = kview_of(f, b), tv = kview_of(t, b);
  convert_scales(fv, tv);
  return {};
}

}  // namespace

extern "C" {

og_status og_scale_info_get(const og_matrix* m, og_operand which, og_scale_info* out) {
  return guarded([&]() -> Status {
    if (!m || !out) return invalid("null matrix or output");
    *out = og_scale_info{};
    Status s;
    og_operand w;
    if (!(s = check_which(which, w))) return s;
    Operand o;
    if (!(s = block_view(*m, w, "matrix", true, o))) return s;  // an nvfp4 global 0 is fine here
    *out = scale_info_of(o.scale);
    return {};
  });
}

og_status og_quantize_host(const og_matrix* src, og_matrix* dst, og_operand which) {
  return guarded([&] { return quantize(nullptr, src, dst, which, nullptr); });
}

og_status og_dequantize_host(const og_matrix* src, const og_matrix* dst, og_operand which) {
  return guarded([&] { return dequantize(nullptr, src, dst, which, nullptr); });
}

og_status og_quantize(og_context* ctx, const og_matrix* src, og_matrix* dst, og_operand which, void* stream) {
  return guarded([&]() -> Status {
    if (!ctx) return invalid("null context");
    return quantize(ctx, src, dst, which, stream);
  });
}

og_status og_dequantize(og_context* ctx, const og_matrix* src, const og_matrix* dst, og_operand which, void* stream) {
  return guarded([&]() -> Status {
    if (!ctx) return invalid("null context");
    return dequantize(ctx, src, dst, which, stream);
  });
}

og_status og_convert_scales_host(const og_matrix* from, const og_matrix* to, og_operand which) {
  return guarded([&] { return convert(from, to, which); });
}

}  // extern "C"
