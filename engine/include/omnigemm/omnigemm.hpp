// OmniGEMM C++20 API: a thin, header-only layer over the C ABI in omnigemm.h, so both
// interfaces have the same capabilities and no exception crosses the library boundary. Failures
// are Status values (code + message); the rules a descriptor must follow are listed at the top
// of omnigemm.h. The option structs are aggregates with defaults for every member, so designated
// initializers may name any subset of fields (warning-free under -Wextra).
//
//   auto ctx = omnigemm::Context::create({.backend = omnigemm::Backend::cpu});
//   if (!ctx) { std::puts(ctx.status().message.c_str()); return 1; }
//   omnigemm::Gemm g;
//   g.a = omnigemm::Matrix::host(a.data(), M, K, omnigemm::Dtype::f16);
//   ...
//   omnigemm::Status s = ctx->run_host(g);
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "omnigemm/omnigemm.h"

namespace omnigemm {

enum class StatusCode : int {
  ok = OG_OK,
  invalid_argument = OG_ERROR_INVALID_ARGUMENT,
  unsupported = OG_ERROR_UNSUPPORTED,
  backend_unavailable = OG_ERROR_BACKEND_UNAVAILABLE,
  out_of_memory = OG_ERROR_OUT_OF_MEMORY,
  device_lost = OG_ERROR_DEVICE_LOST,
  backend_failure = OG_ERROR_BACKEND_FAILURE,
  internal = OG_ERROR_INTERNAL,
};

enum class Dtype : int {
  f32 = OG_DTYPE_F32,
  f16 = OG_DTYPE_F16,
  bf16 = OG_DTYPE_BF16,
  fp8_e4m3 = OG_DTYPE_FP8_E4M3,
  fp8_e5m2 = OG_DTYPE_FP8_E5M2,
  mxfp8 = OG_DTYPE_MXFP8,
  mxfp4 = OG_DTYPE_MXFP4,
  nvfp4 = OG_DTYPE_NVFP4,
  mxfp8_e5m2 = OG_DTYPE_MXFP8_E5M2,
};

// Block scales of an operand (og_scales; omnigemm/blockscaled.h has the formats).
enum class ScaleMode : int {
  dtype_default = OG_SCALE_MODE_DEFAULT,
  vec32_ue8m0 = OG_SCALE_MODE_VEC32_UE8M0,
  vec16_ue4m3 = OG_SCALE_MODE_VEC16_UE4M3,
  vec128_f32 = OG_SCALE_MODE_VEC128_F32,
  blk128x128_f32 = OG_SCALE_MODE_BLK128x128_F32,
};
enum class ScaleLayout : int { row_major = OG_SCALE_ROW_MAJOR, col_major = OG_SCALE_COL_MAJOR, packed = OG_SCALE_PACKED };

enum class Backend : int {
  automatic = OG_BACKEND_AUTO,
  cpu = OG_BACKEND_CPU,
  vulkan = OG_BACKEND_VULKAN,
  cuda = OG_BACKEND_CUDA,
  hip = OG_BACKEND_HIP,
};

enum class Layout : int { row_major = OG_ROW_MAJOR, col_major = OG_COL_MAJOR };
enum class Activation : int {
  none = OG_ACT_NONE,
  relu = OG_ACT_RELU,
  leaky_relu = OG_ACT_LEAKY_RELU,
  gelu_tanh = OG_ACT_GELU_TANH,
  silu = OG_ACT_SILU,
};
enum class BiasMode : int { none = OG_BIAS_NONE, per_n = OG_BIAS_PER_N, per_m = OG_BIAS_PER_M };
enum class TuneMode : int { cache_only = OG_TUNE_CACHE_ONLY, on_miss = OG_TUNE_ON_MISS, off = OG_TUNE_OFF };
// og_compute_mode: tf32 opts f32 inputs into TF32 products (default: full f32).
enum class ComputeMode : int { standard = OG_COMPUTE_DEFAULT, tf32 = OG_COMPUTE_TF32 };

inline const char* name(Dtype d) { return og_dtype_name(static_cast<og_dtype>(d)); }
inline const char* name(Backend b) { return og_backend_name(static_cast<og_backend>(b)); }

struct Status {
  StatusCode code = StatusCode::ok;
  std::string message;
  bool ok() const { return code == StatusCode::ok; }
  explicit operator bool() const { return ok(); }
  static Status from_c(og_status s) {
    if (s == OG_OK) return {};
    return {static_cast<StatusCode>(s), og_last_error_message()};
  }
};

struct Memory {
  og_memory raw{OG_MEMORY_NONE, nullptr, 0, 0};
  static Memory host(const void* p) { return {{OG_MEMORY_HOST, const_cast<void*>(p), 0, 0}}; }
  static Memory cuda(const void* p) { return {{OG_MEMORY_CUDA, const_cast<void*>(p), 0, 0}}; }
  static Memory hip(const void* p) { return {{OG_MEMORY_HIP, const_cast<void*>(p), 0, 0}}; }
  // `buffer` is a VkBuffer; pass it as uint64_t (e.g. reinterpret_cast<uint64_t>(buf) or (uint64_t)buf).
  static Memory vulkan(uint64_t buffer, uint64_t byte_offset = 0) {
    return {{OG_MEMORY_VULKAN, nullptr, buffer, byte_offset}};
  }
};

// A strided matrix view; see og_matrix for the addressing rules. The constructors take the
// stored shape and layout; ld defaults to the packed one (og_matrix_make), batch_stride to 0.
struct Matrix {
  og_matrix raw;

