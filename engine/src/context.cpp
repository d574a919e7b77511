// The C API and dispatch: context creation (backend choice), validation, config choice and
// the host-memory convenience path. Everything that crosses the API is caught here.
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <mutex>
#include <set>
#include <utility>

#include "api_guard.hpp"
#include "backend.hpp"
#include "context_internal.hpp"
#include "dispatch.hpp"
#include "explain.hpp"
#include "tuner.hpp"
#include "validate.hpp"

using omnigemm::Status;
using omnigemm::StatusCode;
using namespace omnigemm::detail;

struct og_context {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Tuner> tuner;
  // Memory handed out by og_memory_alloc (pointer or VkBuffer, kind), so that og_memory_free
  // refuses anything else instead of handing it to the driver; freed with the context.
  std::mutex allocations_mutex;
  std::set<std::pair<uint64_t, int>> allocations;
  std::vector<og_memory> allocation_list() {
    std::vector<og_memory> out;
    for (const auto& [handle, kind] : allocations) {
      og_memory m{og_memory_kind(kind), nullptr, 0, 0};
      if (kind == OG_MEMORY_VULKAN) m.vk_buffer = handle;
      else m.ptr = reinterpret_cast<void*>(uintptr_t(handle));
      out.push_back(m);
    }
    return out;
  }
  ~og_context() {
    if (backend)
      for (const og_memory& m : allocation_list()) backend->release(m);
  }
};

