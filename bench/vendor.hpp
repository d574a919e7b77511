// Vendor GEMM baselines for omnigemm-bench, loaded at run time with dlopen only when present:
// the library never links them, and the bench builds without their headers (the few prototypes
// and enum values it needs are declared in vendor.cpp and checked against the real headers by
// bench/check_vendor_decls.cpp when CUDA headers exist at configure time).
//
//   CPU:  OpenBLAS  cblas_sgemm (f32; f16 inputs as exact f32 copies), cblas_sbgemm (bf16 in, f32 out)
//   CUDA: cuBLAS    cublasGemmEx, cublasGemmStridedBatchedEx for batches (f32/f16/bf16 in and
//                   out, f32 compute, legacy default stream 0)
//         cuBLASLt  cublasLtMatmul (fp8 e4m3 x e4m3 -> f16, "TN": B stored N x K; and the same with
//                   128-blockwise f32 scales, A: VEC128_32F, B: BLK128x128_32F, CUDA >= 12.9, Hopper;
//                   f32/f16/bf16 with its epilogues RELU, GELU, BIAS, RELU_BIAS, GELU_BIAS and C)
//   HIP:  rocBLAS   rocblas_gemm_ex (f32/f16/bf16 in, the input dtype or f32 out, f32 compute, null
//                   stream; vendor_rocm.cpp); hipBLASLt is not used (see there)
//   Vulkan: no vendor GEMM exists.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "omnigemm/omnigemm.hpp"

namespace omnigemm::bench {

using omnigemm::Status;

// The problem as the vendor library sees it: a is M x K, row-major or (a_col_major)
// column-major; b is K x N, row-major or (b_col_major) column-major; d is M x N row-major; each
// with its leading dimension (0: packed) and, over `batch` batches, its batch stride in elements
// (0: one matrix for every batch; d's is never 0 when batch > 1).
struct VendorProblem {
  int64_t m = 0, n = 0, k = 0;
  og_dtype a = OG_DTYPE_F32, b = OG_DTYPE_F32, d = OG_DTYPE_F32;
  bool b_col_major = false;
  bool tf32 = false;  // f32 inputs, TF32 products allowed (cuBLAS: CUBLAS_COMPUTE_32F_FAST_TF32)
  bool a_col_major = false;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;
  int64_t ld_a() const { return lda ? lda : std::max<int64_t>(a_col_major ? m : k, 1); }
  int64_t ld_b() const { return ldb ? ldb : std::max<int64_t>(b_col_major ? k : n, 1); }
  int64_t ld_d() const { return ldd ? ldd : std::max<int64_t>(n, 1); }
  // Block scales (bench_formats.hpp's layouts): A per 1 x 128 (VEC128_F32, column-major, ld M)
  // and B per 128 x 128 (BLK128x128_F32, row-major, ld ceil(K / 128) rounded up to 4).
  og_scale_mode a_scale = OG_SCALE_MODE_DEFAULT, b_scale = OG_SCALE_MODE_DEFAULT;
  bool scaled() const { return a_scale != OG_SCALE_MODE_DEFAULT || b_scale != OG_SCALE_MODE_DEFAULT; }
  // The epilogue (--epilogue): D = act(alpha * A B + beta * C + bias), C of d's dtype and storage
  // (read when beta != 0), bias a vector along N of the plan's bias dtype. An activation the
  // plan does not fuse (VendorPlan::act_fused) is the bench's separate pass, not the vendor's.
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;
  og_activation act = OG_ACT_NONE;
  bool needs_epilogue_call() const { return beta != 0.0f || bias; }
};

// What the vendor call will compute: the dtypes of its own buffers (a CPU library may need f32
// copies of f16 inputs, and write f32) and a label for the tables.
struct VendorPlan {
  bool supported = false;
  std::string why;  // when not supported
  std::string label;
  og_dtype a = OG_DTYPE_F32, b = OG_DTYPE_F32, d = OG_DTYPE_F32;
  og_dtype bias = OG_DTYPE_F32;  // the bias vector's dtype (VendorProblem::bias)
  bool act_fused = false;        // the activation runs inside the vendor's call (else a separate pass)
};

class Vendor {
 public:
  virtual ~Vendor() = default;
  virtual std::string library() const = 0;  // name and version, for the header lines
  virtual VendorPlan plan(const VendorProblem& p) const = 0;
  // Enqueue D = A * B with buffers of the plan's dtypes on the device's default stream/queue
  // (the one og_context_time times).
  virtual Status run(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d) = 0;
  // D = act(alpha A B + beta C + bias) in one call where the plan says so (p.needs_epilogue_call()
  // or plan.act_fused): c and bias as VendorProblem describes them (unused ones may be empty).
  virtual Status run_epilogue(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d,
                              const og_memory& c, const og_memory& bias) {
    (void)p, (void)a, (void)b, (void)d, (void)c, (void)bias;
    return Status{StatusCode::unsupported, library() + " has no fused epilogue"};
  }
  // What the vendor's fused GELU computes, where it has one: a line for the table's header
  // (measured on a probe problem against the tanh and erf forms), else empty.
  virtual std::string probe_gelu() { return {}; }
  // The same for a block-scaled problem (p.scaled()): a_s and b_s hold A's and B's scales.
  virtual Status run_scaled(const VendorProblem& p, const og_memory& a, const og_memory& b, const og_memory& d,
                            const og_memory& a_s, const og_memory& b_s) {
    (void)p, (void)a, (void)b, (void)d, (void)a_s, (void)b_s;
    return Status{StatusCode::unsupported, library() + " has no block-scaled GEMM"};
  }
};

// A separate in-place elementwise pass D = act(D) on the device's default stream, for the
// unfused-epilogue baseline (vendor GEMM + this pass). CUDA: grid-stride kernels written in PTX
// (16 bytes per thread and step, f32 math; activation_ptx.cpp), JIT-compiled by the driver
// (libcuda.so.1, dlopen'ed) in the current context. Elsewhere: none (the bench then uses a host
// loop on the CPU or OmniGEMM's own K = 0 elementwise call).
class ActivationPass {
 public:
  virtual ~ActivationPass() = default;
  virtual std::string label(og_activation act) const = 0;
  // Loads the kernel module in the calling thread's current device context (call after the
  // context has allocated memory with og_memory_alloc, so that the device context exists).
  virtual Status prepare() = 0;
  // d: 16-byte aligned device memory of `elements` values of dtype f32, f16 or bf16.
  virtual Status activate(const og_memory& d, og_dtype dtype, int64_t elements, og_activation act, float slope) = 0;
};
std::unique_ptr<ActivationPass> load_activation_pass(og_backend backend, std::string& why);
std::unique_ptr<ActivationPass> load_cuda_activation(std::string& why);  // activation_pass.cpp
std::string activation_pass_ptx();  // its kernels' PTX (the test bench_activation_ptx assembles it)

// The vendor library of the device of `ctx` (a context of backend `backend`), or nullptr with the
// reason in `why`. Device memory it needs (cuBLASLt's workspace) comes from og_memory_alloc on
// `ctx`: destroy the Vendor before the context.
std::unique_ptr<Vendor> load_vendor(og_backend backend, og_context* ctx, std::string& why);
// rocBLAS on the calling thread's current HIP device (vendor_rocm.cpp), or nullptr and why.
std::unique_ptr<Vendor> load_rocblas(std::string& why);
// cuBLAS and cuBLASLt for the current CUDA device of `ctx` (vendor_cublas.cpp), or nullptr and why.
std::unique_ptr<Vendor> load_cublas(og_context* ctx, std::string& why);

}  // namespace omnigemm::bench
