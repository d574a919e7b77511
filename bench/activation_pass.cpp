// The CUDA activation pass of omnigemm-bench's unfused baseline (vendor GEMM, then D = act(D) in
// place): grid-stride kernels in PTX, generated here per (dtype, activation) and JIT-compiled by
// the driver (libcuda.so.1, dlopen'ed), launched on the legacy default stream 0 where the bench
// times and cuBLAS runs. Each thread moves 16 bytes per step (4 f32 or 8 16-bit values, as an
// elementwise library kernel does), the tail past the last whole 16 bytes one value per thread.
// The math is f32, the activations those of omnigemm/epilogue.h: relu, leaky_relu (slope), gelu
// in its tanh form and silu, the last two as x / (1 + exp(z)) with z = -2 sqrt(2/pi)(x + 0.044715
// x^3) or -x (the same function; exp by ex2.approx and div.full, each a few f32 ulps), so an
// overflowing exp gives x / inf = -0 as the formula's limit. 16-bit results are rounded to
// nearest even (cvt.rn.f16x2 / bf16x2.f32). The PTX assembles with ptxas for sm_80 and sm_90.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "vendor.hpp"
#include "vendor_dl.hpp"

namespace omnigemm::bench {

using omnigemm::StatusCode;
using dl::error;
using dl::load;

namespace {

const og_activation kActs[] = {OG_ACT_RELU, OG_ACT_LEAKY_RELU, OG_ACT_GELU_TANH, OG_ACT_SILU};
const og_dtype kDtypes[] = {OG_DTYPE_F32, OG_DTYPE_F16, OG_DTYPE_BF16};

const char* act_word(og_activation a) {
  return a == OG_ACT_RELU ? "relu" : a == OG_ACT_LEAKY_RELU ? "leaky" : a == OG_ACT_GELU_TANH ? "gelu" : "silu";
}

std::string kernel_name(og_dtype d, og_activation a) {
  return std::string("og_") + act_word(a) + "_" + (d == OG_DTYPE_F32 ? "f32" : d == OG_DTYPE_F16 ? "f16" : "bf16");
}

// PTX computing %f<y> = act(%f<x>) with temporaries %t0..%t2, predicate %p9 and the slope in %s.
std::string act_code(og_activation a, const std::string& x, const std::string& y) {
  if (a == OG_ACT_RELU) return "  max.f32 " + y + ", " + x + ", 0f00000000;\n";
  if (a == OG_ACT_LEAKY_RELU)
    return "  mul.f32 %t0, " + x + ", %s;\n  setp.ge.f32 %p9, " + x + ", 0f00000000;\n  selp.f32 " + y + ", " + x +
           ", %t0, %p9;\n";
  std::string z;  // %t0 = z * log2(e)
  if (a == OG_ACT_GELU_TANH)  // -2 sqrt(2/pi) log2(e) (x + 0.044715 x^3)
    z = "  mul.f32 %t0, " + x + ", " + x + ";\n  mul.f32 %t0, %t0, " + x + ";\n  fma.rn.f32 %t0, %t0, 0f3D372713, " + x +
        ";\n  mul.f32 %t0, %t0, 0fC0135761;\n";
  else  // -log2(e) x
    z = "  mul.f32 %t0, " + x + ", 0fBFB8AA3B;\n";
  return z + "  ex2.approx.f32 %t0, %t0;\n  add.f32 %t0, %t0, 0f3F800000;\n  div.full.f32 " + y + ", " + x + ", %t0;\n";
}

// One kernel: (ptr, n elements, slope). Units of 16 bytes first, then the tail.
std::string kernel_ptx(og_dtype d, og_activation a) {
  const int es = d == OG_DTYPE_F32 ? 4 : 2, per_unit = 16 / es;
  std::string k = ".visible .entry " + kernel_name(d, a) + "(.param .u64 p_ptr, .param .u64 p_n, .param .f32 p_slope)\n{\n";
  k += "  .reg .pred %p<10>;\n  .reg .b16 %h<4>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<12>;\n  .reg .f32 %f<20>;\n"
       "  .reg .f32 %t<3>;\n  .reg .f32 %s;\n";
  k += "  ld.param.u64 %rd1, [p_ptr];\n  ld.param.u64 %rd2, [p_n];\n  ld.param.f32 %s, [p_slope];\n"
       "  cvta.to.global.u64 %rd1, %rd1;\n"
       "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %ntid.x;\n  mov.u32 %r3, %tid.x;\n  mov.u32 %r4, %nctaid.x;\n"
       "  mul.wide.u32 %rd3, %r1, %r2;\n  cvt.u64.u32 %rd4, %r3;\n  add.u64 %rd3, %rd3, %rd4;\n"  // %rd3: first index
       "  mul.wide.u32 %rd5, %r4, %r2;\n";                                                     // %rd5: stride
  k += "  shr.u64 %rd6, %rd2, " + std::to_string(per_unit == 4 ? 2 : 3) + ";\n";  // %rd6: whole units
  k += "  mov.u64 %rd7, %rd3;\nUNITS:\n  setp.ge.u64 %p1, %rd7, %rd6;\n  @%p1 bra TAIL;\n"
       "  shl.b64 %rd8, %rd7, 4;\n  add.u64 %rd8, %rd1, %rd8;\n"
       "  ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd8];\n";
  // Values 0..per_unit-1 into %f0.., results into %f10..
  const char* words[4] = {"%r4", "%r5", "%r6", "%r7"};
  if (d == OG_DTYPE_F32) {
    for (int i = 0; i < 4; ++i) k += "  mov.b32 %f" + std::to_string(i) + ", " + words[i] + ";\n";
  } else {
    for (int i = 0; i < 4; ++i) {
      const std::string lo = "%f" + std::to_string(2 * i), hi = "%f" + std::to_string(2 * i + 1);
      if (d == OG_DTYPE_F16)
        k += "  mov.b32 {%h1, %h2}, " + std::string(words[i]) + ";\n  cvt.f32.f16 " + lo + ", %h1;\n  cvt.f32.f16 " + hi +
             ", %h2;\n";
      else
        k += "  shl.b32 %r1, " + std::string(words[i]) + ", 16;\n  mov.b32 " + lo + ", %r1;\n  and.b32 %r1, " + words[i] +
             ", 0xFFFF0000;\n  mov.b32 " + hi + ", %r1;\n";
    }
  }
  for (int i = 0; i < per_unit; ++i) k += act_code(a, "%f" + std::to_string(i), "%f" + std::to_string(10 + i));
  if (d == OG_DTYPE_F32) {
    k += "  st.global.v4.f32 [%rd8], {%f10, %f11, %f12, %f13};\n";
  } else {
    const char* cvt = d == OG_DTYPE_F16 ? "cvt.rn.f16x2.f32" : "cvt.rn.bf16x2.f32";
    for (int i = 0; i < 4; ++i)  // the first source goes to the upper half
      k += std::string("  ") + cvt + " " + words[i] + ", %f" + std::to_string(10 + 2 * i + 1) + ", %f" +
           std::to_string(10 + 2 * i) + ";\n";
    k += "  st.global.v4.b32 [%rd8], {%r4, %r5, %r6, %r7};\n";
  }
  k += "  add.u64 %rd7, %rd7, %rd5;\n  bra UNITS;\nTAIL:\n";
  // Elements units * per_unit .. n - 1, one per thread.
  k += "  shl.b64 %rd9, %rd6, " + std::to_string(per_unit == 4 ? 2 : 3) + ";\n  add.u64 %rd9, %rd9, %rd3;\nTAIL_LOOP:\n"
       "  setp.ge.u64 %p2, %rd9, %rd2;\n  @%p2 bra DONE;\n"
       "  shl.b64 %rd10, %rd9, " + std::to_string(es == 4 ? 2 : 1) + ";\n  add.u64 %rd10, %rd1, %rd10;\n";
  if (d == OG_DTYPE_F32) k += "  ld.global.f32 %f0, [%rd10];\n";
  else if (d == OG_DTYPE_F16) k += "  ld.global.b16 %h1, [%rd10];\n  cvt.f32.f16 %f0, %h1;\n";
  else k += "  ld.global.b16 %h1, [%rd10];\n  cvt.u32.u16 %r1, %h1;\n  shl.b32 %r1, %r1, 16;\n  mov.b32 %f0, %r1;\n";
  k += act_code(a, "%f0", "%f10");
  if (d == OG_DTYPE_F32) k += "  st.global.f32 [%rd10], %f10;\n";
  else if (d == OG_DTYPE_F16) k += "  cvt.rn.f16.f32 %h2, %f10;\n  st.global.b16 [%rd10], %h2;\n";
  else k += "  cvt.rn.bf16.f32 %h2, %f10;\n  st.global.b16 [%rd10], %h2;\n";
  k += "  add.u64 %rd9, %rd9, %rd5;\n  bra TAIL_LOOP;\nDONE:\n  ret;\n}\n\n";
  return k;
}

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

