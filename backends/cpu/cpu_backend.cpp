// CPU backend (placeholder: straightforward loops; to be replaced by the blocked, multithreaded one).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "backend.hpp"
#include "omnigemm/numeric.hpp"

namespace omnigemm::detail {

namespace {

float load(og_dtype t, const void* base, int64_t i) {
  using namespace numeric;
  switch (t) {
    case OG_DTYPE_F32: return static_cast<const float*>(base)[i];
    case OG_DTYPE_F16: return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case OG_DTYPE_BF16: return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case OG_DTYPE_FP8_E4M3: return e4m3_to_f32(static_cast<const uint8_t*>(base)[i]);
    case OG_DTYPE_FP8_E5M2: return e5m2_to_f32(static_cast<const uint8_t*>(base)[i]);
    default: return NAN;
  }
}

void store(og_dtype t, void* base, int64_t i, float v) {
  using namespace numeric;
  switch (t) {
    case OG_DTYPE_F32: static_cast<float*>(base)[i] = v; break;
    case OG_DTYPE_F16: static_cast<uint16_t*>(base)[i] = f32_to_f16(v); break;
    case OG_DTYPE_BF16: static_cast<uint16_t*>(base)[i] = f32_to_bf16(v); break;
    default: break;
  }
}

float activate(og_activation a, float x, float slope) {
  switch (a) {
    case OG_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case OG_ACT_LEAKY_RELU: return x >= 0.0f ? x : slope * x;
    case OG_ACT_GELU_TANH: return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case OG_ACT_SILU: return x / (1.0f + std::exp(-x));
    default: return x;
  }
}

const char* host_ptr(const og_memory& m) { return static_cast<const char*>(m.ptr) + m.offset; }

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) {
    unsigned hw = std::thread::hardware_concurrency();
    threads_ = threads > 0 ? threads : int(hw ? hw : 1);
    info_.name = "cpu (" + std::to_string(threads_) + " threads)";
    info_.driver = "omnigemm-cpu";
    info_.limits.compute_units = threads_;
  }
  og_backend kind() const override { return OG_BACKEND_CPU; }
  const DeviceInfo& device() const override { return info_; }
  uint32_t input_dtypes() const override { return 0x1f; }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_HOST; }
  std::vector<Config> candidates(const Problem&) const override {
    auto t = config_table(OG_BACKEND_CPU);
    return {t.begin(), t.end()};
  }

  Status run(const Problem& p, const Config&, void*) override {
    for (int64_t b = 0; b < p.batch; ++b) {
      const char* A = p.a.present ? host_ptr(p.a.mem) + b * p.a.batch_stride * dtype_bytes(p.a.dtype) : nullptr;
      const char* B = p.b.present ? host_ptr(p.b.mem) + b * p.b.batch_stride * dtype_bytes(p.b.dtype) : nullptr;
      const char* C = p.c.present ? host_ptr(p.c.mem) + b * p.c.batch_stride * dtype_bytes(p.c.dtype) : nullptr;
      char* D = const_cast<char*>(host_ptr(p.d.mem)) + b * p.d.batch_stride * dtype_bytes(p.d.dtype);
      const char* bias = p.bias_mode != OG_BIAS_NONE
                             ? host_ptr(p.bias) + b * p.bias_batch_stride * dtype_bytes(p.bias_dtype)
                             : nullptr;
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          float acc = 0.0f;
          for (int64_t k = 0; k < p.k; ++k)
            acc += load(p.a.dtype, A, i * p.a.stride_row + k * p.a.stride_col) *
                   load(p.b.dtype, B, k * p.b.stride_row + j * p.b.stride_col);
          float v = p.alpha * acc;
          if (C) v += p.beta * load(p.c.dtype, C, i * p.c.stride_row + j * p.c.stride_col);
          if (bias) v += load(p.bias_dtype, bias, p.bias_mode == OG_BIAS_PER_N ? j : i);
          store(p.d.dtype, D, i * p.d.stride_row + j * p.d.stride_col, activate(p.activation, v, p.leaky_slope));
        }
    }
    return {};
  }
  Status synchronize(void*) override { return {}; }

  Status allocate(size_t bytes, og_memory& out) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) return error(StatusCode::out_of_memory, "host allocation of " + std::to_string(bytes) + " bytes failed");
    out = og_memory{OG_MEMORY_HOST, p, 0, 0};
    return {};
  }
  void release(const og_memory& m) override { std::free(m.ptr); }
  Status upload(const og_memory& dst, const void* src, size_t bytes) override {
    std::memcpy(static_cast<char*>(dst.ptr) + dst.offset, src, bytes);
    return {};
  }
  Status download(void* dst, const og_memory& src, size_t bytes) override {
    std::memcpy(dst, host_ptr(src), bytes);
    return {};
  }
  Status time_ms(const std::function<Status()>& launch, double& ms) override {
    auto t0 = std::chrono::steady_clock::now();
    Status s = launch();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return s;
  }

 private:
  DeviceInfo info_;
  int threads_ = 1;
};

}  // namespace

Status make_cpu_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  if (opt.cpu_threads < 0) return error(StatusCode::invalid_argument, "cpu_threads is negative");
  out = std::make_unique<CpuBackend>(opt.cpu_threads);
  return {};
}

}  // namespace omnigemm::detail
