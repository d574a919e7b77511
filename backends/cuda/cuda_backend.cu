// CUDA backend, first step: a generic SIMT kernel (shared-memory tiles, FMA on CUDA cores) that
// runs every dtype, layout, batch and epilogue correctly on sm_80 and newer. It is the correctness
// baseline and the fallback; the Hopper wgmma/TMA and Ampere mma.sync kernels of the CUDA issue
// are still to come (see README). Tiles are visited in the grouped order of the shared scheduler.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "backend.hpp"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail {

namespace {

// ---- device-side element access (same semantics as omnigemm/numeric.hpp) --------------------
__device__ __forceinline__ float decode_e4m3(unsigned b) {
  const unsigned e = (b >> 3) & 15u, m = b & 7u;
  const float s = (b & 0x80u) ? -1.0f : 1.0f;
  if (e == 15u && m == 7u) return __int_as_float(0x7fc00000);
  if (e == 0u) return s * float(m) * 0x1p-9f;
  return s * (1.0f + float(m) * 0.125f) * exp2f(float(int(e) - 7));
}

__device__ __forceinline__ float load(og_dtype t, const void* base, long long i) {
  switch (t) {
    case OG_DTYPE_F32: return static_cast<const float*>(base)[i];
    case OG_DTYPE_F16: return __half2float(static_cast<const __half*>(base)[i]);
    case OG_DTYPE_BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case OG_DTYPE_FP8_E4M3: return decode_e4m3(static_cast<const unsigned char*>(base)[i]);
    default: {  // e5m2 is the top byte of an f16
      const unsigned short h = static_cast<unsigned short>(static_cast<const unsigned char*>(base)[i]) << 8;
      return __half2float(__ushort_as_half(h));
    }
  }
}

__device__ __forceinline__ void store(og_dtype t, void* base, long long i, float v) {
  if (t == OG_DTYPE_F32) static_cast<float*>(base)[i] = v;
  else if (t == OG_DTYPE_F16) static_cast<__half*>(base)[i] = __float2half_rn(v);
  else static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
}

__device__ __forceinline__ float activate(og_activation a, float x, float slope) {
  switch (a) {
    case OG_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case OG_ACT_LEAKY_RELU: return x >= 0.0f ? x : slope * x;
    case OG_ACT_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
    case OG_ACT_SILU: return x / (1.0f + expf(-x));
    default: return x;
  }
}

struct OperandArgs {
  const void* ptr;
  og_dtype dtype;
  long long sr, sc, bs;
};

struct KernelArgs {
  int m, n, k, num_pid_m, num_pid_n, group_m, block_m, block_n, block_k, batch_base;
  OperandArgs a, b, c, d;
  bool has_c;
  float alpha, beta, slope;
  og_activation act;
  og_bias_mode bias_mode;
  og_dtype bias_dtype;
  const void* bias;
  long long bias_bs;
};

// One block computes one BLOCK_M x BLOCK_N tile; thread layout as the portable Vulkan shader:
// COLS = BLOCK_N / 4 thread columns, ROWS = threads / COLS, each thread a THREAD_M x 4 sub-tile.
template <int THREAD_M>
__global__ void gemm_generic(KernelArgs p) {
  extern __shared__ float smem[];
  const int bm = p.block_m, bn = p.block_n, bk = p.block_k;
  float* a_tile = smem;            // [bk][bm]
  float* b_tile = smem + bk * bm;  // [bk][bn]
  const OgTile tile = og_grouped_tile(int(blockIdx.x), p.num_pid_m, p.num_pid_n, p.group_m);
  const long long batch = blockIdx.z + p.batch_base;
  const int m0 = tile.pid_m * bm, n0 = tile.pid_n * bn;
  const int cols = bn / 4, tid = int(threadIdx.x), threads = int(blockDim.x);
  const int tx = tid % cols, ty = tid / cols;
  const char* a_base = static_cast<const char*>(p.a.ptr);
  const char* b_base = static_cast<const char*>(p.b.ptr);

  float acc[THREAD_M][4];
#pragma unroll
  for (int i = 0; i < THREAD_M; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < p.k; k0 += bk) {
    for (int e = tid; e < bm * bk; e += threads) {
      const int m = e % bm, k = e / bm, gm = m0 + m, gk = k0 + k;
      a_tile[k * bm + m] =
          (gm < p.m && gk < p.k) ? load(p.a.dtype, a_base, batch * p.a.bs + gm * p.a.sr + gk * p.a.sc) : 0.0f;
    }
    for (int e = tid; e < bn * bk; e += threads) {
      const int n = e % bn, k = e / bn, gn = n0 + n, gk = k0 + k;
      b_tile[k * bn + n] =
          (gn < p.n && gk < p.k) ? load(p.b.dtype, b_base, batch * p.b.bs + gk * p.b.sr + gn * p.b.sc) : 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < bk; ++k) {
      float b_frag[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) b_frag[j] = b_tile[k * bn + tx * 4 + j];
#pragma unroll
      for (int i = 0; i < THREAD_M; ++i) {
        const float a = a_tile[k * bm + ty * THREAD_M + i];
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a, b_frag[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < THREAD_M; ++i) {
    const int gm = m0 + ty * THREAD_M + i;
    if (gm >= p.m) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int gn = n0 + tx * 4 + j;
      if (gn >= p.n) continue;
      float v = p.alpha * acc[i][j];
      if (p.has_c) v += p.beta * load(p.c.dtype, p.c.ptr, batch * p.c.bs + gm * p.c.sr + gn * p.c.sc);
      if (p.bias_mode == OG_BIAS_PER_N) v += load(p.bias_dtype, p.bias, batch * p.bias_bs + gn);
      if (p.bias_mode == OG_BIAS_PER_M) v += load(p.bias_dtype, p.bias, batch * p.bias_bs + gm);
      store(p.d.dtype, const_cast<void*>(p.d.ptr), batch * p.d.bs + gm * p.d.sr + gn * p.d.sc,
            activate(p.act, v, p.slope));
    }
  }
}

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  const std::string msg = std::string("cuda: ") + what + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) return error(StatusCode::out_of_memory, msg);
  if (e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorDevicesUnavailable ||
      e == cudaErrorHardwareStackError || e == cudaErrorIllegalInstruction || e == cudaErrorECCUncorrectable)
    return error(StatusCode::device_lost, msg + " (the CUDA context is no longer usable)");
  return error(StatusCode::backend_failure, msg);
}
#define OG_CUDA_TRY(call, what)                                    \
  do {                                                             \
    if (Status s_ = cuda_status((call), what); !s_) return s_;     \
  } while (0)

class CudaBackend final : public Backend {
 public:
  Status init(int device_index) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      return error(StatusCode::backend_unavailable,
                   std::string("cuda: no CUDA device (") + (e == cudaSuccess ? "none found" : cudaGetErrorString(e)) + ")");
    if (device_index >= count)
      return error(StatusCode::backend_unavailable, "cuda: device index " + std::to_string(device_index) + " requested but only " +
                                                        std::to_string(count) + " device(s) exist");
    device_ = device_index;
    OG_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    cudaDeviceProp prop;
    OG_CUDA_TRY(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    if (prop.major < 8)
      return error(StatusCode::backend_unavailable, std::string("cuda: ") + prop.name + " is sm_" + std::to_string(prop.major) +
                                                        std::to_string(prop.minor) + "; OmniGEMM's CUDA backend needs sm_80 or newer");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    info_.name = prop.name;
    info_.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
                   ", runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
                   ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    info_.limits.max_shared_bytes = (long long)prop.sharedMemPerBlockOptin;
    info_.limits.max_threads_per_group = prop.maxThreadsPerBlock;
    info_.limits.warp_size = prop.warpSize;
    info_.limits.max_registers_per_thread = 255;
    info_.limits.compute_units = prop.multiProcessorCount;
    info_.limits.l2_bytes = prop.l2CacheSize;
    max_grid_z_ = prop.maxGridSize[2];
    OG_CUDA_TRY(cudaEventCreate(&start_), "cudaEventCreate");
    OG_CUDA_TRY(cudaEventCreate(&stop_), "cudaEventCreate");
    return {};
  }
  ~CudaBackend() override {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }

