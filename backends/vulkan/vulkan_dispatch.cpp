// Dispatch: descriptor sets, command recording, submission and timestamp timing.
#include <algorithm>

#include "vulkan_backend.hpp"

namespace omnigemm::detail::vulkan {

Status VulkanBackend::create_queue_objects() {
  const Vk& vk = dev_.vk;
  const VkDevice device = dev_.device;
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                              dev_.queue_family};
  OG_VK_TRY(vk.vkCreateCommandPool(device, &pci, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool_, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  OG_VK_TRY(vk.vkAllocateCommandBuffers(device, &cai, &cmd_), "vkAllocateCommandBuffers");
  OG_VK_TRY(vk.vkAllocateCommandBuffers(device, &cai, &capture_cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  OG_VK_TRY(vk.vkCreateFence(device, &fci, nullptr, &fence_), "vkCreateFence");
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, nullptr, 0, VK_QUERY_TYPE_TIMESTAMP, 2};
  OG_VK_TRY(vk.vkCreateQueryPool(device, &qpi, nullptr, &queries_), "vkCreateQueryPool");
  OG_VK_TRY(new_descriptor_pool(sync_pool_), "vkCreateDescriptorPool");
  return {};
}

void VulkanBackend::destroy_queue_objects() {
  const Vk& vk = dev_.vk;
  const VkDevice device = dev_.device;
  for (PoolChain* chain : {&async_pools_, &capture_pools_}) {
    for (VkDescriptorPool pl : chain->pools) vk.vkDestroyDescriptorPool(device, pl, nullptr);
    *chain = PoolChain{};
  }
  if (sync_pool_) vk.vkDestroyDescriptorPool(device, sync_pool_, nullptr);
  if (queries_) vk.vkDestroyQueryPool(device, queries_, nullptr);
  if (fence_) vk.vkDestroyFence(device, fence_, nullptr);
  if (pool_) vk.vkDestroyCommandPool(device, pool_, nullptr);
  sync_pool_ = VK_NULL_HANDLE;
  queries_ = VK_NULL_HANDLE;
  fence_ = VK_NULL_HANDLE;
  pool_ = VK_NULL_HANDLE;
}

VkResult VulkanBackend::new_descriptor_pool(VkDescriptorPool& pool) {
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBindings};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, nullptr, 0, kSetsPerPool, 1, &size};
  return dev_.vk.vkCreateDescriptorPool(dev_.device, &dpi, nullptr, &pool);
}

Status VulkanBackend::pool_with_room(PoolChain& chain, VkDescriptorPool& out) {
  if (chain.in_use == 0 || chain.sets_in_last == kSetsPerPool) {
    if (chain.in_use == chain.pools.size()) {
      VkDescriptorPool fresh;
      OG_VK_TRY(new_descriptor_pool(fresh), "vkCreateDescriptorPool");
      chain.pools.push_back(fresh);
    }
    ++chain.in_use;
    chain.sets_in_last = 0;
  }
  ++chain.sets_in_last;
  out = chain.pools[chain.in_use - 1];
  return {};
}

// One descriptor set with every binding written (unused ones point at D's buffer). `workspace`:
// the context's, the caller's (og_gemm_desc.workspace, 256-byte aligned: p.workspace) or
// VK_NULL_HANDLE; an operand in `copied` (0 A, 1 B) is bound to the workspace at its copy's
// offset.
Status VulkanBackend::descriptor_set_for(const Problem& p, VkBuffer workspace, const VulkanLaunch::OperandCopy* copied,
                                         DescriptorUse use, VkDescriptorSet& set) {
  auto buf = [&](const og_memory& m) { return reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer)); };
  const VkBuffer d = buf(p.d.mem);
  const VkBuffer c = p.c.present ? buf(p.c.mem) : d, bias = p.bias_mode != OG_BIAS_NONE ? buf(p.bias) : d;
  const VkBuffer as = p.a.present && p.a.scale.present() ? buf(p.a.scale.mem) : d;
  const VkBuffer bs = p.b.present && p.b.scale.present() ? buf(p.b.scale.mem) : d;
  const VkBuffer ws = workspace ? workspace : d;
  const VkDeviceSize ws_at = workspace && p.has_workspace() ? p.workspace.offset : 0;
  const bool in_ws[2] = {copied && copied[0].present, copied && copied[1].present};
  const VkBuffer a = in_ws[0] ? ws : p.a.present ? buf(p.a.mem) : d, b = in_ws[1] ? ws : p.b.present ? buf(p.b.mem) : d;
  const VkDeviceSize a_at = in_ws[0] ? ws_at + copied[0].offset : 0, b_at = in_ws[1] ? ws_at + copied[1].offset : 0;
  const VkBuffer per_binding[kBindings] = {a, a, a, b, b, b, c, c, d, d, bias, bias, as, as, bs, bs, ws};
  const VkDeviceSize offsets[kBindings] = {a_at, a_at, a_at, b_at, b_at, b_at, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ws_at};
  return descriptor_set_with(per_binding, use, set, offsets);
}

