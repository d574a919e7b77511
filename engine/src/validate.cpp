#include "validate.hpp"

#include "view_overlap.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace omnigemm::detail {

namespace {

constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();  // scheduler indices are 32-bit
constexpr uint32_t kOutputDtypes = (1u << OG_DTYPE_F32) | (1u << OG_DTYPE_F16) | (1u << OG_DTYPE_BF16);

Status invalid(std::string msg) { return error(StatusCode::invalid_argument, std::move(msg)); }

bool mul_overflows(int64_t a, int64_t b, int64_t& out) { return __builtin_mul_overflow(a, b, &out); }
bool add_overflows(int64_t a, int64_t b, int64_t& out) { return __builtin_add_overflow(a, b, &out); }

bool valid_dtype(int d) { return d >= 0 && d < OG_DTYPE_COUNT; }

// Element extent of an operand over `batches` batches, with overflow detection.
bool checked_extent(const Operand& o, int64_t batches, int64_t& out) {
  if (o.rows == 0 || o.cols == 0 || batches == 0) { out = 0; return true; }
  int64_t a, b, c;
  if (mul_overflows(o.rows - 1, o.stride_row, a) || mul_overflows(o.cols - 1, o.stride_col, b) ||
      mul_overflows(batches - 1, o.batch_stride, c))
    return false;
  return !add_overflows(a, b, out) && !add_overflows(out, c, out) && !add_overflows(out, 1, out);
}

// Byte range [begin, end) of an operand, in the address space identified by `space`
// (the host/device pointer space, or one VkBuffer).
struct ByteRange {
  og_memory_kind kind;
  uint64_t space;
  uint64_t begin, end;
};

ByteRange byte_range(const Operand& o, int64_t batches) {
  int64_t ext = 0;
  checked_extent(o, batches, ext);
  const uint64_t base = o.mem.kind == OG_MEMORY_VULKAN
                            ? o.mem.offset
                            : uint64_t(reinterpret_cast<uintptr_t>(o.mem.ptr)) + o.mem.offset;
  const uint64_t space = o.mem.kind == OG_MEMORY_VULKAN ? o.mem.vk_buffer : 0;
  return {o.mem.kind, space, base, base + uint64_t(storage_bytes(o.dtype, ext))};
}

// Byte range of a block-scaled operand's scale tensors over `batches` batches.
ByteRange scale_range(const Operand& o, int64_t batches) {
  const BlockScale& b = o.scale;
  const og_memory& m = b.mem;
  const uint64_t base = m.kind == OG_MEMORY_VULKAN ? m.offset : uint64_t(reinterpret_cast<uintptr_t>(m.ptr)) + m.offset;
  const uint64_t span = uint64_t((batches - 1) * b.batch_stride + b.extent()) * uint64_t(b.bytes);
  return {m.kind, m.kind == OG_MEMORY_VULKAN ? m.vk_buffer : 0, base, base + span};
}

bool overlaps(const ByteRange& x, const ByteRange& y) {
  return x.kind == y.kind && x.space == y.space && x.begin < y.end && y.begin < x.end;
}

// Validates one matrix view and folds op() and the layout into strides.
Status make_operand(const og_matrix& v, const char* name, bool is_output, Operand& o) {
  if (!valid_dtype(int(enum_int(v.dtype))))
    return invalid(std::string(name) + ": unknown dtype " + std::to_string(enum_int(v.dtype)));
  if (v.rows < 0 || v.cols < 0)
    return invalid(std::string(name) + ": negative size " + std::to_string(v.rows) + " x " + std::to_string(v.cols));
  if (v.rows > kMaxDim || v.cols > kMaxDim)
    return invalid(std::string(name) + ": dimension above 2^31-1 (" + std::to_string(v.rows) + " x " +
                   std::to_string(v.cols) + ")");
  if (enum_int(v.layout) != OG_ROW_MAJOR && enum_int(v.layout) != OG_COL_MAJOR)
    return invalid(std::string(name) + ": layout must be OG_ROW_MAJOR or OG_COL_MAJOR");
  if (v.transpose != 0 && v.transpose != 1) return invalid(std::string(name) + ": transpose must be 0 or 1");
  if (is_output && v.transpose)
    return invalid(std::string(name) + ": an output cannot be transposed; describe it with its layout instead");
  const int64_t inner = v.layout == OG_ROW_MAJOR ? v.cols : v.rows;
  const int64_t min_ld = inner > 1 ? inner : 1;
  if (v.ld < min_ld)
    return invalid(std::string(name) + ": leading dimension " + std::to_string(v.ld) + " is smaller than " +
                   std::to_string(min_ld) + " (the " + (v.layout == OG_ROW_MAJOR ? "column" : "row") +
                   " count of a " + (v.layout == OG_ROW_MAJOR ? "row" : "column") + "-major " +
                   std::to_string(v.rows) + " x " + std::to_string(v.cols) + " matrix)");
  if (v.batch_stride < 0) return invalid(std::string(name) + ": negative batch stride");
  const int64_t sr = v.layout == OG_ROW_MAJOR ? v.ld : 1;
  const int64_t sc = v.layout == OG_ROW_MAJOR ? 1 : v.ld;
  o.dtype = v.dtype;
  o.mem = v.mem;
  o.batch_stride = v.batch_stride;
  if (v.transpose) {
    o.rows = v.cols; o.cols = v.rows; o.stride_row = sc; o.stride_col = sr;
  } else {
    o.rows = v.rows; o.cols = v.cols; o.stride_row = sr; o.stride_col = sc;
  }
  return {};
}

Status check_memory(const og_memory& m, const char* name, og_dtype dtype) {
  if (enum_int(m.kind) == OG_MEMORY_NONE) return invalid(std::string(name) + ": no memory given (kind OG_MEMORY_NONE)");
  if (enum_int(m.kind) < OG_MEMORY_NONE || enum_int(m.kind) > OG_MEMORY_VULKAN)
    return invalid(std::string(name) + ": unknown memory kind " + std::to_string(enum_int(m.kind)));
  const uint64_t align = uint64_t(dtype_bytes(dtype));
  if (m.kind == OG_MEMORY_VULKAN) {
    if (m.vk_buffer == 0) return invalid(std::string(name) + ": null VkBuffer");
    if (m.offset % align) return invalid(std::string(name) + ": byte offset " + std::to_string(m.offset) +
                                         " is not a multiple of the element size " + std::to_string(align));
    return {};
  }
  if (m.ptr == nullptr) return invalid(std::string(name) + ": null pointer");
  const uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(m.ptr)) + m.offset;
  if (addr % align)
    return invalid(std::string(name) + ": address is not aligned to its " + std::to_string(align) +
                   "-byte elements");
  return {};
}