namespace {

thread_local std::string t_last_error;

Status make_backend(og_backend kind, const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  BackendFactory f = backend_factory(kind);
  if (!f)
    return error(StatusCode::backend_unavailable,
                 std::string("backend ") + og_backend_name(kind) + " was not compiled into this build of OmniGEMM");
  return f(opt, out);
}

Status create_backend(const og_context_options& o, std::unique_ptr<Backend>& out) {
  BackendOptions opt{o.device_index, o.cpu_threads, o.vulkan};
  if (o.device_index < 0) return error(StatusCode::invalid_argument, "device_index is negative");
  if (enum_int(o.backend) != OG_BACKEND_AUTO) {
    if (enum_int(o.backend) < OG_BACKEND_AUTO || enum_int(o.backend) >= OG_BACKEND_COUNT)
      return error(StatusCode::invalid_argument, "unknown backend " + std::to_string(enum_int(o.backend)));
    return make_backend(o.backend, opt, out);
  }
  // Auto: the fastest backend that finds a device; the reasons of the others are kept for the
  // message in case none does (the CPU backend always does).
  std::string reasons;
  for (og_backend k : {OG_BACKEND_CUDA, OG_BACKEND_HIP, OG_BACKEND_VULKAN, OG_BACKEND_CPU}) {
    Status s = make_backend(k, opt, out);
    if (s.ok()) return s;
    reasons += std::string(reasons.empty() ? "" : "; ") + s.message;
  }
  return error(StatusCode::backend_unavailable, "no backend available: " + reasons);
}

// Resolves validation, backend support, the config and its family in one place for every entry
// point; `family` is left null for an empty problem (nothing runs).
Status prepare(og_context* ctx, const og_gemm_desc* desc, Problem& p, Config& cfg, KernelFamily*& family,
               bool host_staging = false) {
  family = nullptr;
  if (!ctx) return error(StatusCode::invalid_argument, "null context");
  if (!desc) return error(StatusCode::invalid_argument, "null gemm descriptor");
  Status s = validate(*desc, p);
  if (!s) return s;
  if (!(s = check_backend_support(*ctx->backend, p, host_staging))) return s;
  if (p.empty()) return s;
  return ctx->tuner->choose(*ctx->backend, p, cfg, nullptr, true, &family);
}

// The allocation-registry key of memory from og_memory_alloc.
std::pair<uint64_t, int> allocation_key(const og_memory& m) {
  return {m.kind == OG_MEMORY_VULKAN ? m.vk_buffer : uint64_t(uintptr_t(m.ptr)), int(m.kind)};
}

// Refuses memory that og_memory_alloc did not hand out on ctx (the backend checks the range).
Status check_owned(og_context* ctx, const og_memory& m, const char* what) {
  if (!ctx) return error(StatusCode::invalid_argument, "null context");
  std::lock_guard<std::mutex> lock(ctx->allocations_mutex);
  if (!ctx->allocations.count(allocation_key(m)))
    return error(StatusCode::invalid_argument, std::string(what) + ": the memory was not allocated by og_memory_alloc on this context");
  return {};
}

// og_gemm_host: copy every present operand into device memory of the backend, run, copy D back.
Status run_host(og_context* ctx, const og_gemm_desc* desc) {
  Problem p;
  Config cfg;
  KernelFamily* family = nullptr;
  Status s = prepare(ctx, desc, p, cfg, family, /*host_staging=*/true);
  if (!s || p.empty()) return s;
  if (p.d.mem.kind != OG_MEMORY_HOST)
    return error(StatusCode::invalid_argument, "og_gemm_host needs every operand in host memory (OG_MEMORY_HOST)");
  Backend& be = *ctx->backend;
  if (be.memory_kinds() & (1u << OG_MEMORY_HOST)) {
    if (!(s = run_on(be, *family, p, cfg, nullptr))) return s;
    return be.synchronize(nullptr);
  }

  struct Staged { og_memory host; og_memory dev{}; size_t bytes = 0; };
  std::vector<Staged> staged;
  auto cleanup = [&] { for (auto& st : staged) if (st.dev.kind != OG_MEMORY_NONE) be.release(st.dev); };
  auto stage_bytes = [&](og_memory& mem, int64_t bytes, bool copy_in) -> Status {
    Staged st{mem};
    st.bytes = size_t(bytes);
    Status r = be.allocate(st.bytes, st.dev);
    if (!r) return r;
    staged.push_back(st);
    if (copy_in) {
      const char* src = static_cast<const char*>(mem.ptr) + mem.offset;
      if (!(r = be.upload(st.dev, src, st.bytes))) return r;
    }
    mem = st.dev;
    return {};
  };
  auto stage = [&](og_memory& mem, int64_t elements, og_dtype dtype, bool copy_in) {
    return stage_bytes(mem, storage_bytes(dtype, elements), copy_in);
  };
  auto stage_scales = [&](Operand& o) -> Status {
    if (!o.scale.present()) return {};
    const BlockScale& b = o.scale;
    return stage_bytes(o.scale.mem, ((p.batch - 1) * b.batch_stride + b.extent()) * b.bytes, true);
  };
  bool in_place = p.c.present && p.c.mem.ptr == p.d.mem.ptr && p.c.mem.offset == p.d.mem.offset;
  og_memory d_host = p.d.mem;
  Status r;
  if (p.a.present && !(r = stage(p.a.mem, p.a.extent_elements(p.batch), p.a.dtype, true))) { cleanup(); return r; }
  if (p.b.present && !(r = stage(p.b.mem, p.b.extent_elements(p.batch), p.b.dtype, true))) { cleanup(); return r; }
  if (p.a.present && !(r = stage_scales(p.a))) { cleanup(); return r; }
  if (p.b.present && !(r = stage_scales(p.b))) { cleanup(); return r; }
  // D is uploaded too: elements between the strided rows must survive the round trip.
  if (!(r = stage(p.d.mem, p.d.extent_elements(p.batch), p.d.dtype, true))) { cleanup(); return r; }
  if (in_place) p.c.mem = p.d.mem;
  else if (p.c.present && !(r = stage(p.c.mem, p.c.extent_elements(p.batch), p.c.dtype, true))) { cleanup(); return r; }
  if (p.bias_mode != OG_BIAS_NONE) {
    const int64_t len = p.bias_mode == OG_BIAS_PER_N ? p.n : p.m;
    const int64_t elems = len + (p.batch - 1) * p.bias_batch_stride;
    if (!(r = stage(p.bias, elems, p.bias_dtype, true))) { cleanup(); return r; }
  }
  if ((r = run_on(be, *family, p, cfg, nullptr)) && (r = be.synchronize(nullptr))) {
    char* dst = static_cast<char*>(d_host.ptr) + d_host.offset;
    r = be.download(dst, p.d.mem, size_t(p.d.extent_elements(p.batch)) * size_t(dtype_bytes(p.d.dtype)));
  }
  cleanup();
  return r;
}

// og_gemm_prepare's stand-ins for memory a host application has not allocated yet: memory of the
// backend's kind (its device memory where it has any), distinct VkBuffer handles or addresses
// 2^44 bytes apart (so that no two overlap), all 256-byte aligned before the byte offset.
void fill_placeholder_memory(const Backend& be, og_gemm_desc& d) {
  og_memory_kind kind = OG_MEMORY_HOST;
  for (og_memory_kind k : {OG_MEMORY_CUDA, OG_MEMORY_HIP, OG_MEMORY_VULKAN})
    if (be.memory_kinds() & (1u << k)) kind = k;
  uint64_t next = 1;
  auto fill = [&](og_memory& m) {
    if (enum_int(m.kind) != OG_MEMORY_NONE) return;
    m.kind = kind;
    if (kind == OG_MEMORY_VULKAN) m.vk_buffer = next;
    else m.ptr = reinterpret_cast<void*>(uintptr_t(next) << 44);
    ++next;
  };
  for (og_matrix* x : {&d.a, &d.b}) {
    fill(x->mem);
    if (dtype_is_block_scaled(x->dtype) || enum_int(x->scale.mode) != OG_SCALE_MODE_DEFAULT) fill(x->scale.mem);
  }
  fill(d.d.mem);
  if (d.epilogue.beta != 0.0f) fill(d.c.mem);
  if (enum_int(d.epilogue.bias_mode) != OG_BIAS_NONE) fill(d.epilogue.bias);
}

// og_gemm_prepare for one descriptor: what og_gemm would choose (never tuned), made ready.
Status prepare_one(og_context* ctx, const og_gemm_desc& given) {
  og_gemm_desc desc = given;
  fill_placeholder_memory(*ctx->backend, desc);
  Problem p;
  Status s = validate(desc, p);
  if (!s) return s;
  if (!(s = check_backend_support(*ctx->backend, p))) return s;
  if (p.empty()) return {};
  Config cfg;
  KernelFamily* family = nullptr;
  if (!(s = ctx->tuner->choose(*ctx->backend, p, cfg, nullptr, /*allow_tuning=*/false, &family))) return s;
  if (!family && !(s = resolve_family(*ctx->backend, p, cfg, family))) return s;
  return family->prepare(p, cfg);
}

}  // namespace

