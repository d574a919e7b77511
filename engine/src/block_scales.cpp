#include "block_scales.hpp"

#include <cmath>
#include <string>

#include "backend.hpp"
#include "validate.hpp"

namespace omnigemm::detail {

namespace {

Status invalid(std::string msg) { return error(StatusCode::invalid_argument, std::move(msg)); }
std::string str(int64_t v) { return std::to_string(v); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

bool dtype_is_fp4(og_dtype d) { return d == OG_DTYPE_MXFP4 || d == OG_DTYPE_NVFP4; }

int element_format(og_dtype d) {
  switch (d) {
    case OG_DTYPE_MXFP8:
    case OG_DTYPE_FP8_E4M3: return OG_BF_ELEM_E4M3;
    case OG_DTYPE_MXFP8_E5M2:
    case OG_DTYPE_FP8_E5M2: return OG_BF_ELEM_E5M2;
    default: return OG_BF_ELEM_E2M1;
  }
}

Status resolve_scale_mode(og_dtype dtype, int64_t m, const char* name, og_scale_mode& out) {
  if (m < 0 || m >= OG_SCALE_MODE_COUNT) return invalid(std::string(name) + ": unknown scale mode " + str(m));
  const og_scale_mode requested = og_scale_mode(m);
  const std::string who = std::string(name) + ": dtype " + og_dtype_name(dtype);
  switch (dtype) {
    case OG_DTYPE_MXFP8:
    case OG_DTYPE_MXFP8_E5M2:
    case OG_DTYPE_MXFP4:
      if (m != OG_SCALE_MODE_DEFAULT && m != OG_SCALE_MODE_VEC32_UE8M0)
        return invalid(who + " takes scale mode VEC32_UE8M0 (or DEFAULT), not " + og_scale_mode_name(requested));
      out = OG_SCALE_MODE_VEC32_UE8M0;
      return {};
    case OG_DTYPE_NVFP4:
      if (m != OG_SCALE_MODE_DEFAULT && m != OG_SCALE_MODE_VEC16_UE4M3)
        return invalid(who + " takes scale mode VEC16_UE4M3 (or DEFAULT), not " + og_scale_mode_name(requested));
      out = OG_SCALE_MODE_VEC16_UE4M3;
      return {};
    case OG_DTYPE_FP8_E4M3:
    case OG_DTYPE_FP8_E5M2:
      if (m == OG_SCALE_MODE_VEC32_UE8M0 || m == OG_SCALE_MODE_VEC16_UE4M3)
        return invalid(who + " takes scale mode DEFAULT (plain fp8), VEC128_F32 or BLK128x128_F32; fp8 elements "
                             "with E8M0 scales per 32 are dtype mxfp8 / mxfp8_e5m2");
      out = requested;
      return {};
    default:
      if (m != OG_SCALE_MODE_DEFAULT)
        return invalid(who + " takes no block scales (scale mode must be DEFAULT)");
      out = OG_SCALE_MODE_DEFAULT;
      return {};
  }
}

int64_t BlockScale::extent() const {
  if (rows == 0 || cols == 0) return 0;
  if (layout == OG_SCALE_PACKED) return stored_rows * stored_cols;
  if (layout == OG_SCALE_COL_MAJOR) return (cols - 1) * ld + rows;
  return (rows - 1) * ld + cols;
}

Status resolve_block_scale(const og_scales& s, og_dtype dtype, int64_t rows_mn, int64_t k, const char* name,
                           BlockScale& b) {
  b = BlockScale{};
  og_scale_mode mode;
  if (Status st = resolve_scale_mode(dtype, enum_int(s.mode), name, mode); !st) return st;
  if (mode == OG_SCALE_MODE_DEFAULT) return {};
  const std::string who = std::string(name) + " scales: ";
  b.mode = mode;
  b.element = element_format(dtype);
  b.block_k = mode == OG_SCALE_MODE_VEC16_UE4M3 ? 16 : mode == OG_SCALE_MODE_VEC32_UE8M0 ? 32 : 128;
  b.block_rows = mode == OG_SCALE_MODE_BLK128x128_F32 ? 128 : 1;
  b.bytes = mode == OG_SCALE_MODE_VEC128_F32 || mode == OG_SCALE_MODE_BLK128x128_F32 ? 4 : 1;
  b.rows = cdiv(rows_mn, b.block_rows);
  b.cols = cdiv(k, b.block_k);
  const int64_t layout = enum_int(s.layout);
  if (layout < OG_SCALE_ROW_MAJOR || layout > OG_SCALE_PACKED)
    return invalid(who + "unknown layout " + str(layout));
  b.layout = s.layout;
  if (b.layout == OG_SCALE_PACKED && b.bytes != 1)
    return invalid(who + "the packed layout holds 1-byte scales (E8M0, e4m3); " + og_scale_mode_name(mode) +
                   " scales are f32: use OG_SCALE_ROW_MAJOR or OG_SCALE_COL_MAJOR");
  if (s.ld < 0) return invalid(who + "negative ld " + str(s.ld));
  if (s.batch_stride < 0) return invalid(who + "negative batch stride " + str(s.batch_stride));
  if (!std::isfinite(s.global) || !(s.global > 0.0f))
    return invalid(who + "global factor " + std::to_string(s.global) +
                   " is not positive and finite (og_matrix_make sets 1; a zero-filled og_matrix has 0)");
  b.global = s.global;
  b.batch_stride = s.batch_stride;
  b.mem = s.mem;
  if (b.layout == OG_SCALE_PACKED) {
    b.stored_rows = (b.rows + 127) / 128 * 128;
    b.stored_cols = (b.cols + 3) / 4 * 4;
    b.ld = 0;
  } else {
    b.stored_rows = b.rows;
    b.stored_cols = b.cols;
    const int64_t inner = b.layout == OG_SCALE_ROW_MAJOR ? b.cols : b.rows;
    b.ld = s.ld == 0 ? (inner > 1 ? inner : 1) : s.ld;
    if (b.ld < inner)
      return invalid(who + "ld " + str(b.ld) + " is smaller than " + str(inner) + " (the " +
                     (b.layout == OG_SCALE_ROW_MAJOR ? "scale columns, ceil(K / " : "scale rows, ceil(rows / ") +
                     str(b.layout == OG_SCALE_ROW_MAJOR ? b.block_k : b.block_rows) + "))");
  }
  // Device kernels index one batch's scale tensor with 32-bit offsets.
  int64_t ext = 0;
  if (__builtin_mul_overflow(b.extent(), int64_t(b.bytes), &ext) || ext >= (int64_t(1) << 31))
    return invalid(who + "one matrix's scale tensor spans 2^31 bytes or more");
  return {};
}

Status check_block_scale_memory(const BlockScale& b, int64_t batches, const char* name) {
  const std::string who = std::string(name) + " scales: ";
  const og_memory& m = b.mem;
  if (enum_int(m.kind) == OG_MEMORY_NONE) return invalid(who + "no memory given (kind OG_MEMORY_NONE)");
  if (enum_int(m.kind) < OG_MEMORY_NONE || enum_int(m.kind) > OG_MEMORY_VULKAN)
    return invalid(who + "unknown memory kind " + str(enum_int(m.kind)));
  uint64_t addr;
  if (m.kind == OG_MEMORY_VULKAN) {
    if (m.vk_buffer == 0) return invalid(who + "null VkBuffer");
    addr = m.offset;
  } else {
    if (m.ptr == nullptr) return invalid(who + "null pointer");
    addr = uint64_t(reinterpret_cast<uintptr_t>(m.ptr)) + m.offset;
  }
  if (addr % uint64_t(b.bytes))
    return invalid(who + "address is not aligned to its " + str(b.bytes) + "-byte scales");
  int64_t span = 0, last = 0;
  if (__builtin_mul_overflow(batches > 0 ? batches - 1 : 0, b.batch_stride, &last) ||
      __builtin_add_overflow(last, b.extent(), &span) || __builtin_mul_overflow(span, int64_t(b.bytes), &span) ||
      span > (int64_t(1) << 60))
    return invalid(who + "the addressed range overflows 64-bit byte offsets");
  return {};
}

Status check_fp4_layout(int64_t k_stride, int64_t other_stride, int64_t rows_mn, int64_t batch_stride,
                        const char* name) {
  const std::string who = std::string(name) + ": fp4 elements are packed two per byte along K, so ";
  if (k_stride != 1)
    return invalid(who + "K must be the contiguous dimension (A row-major, B column-major, or their transposed "
                         "views; K stride is " + str(k_stride) + ")");
  if (rows_mn > 1 && other_stride % 2)
    return invalid(who + "the leading dimension must be even (it is " + str(other_stride) + ")");
  if (batch_stride % 2) return invalid(who + "the batch stride must be even (it is " + str(batch_stride) + ")");
  return {};
}

og_scale_info scale_info_of(const BlockScale& b) {
  og_scale_info i{};
  i.mode = b.mode;
  i.element = b.element == OG_BF_ELEM_E4M3 ? OG_DTYPE_FP8_E4M3 : b.element == OG_BF_ELEM_E5M2 ? OG_DTYPE_FP8_E5M2 : OG_DTYPE_MXFP4;
  i.block_k = b.block_k;
  i.block_rows = b.block_rows;
  i.scale_bytes = b.bytes;
  i.rows = b.rows;
  i.cols = b.cols;
  i.stored_rows = b.stored_rows;
  i.stored_cols = b.stored_cols;
  i.ld = b.ld;
  i.bytes = b.extent() * b.bytes;
  return i;
}

}  // namespace omnigemm::detail

extern "C" const char* og_scale_mode_name(og_scale_mode m) {
  switch (m) {
    case OG_SCALE_MODE_DEFAULT: return "DEFAULT";
    case OG_SCALE_MODE_VEC32_UE8M0: return "VEC32_UE8M0";
    case OG_SCALE_MODE_VEC16_UE4M3: return "VEC16_UE4M3";
    case OG_SCALE_MODE_VEC128_F32: return "VEC128_F32";
    case OG_SCALE_MODE_BLK128x128_F32: return "BLK128x128_F32";
  }
  return "unknown_scale_mode";
}
