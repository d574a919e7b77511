/* OmniGEMM inside a host application's Vulkan device.
 *
 * Hand OmniGEMM your objects through og_context_options.vulkan (og_vulkan_host_handles in
 * omnigemm.h): it then creates no instance or device of its own, only a command pool, pipelines,
 * descriptor pools and a query pool on your VkDevice.
 *
 * What your VkDevice must have enabled (Vulkan 1.2 or newer):
 *   - features storageBuffer16BitAccess (VkPhysicalDeviceVulkan11Features) and
 *     storageBuffer8BitAccess (VkPhysicalDeviceVulkan12Features);
 *   - a queue family with VK_QUEUE_COMPUTE_BIT (the one you pass).
 * og_vulkan_required_device_extensions() lists the device extensions OmniGEMM can use on a
 * physical device (none are required by the portable path). The cooperative-matrix path runs
 * where you enabled VK_KHR_cooperative_matrix (Vulkan 1.3) with its cooperativeMatrix feature and
 * the features shaderFloat16, shaderInt16 and vulkanMemoryModel; on such a device OmniGEMM also
 * rounds f16 outputs with the conversion instruction where the device's float controls make it
 * round to nearest even and keep subnormals (the same bits as otherwise). Where the device's
 * subgroup size varies (minSubgroupSize < maxSubgroupSize, e.g. AMD and Intel), the
 * cooperative-matrix path also needs VK_EXT_subgroup_size_control with its subgroupSizeControl
 * feature enabled.
 *
 * Buffers: operands are VkBuffers created with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, passed as
 * og_memory { OG_MEMORY_VULKAN, NULL, (uint64_t)buffer, byte_offset }; the offset must be a
 * multiple of the element size.
 *
 * Recording into your command buffer: og_gemm_async(ctx, desc, (void*)command_buffer) records
 * the dispatches into `command_buffer` (which must be in the recording state, outside a render
 * pass, allocated from a pool of the queue family you passed) and returns; you submit it.
 * Barriers are yours on both sides:
 *   before: make the writes of A, B, C and bias visible to compute-shader reads, e.g.
 *     srcStage = (your producer stage), dstStage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
 *     dstAccess = VK_ACCESS_SHADER_READ_BIT (and SHADER_WRITE for D if you wrote it before);
 *   after: before you read D, srcStage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
 *     srcAccess = VK_ACCESS_SHADER_WRITE_BIT, dstStage/dstAccess = your consumer's.
 * The descriptor sets of recorded GEMMs stay allocated until the context is destroyed, and so
 * does every pipeline recorded into your command buffers (those that leave the context's bounded
 * set of pipelines are kept aside, outside its budget); destroy the context only after the
 * command buffers that use them have completed. og_gemm_prepare compiles at load time the
 * pipelines your problems need, so that recording compiles nothing.
 */
#ifndef OMNIGEMM_VULKAN_H
#define OMNIGEMM_VULKAN_H

#include "omnigemm/omnigemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes up to `capacity` extension names (static strings) that OmniGEMM would use on
 * `physical_device` (a VkPhysicalDevice of `instance`) into `names` and returns how many there
 * are in all. The portable path needs none, so this returns 0 today. */
OG_API uint32_t og_vulkan_required_device_extensions(void* instance, void* physical_device, const char** names,
                                                     uint32_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* OMNIGEMM_VULKAN_H */
