// Device creation or adoption, the capability queries behind the families' refusals, and the
// extensions a host application should enable (og_vulkan_required_device_extensions).
#include "vulkan_device.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "omnigemm/omnigemm_vulkan.h"
#include "vulkan_debug.hpp"

namespace omnigemm::detail {

namespace {
std::atomic<int> g_validation_messages{0};
}  // namespace

int vulkan_validation_message_count() { return g_validation_messages.load(); }

namespace vulkan {

namespace {

const char* vk_result_name(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult";
  }
}

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_validation_messages;
    std::fprintf(stderr, "omnigemm vulkan validation: %s\n", data && data->pMessage ? data->pMessage : "?");
  }
  return VK_FALSE;
}

}  // namespace

Status vk_status(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return {};
  const std::string msg = std::string(what) + " failed: " + vk_result_name(r) + " (" + std::to_string(int(r)) + ")";
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return error(StatusCode::out_of_memory, "vulkan: " + msg);
  if (r == VK_ERROR_DEVICE_LOST) return error(StatusCode::device_lost, "vulkan: " + msg);
  return error(StatusCode::backend_failure, "vulkan: " + msg);
}

Status VulkanDevice::open(const BackendOptions& opt) {
  const og_vulkan_host_handles* host = opt.vulkan && opt.vulkan->device ? opt.vulkan : nullptr;
  if (host && host->get_instance_proc_addr) {
    vk.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(host->get_instance_proc_addr);
  } else {
    vk.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!vk.lib) return error(StatusCode::backend_unavailable, "vulkan: the Vulkan loader libvulkan.so.1 was not found");
    vk.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(vk.lib, "vkGetInstanceProcAddr"));
    if (!vk.vkGetInstanceProcAddr)
      return error(StatusCode::backend_unavailable, "vulkan: libvulkan.so.1 has no vkGetInstanceProcAddr");
  }
  return host ? adopt(*host) : create_own(opt.device_index);
}

void VulkanDevice::close() {
  if (own_device && device && vk.vkDestroyDevice) vk.vkDestroyDevice(device, nullptr);
  if (own_device && instance) {
    if (messenger_ && vk.vkDestroyDebugUtilsMessengerEXT) vk.vkDestroyDebugUtilsMessengerEXT(instance, messenger_, nullptr);
    if (vk.vkDestroyInstance) vk.vkDestroyInstance(instance, nullptr);
  }
  messenger_ = VK_NULL_HANDLE;
  device = VK_NULL_HANDLE;
  instance = VK_NULL_HANDLE;
  if (vk.lib) dlclose(vk.lib);
  vk.lib = nullptr;
}

bool VulkanDevice::has_extension(const char* name) const {
  uint32_t n = 0;
  vk.vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vk.vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, exts.data());
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