  og_backend kind() const override { return OG_BACKEND_CUDA; }
  const DeviceInfo& device() const override { return info_; }
  uint32_t input_dtypes() const override { return 0x1f; }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_CUDA; }
  bool supports_async() const override { return true; }

  std::vector<Config> candidates(const Problem&) const override {
    std::vector<Config> out;
    for (const Config& c : config_table(OG_BACKEND_CUDA))
      if (runnable(c, nullptr)) out.push_back(c);
    return out;
  }

  Status run(const Problem& p, const Config& cfg, void* stream) override {
    std::string why;
    if (!runnable(cfg, &why))
      return error(StatusCode::unsupported, "cuda: config " + cfg.to_string() + " cannot run on the generic kernel: " + why);
    OG_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    KernelArgs k{};
    k.m = int(p.m); k.n = int(p.n); k.k = int(p.k);
    k.block_m = cfg.block_m; k.block_n = cfg.block_n; k.block_k = cfg.block_k; k.group_m = cfg.group_m;
    k.num_pid_m = int((p.m + cfg.block_m - 1) / cfg.block_m);
    k.num_pid_n = int((p.n + cfg.block_n - 1) / cfg.block_n);
    auto args = [](const Operand& o) {
      const char* base = o.present ? static_cast<const char*>(o.mem.ptr) + o.mem.offset : nullptr;
      return OperandArgs{base, o.dtype, o.stride_row, o.stride_col, o.batch_stride};
    };
    k.a = args(p.a); k.b = args(p.b); k.c = args(p.c); k.d = args(p.d);
    k.has_c = p.c.present;
    k.alpha = p.alpha; k.beta = p.beta; k.slope = p.leaky_slope; k.act = p.activation;
    k.bias_mode = p.bias_mode; k.bias_dtype = p.bias_dtype; k.bias_bs = p.bias_batch_stride;
    k.bias = p.bias_mode != OG_BIAS_NONE ? static_cast<const char*>(p.bias.ptr) + p.bias.offset : nullptr;
    const long long tiles = (long long)k.num_pid_m * k.num_pid_n;
    if (tiles > 0x7fffffffLL) return error(StatusCode::unsupported, "cuda: more than 2^31 - 1 output tiles");
    const int threads = cfg.warps * 32;
    const size_t smem = size_t(cfg.block_k) * (cfg.block_m + cfg.block_n) * sizeof(float);
    const int thread_m = cfg.block_m / (threads / (cfg.block_n / 4));
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    for (long long b0 = 0; b0 < p.batch; b0 += max_grid_z_) {
      k.batch_base = int(b0);
      const dim3 grid(unsigned(tiles), 1, unsigned(std::min<long long>(max_grid_z_, p.batch - b0)));
      switch (thread_m) {
        case 8: OG_CUDA_TRY(launch<8>(grid, threads, smem, s, k), "gemm_generic launch"); break;
        case 16: OG_CUDA_TRY(launch<16>(grid, threads, smem, s, k), "gemm_generic launch"); break;
        default: OG_CUDA_TRY(launch<32>(grid, threads, smem, s, k), "gemm_generic launch"); break;
      }
    }
    return {};
  }

