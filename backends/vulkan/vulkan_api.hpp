// The Vulkan entry points the backend uses, loaded at run time (the loader is dlopen()ed, so the
// library loads where Vulkan is absent), and VkResult -> Status.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "backend.hpp"

// VK_KHR_shader_bfloat16 (Vulkan headers 1.4.313+); declared here for older headers. The values
// are the registry's (extension number 142).
#if defined(OMNIGEMM_HAVE_COOPMAT_SPIRV) && !defined(VK_KHR_shader_bfloat16)
#define VK_KHR_shader_bfloat16 1
#define VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME "VK_KHR_shader_bfloat16"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR VkStructureType(1000141000)
#define VK_COMPONENT_TYPE_BFLOAT16_KHR VkComponentTypeKHR(1000141000)
typedef struct VkPhysicalDeviceShaderBfloat16FeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderBFloat16Type;
  VkBool32 shaderBFloat16DotProduct;
  VkBool32 shaderBFloat16CooperativeMatrix;
} VkPhysicalDeviceShaderBfloat16FeaturesKHR;
#endif

namespace omnigemm::detail::vulkan {

#define OG_VK_INSTANCE_FUNCS(X)                                                                     \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)               \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2)                                \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties)               \
  X(vkCreateDevice) X(vkGetDeviceProcAddr) X(vkEnumerateDeviceExtensionProperties)
#define OG_VK_DEVICE_FUNCS(X)                                                                      \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateCommandPool) X(vkDestroyCommandPool)            \
  X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) \
  X(vkQueueSubmit) X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences)          \
  X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements2) X(vkAllocateMemory)       \
  X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) X(vkCmdCopyBuffer)         \
  X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)                  \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)             \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreatePipelineCache)                        \
  X(vkDestroyPipelineCache) X(vkGetPipelineCacheData) X(vkCreateDescriptorPool)                    \
  X(vkDestroyDescriptorPool) X(vkResetDescriptorPool) X(vkAllocateDescriptorSets)                  \
  X(vkUpdateDescriptorSets) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) X(vkCmdPushConstants)  \
  X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCreateQueryPool) X(vkDestroyQueryPool)              \
  X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkGetQueryPoolResults) X(vkQueueWaitIdle)

struct Vk {
  void* lib = nullptr;  // the dlopen()ed loader; null when the host passed its own entry point
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceLayerProperties vkEnumerateInstanceLayerProperties = nullptr;
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
#define OG_DECLARE(name) PFN_##name name = nullptr;
  OG_VK_INSTANCE_FUNCS(OG_DECLARE)
  OG_VK_DEVICE_FUNCS(OG_DECLARE)
#undef OG_DECLARE
};

// OK for VK_SUCCESS; otherwise "vulkan: <what> failed: <VkResult name> (<value>)" as
// out_of_memory, device_lost or backend_failure.
Status vk_status(VkResult r, const char* what);

#define OG_VK_TRY(call, what)                                                 \
  do {                                                                        \
    if (::omnigemm::Status s_ = ::omnigemm::detail::vulkan::vk_status((call), what); !s_) return s_; \
  } while (0)

}  // namespace omnigemm::detail::vulkan
