// Vulkan backend: the portable and skinny shader families on any Vulkan 1.2 device, lavapipe
// included; the KHR cooperative-matrix and NV cooperative matrix 2 families where the device has
// them.
//
// Files by concern: vulkan_device.cpp (instance/device creation or adoption of a host VkDevice),
// vulkan_properties.cpp (the device's properties and the pure choices made from them),
// vulkan_pipelines.cpp (layouts, modules, SPIR-V patching, pipeline cache, specialization),
// vulkan_pipeline_set.cpp (the bounded set of pipelines shared by threads), vulkan_dispatch.cpp (descriptor sets, command recording, submission, timing),
// vulkan_memory.cpp (buffers and transfers), families/ (the kernel families).
//
// Synchronous runs record into an internal command buffer and wait on a fence; og_gemm_async
// records into the caller's command buffer; time_ms captures this thread's runs into one
// command buffer between two timestamps.
#pragma once

#include <map>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "families/vulkan_families.hpp"
#include "vulkan_device.hpp"
#include "vulkan_launch.hpp"
#include "vulkan_pipelines.hpp"

namespace omnigemm::detail::vulkan {

class VulkanBackend final : public Backend {
 public:
  VulkanBackend() = default;
  ~VulkanBackend() override;
  Status init(const BackendOptions& opt);
  // A backend on a modelled device: its properties only, no instance, device or pipelines. Its
  // families answer can_implement, hints and plans as on that device (tests of other vendors'
  // devices); running anything is refused.
  void init_modelled(const DeviceProperties& p) { dev_.apply(p); }

  og_backend kind() const override { return OG_BACKEND_VULKAN; }
  const DeviceInfo& device() const override { return dev_.info; }
  uint32_t input_dtypes() const override { return (1u << OG_DTYPE_COUNT) - 1; }  // block-scaled: portable family
  uint32_t scale_modes() const override { return (1u << OG_SCALE_MODE_COUNT) - 1; }
  uint32_t output_dtypes() const override { return 0x07; }  // f32, f16, bf16
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_VULKAN; }
  bool supports_async() const override { return true; }
  Status check_problem(const Problem& p) const override;
  // Every family, fastest first; can_implement refuses those this device cannot run (explain
  // shows why).
  std::span<KernelFamily* const> families() const override { return all_; }

  Status synchronize(void*) override { return {}; }  // synchronous runs already waited
  // og_quantize / og_dequantize on the device (vulkan_quantize.cpp, shaders/block_quantize.comp).
  Status quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream) override;
  Status dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream) override;
  Status allocate(size_t bytes, og_memory& out) override;
  void release(const og_memory& mem) override;
  Status upload(const og_memory& dst, const void* src, size_t bytes) override;
  Status download(void* dst, const og_memory& src, size_t bytes) override;
  Status time_ms(const std::function<Status()>& launch, double& ms) override;
  double clock_ramp_ms() const override;

  const VulkanDevice& vk_device() const { return dev_; }
  // Whether this device runs family `f` at all (its cooperative-matrix support).
  bool usable(const KernelFamily* f) const;
  // Records `l` into the caller's command buffer (`stream`), this thread's timing capture, or
  // the backend's own command buffer, which is then submitted and waited for.
  Status record(const VulkanLaunch& l, void* stream);
  // Makes (and keeps for the context's life) the pipeline of `l` without recording anything:
  // og_gemm_prepare.
  Status prepare_pipeline(const VulkanLaunch& l);
  // The pipelines this context has made and keeps (tests, explain).
  PipelineStats pipeline_stats() const { return pipelines_.set().stats(); }
  VulkanPipelines& pipelines() { return pipelines_; }
#ifdef OMNIGEMM_DEVELOPER
  // OMNIGEMM_VK_MAINLOOP_PROBE (developer builds only; results WRONG by design): the coopmat
  // shader's MAINLOOP_PROBE constant, 1 (no global loads in the K loop) or 2 (MMAs only).
  uint32_t mainloop_probe() const { return mainloop_probe_; }