  Matrix() : raw(og_matrix_make(0, 0, OG_DTYPE_F32, OG_ROW_MAJOR)) {}
  Matrix(int64_t rows, int64_t cols, Dtype dtype, Memory mem, Layout layout = Layout::row_major)
      : raw(og_matrix_make(rows, cols, static_cast<og_dtype>(dtype), static_cast<og_layout>(layout))) {
    raw.mem = mem.raw;
  }
  static Matrix host(const void* p, int64_t rows, int64_t cols, Dtype dtype,
                     Layout layout = Layout::row_major) {
    return Matrix(rows, cols, dtype, Memory::host(p), layout);
  }
  Matrix& ld(int64_t v) { raw.ld = v; return *this; }
  Matrix& transposed(bool t = true) { raw.transpose = t ? 1 : 0; return *this; }
  Matrix& batch_stride(int64_t s) { raw.batch_stride = s; return *this; }
  // Block scales (block-scaled operands): the tensor's memory, layout and ld (0: the smallest).
  Matrix& scale(Memory m, ScaleLayout layout = ScaleLayout::row_major, int64_t ld = 0) {
    raw.scale.mem = m.raw;
    raw.scale.layout = static_cast<og_scale_layout>(layout);
    raw.scale.ld = ld;
    return *this;
  }
  Matrix& scale_mode(ScaleMode m) { raw.scale.mode = static_cast<og_scale_mode>(m); return *this; }
  Matrix& scale_batch_stride(int64_t s) { raw.scale.batch_stride = s; return *this; }
  Matrix& global_scale(float g) { raw.scale.global = g; return *this; }
};

struct Epilogue {
  float alpha = 1.0f;
  float beta = 0.0f;
  Activation activation = Activation::none;
  float leaky_slope = 0.01f;
  BiasMode bias_mode = BiasMode::none;
  Dtype bias_dtype = Dtype::f32;
  Memory bias{};
  int64_t bias_batch_stride = 0;
};

// One GEMM call, as og_gemm_desc (defaults of og_gemm_desc_init).
struct Gemm {
  Matrix a{}, b{}, c{}, d{};
  Epilogue epilogue{};
  int64_t batch_count = 1;  // 0: a valid empty call (nothing is read or written)
  std::string config{};     // optional forced config, e.g. "packed:224x2048x2048-g1-s1-w1"
  Memory workspace{};       // optional device workspace (og_gemm_desc.workspace); none: the engine's own
  uint64_t workspace_bytes = 0;
  ComputeMode compute_mode = ComputeMode::standard;  // og_gemm_desc.compute_mode

  og_gemm_desc to_c() const {
    og_gemm_desc g;
    og_gemm_desc_init(&g);
    g.a = a.raw;
    g.b = b.raw;
    g.c = c.raw;
    g.d = d.raw;
    g.epilogue.alpha = epilogue.alpha;
    g.epilogue.beta = epilogue.beta;
    g.epilogue.activation = static_cast<og_activation>(epilogue.activation);
    g.epilogue.leaky_slope = epilogue.leaky_slope;
    g.epilogue.bias_mode = static_cast<og_bias_mode>(epilogue.bias_mode);
    g.epilogue.bias_dtype = static_cast<og_dtype>(epilogue.bias_dtype);
    g.epilogue.bias = epilogue.bias.raw;
    g.epilogue.bias_batch_stride = epilogue.bias_batch_stride;
    g.batch_count = batch_count;
    g.config = config.empty() ? nullptr : config.c_str();
    g.workspace = workspace.raw;
    g.workspace_bytes = workspace_bytes;
    g.compute_mode = static_cast<og_compute_mode>(compute_mode);
    return g;
  }
};

struct ContextOptions {
  Backend backend = Backend::automatic;
  int device_index = 0;
  TuneMode tune_mode = TuneMode::cache_only;
  std::string tune_cache_path{};  // empty: as og_context_options.tune_cache_path NULL
  int cpu_threads = 0;
  const og_vulkan_host_handles* vulkan = nullptr;
};

struct Capabilities {
  og_capabilities raw{};
  bool accepts_input(Dtype d) const { return raw.input_dtypes & (1u << static_cast<int>(d)); }
  bool accepts_output(Dtype d) const { return raw.output_dtypes & (1u << static_cast<int>(d)); }
};

// og_gemm_explain's answer (see omnigemm.h).
struct Explanation {
  og_explanation raw{};
  std::string family() const { return raw.family; }
  std::string config() const { return raw.config; }
  std::string report() const { return raw.report; }
  int64_t workspace_bytes() const { return raw.workspace_bytes; }
  bool workspace_from_engine() const { return raw.workspace_source == OG_WORKSPACE_ENGINE; }
};

// Either a value or a failed Status (std::expected arrives only in C++23). Test ok() (or the
// bool conversion) before using the value: value(), operator-> and operator* on a failed result
// are a programming error, and they print "omnigemm: Result::value() on a failed result:
// <status>: <message>" to stderr and call std::abort(), in every build type (never undefined
// behaviour). status() is the failure, or an ok Status when a value is held.
template <class T>
class Result {
 public:
  Result(T v) : value_(std::move(v)) {}
  Result(Status s) : status_(std::move(s)) {}
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }
  T& value() { require_value(); return *value_; }
  const T& value() const { require_value(); return *value_; }
  T* operator->() { require_value(); return &*value_; }
  const T* operator->() const { require_value(); return &*value_; }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  void require_value() const {
    if (value_) return;
    std::fprintf(stderr, "omnigemm: Result::value() on a failed result: %s: %s\n",
                 og_status_name(static_cast<og_status>(status_.code)), status_.message.c_str());
    std::abort();
  }
  std::optional<T> value_;
  Status status_;
};