Status check_extent(const Operand& o, int64_t batches, const char* name) {
  int64_t ext;
  int64_t bytes;
  if (!checked_extent(o, batches, ext) || mul_overflows(ext, dtype_bytes(o.dtype), bytes) ||
      bytes > (int64_t(1) << 60))
    return invalid(std::string(name) + ": the addressed range overflows 64-bit byte offsets");
  return {};
}

// The caller's workspace: a known memory kind with an address (non-zero VkBuffer), 256-byte
// aligned as cudaMalloc's and cuBLASLt's are, and no byte shared with an operand (the kind of
// the backend's memory is checked by check_backend_support).
Status check_workspace(const og_gemm_desc& desc, Problem& p, const Operand& bias_op) {
  const og_memory& w = desc.workspace;
  if (enum_int(w.kind) == OG_MEMORY_NONE) {
    if (desc.workspace_bytes != 0)
      return invalid("workspace: workspace_bytes is " + std::to_string(desc.workspace_bytes) +
                     " but no workspace memory is given (kind OG_MEMORY_NONE)");
    return {};
  }
  if (enum_int(w.kind) < OG_MEMORY_NONE || enum_int(w.kind) > OG_MEMORY_VULKAN)
    return invalid("workspace: unknown memory kind " + std::to_string(enum_int(w.kind)));
  if (w.kind == OG_MEMORY_VULKAN ? w.vk_buffer == 0 : w.ptr == nullptr)
    return invalid(std::string("workspace: ") + (w.kind == OG_MEMORY_VULKAN ? "null VkBuffer" : "null pointer"));
  const uint64_t base = w.kind == OG_MEMORY_VULKAN ? w.offset : uint64_t(reinterpret_cast<uintptr_t>(w.ptr)) + w.offset;
  if (base % 256)
    return invalid("workspace: its address must be a multiple of 256 bytes (is " + std::to_string(base % 256) +
                   " bytes past one)");
  if (desc.workspace_bytes > (uint64_t(1) << 60)) return invalid("workspace: workspace_bytes above 2^60");
  const ByteRange ws{w.kind, w.kind == OG_MEMORY_VULKAN ? w.vk_buffer : 0, base, base + desc.workspace_bytes};
  struct Named { const Operand* o; const char* name; };
  for (Named x : {Named{&p.a, "A"}, Named{&p.b, "B"}, Named{&p.c, "C"}, Named{&p.d, "D"}, Named{&bias_op, "bias"}})
    if (x.o->present && overlaps(ws, byte_range(*x.o, p.batch)))
      return invalid(std::string("workspace overlaps ") + x.name + " in memory");
  p.workspace = w;
  p.workspace_bytes = desc.workspace_bytes;
  return {};
}

}  // namespace

