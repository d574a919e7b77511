// The HIP runtime (libamdhip64), opened at run time like the Vulkan loader: the library links
// nothing of ROCm, so it loads on every machine, and the HIP backend reports backend_unavailable
// where the runtime or an AMD device is missing. The entry points are the ones of the HIP headers
// this was built against (hipGetDeviceProperties resolves to the versioned symbol those headers
// name), taken from the runtime of the same major version.
#pragma once
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <string>

namespace omnigemm::detail {

struct HipRuntime {
  hipError_t (*GetDeviceCount)(int*) = nullptr;
  hipError_t (*GetDeviceProperties)(hipDeviceProp_t*, int) = nullptr;
  hipError_t (*SetDevice)(int) = nullptr;
  const char* (*GetErrorName)(hipError_t) = nullptr;
  const char* (*GetErrorString)(hipError_t) = nullptr;
  hipError_t (*DriverGetVersion)(int*) = nullptr;
  hipError_t (*RuntimeGetVersion)(int*) = nullptr;
  hipError_t (*Malloc)(void**, size_t) = nullptr;
  hipError_t (*Free)(void*) = nullptr;
  hipError_t (*Memcpy)(void*, const void*, size_t, hipMemcpyKind) = nullptr;
  hipError_t (*StreamSynchronize)(hipStream_t) = nullptr;
  hipError_t (*EventCreate)(hipEvent_t*) = nullptr;
  hipError_t (*EventDestroy)(hipEvent_t) = nullptr;
  hipError_t (*EventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*EventSynchronize)(hipEvent_t) = nullptr;
  hipError_t (*EventElapsedTime)(float*, hipEvent_t, hipEvent_t) = nullptr;
  hipError_t (*ModuleLoadData)(hipModule_t*, const void*) = nullptr;
  hipError_t (*ModuleUnload)(hipModule_t) = nullptr;
  hipError_t (*ModuleGetFunction)(hipFunction_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*ModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   hipStream_t, void**, void**) = nullptr;
};

// The process's HIP runtime, opened once; nullptr (and why in *why) when it cannot be opened or
// lacks an entry point.
const HipRuntime* hip_runtime(std::string* why);

}  // namespace omnigemm::detail
