// The Vulkan device a context runs on: its own instance and device, or a host application's
// (og_vulkan_host_handles), with the limits the config space uses and what the cooperative-matrix
// families can use on it (or why not).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vulkan_api.hpp"

namespace omnigemm::detail::vulkan {

struct CoopmatShape {
  uint32_t m = 16, n = 16, k = 16;
};

// The KHR cooperative-matrix path (gemm_coopmat.comp): usable, or why not; the largest
// subgroup-scope fragment per multiplicand type (0 f16, 1 bf16) with f32 accumulation.
struct CoopmatSupport {
  bool ok = false;
  std::string why;
  CoopmatShape shape[2];
  bool bf16 = false;  // bf16 multiplicands too (VK_KHR_shader_bfloat16)
  std::string bf16_why;
};

// The NV cooperative matrix 2 path (gemm_coopmat2.comp): usable, or why not; per multiplicand
// type and workgroup size, the granularity of M, N and K (flexible dimensions), and the limits
// of workgroup-scope matrices.
struct Coopmat2Support {
  struct FlexShape {
    int mul;  // 0 f16, 1 bf16
    uint32_t invocations, m, n, k;
  };
  bool ok = false;
  std::string why;
  bool bf16 = false;
  std::string bf16_why;
  std::vector<FlexShape> shapes;
  uint32_t max_workgroup = 0, max_dim = 0, reserved_shared = 0;
};

class VulkanDevice {
 public:
  VulkanDevice() = default;
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;
  ~VulkanDevice() { close(); }

  // Loads the entry points and creates (or adopts) the device. OMNIGEMM_VK_VALIDATION=1 turns
  // on the Khronos validation layer for a device of our own.
  Status open(const BackendOptions& opt);
  // Destroys what open() created (the instance and device only when they are ours). Everything
  // made on the device must be gone by then.
  void close();

  Vk vk;
  DeviceInfo info;
  VkPhysicalDeviceProperties properties{};
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  bool own_device = false;
  bool timestamps = false;   // the queue family has compute timestamps
  bool cpu_device = false;   // a CPU implementation (lavapipe)
  uint32_t max_groups[3] = {65535, 65535, 65535};
  float timestamp_period_ns = 1.0f;
  CoopmatSupport coopmat;
  Coopmat2Support coopmat2;

 private:
  Status create_own(int device_index);
  Status adopt(const og_vulkan_host_handles& h);
  Status check_device();
  void query_coopmat(uint32_t api_version, const VkPhysicalDeviceFeatures2& f2, const VkPhysicalDeviceVulkan12Features& f12);
  void query_coopmat2();
  bool has_extension(const char* name) const;
  std::vector<VkQueueFamilyProperties> queue_families() const;
  void load_instance_functions();
  void load_device_functions();

  bool validation_ = false;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

}  // namespace omnigemm::detail::vulkan
