#include "hip_device.hpp"

#include "code_objects.hpp"

namespace omnigemm::detail {

namespace {

Status unavailable(std::string message) { return error(StatusCode::backend_unavailable, std::move(message)); }

std::string error_text(const HipRuntime& api, hipError_t e) {
  const char* name = api.GetErrorName(e);
  const char* text = api.GetErrorString(e);
  std::string out = (name ? name : "hipError") + std::string(" (") + std::to_string(int(e)) + ")";
  if (text && *text && (!name || std::string(text) != name)) out += ": " + std::string(text);
  return out;
}

std::string version_text(int v) {  // HIP encodes major * 10^7 + minor * 10^5 + patch
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

}  // namespace

HipDevice::~HipDevice() {
  if (!api) return;
  for (hipModule_t m : modules_)
    if (m) (void)api->ModuleUnload(m);
}

Status HipDevice::check(hipError_t e, const char* what) const {
  if (e == hipSuccess) return {};
  const std::string msg = std::string("hip: ") + what + " failed: " + error_text(*api, e);
  if (e == hipErrorOutOfMemory) return error(StatusCode::out_of_memory, msg);
  if (e == hipErrorIllegalAddress || e == hipErrorLaunchFailure || e == hipErrorECCNotCorrectable ||
      e == hipErrorIllegalState)
    return error(StatusCode::device_lost, msg + " (the HIP context is no longer usable)");
  return error(StatusCode::backend_failure, msg);
}

Status HipDevice::select() const { return check(api->SetDevice(index), "hipSetDevice"); }

Status HipDevice::init(int device_index) {
  std::string why;
  const HipRuntime* rt = hip_runtime(&why);
  if (!rt) return unavailable("hip: no AMD device (" + why + ")");
  int count = 0;
  const hipError_t e = rt->GetDeviceCount(&count);
  if (e != hipSuccess || count == 0)
    return unavailable("hip: no AMD device (" + (e == hipSuccess ? std::string("none found") : error_text(*rt, e)) + ")");
  if (device_index >= count)
    return unavailable("hip: device index " + std::to_string(device_index) + " requested but only " + std::to_string(count) +
                       " AMD device(s) exist");
  api = rt;
  index = device_index;
  if (Status s = select(); !s) return s;
  hipDeviceProp_t prop{};
  if (Status s = check(api->GetDeviceProperties(&prop, index), "hipGetDeviceProperties"); !s) return s;
  const std::string arch_name = prop.gcnArchName;  // e.g. "gfx90a:sramecc+:xnack-"
  arch = arch_name.substr(0, arch_name.find(':'));
  if (arch != "gfx90a")
    return unavailable(std::string("hip: ") + prop.name + " is " + arch +
                       "; OmniGEMM's HIP backend carries code objects for gfx90a (MI200) only");
  int driver = 0, runtime = 0;
  (void)api->DriverGetVersion(&driver);
  (void)api->RuntimeGetVersion(&runtime);
  info.name = prop.name[0] ? prop.name : "AMD " + arch;
  info.driver = "HIP runtime " + version_text(runtime) + ", driver " + version_text(driver) + ", " + arch_name + ", " +
                std::to_string(prop.multiProcessorCount) + " CUs";
  DeviceLimits& lim = info.limits;
  lim.max_shared_bytes = (long long)prop.sharedMemPerBlock;  // 64 KiB of LDS per workgroup
  lim.max_threads_per_group = prop.maxThreadsPerBlock;
  lim.warp_size = prop.warpSize;
  lim.max_registers_per_thread = 512;  // VGPRs and AGPRs together, at one wave per SIMD
  lim.max_waves_per_eu = 8;
  lim.registers_per_lane_total = 512;
  lim.compute_units = prop.multiProcessorCount;
  lim.l2_bytes = prop.l2CacheSize;
  lim.arch = 0x90a;
  // Dense peak rates from the CU count and the clock: MFMA f16/bf16 1024 FLOPs per CU and clock
  // on CDNA2 (the MI250X's 191.5 TFLOP/s per GCD: 110 CUs at 1.7 GHz), vector f32 128; fp8
  // inputs run on the 16-bit MFMAs (converted on load).
  const double cu_ghz = prop.clockRate * 1e-6 * prop.multiProcessorCount;
  lim.peak_tflops_16bit = 1024 * cu_ghz * 1e-3;
  lim.peak_tflops_8bit = lim.peak_tflops_16bit;
  lim.peak_tflops_f32 = 128 * cu_ghz * 1e-3;
  lim.memory_gbps = 2.0 * prop.memoryClockRate * 1e-6 * prop.memoryBusWidth / 8;
  max_grid_z = prop.maxGridSize[2] > 0 ? prop.maxGridSize[2] : 65535;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    const CodeObject co = gfx90a_code_object(bf16 != 0);
    if (Status s = check(api->ModuleLoadData(&modules_[bf16], co.data), "hipModuleLoadData of the gfx90a code object"); !s)
      return s;
  }
  return {};
}

Status HipDevice::function(bool bf16, const char* symbol, hipFunction_t& out) const {
  return check(api->ModuleGetFunction(&out, modules_[bf16 ? 1 : 0], symbol), symbol);
}

}  // namespace omnigemm::detail
