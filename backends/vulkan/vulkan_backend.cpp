// Vulkan backend: the portable shader path (shaders/gemm_portable.comp, config -x0) on any Vulkan
// 1.2 device, lavapipe included; KHR cooperative matrices (gemm_coopmat.comp, -x1) and NV
// cooperative matrix 2 (gemm_coopmat2.comp, -x2) where the device has them. The loader is
// dlopen()ed, so the library loads where Vulkan is absent.
//
// Device handling: its own instance/device, or a host application's (og_vulkan_host_handles).
// Synchronous runs record into an internal command buffer and wait on a fence; og_gemm_async
// records into the caller's command buffer. Pipelines are created lazily per (config, dtypes,
// epilogue) under a mutex, through a VkPipelineCache persisted in ~/.cache/omnigemm.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "backend.hpp"
#include "gemm_portable.spv.h"
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
#include "gemm_coopmat.spv.h"
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
#include "gemm_coopmat2.spv.h"
#endif
#include "omnigemm/omnigemm_vulkan.h"
#include "vulkan_debug.hpp"

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

namespace omnigemm::detail {

// The bf16 cooperative-matrix module from the f16 one: glslang 15 has no GL_EXT_bfloat16, so the
// shader's only 16-bit float type (used solely as the A/B cooperative-matrix component type;
// operands move as raw bits) is re-declared `OpTypeFloat 16 BFloat16KHR` (SPV_KHR_bfloat16), with
// the capabilities and extension that need. Refuses (empty result, `why` set) a module where
// that type has any other use, which would change meaning.
std::vector<uint32_t> spirv_with_bf16_multiplicands(const uint32_t* words, size_t count, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = "bf16 module: " + w;
    return std::vector<uint32_t>{};
  };
  constexpr uint32_t kOpExtension = 10, kOpCapability = 17, kOpTypeFloat = 22, kOpTypeCooperativeMatrixKHR = 4456;
  constexpr uint32_t kFirstType = 19, kLastType = 39;  // OpTypeVoid .. OpTypeForwardPointer
  constexpr uint32_t kCapBFloat16Type = 5116, kCapBFloat16CooperativeMatrix = 5118, kEncodingBFloat16 = 0;
  if (count < 5 || words[0] != 0x07230203u) return fail("not a SPIR-V module");
  uint32_t half_id = 0;
  size_t half_at = 0, after_capabilities = 5, after_extensions = 0;
  bool types_started = false;
  for (size_t i = 5; i < count;) {
    const uint32_t n = words[i] >> 16, op = words[i] & 0xffffu;
    if (n == 0 || i + n > count) return fail("malformed instruction stream");
    if (op == kOpCapability) after_capabilities = i + n;
    if (op == kOpExtension) after_extensions = i + n;
    if (op == kOpTypeFloat && n >= 3 && words[i + 2] == 16) {
      if (half_id || n != 3) return fail("more than one 16-bit float type, or one with an encoding already");
      half_id = words[i + 1];
      half_at = i;
    } else if (half_id && types_started) {
      // Past the debug/annotation preamble every instruction's first operand is an id (a result
      // type or an operand); ids are unique, so a match there is a use of the 16-bit float type.
      // Types built on another type name it in their id operands.
      bool used = false;
      if (op == 23 || op == 24 || op == 28 || op == 29)  // OpTypeVector, Matrix, Array, RuntimeArray
        used = n >= 3 && words[i + 2] == half_id;
      else if (op == 32)  // OpTypePointer: storage class, then the pointee type
        used = n >= 4 && words[i + 3] == half_id;
      else if (op == 30 || op == 33)  // OpTypeStruct members, OpTypeFunction return/parameter types
        for (uint32_t w = 2; w < n; ++w) used |= words[i + w] == half_id;
      else if (!(op >= kFirstType && op <= kLastType) && op != kOpTypeCooperativeMatrixKHR)
        used = n >= 2 && words[i + 1] == half_id;
      if (used) return fail("the 16-bit float type is used outside cooperative-matrix types (opcode " + std::to_string(op) + ")");
    }
    types_started |= (op >= kFirstType && op <= kLastType) || op == kOpTypeCooperativeMatrixKHR;
    i += n;
  }
  if (!half_id) return fail("no 16-bit float type");
  const char ext_name[] = "SPV_KHR_bfloat16";  // 17 bytes with the terminator -> 5 words
  uint32_t ext_words[5] = {};
  std::memcpy(ext_words, ext_name, sizeof ext_name);
  const size_t ext_at = std::max(after_capabilities, after_extensions);
  std::vector<uint32_t> out;
  out.reserve(count + 16);
  for (size_t i = 0; i < count;) {
    if (i == after_capabilities) {
      out.insert(out.end(), {(2u << 16) | kOpCapability, kCapBFloat16Type, (2u << 16) | kOpCapability, kCapBFloat16CooperativeMatrix});
    }
    if (i == ext_at) {
      out.push_back((6u << 16) | kOpExtension);
      out.insert(out.end(), ext_words, ext_words + 5);
    }
    if (i < 5) { out.push_back(words[i++]); continue; }
    const uint32_t n = words[i] >> 16;
    if (i == half_at) {
      out.insert(out.end(), {(4u << 16) | kOpTypeFloat, half_id, 16u, kEncodingBFloat16});
    } else {
      out.insert(out.end(), words + i, words + i + n);
    }
    i += n;
  }
  return out;
}

namespace {

std::atomic<int> g_validation_messages{0};

// ---- the loader ----------------------------------------------------------------------------
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
  void* lib = nullptr;
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

Status vk_status(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return {};
  const std::string msg = std::string(what) + " failed: " + vk_result_name(r) + " (" + std::to_string(int(r)) + ")";
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    return error(StatusCode::out_of_memory, "vulkan: " + msg);
  if (r == VK_ERROR_DEVICE_LOST) return error(StatusCode::device_lost, "vulkan: " + msg);
  return error(StatusCode::backend_failure, "vulkan: " + msg);
}
#define OG_VK_TRY(call, what)                   \
  do {                                          \
    if (Status s_ = vk_status((call), what); !s_) return s_; \
  } while (0)

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_validation_messages;
    std::fprintf(stderr, "omnigemm vulkan validation: %s\n", data && data->pMessage ? data->pMessage : "?");
  }
  return VK_FALSE;
}

constexpr uint32_t kBindings = 12;  // A, B: 32/16/8-bit views; C, D, bias: 32/16-bit views

struct PushConstants {
  uint32_t m, n, k;
  uint32_t num_pid_m, num_pid_n, pid_base;
  uint32_t a_sr, a_sc, a_bs, b_sr, b_sc, b_bs;
  uint32_t c_sr, c_sc, c_bs, d_sr, d_sc, d_bs;
  uint32_t bias_bs, batch_base;
  uint32_t a_off, b_off, c_off, d_off, bias_off;
  float alpha, beta, slope;
};
static_assert(sizeof(PushConstants) == 112, "push constants must stay within the 128 bytes every device has");

struct CoopmatShape {
  uint32_t m, n, k;
};

struct Allocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  bool host_visible = false;
};

class VulkanBackend final : public Backend {
 public:
  ~VulkanBackend() override { shutdown(); }