Status fold_view(const og_matrix& v, const char* name, bool is_output, Operand& o) {
  return make_operand(v, name, is_output, o);
}

Status check_operand_memory(const Operand& o, int64_t batches, const char* name) {
  Status s;
  if (!(s = check_memory(o.mem, name, o.dtype))) return s;
  if (!(s = check_extent(o, batches, name))) return s;
  if (o.scale.present() && !(s = check_block_scale_memory(o.scale, batches, name))) return s;
  return {};
}

bool operands_overlap(const Operand& x, bool x_scales, const Operand& y, bool y_scales, int64_t batches) {
  return overlaps(x_scales ? scale_range(x, batches) : byte_range(x, batches),
                  y_scales ? scale_range(y, batches) : byte_range(y, batches));
}

int dtype_bytes(og_dtype d) {
  switch (d) {
    case OG_DTYPE_F32: return 4;
    case OG_DTYPE_F16:
    case OG_DTYPE_BF16: return 2;
    default: return 1;
  }
}

int64_t storage_bytes(og_dtype d, int64_t elements) {
  return dtype_is_fp4(d) ? (elements + 1) / 2 : elements * dtype_bytes(d);
}

bool dtype_is_block_scaled(og_dtype d) {
  return d == OG_DTYPE_MXFP8 || d == OG_DTYPE_MXFP8_E5M2 || d == OG_DTYPE_MXFP4 || d == OG_DTYPE_NVFP4;
}

bool dtype_is_fp8(og_dtype d) { return d == OG_DTYPE_FP8_E4M3 || d == OG_DTYPE_FP8_E5M2; }

int64_t Operand::extent_elements(int64_t batches) const {
  int64_t e = 0;
  return checked_extent(*this, batches, e) ? e : -1;
}

std::string dtype_list(uint32_t mask) {
  std::string s;
  for (int d = 0; d < OG_DTYPE_COUNT; ++d) {
    if (!(mask & (1u << d))) continue;
    if (!s.empty()) s += ", ";
    s += og_dtype_name(og_dtype(d));
  }
  return s.empty() ? "none" : s;
}