class Context {
 public:
  static Result<Context> create(const ContextOptions& o = {}) {
    og_context_options c;
    og_context_options_init(&c);
    c.backend = static_cast<og_backend>(o.backend);
    c.device_index = o.device_index;
    c.tune_mode = static_cast<og_tune_mode>(o.tune_mode);
    c.tune_cache_path = o.tune_cache_path.empty() ? nullptr : o.tune_cache_path.c_str();
    c.cpu_threads = o.cpu_threads;
    c.vulkan = o.vulkan;
    og_context* ctx = nullptr;
    og_status s = og_context_create(&c, &ctx);
    if (s != OG_OK) return Status::from_c(s);
    return Context(ctx);
  }

  Context(Context&& o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
  Context& operator=(Context&& o) noexcept {
    if (this != &o) {
      og_context_destroy(ctx_);
      ctx_ = std::exchange(o.ctx_, nullptr);
    }
    return *this;
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() { og_context_destroy(ctx_); }

  Backend backend() const { return static_cast<Backend>(og_context_backend(ctx_)); }
  // og_gemm: operands in the context's backend memory; returns when D is written.
  Status run(const Gemm& g) { auto d = g.to_c(); return Status::from_c(og_gemm(ctx_, &d)); }
  // og_gemm_async: enqueued on `stream` (see og_gemm_async for what a stream is per backend).
  Status run_async(const Gemm& g, void* stream) {
    auto d = g.to_c();
    return Status::from_c(og_gemm_async(ctx_, &d, stream));
  }
  // og_gemm_host: every operand in host memory; uploads, runs and downloads D.
  Status run_host(const Gemm& g) { auto d = g.to_c(); return Status::from_c(og_gemm_host(ctx_, &d)); }
  Status check_dtypes(Dtype a, Dtype b, Dtype d) const {
    return Status::from_c(og_context_check_dtypes(ctx_, static_cast<og_dtype>(a),
                                                  static_cast<og_dtype>(b), static_cast<og_dtype>(d)));
  }
  Result<Capabilities> capabilities() const {
    Capabilities c;
    og_status s = og_context_capabilities(ctx_, &c.raw);
    if (s != OG_OK) return Status::from_c(s);
    return c;
  }
  // What run(g) would run (backend, kernel family, config, plan) and why; runs and times nothing.
  Result<Explanation> explain(const Gemm& g) {
    auto d = g.to_c();
    Explanation e;
    og_status s = og_gemm_explain(ctx_, &d, &e.raw);
    if (s != OG_OK) return Status::from_c(s);
    return e;
  }
  // og_gemm_prepare: makes at load time what the first run of each of these problems would make
  // (Vulkan: its pipeline), so that those runs compile nothing. Memory may be left unset.
  Status prepare(std::span<const Gemm> gemms) {
    std::vector<og_gemm_desc> descs;
    descs.reserve(gemms.size());
    for (const Gemm& g : gemms) descs.push_back(g.to_c());
    return Status::from_c(og_gemm_prepare(ctx_, descs.data(), descs.size()));
  }
  // og_gemm_workspace_size: the device workspace run(g) would use (pass it as g.workspace).
  Result<uint64_t> workspace_size(const Gemm& g) {
    auto d = g.to_c();
    uint64_t bytes = 0;
    og_status s = og_gemm_workspace_size(ctx_, &d, &bytes);
    if (s != OG_OK) return Status::from_c(s);
    return bytes;
  }
  og_context* c_handle() const { return ctx_; }

 private:
  explicit Context(og_context* c) : ctx_(c) {}
  og_context* ctx_ = nullptr;
};

inline bool backend_available(Backend b) { return og_backend_available(static_cast<og_backend>(b)) != 0; }

}  // namespace omnigemm