#endif

 private:
  // Who submits a recorded dispatch decides how long its descriptor set must live:
  // own: submitted and waited at once (the pool is reset before each run);
  // capture: until time_ms submits (its pool is reset when the next timing starts, at most 64 runs);
  // caller: until the caller's command buffer has run, which only the caller knows (kept until
  // the context is destroyed).
  // own_more: own, a further set of the recording whose first set reset the pool.
  enum class DescriptorUse { own, own_more, capture, caller };

  struct Allocation {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    bool host_visible = false;
  };

  // vulkan_dispatch.cpp
  Status create_queue_objects();
  void destroy_queue_objects();
  VkResult new_descriptor_pool(VkDescriptorPool& pool);
  // Descriptor pools of kSetsPerPool sets handed out in order, one more made when all in use are
  // full; `in_use` back to 0 (after vkResetDescriptorPool on each) reuses them.
  static constexpr int kSetsPerPool = 64;
  struct PoolChain {
    std::vector<VkDescriptorPool> pools;
    size_t in_use = 0;     // pools handed out since the last reuse
    int sets_in_last = 0;  // sets taken from pools[in_use - 1]
  };
  // A pool of `chain` with a set free (mutex_ held).
  Status pool_with_room(PoolChain& chain, VkDescriptorPool& out);
  // The set of p's buffers; `workspace`: the launch's (the caller's or the context's), or
  // VK_NULL_HANDLE; operands present in `copied` (A, B) bound to their copies in the workspace.
  Status descriptor_set_for(const Problem& p, VkBuffer workspace, const VulkanLaunch::OperandCopy* copied, DescriptorUse use,
                            VkDescriptorSet& set);
  // The context's workspace of at least `bytes` (mutex_ held): one per context, shared by its
  // GEMMs, which the barrier each recording starts with orders on a queue.
  Status workspace_locked(uint64_t bytes, VkBuffer& out);
  Status descriptor_set_with(const VkBuffer (&per_binding)[kBindings], DescriptorUse use, VkDescriptorSet& set,
                             const VkDeviceSize (&offsets)[kBindings]);
  // operand_copy.comp's pipeline: kCopyThreads invocations per workgroup.
  static Specialization copy_spec() {
    Specialization s;
    s.values[0] = VulkanLaunch::kCopyThreads;
    s.count = 1;
    return s;
  }
  // vulkan_quantize.cpp: one pass of shaders/block_quantize.comp over `count` invocations.
  Status record_block_pass(uint32_t op, const Operand& plain, const Operand& blocked, bool operand_b, VkBuffer amax,
                           uint32_t global_bits, uint64_t count, void* stream);
  Status begin(VkCommandBuffer cmd);
  Status submit_and_wait(VkCommandBuffer cmd);
  // vulkan_memory.cpp
  Status create_buffer(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags prefer, VkBuffer& buffer, Allocation& a);
  Status transfer(const og_memory& m, void* host, size_t bytes, bool to_device);
  void release_all_buffers();

  VulkanDevice dev_;
  VulkanPipelines pipelines_;
#ifdef OMNIGEMM_DEVELOPER
  uint32_t mainloop_probe_ = 0;
#endif

  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkCommandBuffer capture_cmd_ = VK_NULL_HANDLE;
  VkCommandBuffer capture_ = VK_NULL_HANDLE;  // capture_cmd_ while time_ms records launches
  std::thread::id capture_thread_;            // ... of this thread only
  std::mutex timing_mutex_;
  std::vector<PipelineSet::Hold> capture_holds_;  // pipelines recorded into the capture, until it is submitted
  // Descriptor sets of the launches a timing records: reused when the next timing starts.
  PoolChain capture_pools_;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkDescriptorPool sync_pool_ = VK_NULL_HANDLE;
  PoolChain async_pools_;  // sets of launches recorded into callers' command buffers: never reused
  std::map<VkBuffer, Allocation> buffers_;
  VkBuffer workspace_ = VK_NULL_HANDLE;  // in buffers_
  uint64_t workspace_bytes_ = 0;
  // Bound to every binding of prepare_pipeline's empty dispatch; allocated once, on first need.
  og_memory scratch_{};
  Status scratch_status_;
  std::once_flag scratch_once_;
  std::mutex mutex_;  // the command buffers, descriptor pools and buffers above

  PortableFamily portable_{*this};
  CoopmatFamily coopmat_{*this};
  CoopmatRepackFamily coopmat_repack_{*this, coopmat_};
  Coopmat2Family coopmat2_{*this};
  SkinnyFamily skinny_{*this};
  // Fastest first (skinny: on few rows; coopmat_repack: on operands coopmat would gather).
  KernelFamily* const all_[5] = {&coopmat_, &coopmat_repack_, &coopmat2_, &skinny_, &portable_};

};

}  // namespace omnigemm::detail::vulkan