Status validate(const og_gemm_desc& desc, Problem& p) {
  p = Problem{};
  if (desc.batch_count < 0) return invalid("batch_count is negative (" + std::to_string(desc.batch_count) + ")");
  if (desc.batch_count > kMaxDim) return invalid("batch_count above 2^31-1");
  p.batch = desc.batch_count;

  Status s;
  if (!(s = make_operand(desc.a, "A", false, p.a))) return s;
  if (!(s = make_operand(desc.b, "B", false, p.b))) return s;
  if (!(s = make_operand(desc.d, "D", true, p.d))) return s;
  p.m = p.a.rows;
  p.k = p.a.cols;
  p.n = p.b.cols;
  if (p.b.rows != p.k)
    return invalid("shape mismatch: op(A) is " + std::to_string(p.a.rows) + " x " + std::to_string(p.a.cols) +
                   " but op(B) is " + std::to_string(p.b.rows) + " x " + std::to_string(p.b.cols) +
                   " (inner dimensions differ)");
  if (p.d.rows != p.m || p.d.cols != p.n)
    return invalid("shape mismatch: D is " + std::to_string(p.d.rows) + " x " + std::to_string(p.d.cols) +
                   " but op(A) * op(B) is " + std::to_string(p.m) + " x " + std::to_string(p.n));

  // Block scales of A (M x K) and B (N x K seen along K), and the fp4 element layout.
  if (!(s = resolve_block_scale(desc.a.scale, p.a.dtype, p.m, p.k, "A", p.a.scale))) return s;
  if (!(s = resolve_block_scale(desc.b.scale, p.b.dtype, p.n, p.k, "B", p.b.scale))) return s;
  if (dtype_is_fp4(p.a.dtype) && !(s = check_fp4_layout(p.a.stride_col, p.a.stride_row, p.m, p.a.batch_stride, "A")))
    return s;
  if (dtype_is_fp4(p.b.dtype) && !(s = check_fp4_layout(p.b.stride_row, p.b.stride_col, p.n, p.b.batch_stride, "B")))
    return s;
  if (!(kOutputDtypes & (1u << p.d.dtype)))
    return error(StatusCode::unsupported, std::string("output dtype ") + og_dtype_name(p.d.dtype) +
                                              " is not supported; outputs are f32, f16, bf16");

  // Compute mode: TF32 is an opt-in for f32 inputs only.
  if (enum_int(desc.compute_mode) < OG_COMPUTE_DEFAULT || enum_int(desc.compute_mode) > OG_COMPUTE_TF32)
    return invalid("unknown compute_mode " + std::to_string(enum_int(desc.compute_mode)) +
                   " (OG_COMPUTE_DEFAULT or OG_COMPUTE_TF32)");
  if (desc.compute_mode == OG_COMPUTE_TF32 && (p.a.dtype != OG_DTYPE_F32 || p.b.dtype != OG_DTYPE_F32))
    return invalid(std::string("compute_mode OG_COMPUTE_TF32 applies to f32 x f32 inputs only (these are ") +
                   og_dtype_name(p.a.dtype) + " x " + og_dtype_name(p.b.dtype) + "); use OG_COMPUTE_DEFAULT");
  p.compute_mode = desc.compute_mode;

  // Epilogue.
  const og_epilogue& e = desc.epilogue;
  if (enum_int(e.activation) < OG_ACT_NONE || enum_int(e.activation) > OG_ACT_SILU)
    return invalid("unknown activation " + std::to_string(enum_int(e.activation)));
  if (!std::isfinite(e.leaky_slope)) return invalid("leaky_slope is not finite");
  if (enum_int(e.bias_mode) < OG_BIAS_NONE || enum_int(e.bias_mode) > OG_BIAS_PER_M)
    return invalid("unknown bias mode " + std::to_string(enum_int(e.bias_mode)));
  if (e.bias_mode != OG_BIAS_NONE && !valid_dtype(int(enum_int(e.bias_dtype))))
    return invalid("bias: unknown dtype " + std::to_string(enum_int(e.bias_dtype)));
  p.alpha = e.alpha;
  p.beta = e.beta;
  p.activation = e.activation;
  p.leaky_slope = e.leaky_slope;
  p.bias_mode = e.bias_mode;
  p.bias_dtype = e.bias_dtype;
  p.bias = e.bias;
  p.bias_batch_stride = e.bias_batch_stride;

  if (e.beta != 0.0f) {
    if (!(s = make_operand(desc.c, "C", false, p.c))) return s;
    if (desc.c.transpose) return invalid("C: cannot be transposed; describe it with its layout instead");
    if (p.c.rows != p.m || p.c.cols != p.n)
      return invalid("shape mismatch: C is " + std::to_string(p.c.rows) + " x " + std::to_string(p.c.cols) +
                     " but D is " + std::to_string(p.m) + " x " + std::to_string(p.n));
    if (!(kOutputDtypes & (1u << p.c.dtype)))
      return error(StatusCode::unsupported,
                   std::string("C dtype ") + og_dtype_name(p.c.dtype) + " is not supported; use f32, f16 or bf16");
    p.c.present = true;
  }
  if (p.bias_mode != OG_BIAS_NONE) {
    if (!valid_dtype(p.bias_dtype) || !(kOutputDtypes & (1u << p.bias_dtype)))
      return error(StatusCode::unsupported, "bias dtype must be f32, f16 or bf16");
    if (p.bias_batch_stride < 0) return invalid("bias: negative batch stride");
  }

  if (desc.config) {
    auto cfg = Config::parse(desc.config);
    if (!cfg) return invalid(std::string("config \"") + desc.config +
                             "\" is not of the form [family:]BMxBNxBK[-g#][-s#][-w#][-e#][-k#][-form] with valid values: " +
                             Config::parse_error(desc.config));
    p.forced_config = cfg;
  }

  // Zero-size problems are valid no-ops: nothing below is touched.
  if (p.empty()) return {};

  // D's batches may interleave (heads side by side: ld = heads x N, batch stride N) but must not
  // share an element: decided exactly (view_overlap.hpp).
  if (p.batch > 1 &&
      batches_overlap(StridedView{p.d.rows, p.d.cols, p.d.stride_row, p.d.stride_col, p.d.batch_stride}, p.batch))
    return invalid("D: batch stride " + std::to_string(p.d.batch_stride) +
                   " makes batches overlap: two batches share an output element (batch b's element (i, j) is at "
                   "b * " + std::to_string(p.d.batch_stride) + " + i * " + std::to_string(p.d.stride_row) + " + j * " +
                   std::to_string(p.d.stride_col) + ")");

  p.a.present = p.k > 0;
  p.b.present = p.k > 0;
  p.d.present = true;
  struct Named { Operand* o; const char* name; };
  for (Named x : {Named{&p.a, "A"}, Named{&p.b, "B"}, Named{&p.c, "C"}, Named{&p.d, "D"}}) {
    if (!x.o->present) continue;
    if (!(s = check_memory(x.o->mem, x.name, x.o->dtype))) return s;
    if (!(s = check_extent(*x.o, p.batch, x.name))) return s;
    if (x.o->scale.present() && !(s = check_block_scale_memory(x.o->scale, p.batch, x.name))) return s;
  }
  Operand bias_op;  // the bias vector as a 1 x len operand, for the memory and aliasing checks
  if (p.bias_mode != OG_BIAS_NONE) {
    bias_op.present = true;
    bias_op.dtype = p.bias_dtype;
    bias_op.mem = p.bias;
    bias_op.rows = 1;
    bias_op.cols = p.bias_mode == OG_BIAS_PER_N ? p.n : p.m;
    bias_op.stride_row = bias_op.cols;
    bias_op.stride_col = 1;
    bias_op.batch_stride = p.bias_batch_stride;
    if (!(s = check_memory(p.bias, "bias", p.bias_dtype))) return s;
    if (!(s = check_extent(bias_op, p.batch, "bias"))) return s;
  }

  // Memory kinds must agree: one GEMM runs on one backend's memory.
  for (const Operand* o : {&p.a, &p.b, &p.c, &bias_op})
    if (o->present && (o->mem.kind != p.d.mem.kind || (o->scale.present() && o->scale.mem.kind != p.d.mem.kind)))
      return invalid("operands live in different kinds of memory (all must be host, CUDA, HIP or Vulkan alike)");

  if (!(s = check_workspace(desc, p, bias_op))) return s;

  // The output must not overlap an input, except C given as exactly the same view (in place).
  const ByteRange d_range = byte_range(p.d, p.batch);
  if (p.a.present && overlaps(d_range, byte_range(p.a, p.batch))) return invalid("D overlaps A in memory");
  if (p.b.present && overlaps(d_range, byte_range(p.b, p.batch))) return invalid("D overlaps B in memory");
  if (p.a.present && p.a.scale.present() && overlaps(d_range, scale_range(p.a, p.batch)))
    return invalid("D overlaps A's scales in memory");
  if (p.b.present && p.b.scale.present() && overlaps(d_range, scale_range(p.b, p.batch)))
    return invalid("D overlaps B's scales in memory");
  if (bias_op.present && overlaps(d_range, byte_range(bias_op, p.batch))) return invalid("D overlaps bias in memory");
  if (p.c.present && overlaps(d_range, byte_range(p.c, p.batch))) {
    const bool same_view = p.c.mem.kind == p.d.mem.kind && p.c.mem.ptr == p.d.mem.ptr &&
                           p.c.mem.vk_buffer == p.d.mem.vk_buffer && p.c.mem.offset == p.d.mem.offset &&
                           p.c.dtype == p.d.dtype && p.c.stride_row == p.d.stride_row &&
                           p.c.stride_col == p.d.stride_col && p.c.batch_stride == p.d.batch_stride;
    if (!same_view)
      return invalid("D partially overlaps C: in-place update needs C to be exactly the same view as D");
  }
  return {};
}