  Status init(const BackendOptions& opt) {
    const og_vulkan_host_handles* host = opt.vulkan && opt.vulkan->device ? opt.vulkan : nullptr;
    if (host && host->get_instance_proc_addr) {
      vk_.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(host->get_instance_proc_addr);
    } else {
      vk_.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!vk_.lib)
        return error(StatusCode::backend_unavailable, "vulkan: the Vulkan loader libvulkan.so.1 was not found");
      vk_.vkGetInstanceProcAddr =
          reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(vk_.lib, "vkGetInstanceProcAddr"));
      if (!vk_.vkGetInstanceProcAddr)
        return error(StatusCode::backend_unavailable, "vulkan: libvulkan.so.1 has no vkGetInstanceProcAddr");
    }
    Status s = host ? adopt(*host) : create_own(opt.device_index);
    if (!s) return s;
    if (const char* probe = std::getenv("OMNIGEMM_VK_MAINLOOP_PROBE"); probe && (*probe == '1' || *probe == '2')) {
      mainloop_probe_ = uint32_t(*probe - '0');
      std::fprintf(stderr, "omnigemm: OMNIGEMM_VK_MAINLOOP_PROBE=%u: cooperative-matrix GEMMs measure a %s K loop and give WRONG results\n",
                   mainloop_probe_, mainloop_probe_ == 1 ? "load-free (shared -> fragments + MMA)" : "MMA-only");
    }
    return create_common();
  }

  og_backend kind() const override { return OG_BACKEND_VULKAN; }
  const DeviceInfo& device() const override { return info_; }
  uint32_t input_dtypes() const override { return 0x1f; }   // f32, f16, bf16, e4m3, e5m2
  uint32_t output_dtypes() const override { return 0x07; }  // f32, f16, bf16
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_VULKAN; }
  bool supports_async() const override { return true; }

  Status check_problem(const Problem& p) const override {
    constexpr int64_t kMax = (int64_t(1) << 31) - 1;  // shader indices are 32-bit
    for (const Operand* o : {&p.a, &p.b, &p.c, &p.d}) {
      if (!o->present) continue;
      const int64_t end = int64_t(o->mem.offset / uint64_t(dtype_bytes(o->dtype))) + o->extent_elements(p.batch);
      if (end > kMax)
        return error(StatusCode::unsupported, "vulkan: an operand spans " + std::to_string(end) +
                                                  " elements; the Vulkan backend indexes buffers with 32 bits (at most 2^31 - 1 elements)");
    }
    return {};
  }

  std::vector<Config> candidates(const Problem& p) const override {
    std::vector<Config> out;
    for (const Config& c : config_table(OG_BACKEND_VULKAN))
      if ((c.extra == 0 && layout_ok(c) && config_fits(c, info_.limits, 4, nullptr)) ||
          (c.extra == 1 && coopmat_ok(p, c, nullptr)) || (c.extra == 2 && coopmat2_ok(p, c, nullptr)))
        out.push_back(c);
    return out;
  }

  Status run(const Problem& p, const Config& cfg, void* stream) override {
    std::string why;
    if (cfg.extra == 1 && !coopmat_ok(p, cfg, &why))
      return error(StatusCode::unsupported, "vulkan: config " + cfg.to_string() + " (KHR cooperative matrix) cannot run: " + why +
                                                "; " + supported_paths());
    if (cfg.extra == 2 && !coopmat2_ok(p, cfg, &why))
      return error(StatusCode::unsupported, "vulkan: config " + cfg.to_string() + " (NV cooperative matrix 2) cannot run: " + why +
                                                "; " + supported_paths());
    if (cfg.extra > 2)
      return error(StatusCode::unsupported, "vulkan: config " + cfg.to_string() + " asks for path -x" + std::to_string(cfg.extra) +
                                                "; " + supported_paths());
    if (cfg.extra == 0 && (!layout_ok(cfg) || !config_fits(cfg, info_.limits, 4, &why) || cfg.split_k != 1))
      return error(StatusCode::unsupported, "vulkan: config " + cfg.to_string() + " cannot run on " + info_.name +
                                                (why.empty() ? " (needs BLOCK_N % 4 == 0, threads = warps x subgroup divisible by BLOCK_N/4, split_k 1)" : ": " + why));
    VkPipeline pipeline;
    Status s = pipeline_for(p, cfg, pipeline);
    if (!s) return s;
    std::lock_guard<std::mutex> lock(mutex_);
    // Record into: the caller's command buffer, else this thread's timing capture, else our own.
    const bool capturing = capture_ != VK_NULL_HANDLE && capture_thread_ == std::this_thread::get_id();
    const DescriptorUse use = stream ? DescriptorUse::caller : capturing ? DescriptorUse::capture : DescriptorUse::own;
    VkDescriptorSet set;
    if (!(s = descriptor_set_for(p, use, set))) return s;

    PushConstants pc{};
    const uint32_t tiles_m = uint32_t((p.m + cfg.block_m - 1) / cfg.block_m);
    const uint32_t tiles_n = uint32_t((p.n + cfg.block_n - 1) / cfg.block_n);
    pc.m = uint32_t(p.m); pc.n = uint32_t(p.n); pc.k = uint32_t(p.k);
    pc.num_pid_m = tiles_m; pc.num_pid_n = tiles_n;
    auto strides = [](const Operand& o, uint32_t& sr, uint32_t& sc, uint32_t& bs, uint32_t& off) {
      sr = uint32_t(o.stride_row); sc = uint32_t(o.stride_col); bs = uint32_t(o.batch_stride);
      off = o.present ? uint32_t(o.mem.offset / uint64_t(dtype_bytes(o.dtype))) : 0;
    };
    strides(p.a, pc.a_sr, pc.a_sc, pc.a_bs, pc.a_off);
    strides(p.b, pc.b_sr, pc.b_sc, pc.b_bs, pc.b_off);
    strides(p.c, pc.c_sr, pc.c_sc, pc.c_bs, pc.c_off);
    strides(p.d, pc.d_sr, pc.d_sc, pc.d_bs, pc.d_off);
    pc.bias_bs = uint32_t(p.bias_batch_stride);
    pc.bias_off = p.bias_mode != OG_BIAS_NONE ? uint32_t(p.bias.offset / uint64_t(dtype_bytes(p.bias_dtype))) : 0;
    pc.alpha = p.alpha; pc.beta = p.beta; pc.slope = p.leaky_slope;

    VkCommandBuffer cmd = stream ? static_cast<VkCommandBuffer>(stream) : capturing ? capture_ : VK_NULL_HANDLE;
    const bool own = cmd == VK_NULL_HANDLE;
    if (own && !(s = begin(cmd_))) return s;
    if (own) cmd = cmd_;
    // Successive GEMMs in one command buffer may share D: order them.
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT,
                            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vk_.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                             &barrier, 0, nullptr, 0, nullptr);
    vk_.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vk_.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &set, 0, nullptr);
    const uint32_t max_x = max_groups_[0], max_z = max_groups_[2];
    const uint64_t tiles = uint64_t(tiles_m) * tiles_n;
    for (uint64_t b0 = 0; b0 < uint64_t(p.batch); b0 += max_z)
      for (uint64_t t0 = 0; t0 < tiles; t0 += max_x) {
        pc.pid_base = uint32_t(t0);
        pc.batch_base = uint32_t(b0);
        vk_.vkCmdPushConstants(cmd, pipeline_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
        vk_.vkCmdDispatch(cmd, uint32_t(std::min<uint64_t>(max_x, tiles - t0)), 1,
                          uint32_t(std::min<uint64_t>(max_z, uint64_t(p.batch) - b0)));
      }
    if (own) return submit_and_wait(cmd_);
    return {};
  }

  Status synchronize(void*) override { return {}; }  // synchronous runs already waited

  Status allocate(size_t bytes, og_memory& out) override {
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

  void release(const og_memory& m) override {
    VkBuffer buffer = reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer));
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return;
    vk_.vkDestroyBuffer(device_, buffer, nullptr);
    vk_.vkFreeMemory(device_, it->second.memory, nullptr);
    buffers_.erase(it);
  }

  Status upload(const og_memory& dst, const void* src, size_t bytes) override {
    return transfer(dst, const_cast<void*>(src), bytes, /*to_device=*/true);
  }
  Status download(void* dst, const og_memory& src, size_t bytes) override {
    return transfer(src, dst, bytes, /*to_device=*/false);
  }

  // Measured on an H100 (driver 580.159.04): after a second of idling the SM clock sits at
  // 345 MHz and the Vulkan driver takes 0.5-1 s of back-to-back dispatches to bring it back to
  // 1980 MHz; timings taken meanwhile were up to 5x slow. CPU implementations (lavapipe) run at
  // the host's clocks.
  double clock_ramp_ms() const override { return cpu_device_ ? 0 : 1500; }

  Status time_ms(const std::function<Status()>& launch, double& ms) override {
    if (!timestamps_) return error(StatusCode::unsupported, "vulkan: " + info_.name + " has no compute timestamps");
    // One timing at a time; other threads' runs go on submitting their own command buffers.
    std::lock_guard<std::mutex> timing(timing_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Status s = begin(capture_cmd_);
      if (!s) return s;
      OG_VK_TRY(vk_.vkResetDescriptorPool(device_, capture_pool_, 0), "vkResetDescriptorPool");
      vk_.vkCmdResetQueryPool(capture_cmd_, queries_, 0, 2);
      vk_.vkCmdWriteTimestamp(capture_cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
      capture_ = capture_cmd_;
      capture_thread_ = std::this_thread::get_id();
    }
    Status s = launch();  // this thread's runs record into capture_ instead of submitting
    std::lock_guard<std::mutex> lock(mutex_);
    capture_ = VK_NULL_HANDLE;
    vk_.vkCmdWriteTimestamp(capture_cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
    Status done = submit_and_wait(capture_cmd_);
    if (!s) return s;
    if (!done) return done;
    uint64_t t[2] = {0, 0};
    OG_VK_TRY(vk_.vkGetQueryPoolResults(device_, queries_, 0, 2, sizeof t, t, sizeof(uint64_t),
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
    ms = double(t[1] - t[0]) * timestamp_period_ns_ * 1e-6;
    return {};
  }

 private:
  // The shader's thread layout: COLS = BLOCK_N / 4 columns of threads, ROWS = threads / COLS.
  bool layout_ok(const Config& c) const {
    const int threads = c.warps * info_.limits.warp_size;
    const int cols = c.block_n / 4;
    if (c.block_n % 4 || cols == 0 || threads % cols) return false;
    const int rows = threads / cols;
    return rows > 0 && c.block_m % rows == 0 && c.split_k == 1;
  }

  // The cooperative-matrix shader's layout: WARPS_M x WARPS_N subgroups, each a grid of
  // CM_M x CM_N fragments; A/B staged as 16-bit multiplicands (f16, or bf16 where the device has
  // bf16 cooperative matrices); fp8 converts exactly into either.
  int coopmat_warps_m(const Config& c) const { return c.warps >= 4 ? 2 : 1; }
  // Which multiplicand type a problem uses: 0 f16, 1 bf16, -1 none (the portable path only).
  static int coopmat_mul_type(const Problem& p) {
    const bool bf16 = p.a.dtype == OG_DTYPE_BF16 || p.b.dtype == OG_DTYPE_BF16;
    for (og_dtype t : {p.a.dtype, p.b.dtype})
      if (t != OG_DTYPE_FP8_E4M3 && t != OG_DTYPE_FP8_E5M2 && t != (bf16 ? OG_DTYPE_BF16 : OG_DTYPE_F16)) return -1;
    return bf16 ? 1 : 0;
  }
  // Operand orientation in shared memory (specialization constants A_M_CONTIG / B_K_CONTIG):
  // tiles are staged in the order they lie in global memory.
  static bool a_m_contiguous(const Problem& p) { return p.a.stride_row == 1 && p.a.stride_col != 1; }
  static bool b_k_contiguous(const Problem& p) { return p.b.stride_row == 1 && p.b.stride_col != 1; }
  // Shared memory the coopmat shader declares (mirrors its SMEM_VECS), in bytes.
  int64_t coopmat_shared_bytes(const Problem& p, const Config& c, const CoopmatShape& cm) const {
    const bool a_m = a_m_contiguous(p), b_k = b_k_contiguous(p);
    const int64_t a_tile = int64_t(a_m ? c.block_k : c.block_m) * ((a_m ? c.block_m : c.block_k) / 8 + 1);
    const int64_t b_tile = int64_t(b_k ? c.block_n : c.block_k) * ((b_k ? c.block_k : c.block_n) / 8 + 1);
    const int wn = c.warps / coopmat_warps_m(c);
    const int64_t epilogue = int64_t(c.warps) * cm.m * (c.block_n / wn / 4 + 1);
    return 16 * std::max(int64_t(c.stages) * (a_tile + b_tile), epilogue);
  }
  bool coopmat_ok(const Problem& p, const Config& c, std::string* why) const {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    if (!coopmat_)
      return fail(info_.name + " has no usable KHR cooperative matrix (f16 x f16 -> f32, subgroup scope) in this build/device" +
                  (coopmat_why_.empty() ? "" : ": " + coopmat_why_));
    const int mul = coopmat_mul_type(p);
    if (mul < 0)
      return fail(std::string("inputs must be f16, bf16 or fp8 (one 16-bit type, fp8 converted exactly); f32 and mixed f16/bf16 use the portable path (-x0)"));
    if (mul == 1 && !coopmat_bf16_)
      return fail("bf16 inputs need bf16 cooperative matrices (VK_KHR_shader_bfloat16), which " + info_.name +
                  " lacks" + (coopmat_bf16_why_.empty() ? "" : " (" + coopmat_bf16_why_ + ")") + "; supported: f16 and fp8");
    const CoopmatShape& cm = cm_[mul];
    const int wm = coopmat_warps_m(c), wn = c.warps / wm;
    if (c.warps % wm || c.split_k != 1 || c.stages < 1 || c.stages > 2 || c.block_m % (wm * int(cm.m)) ||
        c.block_n % (wn * int(cm.n)) || c.block_k % int(cm.k) || c.block_m % 8 || c.block_k % 8 || (c.block_n / wn) % 4)
      return fail("tile " + c.to_string() + " does not divide into " + std::to_string(wm) + "x" + std::to_string(wn) +
                  " subgroups of " + std::to_string(cm.m) + "x" + std::to_string(cm.n) + "x" + std::to_string(cm.k) +
                  " fragments (split_k 1, 1 or 2 stages, tile sides multiples of 8)");
    const int threads = c.warps * info_.limits.warp_size;
    const int64_t shared = coopmat_shared_bytes(p, c, cm);
    if (threads > info_.limits.max_threads_per_group || shared > info_.limits.max_shared_bytes)
      return fail(std::to_string(threads) + " threads / " + std::to_string(shared) + " bytes of shared memory exceed the device's " +
                  std::to_string(info_.limits.max_threads_per_group) + " / " + std::to_string(info_.limits.max_shared_bytes));
    return true;
  }

  // The shader paths this device runs, for error messages.
  std::string supported_paths() const {
    const std::string types = std::string("f16/fp8") + (coopmat_bf16_ ? "/bf16" : "");
    const std::string types2 = std::string("f16/fp8") + (coopmat2_bf16_ ? "/bf16" : "");
    return "supported on " + info_.name + ": -x0 (portable, any dtype)" +
           (coopmat_ ? ", -x1 (KHR cooperative matrix, " + types + " inputs)" : "") +
           (coopmat2_ ? ", -x2 (NV cooperative matrix 2, " + types2 + " inputs)" : "");
  }

  // How the -x2 shader reads each operand (its A_LOAD/B_LOAD, A_LD8/B_LD8, D_TENSOR). A tensor
  // load needs the native 16-bit dtype (fp8 is converted while gathering), one unit stride with
  // rows at least a row apart (the tensor layout's stride rule), and a 16-byte aligned base in
  // every batch (coopMatLoadTensorNV's rule); anything else is gathered through shared memory.
  struct Coopmat2Loads {
    uint32_t a = 0, b = 0, a_ld8 = 0, b_ld8 = 0, d_tensor = 0;
  };
  static Coopmat2Loads coopmat2_loads(const Problem& p) {
    const og_dtype mul = coopmat_mul_type(p) == 1 ? OG_DTYPE_BF16 : OG_DTYPE_F16;
    auto aligned = [&](const Operand& o) {
      return o.mem.offset % 16 == 0 && (p.batch == 1 || o.batch_stride * dtype_bytes(o.dtype) % 16 == 0);
    };
    // 1: rows x cols stored row-major (stride_col 1); 2: stored column-major; 0: gathered.
    auto mode = [&](const Operand& o, uint32_t& ld8) -> uint32_t {
      if (!o.present) return 1;  // K == 0: nothing is read
      if (o.dtype != mul || !aligned(o)) return 0;
      int64_t ld = 0;
      uint32_t m = 0;
      if (o.stride_col == 1 && o.stride_row >= o.cols) m = 1, ld = o.stride_row;
      else if (o.stride_row == 1 && o.stride_col >= o.rows) m = 2, ld = o.stride_col;
      ld8 = m != 0 && ld % 8 == 0;
      return m;
    };
    Coopmat2Loads l;
    l.a = mode(p.a, l.a_ld8);
    l.b = mode(p.b, l.b_ld8);
    l.d_tensor = p.d.dtype == OG_DTYPE_F32 && p.d.stride_col == 1 && p.d.stride_row >= p.n && aligned(p.d);
    return l;
  }
  bool coopmat2_ok(const Problem& p, const Config& c, std::string* why) const {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    if (!coopmat2_)
      return fail(info_.name + " has no usable NV cooperative matrix 2 (workgroup scope, flexible dimensions, tensor addressing)" +
                  (coopmat2_why_.empty() ? "" : ": " + coopmat2_why_));
    const int mul = coopmat_mul_type(p);
    if (mul < 0)
      return fail("inputs must be f16, bf16 or fp8 (one 16-bit type, fp8 converted exactly); f32 and mixed f16/bf16 use the portable path (-x0)");
    if (mul == 1 && !coopmat2_bf16_)
      return fail("bf16 inputs need bf16 workgroup-scope cooperative matrices, which " + info_.name + " lacks" +
                  (coopmat2_bf16_why_.empty() ? "" : " (" + coopmat2_bf16_why_ + ")") + "; supported: f16 and fp8");
    if (c.split_k != 1 || c.stages != 1)
      return fail("tile " + c.to_string() + ": -x2 takes split_k 1 and 1 stage (the driver stages the operands)");
    const uint32_t threads = uint32_t(c.warps * info_.limits.warp_size);
    if (int(threads) > info_.limits.max_threads_per_group || threads > cm2_max_workgroup_)
      return fail(std::to_string(threads) + " threads exceed the device's " + std::to_string(cm2_max_workgroup_) +
                  " for workgroup-scope cooperative matrices");
    // The device lists, per workgroup size, the granularity the tile's M, N and K must be multiples of.
    std::string sizes;
    bool fits = false;
    for (const FlexShape& f : cm2_shapes_) {
      if (f.mul != mul) continue;
      if (f.invocations == threads && c.block_m % int(f.m) == 0 && c.block_n % int(f.n) == 0 && c.block_k % int(f.k) == 0)
        fits = true;
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(f.invocations) + " threads: " + std::to_string(f.m) + "x" +
               std::to_string(f.n) + "x" + std::to_string(f.k);
    }
    const int largest = std::max({c.block_m, c.block_n, c.block_k});
    if (!fits || largest > int(cm2_max_dim_) || c.block_n % 2 || c.block_k % 2)
      return fail("tile " + c.to_string() + " (" + std::to_string(threads) + " threads) is not a multiple of a flexible-dimension granularity of " +
                  info_.name + " (" + sizes + ") or exceeds its largest dimension " + std::to_string(cm2_max_dim_));
    // Shared memory the shader declares (gathered operands only), next to what the driver reserves.
    const Coopmat2Loads l = coopmat2_loads(p);
    const int64_t shared = 4 * ((l.a == 0 ? int64_t(c.block_m) * c.block_k / 2 : 1) + (l.b == 0 ? int64_t(c.block_k) * c.block_n / 2 : 1));
    const int64_t available = info_.limits.max_shared_bytes - int64_t(cm2_reserved_shared_);
    if (shared > available)
      return fail(std::to_string(shared) + " bytes of shared memory for gathered operands exceed the " + std::to_string(available) +
                  " bytes left beside the driver's reserved " + std::to_string(cm2_reserved_shared_));
    return true;
  }

  bool has_device_extension(const char* name) const {
    uint32_t n = 0;
    vk_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vk_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, exts.data());
    for (const auto& e : exts)
      if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
  }

  // Fills coopmat2_ from VK_NV_cooperative_matrix2: the features the -x2 shader uses, the limits
  // of workgroup-scope matrices and the flexible-dimension granularities (f16/bf16 -> f32, per
  // workgroup size). Builds on the KHR path's checks (Vulkan 1.3, f16, int16, memory model).
  void query_coopmat2() {
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
    coopmat2_ = coopmat2_bf16_ = false;
    cm2_shapes_.clear();
    if (!coopmat_) { coopmat2_why_ = "it builds on KHR cooperative matrix, which is unusable here (" + coopmat_why_ + ")"; return; }
    if (!has_device_extension(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) { coopmat2_why_ = "no " VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME; return; }
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    VkPhysicalDeviceFeatures2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f};
    vk_.vkGetPhysicalDeviceFeatures2(physical_, &q);
    if (!f.cooperativeMatrixWorkgroupScope || !f.cooperativeMatrixFlexibleDimensions || !f.cooperativeMatrixPerElementOperations ||
        !f.cooperativeMatrixTensorAddressing) {
      coopmat2_why_ = "needs the features cooperativeMatrixWorkgroupScope, cooperativeMatrixFlexibleDimensions, "
                      "cooperativeMatrixPerElementOperations and cooperativeMatrixTensorAddressing";
      return;
    }
    VkPhysicalDeviceCooperativeMatrix2PropertiesNV props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &props};
    vk_.vkGetPhysicalDeviceProperties2(physical_, &p2);
    cm2_max_workgroup_ = props.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    cm2_max_dim_ = props.cooperativeMatrixFlexibleDimensionsMaxDimension;
    cm2_reserved_shared_ = props.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
    auto flex_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
        vk_.vkGetInstanceProcAddr(instance_, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
    if (!flex_fn) { coopmat2_why_ = "loader lacks vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"; return; }
    uint32_t n = 0;
    flex_fn(physical_, &n, nullptr);
    std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> flex(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV});
    flex_fn(physical_, &n, flex.data());
    flex.resize(n);
    for (const auto& fp : flex) {
      const int mul = fp.AType == VK_COMPONENT_TYPE_FLOAT16_KHR ? 0 : fp.AType == VK_COMPONENT_TYPE_BFLOAT16_KHR ? 1 : -1;
      if (mul >= 0 && fp.BType == fp.AType && fp.CType == VK_COMPONENT_TYPE_FLOAT32_KHR && fp.ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
          fp.scope == VK_SCOPE_WORKGROUP_KHR && !fp.saturatingAccumulation && fp.MGranularity && fp.NGranularity && fp.KGranularity)
        cm2_shapes_.push_back({mul, fp.workgroupInvocations, fp.MGranularity, fp.NGranularity, fp.KGranularity});
    }
    auto any = [&](int mul) {
      return std::any_of(cm2_shapes_.begin(), cm2_shapes_.end(), [&](const FlexShape& s) { return s.mul == mul; });
    };
    if (!any(0)) { coopmat2_why_ = "no f16 x f16 -> f32 workgroup-scope flexible dimensions"; return; }
    coopmat2_ = true;
    if (!coopmat_bf16_) coopmat2_bf16_why_ = coopmat_bf16_why_;
    else if (!any(1)) coopmat2_bf16_why_ = "no bf16 x bf16 -> f32 workgroup-scope flexible dimensions";
    else coopmat2_bf16_ = true;
#else
    coopmat2_why_ = "built without the NV cooperative matrix 2 shader (glslang or Vulkan headers without GL/VK_NV_cooperative_matrix2)";
#endif
  }

  // Fills coopmat_ and the fragment shape from the device's cooperative-matrix properties.
  void query_coopmat(uint32_t api_version, const VkPhysicalDeviceFeatures2& f2, const VkPhysicalDeviceVulkan12Features& f12) {
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
    coopmat_ = false;
    if (VK_API_VERSION_MINOR(api_version) < 3 && VK_API_VERSION_MAJOR(api_version) == 1) { coopmat_why_ = "needs Vulkan 1.3"; return; }
    uint32_t n = 0;
    vk_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vk_.vkEnumerateDeviceExtensionProperties(physical_, nullptr, &n, exts.data());
    bool has = false;
    for (const auto& e : exts) has |= std::strcmp(e.extensionName, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0;
    if (!has) { coopmat_why_ = "no " VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME; return; }
    if (!f2.features.shaderInt16 || !f12.shaderFloat16 || !f12.vulkanMemoryModel) { coopmat_why_ = "needs shaderInt16, shaderFloat16, vulkanMemoryModel"; return; }
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cmf};
    vk_.vkGetPhysicalDeviceFeatures2(physical_, &q);
    if (!cmf.cooperativeMatrix) { coopmat_why_ = "cooperativeMatrix feature off"; return; }
    auto props_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vk_.vkGetInstanceProcAddr(instance_, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (!props_fn) { coopmat_why_ = "loader lacks vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"; return; }
    props_fn(physical_, &n, nullptr);
    std::vector<VkCooperativeMatrixPropertiesKHR> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
    props_fn(physical_, &n, props.data());
    // The largest fragment per multiplicand type (fewest instructions).
    auto best_shape = [&](VkComponentTypeKHR mul, CoopmatShape& out) {
      uint32_t best = 0;
      for (const auto& cp : props) {
        if (cp.AType != mul || cp.BType != mul || cp.CType != VK_COMPONENT_TYPE_FLOAT32_KHR ||
            cp.ResultType != VK_COMPONENT_TYPE_FLOAT32_KHR || cp.scope != VK_SCOPE_SUBGROUP_KHR || cp.saturatingAccumulation)
          continue;
        const uint32_t volume = cp.MSize * cp.NSize * cp.KSize;
        if (volume > best) { best = volume; out = {cp.MSize, cp.NSize, cp.KSize}; }
      }
      return best > 0;
    };
    if (!best_shape(VK_COMPONENT_TYPE_FLOAT16_KHR, cm_[0])) { coopmat_why_ = "no f16 x f16 -> f32 subgroup shape"; return; }
    coopmat_ = true;
    // bf16 multiplicands: VK_KHR_shader_bfloat16 with its cooperative-matrix feature and a shape.
    bool has_bf16 = false;
    for (const auto& e : exts) has_bf16 |= std::strcmp(e.extensionName, VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME) == 0;
    VkPhysicalDeviceShaderBfloat16FeaturesKHR bff{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
    if (has_bf16) {
      VkPhysicalDeviceFeatures2 qb{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &bff};
      vk_.vkGetPhysicalDeviceFeatures2(physical_, &qb);
    }
    if (!has_bf16) coopmat_bf16_why_ = "no " VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME;
    else if (!bff.shaderBFloat16Type || !bff.shaderBFloat16CooperativeMatrix) coopmat_bf16_why_ = "shaderBFloat16CooperativeMatrix feature off";
    else if (!best_shape(VK_COMPONENT_TYPE_BFLOAT16_KHR, cm_[1])) coopmat_bf16_why_ = "no bf16 x bf16 -> f32 subgroup shape";
    else coopmat_bf16_ = true;
    coopmat_ = true;
#else
    (void)api_version; (void)f2; (void)f12;
    coopmat_why_ = "built without cooperative-matrix shaders (glslang < 14 or Vulkan headers < 1.3.255)";
#endif
  }

  Status create_own(int device_index) {
    vk_.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(vk_.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
    vk_.vkEnumerateInstanceLayerProperties = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
        vk_.vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceLayerProperties"));
    if (!vk_.vkCreateInstance) return error(StatusCode::backend_unavailable, "vulkan: loader has no vkCreateInstance");

    std::vector<const char*> layers, extensions;
    const char* want = std::getenv("OMNIGEMM_VK_VALIDATION");
    if (want && std::strcmp(want, "0") != 0) {
      uint32_t n = 0;
      vk_.vkEnumerateInstanceLayerProperties(&n, nullptr);
      std::vector<VkLayerProperties> props(n);
      vk_.vkEnumerateInstanceLayerProperties(&n, props.data());
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
    VkResult r = vk_.vkCreateInstance(&ici, nullptr, &instance_);
    if (r != VK_SUCCESS) {
      Status s = vk_status(r, "vkCreateInstance");
      return error(StatusCode::backend_unavailable, s.message);
    }
    own_device_ = true;
    load_instance_functions();
    if (validation_) {
      vk_.vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vk_.vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
      vk_.vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vk_.vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
      VkDebugUtilsMessengerCreateInfoEXT dci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      dci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      dci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
      dci.pfnUserCallback = debug_callback;
      if (vk_.vkCreateDebugUtilsMessengerEXT) vk_.vkCreateDebugUtilsMessengerEXT(instance_, &dci, nullptr, &messenger_);
    }

    uint32_t count = 0;
    vk_.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    vk_.vkEnumeratePhysicalDevices(instance_, &count, devices.data());
    if (count == 0) return error(StatusCode::backend_unavailable, "vulkan: no Vulkan device found");
    if (device_index >= int(count))
      return error(StatusCode::backend_unavailable, "vulkan: device index " + std::to_string(device_index) +
                                                        " requested but only " + std::to_string(count) + " device(s) exist");
    physical_ = devices[size_t(device_index)];
    Status s = check_device();
    if (!s) return s;

    const std::vector<VkQueueFamilyProperties> qprops = queue_families();
    family_ = UINT32_MAX;
    for (uint32_t i = 0; i < qprops.size(); ++i)
      if (qprops[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { family_ = i; break; }
    if (family_ == UINT32_MAX) return error(StatusCode::backend_unavailable, "vulkan: " + info_.name + " has no compute queue");
    timestamps_ = qprops[family_].timestampValidBits > 0;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, nullptr, 0, family_, 1, &priority};
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
    if (coopmat_) {
      cmf.cooperativeMatrix = VK_TRUE;
      *tail = &cmf;
      tail = &cmf.pNext;
      f12.shaderFloat16 = VK_TRUE;
      f12.vulkanMemoryModel = VK_TRUE;
      f2.features.shaderInt16 = VK_TRUE;
      exts.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
      if (coopmat_bf16_) {
        bff.shaderBFloat16Type = VK_TRUE;
        bff.shaderBFloat16CooperativeMatrix = VK_TRUE;
        *tail = &bff;
        tail = &bff.pNext;
        exts.push_back(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME);
      }
    }
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    if (coopmat2_) {  // the features gemm_coopmat2.comp uses
      cm2f.cooperativeMatrixWorkgroupScope = cm2f.cooperativeMatrixFlexibleDimensions = VK_TRUE;
      cm2f.cooperativeMatrixPerElementOperations = cm2f.cooperativeMatrixTensorAddressing = VK_TRUE;
      *tail = &cm2f;
      exts.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
    }
#endif
    dci.enabledExtensionCount = uint32_t(exts.size());
    dci.ppEnabledExtensionNames = exts.data();
    r = vk_.vkCreateDevice(physical_, &dci, nullptr, &device_);
    if (r != VK_SUCCESS) return vk_status(r, "vkCreateDevice");
    load_device_functions();
    vk_.vkGetDeviceQueue(device_, family_, 0, &queue_);
    return {};
  }

  Status adopt(const og_vulkan_host_handles& h) {
    if (!h.instance || !h.physical_device || !h.queue)
      return error(StatusCode::invalid_argument, "vulkan host handles: instance, physical_device, device and queue are all required");
    if (h.api_version && VK_API_VERSION_MINOR(h.api_version) < 2 && VK_API_VERSION_MAJOR(h.api_version) == 1)
      return error(StatusCode::unsupported, "vulkan host handles: OmniGEMM needs a Vulkan 1.2 device (api_version >= 1.2)");
    instance_ = static_cast<VkInstance>(h.instance);
    physical_ = static_cast<VkPhysicalDevice>(h.physical_device);
    device_ = static_cast<VkDevice>(h.device);
    queue_ = static_cast<VkQueue>(h.queue);
    family_ = h.queue_family_index;
    own_device_ = false;
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
    if (coopmat_ && (!enabled(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) || VK_API_VERSION_MINOR(h.api_version) < 3)) {
      coopmat_ = coopmat_bf16_ = false;
      coopmat_why_ = "the host's VkDevice does not list " VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME
                     " among its enabled extensions with api_version >= 1.3 (see og_vulkan_required_device_extensions)";
    }
    if (coopmat_bf16_ && !enabled(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME)) {
      coopmat_bf16_ = false;
      coopmat_bf16_why_ = "the host's VkDevice does not list " VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME " among its enabled extensions";
    }
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
    if (coopmat2_ && (!coopmat_ || !enabled(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME))) {
      coopmat2_ = coopmat2_bf16_ = false;
      coopmat2_why_ = "the host's VkDevice does not list " VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME
                      " (with " VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME ") among its enabled extensions";
    }
    if (coopmat2_bf16_ && !coopmat_bf16_) {
      coopmat2_bf16_ = false;
      coopmat2_bf16_why_ = coopmat_bf16_why_;
    }
#endif
    const std::vector<VkQueueFamilyProperties> qprops = queue_families();
    if (family_ >= qprops.size() || !(qprops[family_].queueFlags & VK_QUEUE_COMPUTE_BIT))
      return error(StatusCode::invalid_argument, "vulkan host handles: queue family " + std::to_string(family_) +
                                                     " does not exist or has no compute bit");
    timestamps_ = qprops[family_].timestampValidBits > 0;
    load_device_functions();
    return {};
  }

  std::vector<VkQueueFamilyProperties> queue_families() const {
    uint32_t count = 0;
    vk_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, nullptr);
    std::vector<VkQueueFamilyProperties> props(count);
    vk_.vkGetPhysicalDeviceQueueFamilyProperties(physical_, &count, props.data());
    return props;
  }

  void load_instance_functions() {
#define OG_LOAD(name) vk_.name = reinterpret_cast<PFN_##name>(vk_.vkGetInstanceProcAddr(instance_, #name));
    OG_VK_INSTANCE_FUNCS(OG_LOAD)
#undef OG_LOAD
  }
  void load_device_functions() {
#define OG_LOAD(name) vk_.name = reinterpret_cast<PFN_##name>(vk_.vkGetDeviceProcAddr(device_, #name));
    OG_VK_DEVICE_FUNCS(OG_LOAD)
#undef OG_LOAD
  }

  // Device properties, the features the shader needs, and the limits the config space uses.
  Status check_device() {
    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &sub};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &drv};
    vk_.vkGetPhysicalDeviceProperties2(physical_, &props);
    device_props_ = props.properties;
    const VkPhysicalDeviceLimits& l = props.properties.limits;
    info_.name = props.properties.deviceName;
    info_.driver = std::string(drv.driverName) + " " + drv.driverInfo + " (Vulkan " +
                   std::to_string(VK_API_VERSION_MAJOR(props.properties.apiVersion)) + "." +
                   std::to_string(VK_API_VERSION_MINOR(props.properties.apiVersion)) + ")";
    if (VK_API_VERSION_MINOR(props.properties.apiVersion) < 2 && VK_API_VERSION_MAJOR(props.properties.apiVersion) == 1)
      return error(StatusCode::backend_unavailable, "vulkan: " + info_.name + " supports only Vulkan 1.0/1.1; OmniGEMM needs 1.2");
    info_.limits.max_shared_bytes = l.maxComputeSharedMemorySize;
    info_.limits.max_threads_per_group = int(l.maxComputeWorkGroupInvocations);
    info_.limits.warp_size = int(sub.subgroupSize ? sub.subgroupSize : 1);
    const bool cpu = cpu_device_ = props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    info_.limits.compute_units = cpu ? int(std::max(1u, std::thread::hardware_concurrency())) : 64;
    info_.limits.l2_bytes = cpu ? (32ll << 20) : (64ll << 20);  // not queryable in core Vulkan
    std::copy(l.maxComputeWorkGroupCount, l.maxComputeWorkGroupCount + 3, max_groups_);
    timestamp_period_ns_ = l.timestampPeriod;
    timestamps_ = l.timestampComputeAndGraphics;

    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
    vk_.vkGetPhysicalDeviceFeatures2(physical_, &f2);
    if (!f11.storageBuffer16BitAccess || !f12.storageBuffer8BitAccess)
      return error(StatusCode::backend_unavailable,
                   "vulkan: " + info_.name + " lacks storageBuffer16BitAccess or storageBuffer8BitAccess, which OmniGEMM's shaders need");
    query_coopmat(props.properties.apiVersion, f2, f12);
    query_coopmat2();
    return {};
  }

  Status create_common() {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr,
                                VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, family_};
    OG_VK_TRY(vk_.vkCreateCommandPool(device_, &pci, nullptr, &pool_), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, pool_,
                                    VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    OG_VK_TRY(vk_.vkAllocateCommandBuffers(device_, &cai, &cmd_), "vkAllocateCommandBuffers");
    OG_VK_TRY(vk_.vkAllocateCommandBuffers(device_, &cai, &capture_cmd_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    OG_VK_TRY(vk_.vkCreateFence(device_, &fci, nullptr, &fence_), "vkCreateFence");
    VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, nullptr, 0, VK_QUERY_TYPE_TIMESTAMP, 2};
    OG_VK_TRY(vk_.vkCreateQueryPool(device_, &qpi, nullptr, &queries_), "vkCreateQueryPool");

    VkDescriptorSetLayoutBinding bindings[kBindings];
    for (uint32_t i = 0; i < kBindings; ++i)
      bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, nullptr, 0, kBindings, bindings};
    OG_VK_TRY(vk_.vkCreateDescriptorSetLayout(device_, &dli, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, nullptr, 0, 1, &set_layout_, 1, &range};
    OG_VK_TRY(vk_.vkCreatePipelineLayout(device_, &pli, nullptr, &pipeline_layout_), "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, nullptr, 0, sizeof(og_spv_gemm_portable),
                                 og_spv_gemm_portable};
    OG_VK_TRY(vk_.vkCreateShaderModule(device_, &smi, nullptr, &shader_), "vkCreateShaderModule");
    Status s;
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
    if (coopmat_ && !(s = coopmat_modules(og_spv_gemm_coopmat, sizeof(og_spv_gemm_coopmat), coopmat_bf16_, coopmat_shader_,
                                          coopmat_bf16_shader_)))
      return s;
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
    if (coopmat2_ && !(s = coopmat_modules(og_spv_gemm_coopmat2, sizeof(og_spv_gemm_coopmat2), coopmat2_bf16_, coopmat2_shader_,
                                           coopmat2_bf16_shader_)))
      return s;
#endif
    OG_VK_TRY(new_descriptor_pool(sync_pool_), "vkCreateDescriptorPool");
    OG_VK_TRY(new_descriptor_pool(capture_pool_), "vkCreateDescriptorPool");
    return create_pipeline_cache();
  }

  // A cooperative-matrix module with f16 multiplicands and, when `bf16`, its bf16 twin.
  Status coopmat_modules(const uint32_t* words, size_t bytes, bool bf16, VkShaderModule& f16_module, VkShaderModule& bf16_module) {
    VkShaderModuleCreateInfo cmi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, nullptr, 0, bytes, words};
    OG_VK_TRY(vk_.vkCreateShaderModule(device_, &cmi, nullptr, &f16_module), "vkCreateShaderModule");
    if (!bf16) return {};
    std::string why;
    const std::vector<uint32_t> patched = spirv_with_bf16_multiplicands(words, bytes / 4, &why);
    if (patched.empty()) return error(StatusCode::internal, "vulkan: " + why);
    cmi.codeSize = patched.size() * 4;
    cmi.pCode = patched.data();
    OG_VK_TRY(vk_.vkCreateShaderModule(device_, &cmi, nullptr, &bf16_module), "vkCreateShaderModule");
    return {};
  }

  VkResult new_descriptor_pool(VkDescriptorPool& pool) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 64 * kBindings};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, nullptr, 0, 64, 1, &size};
    return vk_.vkCreateDescriptorPool(device_, &dpi, nullptr, &pool);
  }

  // Pipeline cache file: the driver validates its header (vendor, device, cache UUID); a file
  // it rejects, or that cannot be read, is ignored with a warning.
  std::string pipeline_cache_path() const {
    if (const char* p = std::getenv("OMNIGEMM_VK_PIPELINE_CACHE"); p && *p) return p;
    if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/omnigemm/vk_pipeline_cache.bin";
    return "";
  }
  Status create_pipeline_cache() {
    std::vector<char> data;
    const std::string path = pipeline_cache_path();
    if (!path.empty()) {
      std::ifstream in(path, std::ios::binary);
      if (in) data.assign(std::istreambuf_iterator<char>(in), {});
    }
    // Header (Vulkan spec, "Pipeline Cache"): size, version, vendor, device, cache UUID.
    VkPipelineCacheHeaderVersionOne header{};
    const bool matches = data.size() >= sizeof header && (std::memcpy(&header, data.data(), sizeof header), true) &&
                         header.headerSize >= sizeof header &&
                         header.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
                         header.vendorID == device_props_.vendorID && header.deviceID == device_props_.deviceID &&
                         std::memcmp(header.pipelineCacheUUID, device_props_.pipelineCacheUUID, VK_UUID_SIZE) == 0;
    VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, nullptr, 0, data.size(), data.data()};
    if (!matches || vk_.vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_) != VK_SUCCESS) {
      if (!data.empty())
        std::fprintf(stderr, "omnigemm vulkan: pipeline cache %s is corrupt or from another device/driver; ignoring it\n",
                     path.c_str());
      ci.initialDataSize = 0;
      ci.pInitialData = nullptr;
      OG_VK_TRY(vk_.vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
    }
    return {};
  }
  void save_pipeline_cache() {
    const std::string path = pipeline_cache_path();
    if (path.empty() || !pipeline_cache_) return;
    size_t size = 0;
    if (vk_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
    std::vector<char> data(size);
    if (vk_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) return;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string tmp = path + ".tmp." + std::to_string(reinterpret_cast<uintptr_t>(this));
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out.write(data.data(), std::streamsize(size));
      if (!out) { std::remove(tmp.c_str()); return; }
    }
    std::rename(tmp.c_str(), path.c_str());  // atomic: concurrent processes never see half a file
  }

  Status pipeline_for(const Problem& p, const Config& c, VkPipeline& out) {
    const uint32_t c_type = p.c.present ? uint32_t(p.c.dtype) : 99u;
    // ids 0..11 (every shader), then the path's own: coopmat pipelines also specialise on the
    // multiplicand type and on how the operands lie in memory.
    uint32_t values[22] = {uint32_t(c.block_m), uint32_t(c.block_n), uint32_t(c.block_k), uint32_t(c.group_m),
                           uint32_t(c.warps * info_.limits.warp_size), uint32_t(p.a.dtype), uint32_t(p.b.dtype),
                           c_type, uint32_t(p.d.dtype), uint32_t(p.bias_mode), uint32_t(p.bias_dtype),
                           uint32_t(p.activation)};
    uint32_t count = 12, variant = 0;
    VkShaderModule module = shader_;
    if (c.extra == 1) {
      const uint32_t mul = uint32_t(coopmat_mul_type(p)), a_m = a_m_contiguous(p), b_k = b_k_contiguous(p);
      const CoopmatShape& cm = cm_[mul];
      const uint32_t own[10] = {cm.m, cm.n, cm.k, uint32_t(info_.limits.warp_size), uint32_t(coopmat_warps_m(c)),
                                uint32_t(c.stages), mul, a_m, b_k, mainloop_probe_};  // ids 12..21
      std::copy(own, own + 10, values + 12);
      count = 22;
      variant = mul | a_m << 1 | b_k << 2 | mainloop_probe_ << 3;
      module = mul ? coopmat_bf16_shader_ : coopmat_shader_;
    } else if (c.extra == 2) {
      const uint32_t mul = uint32_t(coopmat_mul_type(p));
      const Coopmat2Loads l = coopmat2_loads(p);
      const uint32_t own[6] = {l.a, l.b, l.a_ld8, l.b_ld8, l.d_tensor, mul};  // ids 12..17
      std::copy(own, own + 6, values + 12);
      count = 18;
      variant = mul | l.a << 1 | l.b << 3 | l.a_ld8 << 5 | l.b_ld8 << 6 | l.d_tensor << 7;
      module = mul ? coopmat2_bf16_shader_ : coopmat2_shader_;
    }
    const PipelineKey key{c, p.a.dtype, p.b.dtype, c_type, p.d.dtype, p.bias_mode, p.bias_dtype, p.activation, variant};
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = pipelines_.find(key); it != pipelines_.end()) { out = it->second; return {}; }
    VkSpecializationMapEntry entries[22];
    for (uint32_t i = 0; i < count; ++i) entries[i] = {i, i * 4, 4};
    VkSpecializationInfo spec{count, entries, count * 4, values};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module, "main", &spec};
    ci.layout = pipeline_layout_;
    OG_VK_TRY(vk_.vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &out), "vkCreateComputePipelines");
    pipelines_[key] = out;
    return {};
  }

  // Who submits the recorded dispatch decides how long its descriptor set must live:
  // own: submitted and waited at once (the pool is reset before each run);
  // capture: until time_ms submits (its pool is reset when the next timing starts, at most 64 runs);
  // caller: until the caller's command buffer has run, which only the caller knows (kept until
  // the context is destroyed).
  enum class DescriptorUse { own, capture, caller };

  // One descriptor set with every binding written (unused ones point at D's buffer).
  Status descriptor_set_for(const Problem& p, DescriptorUse use, VkDescriptorSet& set) {
    VkDescriptorPool pool = use == DescriptorUse::capture ? capture_pool_ : sync_pool_;
    if (use == DescriptorUse::caller) {
      if (async_pools_.empty() || async_sets_in_last_ == 64) {
        VkDescriptorPool fresh;
        OG_VK_TRY(new_descriptor_pool(fresh), "vkCreateDescriptorPool");
        async_pools_.push_back(fresh);
        async_sets_in_last_ = 0;
      }
      pool = async_pools_.back();
      ++async_sets_in_last_;
    } else if (use == DescriptorUse::own) {
      OG_VK_TRY(vk_.vkResetDescriptorPool(device_, sync_pool_, 0), "vkResetDescriptorPool");
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, nullptr, pool, 1, &set_layout_};
    OG_VK_TRY(vk_.vkAllocateDescriptorSets(device_, &ai, &set), "vkAllocateDescriptorSets");
    auto buf = [&](const og_memory& m) { return reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer)); };
    const VkBuffer d = buf(p.d.mem);
    const VkBuffer a = p.a.present ? buf(p.a.mem) : d, b = p.b.present ? buf(p.b.mem) : d;
    const VkBuffer c = p.c.present ? buf(p.c.mem) : d, bias = p.bias_mode != OG_BIAS_NONE ? buf(p.bias) : d;
    const VkBuffer per_binding[kBindings] = {a, a, a, b, b, b, c, c, d, d, bias, bias};
    VkDescriptorBufferInfo infos[kBindings];
    VkWriteDescriptorSet writes[kBindings];
    for (uint32_t i = 0; i < kBindings; ++i) {
      infos[i] = {per_binding[i], 0, VK_WHOLE_SIZE};
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, set, i, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                   nullptr, &infos[i], nullptr};
    }
    vk_.vkUpdateDescriptorSets(device_, kBindings, writes, 0, nullptr);
    return {};
  }

  Status begin(VkCommandBuffer cmd) {
    OG_VK_TRY(vk_.vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr,
                                VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    OG_VK_TRY(vk_.vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
    return {};
  }

  Status submit_and_wait(VkCommandBuffer cmd) {
    OG_VK_TRY(vk_.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, nullptr, 0, nullptr, nullptr, 1, &cmd};
    OG_VK_TRY(vk_.vkResetFences(device_, 1, &fence_), "vkResetFences");
    OG_VK_TRY(vk_.vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    OG_VK_TRY(vk_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    return {};
  }

  Status create_buffer(size_t bytes, VkBufferUsageFlags usage, VkMemoryPropertyFlags prefer, VkBuffer& buffer,
                       Allocation& a) {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, nullptr, 0, bytes, usage, VK_SHARING_MODE_EXCLUSIVE};
    OG_VK_TRY(vk_.vkCreateBuffer(device_, &bci, nullptr, &buffer), "vkCreateBuffer");
    // The requirements, and whether the driver would rather give the buffer its own allocation.
    VkMemoryDedicatedRequirements dreq{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS};
    VkMemoryRequirements2 req2{VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2, &dreq};
    VkBufferMemoryRequirementsInfo2 rinfo{VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2, nullptr, buffer};
    vk_.vkGetBufferMemoryRequirements2(device_, &rinfo, &req2);
    const VkMemoryRequirements& req = req2.memoryRequirements;
    VkPhysicalDeviceMemoryProperties mp;
    vk_.vkGetPhysicalDeviceMemoryProperties(physical_, &mp);
    uint32_t type = UINT32_MAX;
    for (int pass = 0; pass < 2 && type == UINT32_MAX; ++pass)  // preferred properties first, then any
      for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (pass == 1 || (mp.memoryTypes[i].propertyFlags & prefer) == prefer)) {
          type = i;
          break;
        }
    if (type == UINT32_MAX) {
      vk_.vkDestroyBuffer(device_, buffer, nullptr);
      return error(StatusCode::backend_failure, "vulkan: no memory type fits a storage buffer");
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size, type};
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, nullptr, VK_NULL_HANDLE, buffer};
    if (dreq.prefersDedicatedAllocation || dreq.requiresDedicatedAllocation) mai.pNext = &dedicated;
    VkResult r = vk_.vkAllocateMemory(device_, &mai, nullptr, &a.memory);
    if (r != VK_SUCCESS) {
      vk_.vkDestroyBuffer(device_, buffer, nullptr);
      return vk_status(r, ("vkAllocateMemory of " + std::to_string(bytes) + " bytes").c_str());
    }
    a.size = bytes;
    a.host_visible = (mp.memoryTypes[type].propertyFlags & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) ==
                     (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    r = vk_.vkBindBufferMemory(device_, buffer, a.memory, 0);
    if (r != VK_SUCCESS) {
      vk_.vkDestroyBuffer(device_, buffer, nullptr);
      vk_.vkFreeMemory(device_, a.memory, nullptr);
      return vk_status(r, "vkBindBufferMemory");
    }
    return {};
  }

  // Copies between host memory and a buffer: mapped directly when the buffer is host-visible and
  // coherent (lavapipe, integrated GPUs), else through a staging buffer and a copy command.
  Status transfer(const og_memory& m, void* host, size_t bytes, bool to_device) {
    VkBuffer buffer = reinterpret_cast<VkBuffer>(uintptr_t(m.vk_buffer));
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end())
      return error(StatusCode::invalid_argument, "vulkan: buffer was not allocated by this context");
    if (m.offset + bytes > it->second.size)
      return error(StatusCode::invalid_argument, "vulkan: transfer beyond the end of the buffer");
    auto copy_mapped = [&](VkDeviceMemory mem, VkDeviceSize offset) -> Status {
      void* p = nullptr;
      OG_VK_TRY(vk_.vkMapMemory(device_, mem, offset, bytes, 0, &p), "vkMapMemory");
      if (to_device) std::memcpy(p, host, bytes);
      else std::memcpy(host, p, bytes);
      vk_.vkUnmapMemory(device_, mem);
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
      vk_.vkCmdCopyBuffer(cmd_, to_device ? staging : buffer, to_device ? buffer : staging, 1, &region);
      s = submit_and_wait(cmd_);
    }
    if (s && !to_device) s = copy_mapped(sa.memory, 0);
    vk_.vkDestroyBuffer(device_, staging, nullptr);
    vk_.vkFreeMemory(device_, sa.memory, nullptr);
    return s;
  }

  void shutdown() {
    if (device_ && vk_.vkQueueWaitIdle && queue_) vk_.vkQueueWaitIdle(queue_);
    if (device_ && vk_.vkDestroyPipeline) {
      save_pipeline_cache();
      for (auto& [k, pl] : pipelines_) vk_.vkDestroyPipeline(device_, pl, nullptr);
      for (auto& [b, a] : buffers_) {
        vk_.vkDestroyBuffer(device_, b, nullptr);
        vk_.vkFreeMemory(device_, a.memory, nullptr);
      }
      for (VkDescriptorPool pl : async_pools_) vk_.vkDestroyDescriptorPool(device_, pl, nullptr);
      if (sync_pool_) vk_.vkDestroyDescriptorPool(device_, sync_pool_, nullptr);
      if (capture_pool_) vk_.vkDestroyDescriptorPool(device_, capture_pool_, nullptr);
      if (pipeline_cache_) vk_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
      if (shader_) vk_.vkDestroyShaderModule(device_, shader_, nullptr);
      if (coopmat_shader_) vk_.vkDestroyShaderModule(device_, coopmat_shader_, nullptr);
      if (coopmat_bf16_shader_) vk_.vkDestroyShaderModule(device_, coopmat_bf16_shader_, nullptr);
      if (coopmat2_shader_) vk_.vkDestroyShaderModule(device_, coopmat2_shader_, nullptr);
      if (coopmat2_bf16_shader_) vk_.vkDestroyShaderModule(device_, coopmat2_bf16_shader_, nullptr);
      if (pipeline_layout_) vk_.vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
      if (set_layout_) vk_.vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
      if (queries_) vk_.vkDestroyQueryPool(device_, queries_, nullptr);
      if (fence_) vk_.vkDestroyFence(device_, fence_, nullptr);
      if (pool_) vk_.vkDestroyCommandPool(device_, pool_, nullptr);
      if (own_device_) vk_.vkDestroyDevice(device_, nullptr);
    }
    if (own_device_ && instance_) {
      if (messenger_ && vk_.vkDestroyDebugUtilsMessengerEXT) vk_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
      if (vk_.vkDestroyInstance) vk_.vkDestroyInstance(instance_, nullptr);
    }
    device_ = VK_NULL_HANDLE;
    instance_ = VK_NULL_HANDLE;
    if (vk_.lib) dlclose(vk_.lib);
    vk_.lib = nullptr;
  }

  Vk vk_;
  DeviceInfo info_;
  VkPhysicalDeviceProperties device_props_{};
  bool own_device_ = false, validation_ = false, timestamps_ = false;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  uint32_t max_groups_[3] = {65535, 65535, 65535};
  float timestamp_period_ns_ = 1.0f;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkCommandBuffer capture_cmd_ = VK_NULL_HANDLE;
  VkCommandBuffer capture_ = VK_NULL_HANDLE;  // capture_cmd_ while time_ms records launches
  std::thread::id capture_thread_;            // ... of this thread only
  std::mutex timing_mutex_;
  VkDescriptorPool capture_pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkShaderModule shader_ = VK_NULL_HANDLE;
  VkShaderModule coopmat_shader_ = VK_NULL_HANDLE;
  VkShaderModule coopmat_bf16_shader_ = VK_NULL_HANDLE;  // the same module with bf16 multiplicands
  bool coopmat_ = false;         // the KHR cooperative-matrix path (-x1) runs on this device
  std::string coopmat_why_;      // ... or why not
  CoopmatShape cm_[2] = {{16, 16, 16}, {16, 16, 16}};  // fragment shapes for f16 / bf16, from the device
  bool coopmat_bf16_ = false;    // ... also with bf16 multiplicands (VK_KHR_shader_bfloat16)
  std::string coopmat_bf16_why_;
  uint32_t mainloop_probe_ = 0;  // OMNIGEMM_VK_MAINLOOP_PROBE (ceiling measurement): the shader's id 21
  bool cpu_device_ = false;  // a CPU implementation (lavapipe)
  VkShaderModule coopmat2_shader_ = VK_NULL_HANDLE;
  VkShaderModule coopmat2_bf16_shader_ = VK_NULL_HANDLE;
  bool coopmat2_ = false;        // the NV cooperative matrix 2 path (-x2) runs on this device
  std::string coopmat2_why_;     // ... or why not
  bool coopmat2_bf16_ = false;   // ... also with bf16 multiplicands
  std::string coopmat2_bf16_why_;
  // Workgroup-scope flexible dimensions: per multiplicand type (0 f16, 1 bf16) and workgroup
  // size, the granularity of M, N and K; and the limits of workgroup-scope matrices.
  struct FlexShape {
    int mul;
    uint32_t invocations, m, n, k;
  };
  std::vector<FlexShape> cm2_shapes_;
  uint32_t cm2_max_workgroup_ = 0, cm2_max_dim_ = 0, cm2_reserved_shared_ = 0;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkDescriptorPool sync_pool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> async_pools_;
  int async_sets_in_last_ = 0;
  // (config, A, B, C, D dtypes, bias mode, bias dtype, activation, coopmat variant bits)
  using PipelineKey = std::tuple<Config, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;
  std::map<PipelineKey, VkPipeline> pipelines_;
  std::map<VkBuffer, Allocation> buffers_;
  std::mutex mutex_;
};

}  // namespace

int vulkan_validation_message_count() { return g_validation_messages.load(); }

Status make_vulkan_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  auto be = std::make_unique<VulkanBackend>();
  Status s = be->init(opt);
  if (!s) return s;
  out = std::move(be);
  return {};
}

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