Status VulkanBackend::descriptor_set_with(const VkBuffer (&per_binding)[kBindings], DescriptorUse use, VkDescriptorSet& set,
                                          const VkDeviceSize (&offsets)[kBindings]) {
  const Vk& vk = dev_.vk;
  VkDescriptorPool pool = sync_pool_;
  if (use == DescriptorUse::capture) {
    if (Status s = pool_with_room(capture_pools_, pool); !s) return s;
  } else if (use == DescriptorUse::caller) {
    if (Status s = pool_with_room(async_pools_, pool); !s) return s;
  } else if (use == DescriptorUse::own) {
    OG_VK_TRY(vk.vkResetDescriptorPool(dev_.device, sync_pool_, 0), "vkResetDescriptorPool");
  }
  const VkDescriptorSetLayout layout = pipelines_.set_layout();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, nullptr, pool, 1, &layout};
  OG_VK_TRY(vk.vkAllocateDescriptorSets(dev_.device, &ai, &set), "vkAllocateDescriptorSets");
  VkDescriptorBufferInfo infos[kBindings];
  VkWriteDescriptorSet writes[kBindings];
  for (uint32_t i = 0; i < kBindings; ++i) {
    infos[i] = {per_binding[i], offsets[i], VK_WHOLE_SIZE};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, set, i, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nullptr, &infos[i], nullptr};
  }
  vk.vkUpdateDescriptorSets(dev_.device, kBindings, writes, 0, nullptr);
  return {};
}

Status VulkanBackend::workspace_locked(uint64_t bytes, VkBuffer& out) {
  if (bytes > workspace_bytes_) {
    // Grown to a power of two; the smaller one stays allocated until the context is destroyed,
    // as a caller's command buffer recorded with it may not have run yet.
    uint64_t size = uint64_t(1) << 20;
    while (size < bytes) size *= 2;
    VkBuffer buffer;
    Allocation a;
    Status s = create_buffer(size_t(size), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, buffer, a);
    if (!s) return s;
    buffers_[buffer] = a;
    workspace_ = buffer;
    workspace_bytes_ = size;
  }
  out = workspace_;
  return {};
}

