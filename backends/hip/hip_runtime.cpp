#include "hip_runtime.hpp"

#include <dlfcn.h>
#include <hip/hip_version.h>

#include <type_traits>

namespace omnigemm::detail {

namespace {

#define OG_HIP_NAME2(x) #x
#define OG_HIP_NAME(x) OG_HIP_NAME2(x)  // expands the headers' renames (hipGetDeviceProperties -> ...R0600)

struct Loaded {
  HipRuntime api;
  std::string error;
  bool ok = false;
};

Loaded load() {
  Loaded out;
  const std::string versioned = "libamdhip64.so." + std::to_string(HIP_VERSION_MAJOR);
  void* lib = nullptr;
  std::string tried;
  for (const std::string& name : {versioned, std::string("libamdhip64.so")}) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(e ? e : name + " not found");
  }
  if (!lib) {
    out.error = "the HIP runtime " + versioned + " is not installed (" + tried + ")";
    return out;
  }
  // Never closed: kernels, events and memory of the runtime may outlive any one backend.
  auto bind = [&](auto& fn, const char* symbol) {
    void* p = dlsym(lib, symbol);
    if (!p && out.error.empty()) out.error = std::string("the HIP runtime lacks ") + symbol;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  HipRuntime& a = out.api;
  bind(a.GetDeviceCount, "hipGetDeviceCount");
  bind(a.GetDeviceProperties, OG_HIP_NAME(hipGetDeviceProperties));
  bind(a.SetDevice, "hipSetDevice");
  bind(a.GetErrorName, "hipGetErrorName");
  bind(a.GetErrorString, "hipGetErrorString");
  bind(a.DriverGetVersion, "hipDriverGetVersion");
  bind(a.RuntimeGetVersion, "hipRuntimeGetVersion");
  bind(a.Malloc, "hipMalloc");
  bind(a.Free, "hipFree");
  bind(a.Memcpy, "hipMemcpy");
  bind(a.StreamSynchronize, "hipStreamSynchronize");
  bind(a.EventCreate, "hipEventCreate");
  bind(a.EventDestroy, "hipEventDestroy");
  bind(a.EventRecord, "hipEventRecord");
  bind(a.EventSynchronize, "hipEventSynchronize");
  bind(a.EventElapsedTime, "hipEventElapsedTime");
  bind(a.ModuleLoadData, "hipModuleLoadData");
  bind(a.ModuleUnload, "hipModuleUnload");
  bind(a.ModuleGetFunction, "hipModuleGetFunction");
  bind(a.ModuleLaunchKernel, "hipModuleLaunchKernel");
  out.ok = out.error.empty();
  return out;
}

}  // namespace

const HipRuntime* hip_runtime(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why) *why = loaded.error;
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace omnigemm::detail
