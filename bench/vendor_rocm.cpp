// The HIP baseline of omnigemm-bench: rocBLAS's rocblas_gemm_ex (f16/bf16/f32 in, the input dtype
// or f32 out, f32 compute), dlopen'ed when present. The prototype and enum values below are
// rocBLAS's stable C API (rocblas-types.h, rocblas-functions.h; unchanged from ROCm 5 to 6 with
// 32-bit rocblas_int). hipBLASLt is not used: its compute-type and heuristic-result ABI changed
// between ROCm 5 and 6, and no header or device here could check a declaration of it.
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "vendor.hpp"

namespace omnigemm::bench {

namespace {

using omnigemm::StatusCode;

namespace roc {
using handle = void*;
using status = int;  // rocblas_status: 0 success
enum { op_none = 111, op_transpose = 112 };
enum { f16_r = 150, f32_r = 151, bf16_r = 168 };  // rocblas_datatype
enum { gemm_algo_standard = 0 };
using create_handle_fn = status (*)(handle*);
using destroy_handle_fn = status (*)(handle);
using get_version_string_fn = status (*)(char*, size_t);
using gemm_ex_fn = status (*)(handle, int, int, int32_t, int32_t, int32_t, const void*, const void*, int, int32_t, const void*,
                              int, int32_t, const void*, const void*, int, int32_t, void*, int, int32_t, int, int, int32_t,
                              uint32_t);
}  // namespace roc

int roc_type(og_dtype d) {
  switch (d) {
    case OG_DTYPE_F32: return roc::f32_r;
    case OG_DTYPE_F16: return roc::f16_r;
    case OG_DTYPE_BF16: return roc::bf16_r;
    default: return -1;
  }
}

class RocBlas final : public Vendor {
 public:
  static std::unique_ptr<Vendor> load_lib(std::string& why) {
    std::vector<std::string> dirs;
    if (const char* d = std::getenv("OMNIGEMM_ROCBLAS_DIR"); d && *d) dirs.push_back(d);
    dirs.push_back("");  // LD_LIBRARY_PATH, rpath, ld.so.cache
    if (const char* r = std::getenv("ROCM_PATH"); r && *r) dirs.push_back(std::string(r) + "/lib");
    for (const char* d : {"/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu"}) dirs.push_back(d);
    void* lib = nullptr;
    for (const char* name : {"librocblas.so.4", "librocblas.so.3", "librocblas.so.0", "librocblas.so"}) {
      for (const std::string& dir : dirs)
        if ((lib = dlopen((dir.empty() ? std::string(name) : dir + "/" + name).c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      if (lib) break;
    }
    if (!lib) { why = "rocBLAS not found (set OMNIGEMM_ROCBLAS_DIR to the folder of librocblas.so)"; return nullptr; }
    auto v = std::make_unique<RocBlas>();
    roc::create_handle_fn create = nullptr;
    if (!bind(lib, "rocblas_create_handle", create) || !bind(lib, "rocblas_destroy_handle", v->destroy_) ||
        !bind(lib, "rocblas_gemm_ex", v->gemm_ex_)) {
      why = "librocblas lacks rocblas_create_handle/rocblas_destroy_handle/rocblas_gemm_ex";
      return nullptr;
    }
    // The handle belongs to the calling thread's current device: the bench's HIP context set it.
    if (roc::status s = create(&v->handle_); s != 0) {
      why = "rocblas_create_handle failed with status " + std::to_string(s);
      return nullptr;
    }
    roc::get_version_string_fn version = nullptr;
    char text[128] = {};
    if (bind(lib, "rocblas_get_version_string", version) && version(text, sizeof text) == 0) v->version_ += std::string(" ") + text;
    return v;
  }

  ~RocBlas() override {
    if (handle_) destroy_(handle_);
  }

  std::string library() const override { return version_; }

  VendorPlan plan(const VendorProblem& p) const override {
    VendorPlan r;
    r.a = p.a, r.b = p.b, r.d = p.d;
    if (p.a != p.b || roc_type(p.a) < 0) {
      r.why = std::string("no rocBLAS path for ") + og_dtype_name(p.a) + " x " + og_dtype_name(p.b) + " on MI200";
      return r;
    }
    if (p.d != p.a && p.d != OG_DTYPE_F32) { r.why = "rocblas_gemm_ex output must be the input dtype or f32"; return r; }
    if (p.needs_epilogue_call()) { r.why = "no rocBLAS baseline for bias or C epilogues in this bench"; return r; }
    r.supported = true;
    r.label = std::string("rocblas_gemm_ex ") + og_dtype_name(p.a) + " -> " + og_dtype_name(p.d) + " (f32 compute)";
    return r;
  }

  // Row-major D = A B is column-major D^T = B^T A^T: rocBLAS's "A" is our B, its "B" our A; D is
  // its C and D (beta 0). On the null stream, which og_context_time times.
  Status run(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d) override {
    auto ptr = [](const og_memory& mem) { return static_cast<char*>(mem.ptr) + mem.offset; };
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX) return Status{StatusCode::unsupported, "32-bit sizes"};
    const int32_t m = int32_t(p.m), n = int32_t(p.n), k = int32_t(p.k);
    const float alpha = p.alpha, zero = 0.0f;
    const roc::status s = gemm_ex_(handle_, p.b_col_major ? roc::op_transpose : roc::op_none, roc::op_none, n, m, k, &alpha, ptr(b),
                                   roc_type(p.b), p.b_col_major ? k : n, ptr(a), roc_type(p.a), k, &zero, ptr(d), roc_type(p.d),
                                   n, ptr(d), roc_type(p.d), n, roc::f32_r, roc::gemm_algo_standard, 0, 0);
    if (s != 0) return Status{StatusCode::backend_failure, "rocblas_gemm_ex failed with status " + std::to_string(s)};
    return {};
  }

 private:
  template <class F>
  static bool bind(void* lib, const char* symbol, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib, symbol));
    return fn != nullptr;
  }

  roc::handle handle_ = nullptr;
  roc::destroy_handle_fn destroy_ = nullptr;
  roc::gemm_ex_fn gemm_ex_ = nullptr;
  std::string version_ = "rocBLAS";
};

}  // namespace

std::unique_ptr<Vendor> load_rocblas(std::string& why) { return RocBlas::load_lib(why); }

}  // namespace omnigemm::bench