  std::string label(og_activation act) const override {
    return std::string("separate ") + act_word(act) + " kernel (PTX, 16 B per thread and step)";
  }

  Status prepare() override {
    if (module_) return {};
    if (int r = init_(0); r != 0) return error(StatusCode::backend_failure, "cuInit failed: " + std::to_string(r));
    void* ctx = nullptr;
    if (ctx_get_(&ctx) != 0 || !ctx) return error(StatusCode::backend_failure, "no current CUDA context on this thread");
    const std::string ptx = activation_pass_ptx();
    if (int r = module_load_(&module_, ptx.c_str()); r != 0) {
      module_ = nullptr;
      return error(StatusCode::backend_failure, "cuModuleLoadData (PTX JIT) failed: " + std::to_string(r));
    }
    for (int d = 0; d < 3; ++d)
      for (int a = 0; a < 4; ++a) {
        const std::string name = kernel_name(kDtypes[d], kActs[a]);
        if (int r = get_function_(&fn_[d][a], module_, name.c_str()); r != 0) {
          module_ = nullptr;
          return error(StatusCode::backend_failure, "cuModuleGetFunction " + name + ": " + std::to_string(r));
        }
      }
    return {};
  }

  Status activate(const og_memory& d, og_dtype dtype, int64_t elements, og_activation act, float slope) override {
    const int di = dtype == OG_DTYPE_F32 ? 0 : dtype == OG_DTYPE_F16 ? 1 : dtype == OG_DTYPE_BF16 ? 2 : -1;
    const int ai = act == OG_ACT_RELU ? 0 : act == OG_ACT_LEAKY_RELU ? 1 : act == OG_ACT_GELU_TANH ? 2 : act == OG_ACT_SILU ? 3 : -1;
    if (di < 0 || ai < 0 || !module_) return error(StatusCode::unsupported, "activation pass: f32/f16/bf16 and an activation only");
    unsigned long long ptr = reinterpret_cast<unsigned long long>(static_cast<char*>(d.ptr) + d.offset);
    if (ptr % 16) return error(StatusCode::unsupported, "activation pass: D must be 16-byte aligned");
    unsigned long long n = static_cast<unsigned long long>(elements);
    void* params[3] = {&ptr, &n, &slope};
    const unsigned threads = 256;
    const unsigned long long per_thread = dtype == OG_DTYPE_F32 ? 4 : 8;
    const unsigned long long want = (n / per_thread + threads - 1) / threads;
    // At most 16 programs of 256 threads per SM of a 132-SM H100: enough bytes in flight to run
    // at the memory's rate, few enough that the grid-stride loop has work per thread.
    const unsigned blocks = unsigned(std::max<unsigned long long>(1, std::min<unsigned long long>(want, 2112)));
    if (int r = launch_(fn_[di][ai], blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr); r != 0)
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
  void* fn_[3][4] = {};
};

}  // namespace

std::string activation_pass_ptx() {
  std::string ptx = ".version 7.0\n.target sm_80\n.address_size 64\n\n";
  for (og_dtype d : kDtypes)
    for (og_activation a : kActs) ptx += kernel_ptx(d, a);
  return ptx;
}

std::unique_ptr<ActivationPass> load_cuda_activation(std::string& why) { return CudaActivation::load_lib(why); }

}  // namespace omnigemm::bench