  Status synchronize(void* stream) override {
    OG_CUDA_TRY(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
    return {};
  }

  Status allocate(size_t bytes, og_memory& out) override {
    OG_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    void* p = nullptr;
    OG_CUDA_TRY(cudaMalloc(&p, std::max<size_t>(bytes, 16)), ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
    out = og_memory{OG_MEMORY_CUDA, p, 0, 0};
    return {};
  }
  void release(const og_memory& m) override { cudaFree(m.ptr); }
  Status upload(const og_memory& dst, const void* src, size_t bytes) override {
    OG_CUDA_TRY(cudaMemcpy(static_cast<char*>(dst.ptr) + dst.offset, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return {};
  }
  Status download(void* dst, const og_memory& src, size_t bytes) override {
    OG_CUDA_TRY(cudaMemcpy(dst, static_cast<const char*>(src.ptr) + src.offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return {};
  }

  // Events on the legacy default stream 0, which the benchmark's cuBLAS calls use too.
  Status time_ms(const std::function<Status()>& launch_fn, double& ms) override {
    std::lock_guard<std::mutex> lock(timer_mutex_);
    OG_CUDA_TRY(cudaEventRecord(start_, 0), "cudaEventRecord");
    Status s = launch_fn();
    OG_CUDA_TRY(cudaEventRecord(stop_, 0), "cudaEventRecord");
    OG_CUDA_TRY(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    if (!s) return s;
    float f = 0;
    OG_CUDA_TRY(cudaEventElapsedTime(&f, start_, stop_), "cudaEventElapsedTime");
    ms = f;
    return {};
  }

 private:
  template <int TM>
  cudaError_t launch(dim3 grid, int threads, size_t smem, cudaStream_t s, const KernelArgs& k) {
    if (smem > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(gemm_generic<TM>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    gemm_generic<TM><<<grid, threads, smem, s>>>(k);
    return cudaGetLastError();
  }

  // The generic kernel's thread layout and its THREAD_M instantiations (8, 16, 32).
  bool runnable(const Config& c, std::string* why) const {
    Config single_stage = c;  // the generic kernel keeps one f32 stage in shared memory
    single_stage.stages = 1;
    if (!config_fits(single_stage, info_.limits, 4, why)) return false;
    const int threads = c.warps * 32, cols = c.block_n / 4;
    const char* bad = nullptr;
    if (c.block_n % 4 || cols == 0 || threads % cols) bad = "threads must be a multiple of BLOCK_N / 4";
    else if (c.block_m % (threads / cols)) bad = "BLOCK_M must be a multiple of the thread rows";
    else if (int tm = c.block_m / (threads / cols); tm != 8 && tm != 16 && tm != 32) bad = "each thread must own 8, 16 or 32 rows";
    else if (c.split_k != 1 || c.extra != 0) bad = "split-K and kernel variants are not implemented yet";
    if (bad && why) *why = bad;
    return bad == nullptr;
  }

  DeviceInfo info_;
  int device_ = 0;
  long long max_grid_z_ = 65535;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::mutex timer_mutex_;
};

}  // namespace

Status make_cuda_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  auto be = std::make_unique<CudaBackend>();
  Status s = be->init(opt.device_index);
  if (!s) return s;
  out = std::move(be);
  return {};
}

}  // namespace omnigemm::detail