Status VulkanBackend::begin(VkCommandBuffer cmd) {
  OG_VK_TRY(dev_.vk.vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  OG_VK_TRY(dev_.vk.vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
  return {};
}

Status VulkanBackend::submit_and_wait(VkCommandBuffer cmd) {
  const Vk& vk = dev_.vk;
  OG_VK_TRY(vk.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, nullptr, 0, nullptr, nullptr, 1, &cmd};
  OG_VK_TRY(vk.vkResetFences(dev_.device, 1, &fence_), "vkResetFences");
  OG_VK_TRY(vk.vkQueueSubmit(dev_.queue, 1, &si, fence_), "vkQueueSubmit");
  OG_VK_TRY(vk.vkWaitForFences(dev_.device, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  return {};
}

namespace {

// Releases a pipeline hold when the recording that used it is over, unless kept (capture).
struct HoldGuard {
  PipelineSet& set;
  PipelineSet::Hold hold;
  ~HoldGuard() { set.release(hold); }
};

}  // namespace

Status VulkanBackend::prepare_pipeline(const VulkanLaunch& l) {
  if (!dev_.device) return error(StatusCode::unsupported, "vulkan: " + dev_.info.name + " is a modelled device; it prepares nothing");
  VkPipeline pipeline;
  PipelineSet::Hold hold;
  const uint64_t made = pipelines_.set().stats().created;
  Status s = pipelines_.set().acquire(l.shader, l.spec, PipelineSet::Use::prepare, pipeline, hold);
  HoldGuard guard{pipelines_.set(), hold};
  VkPipeline reduce = VK_NULL_HANDLE, copy = VK_NULL_HANDLE;
  HoldGuard reduce_guard{pipelines_.set(), {}}, copy_guard{pipelines_.set(), {}};
  if (s && l.reduce_groups)
    s = pipelines_.set().acquire(l.reduce_shader, l.reduce_spec, PipelineSet::Use::prepare, reduce, reduce_guard.hold);
  if (s && (l.copy[0].present || l.copy[1].present))
    s = pipelines_.set().acquire(Shader::operand_copy, copy_spec(), PipelineSet::Use::prepare, copy, copy_guard.hold);
  if (!s || !dev_.cpu_device || pipelines_.set().stats().created == made) return s;
  // Mesa's lavapipe translates the pipeline to machine code at its first dispatch, not at its
  // creation: one dispatch of an empty problem (every workgroup returns at once) does it now.
  std::call_once(scratch_once_, [&] { scratch_status_ = allocate(256, scratch_); });
  if (!scratch_status_) return scratch_status_;
  std::lock_guard<std::mutex> lock(mutex_);
  const VkBuffer b = reinterpret_cast<VkBuffer>(uintptr_t(scratch_.vk_buffer));
  VkBuffer per_binding[kBindings];
  std::fill(per_binding, per_binding + kBindings, b);
  const VkDeviceSize offsets[kBindings] = {};
  VkDescriptorSet set;
  if (!(s = descriptor_set_with(per_binding, DescriptorUse::own, set, offsets)) || !(s = begin(cmd_))) return s;
  const Vk& vk = dev_.vk;
  vk.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipelines_.layout(), 0, 1, &set, 0, nullptr);
  PushConstants pc{};
  pc.epilogue = 7;  // no C term; M = N = K = 0: no work items
  vk.vkCmdPushConstants(cmd_, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  vk.vkCmdDispatch(cmd_, 1, 1, 1);
  for (VkPipeline extra : {reduce, copy}) {  // their push constants are zero too: no work items
    if (!extra) continue;
    vk.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, extra);
    vk.vkCmdDispatch(cmd_, 1, 1, 1);
  }
  return submit_and_wait(cmd_);
}

Status VulkanBackend::record(const VulkanLaunch& l, void* stream) {
  if (!dev_.device) return error(StatusCode::unsupported, "vulkan: " + dev_.info.name + " is a modelled device; it runs nothing");
  const Vk& vk = dev_.vk;
  // Workgroups over x and y (at most the device's count along x), batches over z in pieces of at
  // most its count along z.
  const uint64_t max_x = dev_.max_groups[0], max_z = dev_.max_groups[2];
  struct Grid {
    uint64_t x, y;
  };
  auto grid = [&](uint64_t groups, const char* what, Grid& g) -> Status {
    g.x = std::max<uint64_t>(1, std::min(max_x, groups));
    g.y = (groups + g.x - 1) / g.x;
    if (g.y > dev_.max_groups[1])
      return error(StatusCode::unsupported, std::string("vulkan: ") + what + std::to_string(groups) +
                                                " workgroups per batch exceed the device's " + std::to_string(max_x) + " x " +
                                                std::to_string(dev_.max_groups[1]));
    return {};
  };
  Grid gemm{}, rg{}, cg[2]{};
  Status s = grid(l.tiles, "", gemm);
  if (s && l.reduce_groups) s = grid(l.reduce_groups, "split-K's reduction: ", rg);
  for (int i = 0; i < 2 && s; ++i)
    if (l.copy[i].present) s = grid(l.copy[i].groups, "the operand copy: ", cg[i]);
  if (!s) return s;
  const bool copies = l.copy[0].present || l.copy[1].present;
  const PipelineSet::Use pipeline_use = stream ? PipelineSet::Use::caller : PipelineSet::Use::submit;
  VkPipeline pipeline, reduce = VK_NULL_HANDLE, copy = VK_NULL_HANDLE;
  HoldGuard guard{pipelines_.set(), {}}, reduce_guard{pipelines_.set(), {}}, copy_guard{pipelines_.set(), {}};
  s = pipelines_.set().acquire(l.shader, l.spec, pipeline_use, pipeline, guard.hold);
  if (s && l.reduce_groups) s = pipelines_.set().acquire(l.reduce_shader, l.reduce_spec, pipeline_use, reduce, reduce_guard.hold);
  if (s && copies) s = pipelines_.set().acquire(Shader::operand_copy, copy_spec(), pipeline_use, copy, copy_guard.hold);
  if (!s) return s;
  std::lock_guard<std::mutex> lock(mutex_);
  // The caller's workspace where it passed one (validated against workspace_bytes), else the
  // context's.
  VkBuffer workspace = VK_NULL_HANDLE;
  if (l.workspace_bytes && !l.problem->has_workspace() && !(s = workspace_locked(l.workspace_bytes, workspace))) return s;
  if (l.workspace_bytes && l.problem->has_workspace()) workspace = reinterpret_cast<VkBuffer>(uintptr_t(l.problem->workspace.vk_buffer));
  // Record into: the caller's command buffer, else this thread's timing capture, else our own.
  const bool capturing = capture_ != VK_NULL_HANDLE && capture_thread_ == std::this_thread::get_id();
  const DescriptorUse use = stream ? DescriptorUse::caller : capturing ? DescriptorUse::capture : DescriptorUse::own;
  // The copies read the caller's operands; the GEMM reads the copied ones from the workspace.
  VkDescriptorSet set, copy_set = VK_NULL_HANDLE;
  if (copies && !(s = descriptor_set_for(*l.given, workspace, nullptr, use, copy_set))) return s;
  const DescriptorUse next = copies && use == DescriptorUse::own ? DescriptorUse::own_more : use;
  if (!(s = descriptor_set_for(*l.problem, workspace, l.copy, next, set))) return s;
  VkCommandBuffer cmd = stream ? static_cast<VkCommandBuffer>(stream) : capturing ? capture_ : VK_NULL_HANDLE;
  const bool own = cmd == VK_NULL_HANDLE;
  if (own && !(s = begin(cmd_))) return s;
  if (own) cmd = cmd_;
  const VkPipelineLayout layout = pipelines_.layout();
  // Successive GEMMs in one command buffer may share D and the workspace; each dispatch of this
  // launch reads what the one before it wrote: every step starts with a barrier.
  auto barrier = [&] {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &b, 0, nullptr, 0,
                            nullptr);
  };
  auto dispatch = [&](const void* push, uint32_t push_bytes, uint32_t* batch_base, uint64_t batches, const Grid& g) {
    for (uint64_t b0 = 0; b0 < batches; b0 += max_z) {
      *batch_base = uint32_t(b0);
      vk.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
      vk.vkCmdDispatch(cmd, uint32_t(g.x), uint32_t(g.y), uint32_t(std::min(max_z, batches - b0)));
    }
  };
  barrier();
  if (copies) {
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, copy);
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &copy_set, 0, nullptr);
    for (int i = 0; i < 2; ++i) {
      if (!l.copy[i].present) continue;
      CopyPushConstants cp = l.copy[i].push;
      dispatch(&cp, sizeof cp, &cp.batch_base, l.copy[i].batch, cg[i]);
    }
    barrier();
  }
  vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
  PushConstants pc = l.push;
  dispatch(&pc, sizeof pc, &pc.batch_base, l.batch, gemm);
  if (reduce) {  // split-K: every slice's partial sums are written before they are added
    barrier();
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, reduce);
    dispatch(&pc, sizeof pc, &pc.batch_base, l.batch, rg);
  }
  if (capturing) {  // the capture's submission is what ends its use (time_ms)
    for (HoldGuard* g : {&guard, &reduce_guard, &copy_guard}) {
      if (!g->hold.entry) continue;
      capture_holds_.push_back(g->hold);
      g->hold = {};
    }
  }
  if (own) return submit_and_wait(cmd_);
  return {};
}

