// CUDA backend: kernel families behind one Backend, chosen by the config's variant (-x):
//   -x0  generic SIMT kernel (generic_kernel.cuh): every dtype, layout and alignment, sm_80+;
//   -x1  Hopper TMA + wgmma warp-specialised persistent kernel (sm90/), sm_90 devices, both
//        consumer warpgroups on each tile ("cooperative");
//   -x2  the same kernel with each consumer warpgroup on its own tiles ("ping-pong");
//   -x3  cooperative, in clusters of two programs that multicast the shared B tile;
//   -x4  the cooperative kernel on D^T = B^T A^T (skinny M);
//   -x5  mma.sync + ldmatrix + cp.async multistage kernel (sm80/), sm_80 and newer: the
//        tensor-core path of Ampere/Ada and the fallback where TMA cannot take the operands.
// Tiles are visited in the grouped order of the shared scheduler (omnigemm/tile_schedule.h).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "backend.hpp"
#include "generic_kernel.cuh"
#include "omnigemm/tile_schedule.h"
#include "sm80/launch.hpp"
#include "sm90/launch.hpp"

namespace omnigemm::detail {

namespace {

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
    if (prop.major == 9) {  // the sm_90a kernels; later architectures get their own families
      cudaDriverEntryPointQueryResult found{};
      void* fn = nullptr;
      if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
          found == cudaDriverEntryPointSuccess)
        encode_tiled_ = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }
    OG_CUDA_TRY(cudaEventCreate(&start_), "cudaEventCreate");
    OG_CUDA_TRY(cudaEventCreate(&stop_), "cudaEventCreate");
    return {};
  }
  ~CudaBackend() override {
    for (auto& [stream, w] : workspaces_) {
      if (w.partials) cudaFree(w.partials);
      if (w.counters) cudaFree(w.counters);
    }
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }

  og_backend kind() const override { return OG_BACKEND_CUDA; }
  const DeviceInfo& device() const override { return info_; }
  uint32_t input_dtypes() const override { return 0x1f; }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_CUDA; }
  bool supports_async() const override { return true; }

  // Only the fastest family that can take the problem is offered: the tuner and the heuristic
  // then choose among its tile shapes (Hopper's wgmma kernel is about twice as fast as mma.sync
  // on an H100; the generic kernel is tens of times slower than either).
  std::vector<Config> candidates(const Problem& p) const override {
    std::vector<Config> sm90, mma, generic;
    for (const Config& c : config_table(OG_BACKEND_CUDA)) {
      if (is_sm90(c) && offers_narrow(p, c) && offers_column_split(p, c) && plan_sm90(p, c, nullptr, nullptr))
        sm90.push_back(c);
      if (c.extra == kFamilyMma && plan_mma(p, c, nullptr, nullptr)) mma.push_back(c);
      if (c.extra == kFamilyGeneric && runnable_generic(c, nullptr)) generic.push_back(c);
    }
    drop_tall_tiles(p, sm90);
    return !sm90.empty() ? sm90 : !mma.empty() ? mma : generic;
  }

  Status run(const Problem& p, const Config& cfg, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    std::string why;
    if (cfg.extra == kFamilySm90SwapAB) {
      if (!plan_sm90(p, cfg, nullptr, &why))
        return error(StatusCode::unsupported, "cuda: config " + cfg.to_string() + " (Hopper TMA/wgmma kernel on D^T = B^T A^T) cannot run this problem: " + why);
      return run(transposed(p), swapped(cfg), stream);
    }
    if (is_sm90(cfg)) {
      sm90::Launch l{};
      if (!plan_sm90(p, cfg, &l, &why))
        return error(StatusCode::unsupported, "cuda: config " + cfg.to_string() + " (Hopper TMA/wgmma kernel) cannot run this problem: " + why);
      l.stream = s;
      if (l.split_k > 1 && !l.split_pairs) {
        Status ws = split_workspace(p, cfg, s, l);
        if (!ws) return ws;
      }
      cudaError_t e = cudaErrorInvalidValue;
      if (p.a.dtype == OG_DTYPE_F16) e = sm90::launch_f16(l);
      else if (p.a.dtype == OG_DTYPE_BF16) e = sm90::launch_bf16(l);
      else e = sm90::launch_fp8(l, p.a.dtype == OG_DTYPE_FP8_E5M2, p.b.dtype == OG_DTYPE_FP8_E5M2);
      OG_CUDA_TRY(e, "gemm_tma_wgmma launch");
      return {};
    }
    if (cfg.extra == kFamilyMma) {
      sm80::Launch l{};
      if (!plan_mma(p, cfg, &l, &why))
        return error(StatusCode::unsupported, "cuda: config " + cfg.to_string() + " (mma.sync kernel) cannot run this problem: " + why);
      l.stream = s;
      OG_CUDA_TRY(mma_multiplicand(p.a.dtype, p.b.dtype) == 1 ? sm80::launch_bf16(l) : sm80::launch_f16(l), "gemm_mma_sync launch");
      return {};
    }
    if (cfg.extra != kFamilyGeneric || !runnable_generic(cfg, &why))
      return error(StatusCode::unsupported, "cuda: config " + cfg.to_string() + " cannot run on the generic kernel: " +
                                                (cfg.extra != kFamilyGeneric ? "unknown kernel variant -x" + std::to_string(cfg.extra) +
                                                                                   " (0: generic, 1: Hopper TMA/wgmma, 2: Hopper ping-pong, 3: Hopper with B multicast, 4: Hopper on D^T = B^T A^T, 5: mma.sync)"
                                                                             : why));
    cuda::GenericArgs k{};
    k.m = int(p.m); k.n = int(p.n); k.k = int(p.k);
    k.block_m = cfg.block_m; k.block_n = cfg.block_n; k.block_k = cfg.block_k; k.group_m = cfg.group_m;
    k.num_pid_m = int((p.m + cfg.block_m - 1) / cfg.block_m);
    k.num_pid_n = int((p.n + cfg.block_n - 1) / cfg.block_n);
    k.a = operand_args(p.a); k.b = operand_args(p.b);
    k.ep = epilogue_args(p);
    const long long tiles = (long long)k.num_pid_m * k.num_pid_n;
    if (tiles > 0x7fffffffLL) return error(StatusCode::unsupported, "cuda: more than 2^31 - 1 output tiles");
    const int threads = cfg.warps * 32;
    const size_t smem = size_t(cfg.block_k) * (cfg.block_m + cfg.block_n) * sizeof(float);
    const int thread_m = cfg.block_m / (threads / (cfg.block_n / 4));
    for (long long b0 = 0; b0 < p.batch; b0 += max_grid_z_) {
      k.batch_base = int(b0);
      const dim3 grid(unsigned(tiles), 1, unsigned(std::min<long long>(max_grid_z_, p.batch - b0)));
      switch (thread_m) {
        case 8: OG_CUDA_TRY(launch_generic<8>(grid, threads, smem, s, k), "gemm_generic launch"); break;
        case 16: OG_CUDA_TRY(launch_generic<16>(grid, threads, smem, s, k), "gemm_generic launch"); break;
        default: OG_CUDA_TRY(launch_generic<32>(grid, threads, smem, s, k), "gemm_generic launch"); break;
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

  // Sampled on an H100 (driver 580.159.04): the SM clock idles at 345 MHz and is back at
  // 1800-1980 MHz within about 0.25 s of CUDA work, with dips to about 1400 MHz in the first
  // samples of each busy period.
  double clock_ramp_ms() const override { return 200; }

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
  // -x4 runs the cooperative Hopper kernel on the transposed problem D^T = B^T A^T, its tile
  // written in D's orientation (64x128: 64 rows of D, 128 columns). For skinny M (decode
  // shapes, M = 16) the wide N then fills wgmma's M side and TMA boxes carry mostly real data:
  // a 128x64 tile over M = 16 stages 16 KB of A per K step of which 2 KB are rows of A.
  static constexpr int kFamilyGeneric = 0, kFamilySm90 = 1, kFamilySm90PingPong = 2, kFamilySm90Multicast = 3,
                       kFamilySm90SwapAB = 4, kFamilyMma = 5;
  // Narrow Hopper tiles (16 or 32 columns of the kernel's problem: -x4 16x128 and 32x128) exist
  // for skinny problems and are offered only where one of them spans the skinny dimension.
  // Elsewhere they load the other operand once per tile row: at 128x4096x4096 a 32-row tile
  // read the weights four times and ran at 0.76x the 128x64 tile (H100, 2026-11-23).
  static bool offers_narrow(const Problem& p, const Config& c) {
    const bool swapped = c.extra == kFamilySm90SwapAB;
    const int narrow = swapped ? c.block_m : c.block_n;
    return narrow >= 64 || (swapped ? p.m : p.n) <= narrow;
  }
  // The column-split 192x192 tile (-x1 or -x4) runs at 128x256's rate per SM (H100, 6144^3: 8
  // waves of 192x192 in 723 us, 9 of 128x256 in 716 us), so it pays only where its waves cover
  // less tile area than 128x256's (3072^2: 2 waves of 192x192, 3 of 128x256); elsewhere the
  // heuristic's larger-tile preference would pick it for nothing.
  bool offers_column_split(const Problem& p, const Config& c) const {
    if (c.block_m != 192 || c.block_n != 192) return true;
    auto wave_area = [&](long long bm, long long bn) {
      const long long tiles = (p.m + bm - 1) / bm * ((p.n + bn - 1) / bn) * p.batch;
      return (tiles + programs() - 1) / programs() * bm * bn;
    };
    return wave_area(192, 192) < wave_area(128, 256);
  }
  // Tall tiles for short problems: for M <= 64 a tile of 128 or more rows of D is at least half
  // padding, where the -x4 tiles of 64 (or 32, 16) rows stage only real rows of A. The
  // heuristic scores 128x64 -k2 -x1 (half its rows padding, 128 work items) as high as
  // 64x128 -k2 -x4 (64 items), but on the H100 it ran 21.6 against 17.1 us at 64x4096x4096
  // and 55.1 against 44.6 us at 64x4096x14336. Dropped only where a shorter tile remains.
  static void drop_tall_tiles(const Problem& p, std::vector<Config>& sm90) {
    if (p.m > 64) return;
    std::vector<Config> short_tiles;
    for (const Config& c : sm90)
      if (c.block_m < 128) short_tiles.push_back(c);
    if (!short_tiles.empty()) sm90 = std::move(short_tiles);
  }
  // Persistent programs of a Hopper launch: one per SM.
  int programs() const { return std::max(1, info_.limits.compute_units); }
  // Programmatic dependent launch of the Hopper kernel, on unless OMNIGEMM_CUDA_PDL=0 (for
  // measuring what it buys, or to rule it out when debugging a stream).
  static bool dependent_launch_enabled() {
    static const bool enabled = env_switch_on("OMNIGEMM_CUDA_PDL");
    return enabled;
  }
  // The deferred epilogue of the cooperative Hopper tiles (sm90/tile_epilogue.cuh), on unless
  // OMNIGEMM_CUDA_DEFER_EPILOGUE=0 (for measuring what it buys).
  static bool deferred_epilogue_enabled() {
    static const bool enabled = env_switch_on("OMNIGEMM_CUDA_DEFER_EPILOGUE");
    return enabled;
  }
  // Split-K in two slices as pairs of programs in clusters that add their partials through
  // distributed shared memory (gemm_tma_wgmma.cuh, PairExchange), on unless
  // OMNIGEMM_CUDA_SPLIT_PAIRS=0 (then the slices meet through global memory, as split_k > 2).
  static bool split_pairs_enabled() {
    static const bool enabled = env_switch_on("OMNIGEMM_CUDA_SPLIT_PAIRS");
    return enabled;
  }
  // A switch that is on unless the variable is "0".
  static bool env_switch_on(const char* variable) {
    const char* v = std::getenv(variable);
    return !(v && std::string_view(v) == "0");
  }
  static bool is_sm90(const Config& c) {
    return c.extra == kFamilySm90 || c.extra == kFamilySm90PingPong || c.extra == kFamilySm90Multicast ||
           c.extra == kFamilySm90SwapAB;
  }
  static Operand transposed(Operand o) {
    std::swap(o.rows, o.cols);
    std::swap(o.stride_row, o.stride_col);
    return o;
  }
  static Problem transposed(const Problem& p) {
    Problem t = p;
    t.m = p.n;
    t.n = p.m;
    t.a = transposed(p.b);
    t.b = transposed(p.a);
    t.c = transposed(p.c);
    t.d = transposed(p.d);
    t.bias_mode = p.bias_mode == OG_BIAS_PER_N ? OG_BIAS_PER_M : p.bias_mode == OG_BIAS_PER_M ? OG_BIAS_PER_N : p.bias_mode;
    t.forced_config.reset();
    return t;
  }
  static Config swapped(Config c) {
    std::swap(c.block_m, c.block_n);
    c.extra = kFamilySm90;
    return c;
  }

  static cuda::OperandArgs operand_args(const Operand& o) {
    const char* base = o.present ? static_cast<const char*>(o.mem.ptr) + o.mem.offset : nullptr;
    return cuda::OperandArgs{base, o.dtype, o.stride_row, o.stride_col, o.batch_stride};
  }
  static cuda::EpilogueArgs epilogue_args(const Problem& p) {
    cuda::EpilogueArgs e{};
    e.c = operand_args(p.c); e.d = operand_args(p.d);
    e.has_c = p.c.present;
    e.alpha = p.alpha; e.beta = p.beta; e.slope = p.leaky_slope; e.act = p.activation;
    e.bias_mode = p.bias_mode; e.bias_dtype = p.bias_dtype; e.bias_bs = p.bias_batch_stride;
    e.bias = p.bias_mode != OG_BIAS_NONE ? static_cast<const char*>(p.bias.ptr) + p.bias.offset : nullptr;
    const long long bytes = dtype_bytes(p.d.dtype);
    // No C, a unit stride along one dimension, 16-byte aligned base, other stride and batch stride.
    auto vector_aligned = [&](int64_t unit_stride, int64_t other_stride) {
      return !e.has_c && unit_stride == 1 && reinterpret_cast<uintptr_t>(e.d.ptr) % 16 == 0 &&
             (other_stride * bytes) % 16 == 0 && (p.batch == 1 || (p.d.batch_stride * bytes) % 16 == 0);
    };
    e.d_vector_rows = vector_aligned(p.d.stride_col, p.d.stride_row);
    e.d_vector_cols = vector_aligned(p.d.stride_row, p.d.stride_col);
    return e;
  }

  template <int TM>
  cudaError_t launch_generic(dim3 grid, int threads, size_t smem, cudaStream_t s, const cuda::GenericArgs& k) {
    if (smem > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(cuda::gemm_generic<TM>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
      if (e != cudaSuccess) return e;
    }
    cuda::gemm_generic<TM><<<grid, threads, smem, s>>>(k);
    return cudaGetLastError();
  }

  // The generic kernel's thread layout and its THREAD_M instantiations (8, 16, 32).
  bool runnable_generic(const Config& c, std::string* why) const {
    Config single_stage = c;  // the generic kernel keeps one f32 stage in shared memory
    single_stage.stages = 1;
    if (!config_fits(single_stage, info_.limits, 4, why)) return false;
    const int threads = c.warps * 32, cols = c.block_n / 4;
    const char* bad = nullptr;
    if (c.block_n % 4 || cols == 0 || threads % cols) bad = "threads must be a multiple of BLOCK_N / 4";
    else if (c.block_m % (threads / cols)) bad = "BLOCK_M must be a multiple of the thread rows";
    else if (int tm = c.block_m / (threads / cols); tm != 8 && tm != 16 && tm != 32) bad = "each thread must own 8, 16 or 32 rows";
    else if (c.split_k != 1) bad = "split-K is not implemented yet";
    if (bad && why) *why = bad;
    return bad == nullptr;
  }

  // Can the Hopper kernel run `p` with config `c`? When `l` is given, also builds the launch
  // (tensor maps included). TMA needs 16-byte aligned bases and strides and one unit stride
  // per operand; wgmma needs equal 16-bit input types or fp8 inputs, fp8 operands K-major.
  bool plan_sm90(const Problem& p, const Config& c, sm90::Launch* l, std::string* why) const {
    auto fail = [&](std::string msg) {
      if (why) *why = std::move(msg);
      return false;
    };
    if (c.extra == kFamilySm90SwapAB) {
      std::string w;
      if (plan_sm90(transposed(p), swapped(c), l, &w)) return true;
      return fail("on D^T = B^T A^T, as tile " + std::to_string(c.block_n) + "x" + std::to_string(c.block_m) + ": " + w);
    }
    if (!encode_tiled_) return fail("needs an sm_90 device and a driver with cuTensorMapEncodeTiled (this is " + info_.name + ")");
    const og_dtype ta = p.a.dtype, tb = p.b.dtype;
    const bool fp8 = (ta == OG_DTYPE_FP8_E4M3 || ta == OG_DTYPE_FP8_E5M2) && (tb == OG_DTYPE_FP8_E4M3 || tb == OG_DTYPE_FP8_E5M2);
    const bool sixteen = (ta == OG_DTYPE_F16 || ta == OG_DTYPE_BF16) && ta == tb;
    if (!fp8 && !sixteen) return fail("inputs must be f16 x f16, bf16 x bf16 or fp8 (e4m3/e5m2) x fp8");
    const int eb = sixteen ? 2 : 1;
    const bool pingpong = c.extra == kFamilySm90PingPong;
    const int cluster_m = c.extra == kFamilySm90Multicast ? 2 : 1;
    int wg_m = 0;
    bool split_n = false;  // the consumers split the columns: block_m = 64 * wg_m
    bool pairs_shape = false;  // an instantiation for split_k = 2 in pairs (kShapes' split_pairs)
    for (const auto& shape : sm90::kShapes)
      if (c.block_n == shape[0] && bool(shape[2]) == pingpong && shape[3] == cluster_m &&
          c.block_m == (pingpong || shape[4] ? 64 : 128) * shape[1]) {
        if (shape[5]) pairs_shape = true;
        else wg_m = shape[1], split_n = shape[4] != 0;
      }
    if (!wg_m)
      return fail(pingpong         ? "ping-pong tiles must be 64x256 or 128x128"
                  : cluster_m > 1 ? "multicast tiles must be 128x256"
                                  : "tiles must be 128x256, 256x128, 192x192, 128x192, 128x128, 128x64, 128x32 or 128x16");
    if (c.block_k * eb != 128) return fail("BLOCK_K must be 128 bytes of K (" + std::to_string(128 / eb) + " elements)");
    if (c.warps != 12) return fail("the kernel runs 12 warps (a producer and two consumer warpgroups)");
    if (c.split_k > kMaxSplitK) return fail("split_k above " + std::to_string(kMaxSplitK));
    if (c.stages < 2) return fail("needs at least 2 pipeline stages");
    const size_t smem = sm90::shared_bytes(c.block_m, c.block_n, c.stages);
    if (smem > size_t(info_.limits.max_shared_bytes))
      return fail(std::to_string(c.stages) + " stages need " + std::to_string(smem) + " bytes of shared memory");
    if (p.k < 1) return fail("K must be at least 1 (a TMA box needs a non-empty K extent)");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff) return fail("dimensions must be below 2^31");
    const bool split_pairs = c.split_k == 2 && pairs_shape && split_pairs_enabled();
    if (c.split_k > 1 && !split_pairs) {  // the workspace of slices that meet through global memory
      const SplitSizes sizes = split_sizes(p, c);
      if (sizes.floats > kMaxPartialFloats)
        return fail("the split-K workspace would exceed " + std::to_string(kMaxPartialFloats * 4 >> 20) +
                    " MiB: split_k 1 for a problem this large");
      if (sizes.tiles * c.split_k > 0x7fffffffLL) return fail("more than 2^31 - 1 work items");
    }

    // Operand layouts. A (M x K): K-major when stride_col == 1, M-major when stride_row == 1.
    // B (K x N): K-major when stride_row == 1, N-major when stride_col == 1.
    const bool a_k_major = p.a.stride_col == 1, b_k_major = p.b.stride_row == 1;
    const bool a_mn = !a_k_major && p.a.stride_row == 1, b_mn = !b_k_major && p.b.stride_col == 1;
    if (!a_k_major && !a_mn) return fail("A needs a unit stride along M or K");
    if (!b_k_major && !b_mn) return fail("B needs a unit stride along K or N");
    if (fp8 && (a_mn || b_mn)) return fail("fp8 wgmma needs K-major operands (A row-major, B column-major)");
    if (c.block_n < 64 && !b_k_major)
      return fail("a tile " + std::to_string(c.block_n) + " columns wide needs a K-major B (unit stride along K)");
    if (split_n && (c.block_n / 2) % 64 != 0 && !b_k_major)
      return fail("a " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + " tile (" + std::to_string(c.block_n / 2) +
                  " columns per consumer) needs a K-major B (unit stride along K)");
    if (!l) return check_16_byte_operand(p.a, eb, a_k_major ? p.a.stride_row : p.a.stride_col, p.batch, why) &&
                   check_16_byte_operand(p.b, eb, b_k_major ? p.b.stride_col : p.b.stride_row, p.batch, why);

    l->m = int(p.m); l->n = int(p.n); l->k = int(p.k); l->batch = int(p.batch);
    l->group_m = c.group_m; l->stages = c.stages; l->block_n = c.block_n; l->wg_m = wg_m;
    l->pingpong = pingpong;
    l->split_n = split_n;
    l->cluster_m = cluster_m;
    l->a_mn_major = a_mn; l->b_mn_major = b_mn;
    l->max_shared = size_t(info_.limits.max_shared_bytes);
    l->ep = epilogue_args(p);
    const long long tiles = ((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) * p.batch;
    if (tiles > 0x7fffffffLL) return fail("more than 2^31 - 1 output tiles");
    l->split_k = c.split_k;
    l->split_pairs = split_pairs;
    l->grid = int(std::min<long long>(tiles * c.split_k, programs()));
    l->dependent_launch = dependent_launch_enabled();
    // The deferred epilogue stores through map_d; where D cannot have one, tiles store at once.
    l->defer_epilogue = deferred_epilogue_enabled() && encode_output(l->map_d, p, l->ep);
    const int block_k = 128 / eb;
    // K-major: rows of K (box: BLOCK_K x tile rows); MN-major: rows of M or N (box: 64 x BLOCK_K).
    if (!encode_operand(l->map_a, p.a, eb, a_k_major ? p.k : p.m, a_k_major ? p.m : p.k,
                        a_k_major ? p.a.stride_row : p.a.stride_col, p.batch, a_k_major ? block_k : 64,
                        a_k_major ? c.block_m : block_k, why))
      return false;
    if (!encode_operand(l->map_b, p.b, eb, b_k_major ? p.k : p.n, b_k_major ? p.n : p.k,
                        b_k_major ? p.b.stride_col : p.b.stride_row, p.batch, b_k_major ? block_k : 64,
                        b_k_major ? c.block_n / cluster_m : block_k, why))
      return false;
    return true;
  }

  // The mma.sync kernel's multiplicand type for an input pair: 0 f16, 1 bf16, -1 none. fp8
  // values are exact in either; f32 and mixed f16 x bf16 have no exact 16-bit type.
  static int mma_multiplicand(og_dtype a, og_dtype b) {
    auto fp8 = [](og_dtype t) { return t == OG_DTYPE_FP8_E4M3 || t == OG_DTYPE_FP8_E5M2; };
    if ((a == OG_DTYPE_F16 || fp8(a)) && (b == OG_DTYPE_F16 || fp8(b))) return 0;
    if ((a == OG_DTYPE_BF16 || fp8(a)) && (b == OG_DTYPE_BF16 || fp8(b))) return 1;
    return -1;
  }

  // Can the mma.sync kernel run `p` with config `c`? When `l` is given, also fills the launch.
  // The cp.async loader needs both operands stored as the multiplicand type, one unit stride
  // each and 16-byte aligned bases, leading dimensions and batch strides; the gathering loader
  // (128x128 and 64x64 tiles) takes everything else.
  bool plan_mma(const Problem& p, const Config& c, sm80::Launch* l, std::string* why) const {
    auto fail = [&](std::string msg) {
      if (why) *why = std::move(msg);
      return false;
    };
    bool shape = false, gather_ok = false;
    for (const auto& s : sm80::kShapes)
      if (c.block_m == s[0] && c.block_n == s[1] && c.warps == s[2]) shape = true, gather_ok = s[3] != 0;
    if (!shape) return fail("tiles must be 128x256 or 128x128 with 8 warps, or 64x64 with 4 warps");
    if (c.block_k != sm80::kBlockK) return fail("BLOCK_K must be " + std::to_string(sm80::kBlockK));
    if (c.split_k != 1) return fail("split-K is not implemented for the mma.sync kernel");
    if (c.stages < sm80::kMinStages || c.stages > sm80::kMaxStages)
      return fail("needs " + std::to_string(sm80::kMinStages) + " to " + std::to_string(sm80::kMaxStages) + " pipeline stages");
    const int mul = mma_multiplicand(p.a.dtype, p.b.dtype);
    if (mul < 0)
      return fail("inputs must be f16 or bf16 (not both; fp8 converts exactly to either); f32 and f16 x bf16 run on the generic kernel (-x0)");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff) return fail("dimensions must be below 2^31");
    if (((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) > 0x7fffffffLL)
      return fail("more than 2^31 - 1 output tiles");
    const og_dtype mul_dtype = mul ? OG_DTYPE_BF16 : OG_DTYPE_F16;
    const bool a_k_major = p.a.stride_col == 1, b_k_major = p.b.stride_row == 1;
    const bool a_unit = a_k_major || p.a.stride_row == 1, b_unit = b_k_major || p.b.stride_col == 1;
    const bool copy = p.a.dtype == mul_dtype && p.b.dtype == mul_dtype && a_unit && b_unit &&
                      check_16_byte_operand(p.a, 2, a_k_major ? p.a.stride_row : p.a.stride_col, p.batch, nullptr) &&
                      check_16_byte_operand(p.b, 2, b_k_major ? p.b.stride_col : p.b.stride_row, p.batch, nullptr);
    if (!copy && !gather_ok)
      return fail("the " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) +
                  " tile has only the cp.async loader: both inputs f16 or both bf16, a unit stride each, 16-byte aligned bases, "
                  "leading dimensions and batch strides (128x128 and 64x64 tiles take any operands)");
    const size_t smem = sm80::shared_bytes(c.block_m, c.block_n, c.warps, !copy || a_k_major, !copy || b_k_major, c.stages);
    if (smem > size_t(info_.limits.max_shared_bytes))
      return fail(std::to_string(c.stages) + " stages need " + std::to_string(smem) + " bytes of shared memory");
    if (!l) return true;
    l->m = int(p.m); l->n = int(p.n); l->k = int(p.k); l->batch = int(p.batch);
    l->group_m = c.group_m; l->stages = c.stages;
    l->block_m = c.block_m; l->block_n = c.block_n; l->warps = c.warps;
    l->gather = !copy;
    l->a_k_major = a_k_major; l->b_k_major = b_k_major;
    l->a = operand_args(p.a); l->b = operand_args(p.b);
    l->ep = epilogue_args(p);
    l->max_grid_z = int(std::min<long long>(max_grid_z_, 0x7fffffff));
    l->max_shared = size_t(info_.limits.max_shared_bytes);
    return true;
  }

  // 16-byte aligned base, leading dimension and batch stride: what TMA boxes and cp.async's
  // 16-byte vectors need.
  static bool check_16_byte_operand(const Operand& o, int eb, int64_t outer_stride, int64_t batch, std::string* why) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(o.mem.ptr) + uintptr_t(o.mem.offset);
    const char* bad = nullptr;
    if (base % 16) bad = "operand base addresses must be 16-byte aligned";
    else if ((outer_stride * eb) % 16 || outer_stride <= 0) bad = "leading dimensions must be multiples of 16 bytes";
    else if (batch > 1 && ((o.batch_stride * eb) % 16 || o.batch_stride <= 0))
      bad = "batch strides must be positive multiples of 16 bytes";
    if (bad && why) *why = bad;
    return bad == nullptr;
  }

  // 3-D tensor map of `o` (inner, outer, batch; elements of eb bytes) with the 128-byte swizzle;
  // boxes read zeros out of bounds.
  CUresult encode_3d(CUtensorMap& map, const Operand& o, CUtensorMapDataType type, int eb, int64_t inner, int64_t outer,
                     int64_t outer_stride, int64_t batch, int box_inner, int box_outer, CUtensorMapL2promotion promotion) const {
    const cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(batch)};
    const cuuint64_t outer_bytes = cuuint64_t(outer_stride) * eb;
    const cuuint64_t batch_bytes = batch > 1 ? cuuint64_t(o.batch_stride) * eb : (outer_bytes * dims[1] + 15) / 16 * 16;
    const cuuint64_t strides[2] = {outer_bytes, batch_bytes};
    const cuuint32_t box[3] = {cuuint32_t(box_inner), cuuint32_t(box_outer), 1};
    const cuuint32_t unit[3] = {1, 1, 1};
    void* base = static_cast<char*>(o.mem.ptr) + o.mem.offset;
    return encode_tiled_(&map, type, 3, base, dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }

  // An operand's map: its TMA boxes are the kernel's A and B tiles.
  bool encode_operand(CUtensorMap& map, const Operand& o, int eb, int64_t inner, int64_t outer, int64_t outer_stride,
                      int64_t batch, int box_inner, int box_outer, std::string* why) const {
    if (!check_16_byte_operand(o, eb, outer_stride, batch, why)) return false;
    const CUtensorMapDataType type = o.dtype == OG_DTYPE_F16    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                     : o.dtype == OG_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                : CU_TENSOR_MAP_DATA_TYPE_UINT8;
    const CUresult r = encode_3d(map, o, type, eb, inner, outer, outer_stride, batch, box_inner, box_outer,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    if (r != CUDA_SUCCESS) {
      if (why) *why = "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")";
      return false;
    }
    return true;
  }

  // D for the deferred epilogue's TMA stores: the plain GEMM's 16-bit row-major D with 16-byte
  // aligned base, rows and batches (the epilogue's packed way out), in boxes of 64 x 64 with the
  // staging chunks' 128-byte swizzle. TMA drops the rows of edge boxes beyond D, but columns only
  // in whole 16-byte units (H100: with N = 259 it wrote the 5 columns after each row, a padded
  // D's padding), so N must be a multiple of 8. False where D is anything else.
  bool encode_output(CUtensorMap& map, const Problem& p, const cuda::EpilogueArgs& e) const {
    if (!(e.d.dtype == OG_DTYPE_F16 || e.d.dtype == OG_DTYPE_BF16) || !e.d_vector_rows || e.bias_mode != OG_BIAS_NONE ||
        e.act != OG_ACT_NONE || p.d.stride_row <= 0 || p.n % 8 != 0)
      return false;
    return encode_3d(map, p.d, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, p.n, p.m, p.d.stride_row, p.batch, 64, 64,
                     CU_TENSOR_MAP_L2_PROMOTION_NONE) == CUDA_SUCCESS;
  }

  // Split-K workspace, one per stream (launches on one stream run in order; two streams must not
  // share partials or counters). Grown on demand, never shrunk; counters zeroed on allocation
  // (each launch leaves them zero).
  struct SplitWorkspace {
    float* partials = nullptr;
    int* counters = nullptr;
    long long floats = 0, count = 0;
  };
  static constexpr int kMaxSplitK = 16;
  static constexpr long long kMaxPartialFloats = 1ll << 28;  // 1 GiB
  // The split-K tiles (cluster groups) of a problem, and the partial floats and counters they need.
  struct SplitSizes {
    long long tiles, floats, count;
  };
  static SplitSizes split_sizes(const Problem& p, const Config& c) {
    const int cluster_m = c.extra == kFamilySm90Multicast ? 2 : 1;
    const long long tiles =
        sm90::split_tiles((p.m + c.block_m - 1) / c.block_m, (p.n + c.block_n - 1) / c.block_n, p.batch, cluster_m);
    return {tiles, sm90::partial_floats(tiles, c.block_m, c.block_n, c.split_k), sm90::counter_count(tiles)};
  }
  Status split_workspace(const Problem& p, const Config& c, cudaStream_t s, sm90::Launch& l) {
    const SplitSizes sizes = split_sizes(p, c);
    const long long floats = sizes.floats, count = sizes.count;
    std::lock_guard<std::mutex> lock(workspace_mutex_);
    SplitWorkspace& w = workspaces_[s];
    if (w.floats < floats) {
      if (w.partials) cudaFree(w.partials);  // synchronises: no launch still uses it
      w.partials = nullptr;
      w.floats = 0;
      OG_CUDA_TRY(cudaMalloc(&w.partials, size_t(floats) * sizeof(float)),
                  ("cudaMalloc of the split-K workspace (" + std::to_string(floats * 4) + " bytes)").c_str());
      w.floats = floats;
    }
    if (w.count < count) {
      if (w.counters) cudaFree(w.counters);
      w.counters = nullptr;
      w.count = 0;
      OG_CUDA_TRY(cudaMalloc(&w.counters, size_t(count) * sizeof(int)), "cudaMalloc of the split-K counters");
      OG_CUDA_TRY(cudaMemsetAsync(w.counters, 0, size_t(count) * sizeof(int), s), "cudaMemsetAsync");
      w.count = count;
    }
    l.partials = w.partials;
    l.counters = w.counters;
    return {};
  }

  DeviceInfo info_;
  int device_ = 0;
  std::mutex workspace_mutex_;
  std::map<cudaStream_t, SplitWorkspace> workspaces_;
  long long max_grid_z_ = 65535;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_ = nullptr;  // set on sm_90 devices only
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