Status VulkanDevice::create_own(int device_index) {
  vk.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(vk.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
  vk.vkEnumerateInstanceLayerProperties = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
      vk.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceLayerProperties"));
  if (!vk.vkCreateInstance) return error(StatusCode::backend_unavailable, "vulkan: loader has no vkCreateInstance");

  std::vector<const char*> layers, extensions;
  const char* want = std::getenv("OMNIGEMM_VK_VALIDATION");
  if (want && std::strcmp(want, "0") != 0) {
    uint32_t n = 0;
    vk.vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    vk.vkEnumerateInstanceLayerProperties(&n, props.data());
    for (auto& l : props)
      if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0) validation_ = true;
    if (validation_) {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    } else {
      std::fprintf(stderr, "omnigemm vulkan: OMNIGEMM_VK_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed\n");
    }
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO, nullptr, "omnigemm", 1, "omnigemm", 1, VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, nullptr, 0, &app, uint32_t(layers.size()),
                           layers.data(), uint32_t(extensions.size()), extensions.data()};
  VkResult r = vk.vkCreateInstance(&ici, nullptr, &instance);
  if (r != VK_SUCCESS) {
    Status s = vk_status(r, "vkCreateInstance");
    return error(StatusCode::backend_unavailable, s.message);
  }
  own_device = true;
  load_instance_functions();
  if (validation_) {
    vk.vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vk.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    vk.vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vk.vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerCreateInfoEXT dci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    dci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    dci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                      VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    dci.pfnUserCallback = debug_callback;
    if (vk.vkCreateDebugUtilsMessengerEXT) vk.vkCreateDebugUtilsMessengerEXT(instance, &dci, nullptr, &messenger_);
  }

  uint32_t count = 0;
  vk.vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vk.vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (count == 0) return error(StatusCode::backend_unavailable, "vulkan: no Vulkan device found");
  if (device_index >= int(count))
    return error(StatusCode::backend_unavailable, "vulkan: device index " + std::to_string(device_index) +
                                                      " requested but only " + std::to_string(count) + " device(s) exist");
  physical = devices[size_t(device_index)];
  Status s = check_device();
  if (!s) return s;

  const std::vector<VkQueueFamilyProperties> qprops = queue_families();
  queue_family = UINT32_MAX;
  for (uint32_t i = 0; i < qprops.size(); ++i)
    if (qprops[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { queue_family = i; break; }
  if (queue_family == UINT32_MAX) return error(StatusCode::backend_unavailable, "vulkan: " + info.name + " has no compute queue");
  timestamps = qprops[queue_family].timestampValidBits > 0;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, nullptr, 0, queue_family, 1, &priority};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.storageBuffer8BitAccess = VK_TRUE;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  f11.storageBuffer16BitAccess = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2, 0, 1, &qci};
  std::vector<const char*> exts;
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
  // Each enabled extension's feature struct joins the chain behind f12.
  void** tail = &f12.pNext;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceShaderBfloat16FeaturesKHR bff{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
  if (coopmat.ok) {
    cmf.cooperativeMatrix = VK_TRUE;
    *tail = &cmf;
    tail = &cmf.pNext;
    f12.shaderFloat16 = VK_TRUE;
    f12.vulkanMemoryModel = VK_TRUE;
    f2.features.shaderInt16 = VK_TRUE;
    exts.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (coopmat.bf16) {
      bff.shaderBFloat16Type = VK_TRUE;
      bff.shaderBFloat16CooperativeMatrix = VK_TRUE;
      *tail = &bff;
      tail = &bff.pNext;
      exts.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
    }
  }
  // A required subgroup size at pipeline creation (CoopmatSupport::require_subgroup) needs the
  // subgroupSizeControl feature; through the extension's struct, valid at any instance version.
  VkPhysicalDeviceSubgroupSizeControlFeatures sscf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  if (coopmat.ok && coopmat.require_subgroup) {
    if (props.has_extension(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) {
      sscf.subgroupSizeControl = VK_TRUE;
      *tail = &sscf;
      tail = &sscf.pNext;
      exts.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    } else {
      coopmat.ok = coopmat.bf16 = false;
      coopmat.why = "its subgroup size varies (" + std::to_string(props.min_subgroup_size) + ".." + std::to_string(props.max_subgroup_size) +
                    ") and VK_EXT_subgroup_size_control, which fixes it per pipeline, is not offered";
      coopmat2 = select_coopmat2(props, coopmat, BuiltShaders::of_this_build());
    }
  }
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  if (coopmat2.ok) {  // the features gemm_coopmat2.comp uses
    cm2f.cooperativeMatrixWorkgroupScope = cm2f.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    cm2f.cooperativeMatrixPerElementOperations = cm2f.cooperativeMatrixTensorAddressing = VK_TRUE;
    *tail = &cm2f;
    exts.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  }
#endif
  dci.enabledExtensionCount = uint32_t(exts.size());
  dci.ppEnabledExtensionNames = exts.data();
  r = vk.vkCreateDevice(physical, &dci, nullptr, &device);
  if (r != VK_SUCCESS) return vk_status(r, "vkCreateDevice");
  load_device_functions();
  vk.vkGetDeviceQueue(device, queue_family, 0, &queue);
  return {};
}

Status VulkanDevice::adopt(const og_vulkan_host_handles& h) {
  if (!h.instance || !h.physical_device || !h.queue)
    return error(StatusCode::invalid_argument, "vulkan host handles: instance, physical_device, device and queue are all required");
  if (h.api_version && VK_API_VERSION_MINOR(h.api_version) < 2 && VK_API_VERSION_MAJOR(h.api_version) == 1)
    return error(StatusCode::unsupported, "vulkan host handles: OmniGEMM needs a Vulkan 1.2 device (api_version >= 1.2)");
  instance = static_cast<VkInstance>(h.instance);
  physical = static_cast<VkPhysicalDevice>(h.physical_device);
  device = static_cast<VkDevice>(h.device);
  queue = static_cast<VkQueue>(h.queue);
  queue_family = h.queue_family_index;
  own_device = false;
  load_instance_functions();
  Status s = check_device();
  if (!s) return s;
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
  // Which features the host enabled cannot be queried: the cooperative-matrix paths run where
  // the host says it enabled their extension (and, per omnigemm_vulkan.h, its features).
  auto enabled = [&](const char* name) {
    for (uint32_t i = 0; h.enabled_device_extensions && i < h.enabled_device_extension_count; ++i)
      if (h.enabled_device_extensions[i] && std::strcmp(h.enabled_device_extensions[i], name) == 0) return true;
    return false;
  };
  if (coopmat.ok && (!enabled(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) || VK_API_VERSION_MINOR(h.api_version) < 3)) {
    coopmat.ok = coopmat.bf16 = false;
    coopmat.why = "the host's VkDevice does not list " VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME
                   " among its enabled extensions with api_version >= 1.3 (see og_vulkan_required_device_extensions)";
  }
  if (coopmat.ok && coopmat.require_subgroup && !enabled(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) {
    coopmat.ok = coopmat.bf16 = false;
    coopmat.why = "the device's subgroup size varies and the host's VkDevice does not list " VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME
                  " (with the subgroupSizeControl feature) among its enabled extensions";
  }
  if (coopmat.bf16 && !enabled(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME)) {
    coopmat.bf16 = false;
    coopmat.bf16_why = "the host's VkDevice does not list " VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME " among its enabled extensions";
  }
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
  if (coopmat2.ok && (!coopmat.ok || !enabled(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME))) {
    coopmat2.ok = coopmat2.bf16 = false;
    coopmat2.why = "the host's VkDevice does not list " VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME
                    " (with " VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME ") among its enabled extensions";
  }
  if (coopmat2.bf16 && !coopmat.bf16) {
    coopmat2.bf16 = false;
    coopmat2.bf16_why = coopmat.bf16_why;
  }
#endif
  const std::vector<VkQueueFamilyProperties> qprops = queue_families();
  if (queue_family >= qprops.size() || !(qprops[queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return error(StatusCode::invalid_argument, "vulkan host handles: queue family " + std::to_string(queue_family) +
                                                   " does not exist or has no compute bit");
  timestamps = qprops[queue_family].timestampValidBits > 0;
  load_device_functions();
  return {};
}

std::vector<VkQueueFamilyProperties> VulkanDevice::queue_families() const {
  uint32_t count = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> props(count);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, props.data());
  return props;
}

void VulkanDevice::load_instance_functions() {
#define OG_LOAD(name) vk.name = reinterpret_cast<PFN_##name>(vk.vkGetInstanceProcAddr(instance, #name));
  OG_VK_INSTANCE_FUNCS(OG_LOAD)
#undef OG_LOAD
}
void VulkanDevice::load_device_functions() {
#define OG_LOAD(name) vk.name = reinterpret_cast<PFN_##name>(vk.vkGetDeviceProcAddr(device, #name));
  OG_VK_DEVICE_FUNCS(OG_LOAD)
#undef OG_LOAD
}

// Device properties, the features the shader needs, and the limits the config space uses.
Status VulkanDevice::check_device() {
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &drv};
  vk.vkGetPhysicalDeviceProperties2(physical, &p2);
  properties = p2.properties;
  info.driver = std::string(drv.driverName) + " " + drv.driverInfo + " (Vulkan " +
                std::to_string(VK_API_VERSION_MAJOR(p2.properties.apiVersion)) + "." +
                std::to_string(VK_API_VERSION_MINOR(p2.properties.apiVersion)) + ")";
  timestamp_period_ns = p2.properties.limits.timestampPeriod;
  timestamps = p2.properties.limits.timestampComputeAndGraphics;
  const std::string name = p2.properties.deviceName;
  if (VK_API_VERSION_MINOR(p2.properties.apiVersion) < 2 && VK_API_VERSION_MAJOR(p2.properties.apiVersion) == 1)
    return error(StatusCode::backend_unavailable, "vulkan: " + name + " supports only Vulkan 1.0/1.1; OmniGEMM needs 1.2");
  const DeviceProperties p = query_properties(vk, instance, physical);
  if (!p.storage_16bit || !p.storage_8bit)
    return error(StatusCode::backend_unavailable,
                 "vulkan: " + name + " lacks storageBuffer16BitAccess or storageBuffer8BitAccess, which OmniGEMM's shaders need");
  apply(p);
  return {};
}

void VulkanDevice::apply(const DeviceProperties& p) {
  props = p;
  info.name = p.name;
  info.limits.max_shared_bytes = p.max_shared_bytes;
  info.limits.max_threads_per_group = int(p.max_invocations);
  info.limits.warp_size = int(p.subgroup_size ? p.subgroup_size : 1);
  const bool cpu = cpu_device = p.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  info.limits.compute_units = cpu ? int(std::max(1u, std::thread::hardware_concurrency())) : p.compute_units ? int(p.compute_units) : 64;
  info.limits.l2_bytes = cpu ? (32ll << 20) : (64ll << 20);  // not queryable in core Vulkan
  std::copy(p.max_groups, p.max_groups + 3, max_groups);
  const BuiltShaders built = BuiltShaders::of_this_build();
  coopmat = select_coopmat(p, built);
  coopmat2 = select_coopmat2(p, coopmat, built);
}

}  // namespace vulkan
}  // namespace omnigemm::detail

extern "C" uint32_t og_vulkan_required_device_extensions(void* instance, void* physical_device, const char** names,
                                                         uint32_t capacity) {
  // The cooperative-matrix extensions, where the physical device offers them (see below).
  void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib || !instance || !physical_device) {
    if (lib) dlclose(lib);
    return 0;
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  auto enumerate = gipa ? reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
                              gipa(static_cast<VkInstance>(instance), "vkEnumerateDeviceExtensionProperties"))
                        : nullptr;
  uint32_t count = 0, found = 0;
  if (enumerate) {
    const auto physical = static_cast<VkPhysicalDevice>(physical_device);
    enumerate(physical, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> exts(count);
    enumerate(physical, nullptr, &count, exts.data());
    auto has = [&](const char* name) {
      for (const auto& e : exts) if (std::strcmp(e.extensionName, name) == 0) return true;
      return false;
    };
    // KHR cooperative matrix first; bf16 and NV cooperative matrix 2 build on it, in this order.
    std::vector<const char*> wanted;
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
    if (has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
      wanted.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
      if (has(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME)) wanted.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
      // Fixes the cooperative-matrix pipelines' subgroup size where the device's varies.
      if (has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) wanted.push_back(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
      if (has(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) wanted.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
#endif
    }
#endif
    (void)has;
    for (const char* name : wanted) {
      if (names && found < capacity) names[found] = name;
      ++found;
    }
  }
  dlclose(lib);
  return found;
}
