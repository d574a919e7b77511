#include "vendor.hpp"

#include "cublas_decls.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace omnigemm::bench {

using omnigemm::StatusCode;

namespace {

Status error(StatusCode code, std::string message) { return Status{code, std::move(message)}; }

// dlopen the first of `names` found in `dirs` (then the loader's own search path).
void* open_library(const std::vector<std::string>& dirs, const std::vector<std::string>& names, std::string& tried) {
  for (const std::string& name : names) {
    for (const std::string& dir : dirs) {
      const std::string path = dir.empty() ? name : dir + "/" + name;
      if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
      tried += (tried.empty() ? "" : ", ") + path;
    }
  }
  return nullptr;
}

template <class F>
bool load(void* lib, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  return fn != nullptr;
}

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
        sbgemm_(kCblasRowMajor, ta, tb, m, n, k, 1.0f, reinterpret_cast<const uint16_t*>(ptr(a)) + i * p.stride_a, lda,
                reinterpret_cast<const uint16_t*>(ptr(b)) + i * p.stride_b, ldb, 0.0f, dst, ldd);
      else
        sgemm_(kCblasRowMajor, ta, tb, m, n, k, 1.0f, reinterpret_cast<const float*>(ptr(a)) + i * p.stride_a, lda,
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

// ---------------------------------------------------------------------------------------------
// cuBLAS / cuBLASLt, through the declarations of cublas_decls.hpp.

int cuda_type(og_dtype d) {
  switch (d) {
    case OG_DTYPE_F32: return cu::R_32F;
    case OG_DTYPE_F16: return cu::R_16F;
    case OG_DTYPE_BF16: return cu::R_16BF;
    case OG_DTYPE_FP8_E4M3: return cu::R_8F_E4M3;
    default: return -1;
  }
}

class Cublas final : public Vendor {
 public:
  static std::unique_ptr<Vendor> load_lib(og_context* ctx, std::string& why) {
    std::vector<std::string> dirs;
    if (const char* d = std::getenv("OMNIGEMM_CUBLAS_DIR"); d && *d) dirs.push_back(d);
    dirs.push_back("");  // LD_LIBRARY_PATH, rpath, ld.so.cache
    for (const char* d : {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib",
                          "/usr/lib/x86_64-linux-gnu"})
      dirs.push_back(d);
    // pip wheels (torch's nvidia-cublas): <prefix>/lib/pythonX.Y/{dist,site}-packages/nvidia/{cublas,cu13}/lib.
    std::vector<std::string> prefixes = {"/usr/local/lib", "/usr/lib", "/opt/conda/lib"};
    for (const char* env : {"VIRTUAL_ENV", "CONDA_PREFIX"})
      if (const char* e = std::getenv(env); e && *e) prefixes.insert(prefixes.begin(), std::string(e) + "/lib");
    if (const char* home = std::getenv("HOME"); home && *home) prefixes.push_back(std::string(home) + "/.local/lib");
    for (const std::string& prefix : prefixes)
      for (const char* py : {"python3", "python3.12", "python3.11", "python3.10", "python3.13", "python3.14"})
        for (const char* pkgs : {"dist-packages", "site-packages"})
          for (const char* sub : {"nvidia/cublas/lib", "nvidia/cu13/lib"})
            dirs.push_back(prefix + "/" + py + "/" + pkgs + "/" + sub);
    std::string tried;
    void* lib = open_library(dirs, {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, tried);
    if (!lib) { why = "cuBLAS not found (set OMNIGEMM_CUBLAS_DIR to the folder of libcublas.so.13)"; return nullptr; }
    std::string tried_lt;
    void* lt = open_library(dirs, {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, tried_lt);
    auto v = std::make_unique<Cublas>();
    v->ctx_ = ctx;
    cu::create_fn create = nullptr;
    if (!load(lib, "cublasCreate_v2", create) || !load(lib, "cublasGemmEx", v->gemm_ex_) ||
        !load(lib, "cublasGemmStridedBatchedEx", v->gemm_batched_)) {
      why = "libcublas lacks cublasCreate_v2/cublasGemmEx/cublasGemmStridedBatchedEx";
      return nullptr;
    }
    if (cu::status s = create(&v->handle_); s != 0) {
      why = "cublasCreate failed with status " + std::to_string(s);
      return nullptr;
    }
    cu::get_version_fn version = nullptr;
    int ver = 0;
    if (load(lib, "cublasGetVersion_v2", version)) version(v->handle_, &ver);
    v->version_ = "cuBLAS " + std::to_string(ver / 10000) + "." + std::to_string(ver / 100 % 100) + "." +
                  std::to_string(ver % 100);
    if (lt) v->load_lt(lt);
    else v->lt_why_ = "cuBLASLt not found";
    return v;
  }

  ~Cublas() override {
    if (workspace_.kind != OG_MEMORY_NONE) og_memory_free(ctx_, workspace_);
  }

  std::string library() const override { return version_ + (lt_handle_ ? " + cuBLASLt" : " (" + lt_why_ + ")"); }

  VendorPlan plan(const VendorProblem& p) const override {
    VendorPlan r;
    r.a = p.a, r.b = p.b, r.d = p.d;
    if (p.scaled() && !(p.a_scale == OG_SCALE_MODE_VEC128_F32 && p.b_scale == OG_SCALE_MODE_BLK128x128_F32)) {
      r.why = "cuBLASLt's block scaling on this bench: A 1 x 128 and B 128 x 128 f32 scales only";
      return r;
    }
    if (p.a == OG_DTYPE_FP8_E4M3 && p.b == OG_DTYPE_FP8_E4M3) {
      if (!lt_handle_) { r.why = lt_why_; return r; }
      if (!p.b_col_major || p.a_col_major) { r.why = "cuBLASLt fp8 needs A row-major and B stored N x K (layout rc)"; return r; }
      if (p.batch > 1) { r.why = "the bench's cuBLASLt fp8 call runs one batch"; return r; }
      if (p.d != OG_DTYPE_F16 && p.d != OG_DTYPE_BF16 && p.d != OG_DTYPE_F32) { r.why = "fp8 output dtype"; return r; }
      r.supported = true;
      r.label = std::string("cublasLtMatmul e4m3") + (p.scaled() ? " (1x128 / 128x128 f32 block scales)" : "") + " -> " +
                og_dtype_name(p.d);
      return r;
    }
    if (p.scaled()) { r.why = "cuBLASLt block scaling needs fp8 e4m3 inputs"; return r; }
    if (p.a != p.b || cuda_type(p.a) < 0 || p.a == OG_DTYPE_FP8_E4M3) {
      r.why = std::string("no cuBLAS path for ") + og_dtype_name(p.a) + " x " + og_dtype_name(p.b);
      return r;
    }
    if (p.d != p.a && p.d != OG_DTYPE_F32) { r.why = "cublasGemmEx output must be the input dtype or f32"; return r; }
    r.supported = true;
    r.label = std::string("cublasGemmEx ") + og_dtype_name(p.a) + " -> " + og_dtype_name(p.d) +
              (p.tf32 ? " (TF32 compute)" : " (f32 compute)");
    return r;
  }

  Status run(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d) override {
    auto ptr = [](const og_memory& mem) { return static_cast<char*>(mem.ptr) + mem.offset; };
    const float one = 1.0f, zero = 0.0f;
    // Row-major D = A B is column-major D^T = B^T A^T: cuBLAS's "A" is our B, its "B" our A.
    if (p.a == OG_DTYPE_FP8_E4M3) return run_lt(p, ptr(a), ptr(b), ptr(d), nullptr, nullptr);
    // A column-major operand (ours) is its row-major transpose with the same leading dimension.
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || p.ld_a() > INT32_MAX || p.ld_b() > INT32_MAX ||
        p.ld_d() > INT32_MAX || p.batch > INT32_MAX)
      return error(StatusCode::unsupported, "32-bit sizes");
    const int m = int(p.m), n = int(p.n), k = int(p.k);
    const int op_b = p.b_col_major ? cu::OP_T : cu::OP_N, op_a = p.a_col_major ? cu::OP_T : cu::OP_N;
    const int ldb = int(p.ld_b()), lda = int(p.ld_a()), ldd = int(p.ld_d());
    cu::status s = 0;
    if (p.batch == 1) {
      s = gemm_ex_(handle_, op_b, op_a, n, m, k, &one, ptr(b), cuda_type(p.b), ldb, ptr(a), cuda_type(p.a), lda, &zero,
                   ptr(d), cuda_type(p.d), ldd, p.tf32 ? cu::COMPUTE_32F_FAST_TF32 : cu::COMPUTE_32F, cu::GEMM_DEFAULT);
      if (s != 0) return error(StatusCode::backend_failure, "cublasGemmEx failed with status " + std::to_string(s));
    } else {
      s = gemm_batched_(handle_, op_b, op_a, n, m, k, &one, ptr(b), cuda_type(p.b), ldb, p.stride_b, ptr(a),
                        cuda_type(p.a), lda, p.stride_a, &zero, ptr(d), cuda_type(p.d), ldd, p.stride_d, int(p.batch),
                        p.tf32 ? cu::COMPUTE_32F_FAST_TF32 : cu::COMPUTE_32F, cu::GEMM_DEFAULT);
      if (s != 0)
        return error(StatusCode::backend_failure, "cublasGemmStridedBatchedEx failed with status " + std::to_string(s));
    }
    return {};
  }

  Status run_scaled(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d,
                    const og_memory& a_s, const og_memory& b_s) override {
    auto ptr = [](const og_memory& mem) { return static_cast<char*>(mem.ptr) + mem.offset; };
    if (!plan(p).supported || !p.scaled()) return error(StatusCode::unsupported, plan(p).why);
    return run_lt(p, ptr(a), ptr(b), ptr(d), ptr(a_s), ptr(b_s));
  }

 private:
  void load_lt(void* lt) {
    cu::lt_create_fn create = nullptr;
    bool ok = load(lt, "cublasLtCreate", create) && load(lt, "cublasLtMatmulDescCreate", desc_create_) &&
              load(lt, "cublasLtMatmulDescDestroy", desc_destroy_) &&
              load(lt, "cublasLtMatmulDescSetAttribute", desc_set_) &&
              load(lt, "cublasLtMatrixLayoutCreate", layout_create_) &&
              load(lt, "cublasLtMatrixLayoutDestroy", layout_destroy_) &&
              load(lt, "cublasLtMatmulPreferenceCreate", pref_create_) &&
              load(lt, "cublasLtMatmulPreferenceDestroy", pref_destroy_) &&
              load(lt, "cublasLtMatmulPreferenceSetAttribute", pref_set_) &&
              load(lt, "cublasLtMatmulAlgoGetHeuristic", heuristic_) && load(lt, "cublasLtMatmul", matmul_);
    if (!ok) { lt_why_ = "libcublasLt lacks a needed symbol"; return; }
    if (create(&lt_handle_) != 0) { lt_handle_ = nullptr; lt_why_ = "cublasLtCreate failed"; return; }
    if (Status s = Status::from_c(og_memory_alloc(ctx_, kWorkspace, &workspace_)); !s) {
      lt_handle_ = nullptr;
      lt_why_ = "no device memory for the cuBLASLt workspace: " + s.message;
    }
  }

  // fp8: column-major D^T (N x M) = op(X) Y with X = our B stored K x N column-major (ld K),
  // transposed ("T"), and Y = our A stored K x M column-major (= M x K row-major), "N". With block
  // scales (a_s, b_s not null), cuBLASLt's A is our B: its scales are our B's (128 x 128 blocks),
  // cuBLASLt's B our A (1 x 128), the DeepSeek-V3 recipe as cuBLASLt runs it on Hopper.
  Status run_lt(const VendorProblem& p, const void* a, const void* b, void* d, const void* a_s, const void* b_s) {
    void *desc = nullptr, *la = nullptr, *lb = nullptr, *ld = nullptr, *pref = nullptr;
    auto cleanup = [&] {
      if (pref) pref_destroy_(pref);
      for (void* l : {la, lb, ld}) if (l) layout_destroy_(l);
      if (desc) desc_destroy_(desc);
    };
    const int op_t = cu::OP_T, op_n = cu::OP_N;
    const float one = 1.0f, zero = 0.0f;
    const uint64_t ws = kWorkspace;
    bool ok = desc_create_(&desc, cu::COMPUTE_32F, cu::R_32F) == 0 &&
              desc_set_(desc, cu::LT_DESC_TRANSA, &op_t, sizeof op_t) == 0 &&
              desc_set_(desc, cu::LT_DESC_TRANSB, &op_n, sizeof op_n) == 0 &&
              layout_create_(&la, cu::R_8F_E4M3, uint64_t(p.k), uint64_t(p.n), p.ld_b()) == 0 &&
              layout_create_(&lb, cu::R_8F_E4M3, uint64_t(p.k), uint64_t(p.m), p.ld_a()) == 0 &&
              layout_create_(&ld, cuda_type(p.d), uint64_t(p.n), uint64_t(p.m), p.ld_d()) == 0 &&
              pref_create_(&pref) == 0 && pref_set_(pref, cu::LT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) == 0;
    if (ok && a_s && b_s) {
      const int32_t lt_a_mode = cu::LT_SCALE_BLK128x128_32F, lt_b_mode = cu::LT_SCALE_VEC128_32F;
      ok = desc_set_(desc, cu::LT_DESC_A_SCALE_MODE, &lt_a_mode, sizeof lt_a_mode) == 0 &&
           desc_set_(desc, cu::LT_DESC_B_SCALE_MODE, &lt_b_mode, sizeof lt_b_mode) == 0 &&
           desc_set_(desc, cu::LT_DESC_A_SCALE_POINTER, &b_s, sizeof b_s) == 0 &&
           desc_set_(desc, cu::LT_DESC_B_SCALE_POINTER, &a_s, sizeof a_s) == 0;
    }
    if (!ok) { cleanup(); return error(StatusCode::backend_failure, "cuBLASLt descriptor setup failed"); }
    cu::lt_heuristic h{};
    int found = 0;
    cu::status s = heuristic_(lt_handle_, desc, la, lb, ld, ld, pref, 1, &h, &found);
    if (s != 0 || found == 0) {
      cleanup();
      return error(StatusCode::unsupported, "cuBLASLt has no fp8 algorithm for this problem (status " +
                                                std::to_string(s) + ")");
    }
    void* wsp = static_cast<char*>(workspace_.ptr) + workspace_.offset;
    s = matmul_(lt_handle_, desc, &one, b, la, a, lb, &zero, d, ld, d, ld, &h.algo, wsp, kWorkspace, nullptr);
    cleanup();
    if (s != 0) return error(StatusCode::backend_failure, "cublasLtMatmul failed with status " + std::to_string(s));
    return {};
  }

  static constexpr size_t kWorkspace = size_t(32) << 20;
  og_context* ctx_ = nullptr;
  cu::handle handle_ = nullptr;
  cu::gemm_ex_fn gemm_ex_ = nullptr;
  cu::gemm_strided_batched_ex_fn gemm_batched_ = nullptr;
  std::string version_, lt_why_;
  cu::handle lt_handle_ = nullptr;
  og_memory workspace_{};
  cu::lt_desc_create_fn desc_create_ = nullptr;
  cu::lt_desc_destroy_fn desc_destroy_ = nullptr;
  cu::lt_desc_set_fn desc_set_ = nullptr;
  cu::lt_layout_create_fn layout_create_ = nullptr;
  cu::lt_layout_destroy_fn layout_destroy_ = nullptr;
  cu::lt_pref_create_fn pref_create_ = nullptr;
  cu::lt_pref_destroy_fn pref_destroy_ = nullptr;
  cu::lt_pref_set_fn pref_set_ = nullptr;
  cu::lt_heuristic_fn heuristic_ = nullptr;
  cu::lt_matmul_fn matmul_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// CUDA activation pass: PTX for sm_80+ (checked with ptxas -arch=sm_90 and sm_80), one element per
// thread per grid-stride step, f32 math; leaky(x) = x >= 0 ? x : slope * x (NaN stays NaN).
const char* kLeakyPtx = R"PTX(.version 7.0
.target sm_80
.address_size 64

.visible .entry og_leaky_f32(.param .u64 p_ptr, .param .u64 p_n, .param .f32 p_slope)
{
  .reg .pred %p<3>;
  .reg .b16 %h<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [p_ptr];
  ld.param.u64 %rd2, [p_n];
  ld.param.f32 %f1, [p_slope];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd3, %r1, %r2;
  cvt.u64.u32 %rd4, %r3;
  add.u64 %rd3, %rd3, %rd4;
  mul.wide.u32 %rd5, %r4, %r2;
LOOP:
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd6, %rd3, 2;
  add.u64 %rd7, %rd1, %rd6;
  ld.global.f32 %f2, [%rd7];
  mul.f32 %f3, %f2, %f1;
  setp.ge.f32 %p2, %f2, 0f00000000;
  selp.f32 %f3, %f2, %f3, %p2;
  st.global.f32 [%rd7], %f3;
  add.u64 %rd3, %rd3, %rd5;
  bra LOOP;
DONE:
  ret;
}

.visible .entry og_leaky_f16(.param .u64 p_ptr, .param .u64 p_n, .param .f32 p_slope)
{
  .reg .pred %p<3>;
  .reg .b16 %h<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [p_ptr];
  ld.param.u64 %rd2, [p_n];
  ld.param.f32 %f1, [p_slope];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd3, %r1, %r2;
  cvt.u64.u32 %rd4, %r3;
  add.u64 %rd3, %rd3, %rd4;
  mul.wide.u32 %rd5, %r4, %r2;
LOOP:
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd6, %rd3, 1;
  add.u64 %rd7, %rd1, %rd6;
  ld.global.b16 %h1, [%rd7];
  cvt.f32.f16 %f2, %h1;
  mul.f32 %f3, %f2, %f1;
  setp.ge.f32 %p2, %f2, 0f00000000;
  selp.f32 %f3, %f2, %f3, %p2;
  cvt.rn.f16.f32 %h2, %f3;
  st.global.b16 [%rd7], %h2;
  add.u64 %rd3, %rd3, %rd5;
  bra LOOP;
DONE:
  ret;
}

.visible .entry og_leaky_bf16(.param .u64 p_ptr, .param .u64 p_n, .param .f32 p_slope)
{
  .reg .pred %p<3>;
  .reg .b16 %h<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [p_ptr];
  ld.param.u64 %rd2, [p_n];
  ld.param.f32 %f1, [p_slope];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd3, %r1, %r2;
  cvt.u64.u32 %rd4, %r3;
  add.u64 %rd3, %rd3, %rd4;
  mul.wide.u32 %rd5, %r4, %r2;
LOOP:
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd6, %rd3, 1;
  add.u64 %rd7, %rd1, %rd6;
  ld.global.b16 %h1, [%rd7];
  cvt.u32.u16 %r5, %h1;
  shl.b32 %r5, %r5, 16;
  mov.b32 %f2, %r5;
  mul.f32 %f3, %f2, %f1;
  setp.ge.f32 %p2, %f2, 0f00000000;
  selp.f32 %f3, %f2, %f3, %p2;
  cvt.rn.bf16.f32 %h2, %f3;
  st.global.b16 [%rd7], %h2;
  add.u64 %rd3, %rd3, %rd5;
  bra LOOP;
DONE:
  ret;
}
)PTX";

class CudaActivation final : public ActivationPass {
 public:
  using init_fn = int (*)(unsigned);
  using ctx_get_fn = int (*)(void**);
  using module_load_fn = int (*)(void**, const void*);
  using get_function_fn = int (*)(void**, void*, const char*);
  using launch_fn = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                            void**);

  static std::unique_ptr<ActivationPass> load_lib(std::string& why) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { why = "libcuda.so.1 not found"; return nullptr; }
    auto a = std::make_unique<CudaActivation>();
    if (!load(lib, "cuInit", a->init_) || !load(lib, "cuCtxGetCurrent", a->ctx_get_) ||
        !load(lib, "cuModuleLoadData", a->module_load_) || !load(lib, "cuModuleGetFunction", a->get_function_) ||
        !load(lib, "cuLaunchKernel", a->launch_)) {
      why = "libcuda.so.1 lacks a driver API entry point";
      return nullptr;
    }
    return a;
  }

  std::string label() const override { return "separate leaky_relu kernel (PTX, grid-stride)"; }

  Status prepare() override {
    if (module_) return {};
    if (int r = init_(0); r != 0) return error(StatusCode::backend_failure, "cuInit failed: " + std::to_string(r));
    void* ctx = nullptr;
    if (ctx_get_(&ctx) != 0 || !ctx) return error(StatusCode::backend_failure, "no current CUDA context on this thread");
    if (int r = module_load_(&module_, kLeakyPtx); r != 0) {
      module_ = nullptr;
      return error(StatusCode::backend_failure, "cuModuleLoadData (PTX JIT) failed: " + std::to_string(r));
    }
    const char* names[3] = {"og_leaky_f32", "og_leaky_f16", "og_leaky_bf16"};
    for (int i = 0; i < 3; ++i)
      if (int r = get_function_(&fn_[i], module_, names[i]); r != 0)
        return error(StatusCode::backend_failure, std::string("cuModuleGetFunction ") + names[i] + ": " + std::to_string(r));
    return {};
  }

  Status leaky_relu(const og_memory& d, og_dtype dtype, int64_t elements, float slope) override {
    const int which = dtype == OG_DTYPE_F32 ? 0 : dtype == OG_DTYPE_F16 ? 1 : dtype == OG_DTYPE_BF16 ? 2 : -1;
    if (which < 0 || !fn_[which]) return error(StatusCode::unsupported, "activation pass: f32/f16/bf16 only");
    unsigned long long ptr = reinterpret_cast<unsigned long long>(static_cast<char*>(d.ptr) + d.offset);
    unsigned long long n = static_cast<unsigned long long>(elements);
    void* params[3] = {&ptr, &n, &slope};
    const unsigned threads = 256;
    const unsigned long long want = (n + threads - 1) / threads;
    const unsigned blocks = unsigned(std::max<unsigned long long>(1, std::min<unsigned long long>(want, 8192)));
    // Stream 0: the legacy default stream, where the CUDA backend times and cuBLAS runs.
    if (int r = launch_(fn_[which], blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr); r != 0)
      return error(StatusCode::backend_failure, "cuLaunchKernel failed: " + std::to_string(r));
    return {};
  }

 private:
  init_fn init_ = nullptr;
  ctx_get_fn ctx_get_ = nullptr;
  module_load_fn module_load_ = nullptr;
  get_function_fn get_function_ = nullptr;
  launch_fn launch_ = nullptr;
  void* module_ = nullptr;
  void* fn_[3] = {nullptr, nullptr, nullptr};
};

}  // namespace

std::unique_ptr<ActivationPass> load_activation_pass(og_backend backend, std::string& why) {
  if (backend == OG_BACKEND_CUDA) return CudaActivation::load_lib(why);
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
    case OG_BACKEND_CUDA: return Cublas::load_lib(ctx, why);
    case OG_BACKEND_HIP: return load_rocblas(why);
    case OG_BACKEND_VULKAN: why = "no vendor Vulkan GEMM library"; return nullptr;
    default: why = "no vendor library"; return nullptr;
  }
}

}  // namespace omnigemm::bench
