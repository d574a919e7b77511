// The Vulkan device a context runs on: its own instance and device, or a host application's
// (og_vulkan_host_handles), with the limits the config space uses and what the cooperative-matrix
// families can use on it (or why not).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vulkan_api.hpp"
#include "vulkan_properties.hpp"

namespace omnigemm::detail::vulkan {

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
  // Takes the name, limits and cooperative-matrix support from `p` (pure; open() calls it with
  // the device's own properties, tests with recorded ones and no device).
  void apply(const DeviceProperties& p);

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
  DeviceProperties props;  // as reported (or recorded)
  CoopmatSupport coopmat;
  Coopmat2Support coopmat2;

 private:
  Status create_own(int device_index);
  Status adopt(const og_vulkan_host_handles& h);
  Status check_device();
  bool has_extension(const char* name) const;
  std::vector<VkQueueFamilyProperties> queue_families() const;
  void load_instance_functions();
  void load_device_functions();

  bool validation_ = false;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

}  // namespace omnigemm::detail::vulkan
