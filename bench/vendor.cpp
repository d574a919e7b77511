#include "vendor.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "vendor_dl.hpp"

namespace omnigemm::bench {

using omnigemm::StatusCode;
using dl::error;
using dl::load;
using dl::open_library;

namespace {

// ---------------------------------------------------------------------------------------------
// OpenBLAS (CBLAS interface, 32-bit integers as Debian's libopenblas.so.0).
enum { kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112 };
using cblas_sgemm_fn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                                float*, int);
using cblas_sbgemm_fn = void (*)(int, int, int, int, int, int, float, const uint16_t*, int, const uint16_t*, int,
                                 float, float*, int);
using openblas_get_config_fn = char* (*)();
using openblas_set_num_threads_fn = void (*)(int);

class OpenBlas final : public Vendor {
 public:
  static std::unique_ptr<Vendor> load_lib(int threads, std::string& why) {
    std::vector<std::string> dirs{""};
    if (const char* d = std::getenv("OMNIGEMM_OPENBLAS_DIR"); d && *d) dirs.insert(dirs.begin(), d);
    // A DYNAMIC_ARCH OpenBLAS picks its kernels by CPU model and falls back to Haswell (AVX2) on
    // AVX-512 CPUs it does not know (e.g. 0.3.21 on AMD Zen 4): ask for its AVX-512 kernels then, so
    // that the baseline is the strongest this library offers. An explicit OPENBLAS_CORETYPE wins.
    if (!std::getenv("OPENBLAS_CORETYPE") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    std::string tried;
    void* lib = open_library(dirs, {"libopenblas.so.0", "libopenblas.so"}, tried);
    if (!lib) { why = "OpenBLAS not found (tried " + tried + "; set OMNIGEMM_OPENBLAS_DIR)"; return nullptr; }
    auto v = std::make_unique<OpenBlas>();
    v->lib_ = lib;
    if (!load(lib, "cblas_sgemm", v->sgemm_)) { why = "libopenblas has no cblas_sgemm"; return nullptr; }
    load(lib, "cblas_sbgemm", v->sbgemm_);  // OpenBLAS >= 0.3.10 built with bf16 support
    openblas_get_config_fn cfg = nullptr;
    openblas_set_num_threads_fn set_threads = nullptr;
    openblas_get_config_fn core = nullptr;
    if (load(lib, "openblas_get_config", cfg)) v->config_ = cfg();
    if (load(lib, "openblas_get_corename", core)) v->config_ += std::string(", kernels for ") + core();
    // Same thread count as the CPU backend: a like-for-like comparison.
    if (threads > 0 && load(lib, "openblas_set_num_threads", set_threads)) set_threads(threads);
    v->threads_ = threads;
    return v;
  }
  ~OpenBlas() override = default;  // the library stays loaded: its threads may outlive us

  std::string library() const override {
    return "OpenBLAS (" + config_ + ", " + std::to_string(threads_) + " threads)";
  }

  VendorPlan plan(const VendorProblem& p) const override {
    VendorPlan r;
    if (p.scaled()) { r.why = "OpenBLAS has no block-scaled GEMM"; return r; }
    if (p.a != p.b) { r.why = "mixed input dtypes"; return r; }
    if (p.needs_epilogue_call()) { r.why = "no OpenBLAS baseline for bias or C epilogues in this bench"; return r; }
    r.supported = true;
    r.d = OG_DTYPE_F32;
    if (p.a == OG_DTYPE_BF16 && sbgemm_) {
      r.a = r.b = OG_DTYPE_BF16;
      r.label = "OpenBLAS sbgemm (bf16 in, f32 out)";
    } else if (p.a == OG_DTYPE_F32) {
      r.a = r.b = OG_DTYPE_F32;
      r.label = "OpenBLAS sgemm";
    } else if (p.a == OG_DTYPE_F16 || p.a == OG_DTYPE_BF16) {
      r.a = r.b = OG_DTYPE_F32;
      r.label = std::string("OpenBLAS sgemm on exact f32 copies of the ") + og_dtype_name(p.a) + " inputs";
    } else {
      r.supported = false;
      r.why = std::string("OpenBLAS has no ") + og_dtype_name(p.a) + " GEMM";
    }
    return r;
  }

  // Row-major CBLAS: a column-major operand is the transpose of a row-major one with the same
  // leading dimension. Batches are one call each.
  Status run(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d) override {
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || p.ld_a() > INT32_MAX || p.ld_b() > INT32_MAX ||
        p.ld_d() > INT32_MAX)
      return error(StatusCode::unsupported, "OpenBLAS uses 32-bit sizes");
    const int m = int(p.m), n = int(p.n), k = int(p.k);
    const int ta = p.a_col_major ? kCblasTrans : kCblasNoTrans, tb = p.b_col_major ? kCblasTrans : kCblasNoTrans;
    const int lda = int(p.ld_a()), ldb = int(p.ld_b()), ldd = int(p.ld_d());
    auto ptr = [](const og_memory& mem) { return static_cast<char*>(mem.ptr) + mem.offset; };
    VendorPlan pl = plan(p);
    for (int64_t i = 0; i < p.batch; ++i) {
      float* dst = reinterpret_cast<float*>(ptr(d)) + i * p.stride_d;
      if (pl.a == OG_DTYPE_BF16)
        sbgemm_(kCblasRowMajor, ta, tb, m, n, k, p.alpha, reinterpret_cast<const uint16_t*>(ptr(a)) + i * p.stride_a, lda,
                reinterpret_cast<const uint16_t*>(ptr(b)) + i * p.stride_b, ldb, 0.0f, dst, ldd);
      else
        sgemm_(kCblasRowMajor, ta, tb, m, n, k, p.alpha, reinterpret_cast<const float*>(ptr(a)) + i * p.stride_a, lda,
               reinterpret_cast<const float*>(ptr(b)) + i * p.stride_b, ldb, 0.0f, dst, ldd);
    }
    return {};
  }

 private:
  void* lib_ = nullptr;
  cblas_sgemm_fn sgemm_ = nullptr;
  cblas_sbgemm_fn sbgemm_ = nullptr;
  std::string config_ = "unknown config";
  int threads_ = 0;
};

}  // namespace

std::unique_ptr<ActivationPass> load_activation_pass(og_backend backend, std::string& why) {
  if (backend == OG_BACKEND_CUDA) return load_cuda_activation(why);
  why = std::string("no device activation kernel for backend ") + og_backend_name(backend);
  return nullptr;
}

std::unique_ptr<Vendor> load_vendor(og_backend backend, og_context* ctx, std::string& why) {
  switch (backend) {
    case OG_BACKEND_CPU: {
      og_capabilities caps{};
      const int threads = og_context_capabilities(ctx, &caps) == OG_OK ? caps.compute_units : 0;
      return OpenBlas::load_lib(threads, why);
    }
    case OG_BACKEND_CUDA: return load_cublas(ctx, why);
    case OG_BACKEND_HIP: return load_rocblas(why);
    case OG_BACKEND_VULKAN: why = "no vendor Vulkan GEMM library"; return nullptr;
    default: why = "no vendor library"; return nullptr;
  }
}

}  // namespace omnigemm::bench
