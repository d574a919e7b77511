// Device memory: storage buffers for the host convenience path, the tuner and the benchmarks, and
// blocking copies between them and host memory.
#include <algorithm>
#include <cstring>

#include "vulkan_backend.hpp"

namespace omnigemm::detail::vulkan {

Status VulkanBackend::allocate(size_t bytes, og_memory& out) {
  VkBuffer buffer;
  Allocation a;
  Status s = create_buffer(std::max<size_t>(bytes, 4),
                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                               VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, buffer, a);
  if (!s) return s;
  std::lock_guard<std::mutex> lock(mutex_);
  buffers_[buffer] = a;
  out = og_memory{OG_MEMORY_VULKAN, nullptr, uint64_t(reinterpret_cast<uintptr_t>(buffer)), 0};
  return {};
}

void VulkanBackend::release(const og_memory& m) {
  const Vk& vk = dev_.vk;
  VkBuffer buffer = reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer));
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.find(buffer);
  if (it == buffers_.end()) return;
  vk.vkDestroyBuffer(dev_.device, buffer, nullptr);
  vk.vkFreeMemory(dev_.device, it->second.memory, nullptr);
  buffers_.erase(it);
}

Status VulkanBackend::upload(const og_memory& dst, const void* src, size_t bytes) {
  return transfer(dst, const_cast<void*>(src), bytes, /*to_device=*/true);
}
Status VulkanBackend::download(void* dst, const og_memory& src, size_t bytes) {
  return transfer(src, dst, bytes, /*to_device=*/false);
}

Status VulkanBackend::create_buffer(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags prefer, VkBuffer& buffer,
                                    Allocation& a) {
  const Vk& vk = dev_.vk;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, nullptr, 0, bytes, usage, VK_SHARING_MODE_EXCLUSIVE};
  OG_VK_TRY(vk.vkCreateBuffer(dev_.device, &bci, nullptr, &buffer), "vkCreateBuffer");
  // The requirements, and whether the driver would rather give the buffer its own allocation.
  VkMemoryDedicatedRequirements dreq{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
  VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, &dreq};
  VkBufferMemoryRequirementsInfo2 rinfo{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2, nullptr, buffer};
  vk.vkGetBufferMemoryRequirements2(dev_.device, &rinfo, &req2);
  const VkMemoryRequirements& req = req2.memoryRequirements;
  VkPhysicalDeviceMemoryProperties mp;
  vk.vkGetPhysicalDeviceMemoryProperties(dev_.physical, &mp);
  uint32_t type = UINT32_MAX;
  for (int pass = 0; pass < 2 && type == UINT32_MAX; ++pass)  // preferred properties first, then any
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (pass == 1 || (mp.memoryTypes[i].propertyFlags & prefer) == prefer)) {
        type = i;
        break;
      }
  if (type == UINT32_MAX) {
    vk.vkDestroyBuffer(dev_.device, buffer, nullptr);
    return error(StatusCode::backend_failure, "vulkan: no memory type fits a storage buffer");
  }
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size, type};
  VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, nullptr, VK_NULL_HANDLE, buffer};
  if (dreq.prefersDedicatedAllocation || dreq.requiresDedicatedAllocation) mai.pNext = &dedicated;
  VkResult r = vk.vkAllocateMemory(dev_.device, &mai, nullptr, &a.memory);
  if (r != VK_SUCCESS) {
    vk.vkDestroyBuffer(dev_.device, buffer, nullptr);
    return vk_status(r, ("vkAllocateMemory of " + std::to_string(bytes) + " bytes").c_str());
  }
  a.size = bytes;
  a.host_visible = (mp.memoryTypes[type].propertyFlags & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) ==
                   (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  r = vk.vkBindBufferMemory(dev_.device, buffer, a.memory, 0);
  if (r != VK_SUCCESS) {
    vk.vkDestroyBuffer(dev_.device, buffer, nullptr);
    vk.vkFreeMemory(dev_.device, a.memory, nullptr);
    return vk_status(r, "vkBindBufferMemory");
  }
  return {};
}

// Copies between host memory and a buffer: mapped directly when the buffer is host-visible and
// coherent (lavapipe, integrated GPUs), else through a staging buffer and a copy command.
Status VulkanBackend::transfer(const og_memory& m, void* host, size_t bytes, bool to_device) {
  const Vk& vk = dev_.vk;
  VkBuffer buffer = reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer));
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buffers_.find(buffer);
  if (it == buffers_.end())
    return error(StatusCode::invalid_argument, "vulkan: buffer was not allocated by this context");
  if (m.offset + bytes > it->second.size)
    return error(StatusCode::invalid_argument, "vulkan: transfer beyond the end of the buffer");
  auto copy_mapped = [&](VkDeviceMemory mem, VkDeviceSize offset) -> Status {
    void* p = nullptr;
    OG_VK_TRY(vk.vkMapMemory(dev_.device, mem, offset, bytes, 0, &p), "vkMapMemory");
    if (to_device) std::memcpy(p, host, bytes);
    else std::memcpy(host, p, bytes);
    vk.vkUnmapMemory(dev_.device, mem);
    return {};
  };
  if (it->second.host_visible) return copy_mapped(it->second.memory, m.offset);

  VkBuffer staging;
  Allocation sa;
  Status s = create_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, staging, sa);
  if (!s) return s;
  if (to_device) s = copy_mapped(sa.memory, 0);
  if (s) s = begin(cmd_);
  if (s) {
    VkBufferCopy region{to_device ? 0 : m.offset, to_device ? m.offset : 0, bytes};
    vk.vkCmdCopyBuffer(cmd_, to_device ? staging : buffer, to_device ? buffer : staging, 1, &region);
    s = submit_and_wait(cmd_);
  }
  if (s && !to_device) s = copy_mapped(sa.memory, 0);
  vk.vkDestroyBuffer(dev_.device, staging, nullptr);
  vk.vkFreeMemory(dev_.device, sa.memory, nullptr);
  return s;
}

void VulkanBackend::release_all_buffers() {
  const Vk& vk = dev_.vk;
  for (auto& [buffer, a] : buffers_) {
    vk.vkDestroyBuffer(dev_.device, buffer, nullptr);
    vk.vkFreeMemory(dev_.device, a.memory, nullptr);
  }
  buffers_.clear();
}

}  // namespace omnigemm::detail::vulkan
