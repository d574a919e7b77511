#include "cuda_device.hpp"

#include "kernel_views.hpp"

#include <cstdlib>
#include <string_view>

namespace omnigemm::detail {

Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  const std::string msg = std::string("cuda: ") + what + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) return error(StatusCode::out_of_memory, msg);
  if (e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorDevicesUnavailable ||
      e == cudaErrorHardwareStackError || e == cudaErrorIllegalInstruction || e == cudaErrorECCUncorrectable)
    return error(StatusCode::device_lost, msg + " (the CUDA context is no longer usable)");
  return error(StatusCode::backend_failure, msg);
}

CudaDevice::~CudaDevice() {
  for (auto& [stream, w] : workspaces_) {
    if (w.partials) cudaFree(w.partials);
    if (w.counters) cudaFree(w.counters);
    if (w.scratch) cudaFree(w.scratch);
  }
}

Status CudaDevice::init(int device_index) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return error(StatusCode::backend_unavailable,
                 std::string("cuda: no CUDA device (") + (e == cudaSuccess ? "none found" : cudaGetErrorString(e)) + ")");
  if (device_index >= count)
    return error(StatusCode::backend_unavailable, "cuda: device index " + std::to_string(device_index) +
                                                      " requested but only " + std::to_string(count) + " device(s) exist");
  index = device_index;
  OG_CUDA_TRY(cudaSetDevice(index), "cudaSetDevice");
  cudaDeviceProp prop;
  OG_CUDA_TRY(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
  if (prop.major < 8)
    return error(StatusCode::backend_unavailable, std::string("cuda: ") + prop.name + " is sm_" + std::to_string(prop.major) +
                                                      std::to_string(prop.minor) + "; OmniGEMM's CUDA backend needs sm_80 or newer");
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  info.name = prop.name;
  info.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) + ", runtime " +
                std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ", sm_" +
                std::to_string(prop.major) + std::to_string(prop.minor);
  DeviceLimits& lim = info.limits;
  lim.max_shared_bytes = (long long)prop.sharedMemPerBlockOptin;
  lim.max_threads_per_group = prop.maxThreadsPerBlock;
  lim.warp_size = prop.warpSize;
  lim.max_registers_per_thread = 255;
  lim.compute_units = prop.multiProcessorCount;
  lim.l2_bytes = prop.l2CacheSize;
  lim.arch = prop.major * 10 + prop.minor;
  // Dense peak rates (the cost model's units) from the SM count and the clock: f32 FLOPs per SM
  // and clock 128 on sm_80, 256 from sm_86 (twice the FP32 lanes); 16-bit tensor-core FLOPs 2048
  // on sm_80, 1024 on sm_86-89, 4096 on sm_90, 8192 from sm_100; fp8 twice the 16-bit rate where
  // the tensor cores have it (sm_89, sm_90 and newer), else converted to 16-bit.
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index);
  int mem_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, index);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, index);
  const double sm_ghz = clock_khz * 1e-6 * prop.multiProcessorCount;
  const double tensor = prop.major >= 10 ? 8192 : prop.major >= 9 ? 4096 : prop.minor == 0 ? 2048 : 1024;
  lim.peak_tflops_f32 = (prop.major == 8 && prop.minor == 0 ? 128 : 256) * sm_ghz * 1e-3;
  lim.peak_tflops_16bit = tensor * sm_ghz * 1e-3;
  lim.peak_tflops_8bit = (prop.major >= 9 || prop.minor >= 9 ? 2 : 1) * lim.peak_tflops_16bit;
  lim.memory_gbps = 2.0 * mem_khz * 1e-6 * bus_bits / 8;
  max_grid_z = prop.maxGridSize[2];
  if (prop.major == 9 || prop.major == 10) {  // the sm_90a and sm_100a kernels' tensor maps
    cudaDriverEntryPointQueryResult found{};
    void* fn = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
      encode_tiled = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }
  return {};
}