Status check_backend_support(const Backend& be, const Problem& p, bool host_staging) {
  const std::string bname = og_backend_name(be.kind());
  if (!(be.input_dtypes() & (1u << p.a.dtype)) || !(be.input_dtypes() & (1u << p.b.dtype)))
    return error(StatusCode::unsupported, "backend " + bname + " does not accept inputs " +
                                              og_dtype_name(p.a.dtype) + " x " + og_dtype_name(p.b.dtype) +
                                              "; its input dtypes are: " + dtype_list(be.input_dtypes()));
  if (!(be.output_dtypes() & (1u << p.d.dtype)))
    return error(StatusCode::unsupported, "backend " + bname + " does not write " + og_dtype_name(p.d.dtype) +
                                              "; its output dtypes are: " + dtype_list(be.output_dtypes()));
  for (const Operand* o : {&p.a, &p.b})
    if (o->scale.present() && !(be.scale_modes() & (1u << o->scale.mode))) {
      std::string modes;
      for (int m = 1; m < OG_SCALE_MODE_COUNT; ++m)
        if (be.scale_modes() & (1u << m)) modes += std::string(modes.empty() ? "" : ", ") + og_scale_mode_name(og_scale_mode(m));
      return error(StatusCode::unsupported, "backend " + bname + " does not run block scales " +
                                                og_scale_mode_name(o->scale.mode) + " (" + og_dtype_name(o->dtype) +
                                                "); its block-scale modes: " + (modes.empty() ? "none" : modes));
    }
  if (!host_staging && !p.empty() && !(be.memory_kinds() & (1u << p.d.mem.kind)))
    return invalid("backend " + bname + " cannot use this memory kind; use og_gemm_host for host pointers "
                   "or pass memory of the context's backend");
  if (p.has_workspace() && !(be.memory_kinds() & (1u << p.workspace.kind)))
    return invalid("workspace: backend " + bname + " cannot use this memory kind; the workspace must be memory of the "
                   "context's backend (og_memory_alloc gives such memory)");
  return be.check_problem(p);
}

}  // namespace omnigemm::detail