extern "C" {

void og_context_options_init(og_context_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->backend = OG_BACKEND_AUTO;
  o->tune_mode = OG_TUNE_CACHE_ONLY;
}

void og_gemm_desc_init(og_gemm_desc* d) {
  if (!d) return;
  std::memset(d, 0, sizeof *d);
  d->a = d->b = d->c = d->d = og_matrix_make(0, 0, OG_DTYPE_F32, OG_ROW_MAJOR);
  d->epilogue.alpha = 1.0f;
  d->epilogue.beta = 0.0f;
  d->epilogue.leaky_slope = 0.01f;
  d->epilogue.bias_dtype = OG_DTYPE_F32;
  d->batch_count = 1;
}

og_matrix og_matrix_make(int64_t rows, int64_t cols, og_dtype dtype, og_layout layout) {
  og_matrix m;
  std::memset(&m, 0, sizeof m);
  m.rows = rows;
  m.cols = cols;
  m.layout = layout;
  m.ld = layout == OG_ROW_MAJOR ? (cols > 1 ? cols : 1) : (rows > 1 ? rows : 1);
  m.dtype = dtype;
  m.scale.global = 1.0f;
  return m;
}

og_memory og_memory_host(const void* ptr) { return og_memory{OG_MEMORY_HOST, const_cast<void*>(ptr), 0, 0}; }

og_status og_context_create(const og_context_options* options, og_context** out) {
  return guarded([&]() -> Status {
    if (!out) return error(StatusCode::invalid_argument, "null output pointer for the context");
    *out = nullptr;
    og_context_options o;
    og_context_options_init(&o);
    if (options) o = *options;
    if (enum_int(o.tune_mode) < OG_TUNE_CACHE_ONLY || enum_int(o.tune_mode) > OG_TUNE_OFF)
      return error(StatusCode::invalid_argument, "unknown tune mode " + std::to_string(enum_int(o.tune_mode)));
    auto ctx = std::make_unique<og_context>();
    Status s = create_backend(o, ctx->backend);
    if (!s) return s;
    ctx->tuner = std::make_unique<Tuner>(o.tune_cache_path ? o.tune_cache_path : default_tune_cache_path(),
                                         o.tune_mode);
    *out = ctx.release();
    return {};
  });
}

void og_context_destroy(og_context* ctx) {
  try {
    delete ctx;
  } catch (...) {
  }
}

og_backend og_context_backend(const og_context* ctx) { return ctx ? ctx->backend->kind() : OG_BACKEND_AUTO; }

og_status og_gemm(og_context* ctx, const og_gemm_desc* desc) {
  return guarded([&]() -> Status {
    Problem p;
    Config cfg;
    KernelFamily* family = nullptr;
    Status s = prepare(ctx, desc, p, cfg, family);
    if (!s || p.empty()) return s;
    if (!(s = run_on(*ctx->backend, *family, p, cfg, nullptr))) return s;
    return ctx->backend->synchronize(nullptr);
  });
}

og_status og_gemm_async(og_context* ctx, const og_gemm_desc* desc, void* stream) {
  return guarded([&]() -> Status {
    Problem p;
    Config cfg;
    KernelFamily* family = nullptr;
    Status s = prepare(ctx, desc, p, cfg, family);
    if (!s || p.empty()) return s;
    if (!ctx->backend->supports_async()) {
      if (stream) return error(StatusCode::invalid_argument,
                               std::string("backend ") + og_backend_name(ctx->backend->kind()) +
                                   " has no streams: pass stream = NULL (the call then runs synchronously)");
      if (!(s = run_on(*ctx->backend, *family, p, cfg, nullptr))) return s;
      return ctx->backend->synchronize(nullptr);
    }
    return run_on(*ctx->backend, *family, p, cfg, stream);
  });
}

og_status og_gemm_host(og_context* ctx, const og_gemm_desc* desc) {
  return guarded([&] { return run_host(ctx, desc); });
}

const char* og_last_error_message(void) { return t_last_error.c_str(); }

const char* og_status_name(og_status s) {
  switch (s) {
    case OG_OK: return "ok";
    case OG_ERROR_INVALID_ARGUMENT: return "invalid_argument";
    case OG_ERROR_UNSUPPORTED: return "unsupported";
    case OG_ERROR_BACKEND_UNAVAILABLE: return "backend_unavailable";
    case OG_ERROR_OUT_OF_MEMORY: return "out_of_memory";
    case OG_ERROR_DEVICE_LOST: return "device_lost";
    case OG_ERROR_BACKEND_FAILURE: return "backend_failure";
    case OG_ERROR_INTERNAL: return "internal";
  }
  return "unknown_status";
}

const char* og_dtype_name(og_dtype d) {
  switch (d) {
    case OG_DTYPE_F32: return "f32";
    case OG_DTYPE_F16: return "f16";
    case OG_DTYPE_BF16: return "bf16";
    case OG_DTYPE_FP8_E4M3: return "fp8_e4m3";
    case OG_DTYPE_FP8_E5M2: return "fp8_e5m2";
    case OG_DTYPE_MXFP8: return "mxfp8";
    case OG_DTYPE_MXFP4: return "mxfp4";
    case OG_DTYPE_NVFP4: return "nvfp4";
    case OG_DTYPE_MXFP8_E5M2: return "mxfp8_e5m2";
  }
  return "unknown_dtype";
}

const char* og_backend_name(og_backend b) {
  switch (b) {
    case OG_BACKEND_AUTO: return "auto";
    case OG_BACKEND_CPU: return "cpu";
    case OG_BACKEND_VULKAN: return "vulkan";
    case OG_BACKEND_CUDA: return "cuda";
    case OG_BACKEND_HIP: return "hip";
  }
  return "unknown_backend";
}

og_status og_context_capabilities(const og_context* ctx, og_capabilities* out) {
  return guarded([&]() -> Status {
    if (!ctx || !out) return error(StatusCode::invalid_argument, "null context or output");
    std::memset(out, 0, sizeof *out);
    const Backend& be = *ctx->backend;
    out->backend = be.kind();
    std::strncpy(out->device_name, be.device().name.c_str(), sizeof out->device_name - 1);
    std::strncpy(out->driver_version, be.device().driver.c_str(), sizeof out->driver_version - 1);
    out->input_dtypes = be.input_dtypes();
    out->output_dtypes = be.output_dtypes();
    out->memory_kinds = be.memory_kinds();
    out->supports_async = be.supports_async() ? 1 : 0;
    out->compute_units = be.device().limits.compute_units;
    out->l2_bytes = be.device().limits.l2_bytes;
    out->clock_ramp_ms = be.clock_ramp_ms();
    out->scale_modes = be.scale_modes();
    return {};
  });
}

int og_backend_available(og_backend backend) {
  try {
    if (backend == OG_BACKEND_AUTO) return 1;
    std::unique_ptr<Backend> be;
    og_context_options o;
    og_context_options_init(&o);
    o.backend = backend;
    return create_backend(o, be).ok() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

og_status og_context_check_dtypes(const og_context* ctx, og_dtype a, og_dtype b, og_dtype d) {
  return guarded([&]() -> Status {
    if (!ctx) return error(StatusCode::invalid_argument, "null context");
    const Backend& be = *ctx->backend;
    const std::string bname = og_backend_name(be.kind());
    const int64_t ai = enum_int(a), bi = enum_int(b), di = enum_int(d);  // may be out of range
    // A value outside og_dtype is a caller's fault (invalid_argument, as og_gemm's validation
    // answers it); a known dtype this backend cannot run is unsupported.
    const std::pair<const char*, int64_t> given[] = {{"A", ai}, {"B", bi}, {"D", di}};
    for (const auto& [operand, value] : given)
      if (value < 0 || value >= OG_DTYPE_COUNT)
        return error(StatusCode::invalid_argument,
                     std::string(operand) + ": unknown dtype " + std::to_string(value));
    const bool ok_in = (be.input_dtypes() & (1u << ai)) && (be.input_dtypes() & (1u << bi));
    if (!ok_in)
      return error(StatusCode::unsupported,
                   "backend " + bname + " on " + be.device().name + " accepts inputs: " + dtype_list(be.input_dtypes()));
    if (!(be.output_dtypes() & (1u << di)))
      return error(StatusCode::unsupported,
                   "backend " + bname + " on " + be.device().name + " writes outputs: " + dtype_list(be.output_dtypes()));
    return {};
  });
}

og_status og_gemm_explain(og_context* ctx, const og_gemm_desc* desc, og_explanation* out) {
  return guarded([&]() -> Status {
    if (!out) return error(StatusCode::invalid_argument, "null explanation output");
    std::memset(out, 0, sizeof *out);
    if (!ctx) return error(StatusCode::invalid_argument, "null context");
    if (!desc) return error(StatusCode::invalid_argument, "null gemm descriptor");
    Problem p;
    Status s = validate(*desc, p);
    if (!s) return s;
    if (!(s = check_backend_support(*ctx->backend, p))) return s;
    return explain(*ctx->backend, *ctx->tuner, p, *out);
  });
}

og_status og_gemm_prepare(og_context* ctx, const og_gemm_desc* descs, size_t count) {
  return guarded([&]() -> Status {
    if (!ctx) return error(StatusCode::invalid_argument, "null context");
    if (!descs && count) return error(StatusCode::invalid_argument, "null descriptor array with count " + std::to_string(count));
    for (size_t i = 0; i < count; ++i)
      if (Status s = prepare_one(ctx, descs[i]); !s)
        return error(s.code, "og_gemm_prepare: descriptor " + std::to_string(i) + ": " + s.message);
    return {};
  });
}

og_status og_gemm_workspace_size(og_context* ctx, const og_gemm_desc* desc, uint64_t* bytes) {
  return guarded([&]() -> Status {
    if (!bytes) return error(StatusCode::invalid_argument, "null output for the workspace size");
    *bytes = 0;
    if (!ctx) return error(StatusCode::invalid_argument, "null context");
    if (!desc) return error(StatusCode::invalid_argument, "null gemm descriptor");
    Problem p;
    Status s = validate(*desc, p);
    if (!s) return s;
    if (!(s = check_backend_support(*ctx->backend, p))) return s;
    if (p.empty()) return {};
    // The config og_gemm would run (never timed here, as explain), and its family's plan.
    Config cfg;
    KernelFamily* family = nullptr;
    if (!(s = ctx->tuner->choose(*ctx->backend, p, cfg, nullptr, /*allow_tuning=*/false, &family))) return s;
    if (!family && !(s = resolve_family(*ctx->backend, p, cfg, family))) return s;
    PlanSummary plan;
    if (!(s = family->describe(p, cfg, plan))) return s;
    *bytes = uint64_t(plan.workspace_bytes);
    return {};
  });
}

og_status og_memory_alloc(og_context* ctx, size_t bytes, og_memory* out) {
  return guarded([&]() -> Status {
    if (!ctx || !out) return error(StatusCode::invalid_argument, "null context or output");
    *out = og_memory{OG_MEMORY_NONE, nullptr, 0, 0};
    if (bytes == 0) return error(StatusCode::invalid_argument, "og_memory_alloc of 0 bytes");
    if (bytes > (size_t(1) << 48)) return error(StatusCode::out_of_memory, "og_memory_alloc of " + std::to_string(bytes) + " bytes");
    og_memory m{};
    Status s = ctx->backend->allocate(bytes, m);
    if (!s) return s;
    std::lock_guard<std::mutex> lock(ctx->allocations_mutex);
    ctx->allocations.insert(allocation_key(m));
    *out = m;
    return {};
  });
}

og_status og_memory_free(og_context* ctx, og_memory mem) {
  return guarded([&]() -> Status {
    if (!ctx) return error(StatusCode::invalid_argument, "null context");
    {
      std::lock_guard<std::mutex> lock(ctx->allocations_mutex);
      if (!ctx->allocations.erase(allocation_key(mem)))
        return error(StatusCode::invalid_argument, "og_memory_free: the memory was not allocated by og_memory_alloc on this context");
    }
    ctx->backend->release(mem);
    return {};
  });
}

og_status og_memory_upload(og_context* ctx, og_memory dst, const void* src, size_t bytes) {
  return guarded([&]() -> Status {
    if (Status s = check_owned(ctx, dst, "og_memory_upload"); !s) return s;
    if (!src && bytes) return error(StatusCode::invalid_argument, "og_memory_upload: null source");
    return bytes ? ctx->backend->upload(dst, src, bytes) : Status{};
  });
}

og_status og_memory_download(og_context* ctx, void* dst, og_memory src, size_t bytes) {
  return guarded([&]() -> Status {
    if (Status s = check_owned(ctx, src, "og_memory_download"); !s) return s;
    if (!dst && bytes) return error(StatusCode::invalid_argument, "og_memory_download: null destination");
    return bytes ? ctx->backend->download(dst, src, bytes) : Status{};
  });
}

og_status og_context_synchronize(og_context* ctx, void* stream) {
  return guarded([&]() -> Status {
    if (!ctx) return error(StatusCode::invalid_argument, "null context");
    return ctx->backend->synchronize(stream);
  });
}

og_status og_context_time(og_context* ctx, og_launch_fn launch, void* user, double* ms) {
  return guarded([&]() -> Status {
    if (!ctx || !launch || !ms) return error(StatusCode::invalid_argument, "null context, launch function or output");
    *ms = 0;
    return ctx->backend->time_ms(
        [&]() -> Status {
          const og_status r = launch(user);
          if (r == OG_OK) return {};
          return Status{static_cast<StatusCode>(r), og_last_error_message()};
        },
        *ms);
  });
}

}  // extern "C"

// Internal accessors for the in-tree tools (engine/src/context_internal.hpp).
namespace omnigemm::detail {
og_status report_status(const Status& s) {
  if (s.ok()) return OG_OK;
  t_last_error = s.message;
  return static_cast<og_status>(s.code);
}
void clear_last_error() { t_last_error.clear(); }
Backend& context_backend(og_context* ctx) { return *ctx->backend; }
Tuner& context_tuner(og_context* ctx) { return *ctx->tuner; }
}  // namespace omnigemm::detail