Status CudaDevice::workspace(const CallerWorkspace& caller, cudaStream_t s, const WorkspaceNeed& need, WorkspaceParts& out) {
  out = WorkspaceParts{};
  if (caller.ptr) {
    if (caller.bytes < uint64_t(need.bytes()))
      return error(StatusCode::invalid_argument,
                   "workspace: " + std::to_string(caller.bytes) + " bytes given but this call needs " +
                       std::to_string(need.bytes()) + " (og_gemm_workspace_size)");
    char* base = caller.ptr;
    const long long counters_bytes = WorkspaceNeed::round(need.counters * 4);
    const long long partial_bytes = WorkspaceNeed::round(need.partial_floats * 4);
    if (need.counters > 0) {
      out.counters = reinterpret_cast<int*>(base);
      OG_CUDA_TRY(cudaMemsetAsync(out.counters, 0, size_t(need.counters) * sizeof(int), s), "cudaMemsetAsync");
    }
    if (need.partial_floats > 0) out.partials = reinterpret_cast<float*>(base + counters_bytes);
    if (need.scratch_bytes > 0) out.scratch = base + counters_bytes + partial_bytes;
    return {};
  }
  std::lock_guard<std::mutex> lock(workspace_mutex_);
  Workspace& w = workspaces_[s];
  if (w.floats < need.partial_floats) {
    if (w.partials) cudaFree(w.partials);  // synchronises: no launch still uses it
    w.partials = nullptr;
    w.floats = 0;
    OG_CUDA_TRY(cudaMalloc(&w.partials, size_t(need.partial_floats) * sizeof(float)),
                ("cudaMalloc of the split-K workspace (" + std::to_string(need.partial_floats * 4) + " bytes)").c_str());
    w.floats = need.partial_floats;
  }
  if (w.count < need.counters) {
    if (w.counters) cudaFree(w.counters);
    w.counters = nullptr;
    w.count = 0;
    OG_CUDA_TRY(cudaMalloc(&w.counters, size_t(need.counters) * sizeof(int)), "cudaMalloc of the split-K counters");
    OG_CUDA_TRY(cudaMemsetAsync(w.counters, 0, size_t(need.counters) * sizeof(int), s), "cudaMemsetAsync");
    w.count = need.counters;
  }
  if (w.scratch_bytes < need.scratch_bytes) {
    if (w.scratch) cudaFree(w.scratch);
    w.scratch = nullptr;
    w.scratch_bytes = 0;
    OG_CUDA_TRY(cudaMalloc(&w.scratch, size_t(need.scratch_bytes)),
                ("cudaMalloc of the scratch workspace (" + std::to_string(need.scratch_bytes) + " bytes)").c_str());
    w.scratch_bytes = need.scratch_bytes;
  }
  if (need.partial_floats > 0) out.partials = w.partials;
  if (need.counters > 0) out.counters = w.counters;
  if (need.scratch_bytes > 0) out.scratch = w.scratch;
  return {};
}

bool cuda_technique_on(const char* variable) {
#ifdef OMNIGEMM_DEVELOPER
  const char* v = std::getenv(variable);
  return !(v && std::string_view(v) == "0");
#else
  (void)variable;
  return true;
#endif
}

bool dependent_launch_on(const CudaDevice& dev) {
  return dev.info.limits.arch / 10 == 9 && cuda_technique_on("OMNIGEMM_CUDA_PDL");
}

cuda::OperandArgs operand_args(const Operand& o) {
  const char* base = o.present ? static_cast<const char*>(o.mem.ptr) + o.mem.offset : nullptr;
  return cuda::OperandArgs{base, o.dtype, o.stride_row, o.stride_col, o.batch_stride};
}

cuda::EpilogueArgs epilogue_args(const Problem& p) {
  cuda::EpilogueArgs e{};
  e.c = operand_args(p.c);
  e.d = operand_args(p.d);
  e.has_c = p.c.present;
  e.alpha = p.alpha;
  e.beta = p.beta;
  e.slope = p.leaky_slope;
  e.act = p.activation;
  e.bias_mode = p.bias_mode;
  e.bias_dtype = p.bias_dtype;
  e.bias_bs = p.bias_batch_stride;
  e.bias = p.bias_mode != OG_BIAS_NONE ? static_cast<const char*>(p.bias.ptr) + p.bias.offset : nullptr;
  const long long bytes = dtype_bytes(p.d.dtype);
  // No C, a unit stride along one dimension, 16-byte aligned base, other stride and batch stride.
  auto vector_aligned = [&](int64_t unit_stride, int64_t other_stride) {
    return !e.has_c && unit_stride == 1 && reinterpret_cast<uintptr_t>(e.d.ptr) % 16 == 0 && (other_stride * bytes) % 16 == 0 &&
           (p.batch == 1 || (p.d.batch_stride * bytes) % 16 == 0);
  };
  e.d_vector_rows = vector_aligned(p.d.stride_col, p.d.stride_row);
  e.d_vector_cols = vector_aligned(p.d.stride_row, p.d.stride_col);
  e.d_16_bit_rows = bytes == 2 && p.d.stride_col == 1;
  e.d_16_bit_cols = bytes == 2 && p.d.stride_row == 1;
  return e;
}

namespace {
Operand transposed(Operand o) {
  std::swap(o.rows, o.cols);
  std::swap(o.stride_row, o.stride_col);
  return o;
}
}  // namespace

Problem transposed(const Problem& p) {
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

Status refuse_block_scales(const Problem& p) {
  if (p.a.scale.present() || p.b.scale.present())
    return error(StatusCode::unsupported, "block-scaled operands run on the sm90_blockscaled family only");
  return {};
}

bool check_16_byte_operand(const Operand& o, int eb, int64_t outer_stride, int64_t batch, std::string* why) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(o.mem.ptr) + uintptr_t(o.mem.offset);
  const char* bad = nullptr;
  if (base % 16) bad = "operand base addresses must be 16-byte aligned";
  else if ((outer_stride * eb) % 16 || outer_stride <= 0) bad = "leading dimensions must be multiples of 16 bytes";
  else if (batch > 1 && ((o.batch_stride * eb) % 16 || o.batch_stride <= 0)) bad = "batch strides must be positive multiples of 16 bytes";
  if (bad && why) *why = bad;
  return bad == nullptr;
}

}  // namespace omnigemm::detail