Status VulkanBackend::time_ms(const std::function<Status()>& launch, double& ms) {
  const Vk& vk = dev_.vk;
  if (!dev_.timestamps) return error(StatusCode::unsupported, "vulkan: " + dev_.info.name + " has no compute timestamps");
  // One timing at a time; other threads' runs go on submitting their own command buffers.
  std::lock_guard<std::mutex> timing(timing_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Status s = begin(capture_cmd_);
    if (!s) return s;
    for (VkDescriptorPool pl : capture_pools_.pools) OG_VK_TRY(vk.vkResetDescriptorPool(dev_.device, pl, 0), "vkResetDescriptorPool");
    capture_pools_.in_use = 0;
    vk.vkCmdResetQueryPool(capture_cmd_, queries_, 0, 2);
    vk.vkCmdWriteTimestamp(capture_cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
    capture_ = capture_cmd_;
    capture_thread_ = std::this_thread::get_id();
  }
  Status s = launch();  // this thread's runs record into capture_ instead of submitting
  std::lock_guard<std::mutex> lock(mutex_);
  capture_ = VK_NULL_HANDLE;
  vk.vkCmdWriteTimestamp(capture_cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  Status done = submit_and_wait(capture_cmd_);
  for (PipelineSet::Hold& h : capture_holds_) pipelines_.set().release(h);
  capture_holds_.clear();
  if (!s) return s;
  if (!done) return done;
  uint64_t t[2] = {0, 0};
  OG_VK_TRY(vk.vkGetQueryPoolResults(dev_.device, queries_, 0, 2, sizeof t, t, sizeof(uint64_t),
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
  ms = double(t[1] - t[0]) * dev_.timestamp_period_ns * 1e-6;
  return {};
}

}  // namespace omnigemm::detail::vulkan
