// The embedding case: an application creates its own VkInstance/VkDevice, hands them to OmniGEMM
// (og_vulkan_host_handles), and OmniGEMM records the GEMM into the application's command buffer
// on the application's buffers; the application submits. With OMNIGEMM_VK_VALIDATION=1 the
// application's instance runs the Khronos validation layer and the test asserts it stays silent.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm_vulkan.h"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

int g_app_validation_messages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL count_messages(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_app_validation_messages;
    MESSAGE("validation: " << (data && data->pMessage ? data->pMessage : "?"));
  }
  return VK_FALSE;
}

// A minimal "host application": its own instance, device, queue, command buffer and buffers.
struct App {
  void* lib = nullptr;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = UINT32_MAX;
  VkCommandPool pool = VK_NULL_HANDLE;
  std::string skip_reason;
  std::vector<const char*> extensions;  // the device extensions the application enabled
  uint32_t api_version = VK_API_VERSION_1_2;
  // VkPhysicalDeviceShaderBfloat16FeaturesKHR (VK_KHR_shader_bfloat16; newer than some headers)
  struct Bf16Features {
    VkStructureType sType;
    void* pNext = nullptr;
    VkBool32 shaderBFloat16Type = VK_FALSE, shaderBFloat16DotProduct = VK_FALSE, shaderBFloat16CooperativeMatrix = VK_FALSE;
  };

  bool enabled(const char* name) const {
    for (const char* e : extensions)
      if (std::strcmp(e, name) == 0) return true;
    return false;
  }

  template <class F>
  F ifn(const char* name) { return reinterpret_cast<F>(gipa(instance, name)); }
  template <class F>
  F dfn(const char* name) { return reinterpret_cast<F>(ifn<PFN_vkGetDeviceProcAddr>("vkGetDeviceProcAddr")(device, name)); }

  bool start() {
    lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { skip_reason = "no Vulkan loader"; return false; }
    gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    std::vector<const char*> layers, exts;
    const char* v = std::getenv("OMNIGEMM_VK_VALIDATION");
    if (v && std::strcmp(v, "0") != 0) {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO, nullptr, "host-app", 1, "host-engine", 1, VK_API_VERSION_1_3};
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, nullptr, 0, &app, uint32_t(layers.size()),
                             layers.data(), uint32_t(exts.size()), exts.data()};
    auto create_instance = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));
    if (create_instance(&ici, nullptr, &instance) != VK_SUCCESS) {
      // The layer may be absent: retry without it.
      ici.enabledLayerCount = ici.enabledExtensionCount = 0;
      if (create_instance(&ici, nullptr, &instance) != VK_SUCCESS) { skip_reason = "vkCreateInstance failed"; return false; }
    } else if (!layers.empty()) {
      VkDebugUtilsMessengerCreateInfoEXT dci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
      dci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
      dci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
      dci.pfnUserCallback = count_messages;
      ifn<PFN_vkCreateDebugUtilsMessengerEXT>("vkCreateDebugUtilsMessengerEXT")(instance, &dci, nullptr, &messenger);
    }
    uint32_t n = 0;
    ifn<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices")(instance, &n, nullptr);
    if (n == 0) { skip_reason = "no Vulkan device"; return false; }
    std::vector<VkPhysicalDevice> devs(n);
    ifn<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices")(instance, &n, devs.data());
    physical = devs[0];
    uint32_t qn = 0;
    auto qprops = ifn<PFN_vkGetPhysicalDeviceQueueFamilyProperties>("vkGetPhysicalDeviceQueueFamilyProperties");
    qprops(physical, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qp(qn);
    qprops(physical, &qn, qp.data());
    for (uint32_t i = 0; i < qn && family == UINT32_MAX; ++i)
      if (qp[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
    // The application enables what omnigemm_vulkan.h documents.
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, nullptr, 0, family, 1, &prio};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.storageBuffer8BitAccess = VK_TRUE;
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
    f11.storageBuffer16BitAccess = VK_TRUE;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2, 0, 1, &qci};
    // ... and, where OmniGEMM lists the cooperative-matrix extensions, those with their features.
    VkPhysicalDeviceProperties props;
    ifn<PFN_vkGetPhysicalDeviceProperties>("vkGetPhysicalDeviceProperties")(physical, &props);
    const char* wanted[4] = {};
    const uint32_t listed = og_vulkan_required_device_extensions(instance, physical, wanted, 4);
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    Bf16Features bff{VkStructureType(1000141000)};  // VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR
#ifdef VK_NV_cooperative_matrix2
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
#endif
    if (listed > 0 && VK_API_VERSION_MINOR(props.apiVersion) >= 3) {
      for (uint32_t i = 0; i < listed && i < 4; ++i) extensions.push_back(wanted[i]);
      // KHR cooperative matrix comes first; the others are enabled by name with their features.
      CHECK(std::strcmp(extensions[0], VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0);
      cmf.cooperativeMatrix = VK_TRUE;
      f12.pNext = &cmf;
      f12.shaderFloat16 = VK_TRUE;
      f12.vulkanMemoryModel = VK_TRUE;
      f2.features.shaderInt16 = VK_TRUE;
      void** tail = &cmf.pNext;
      if (enabled("VK_KHR_shader_bfloat16")) {
        bff.shaderBFloat16Type = bff.shaderBFloat16CooperativeMatrix = VK_TRUE;
        *tail = &bff;
        tail = &bff.pNext;
      }
#ifdef VK_NV_cooperative_matrix2
      if (enabled("VK_NV_cooperative_matrix2")) {  // what the coopmat2 shader uses
        cm2f.cooperativeMatrixWorkgroupScope = cm2f.cooperativeMatrixFlexibleDimensions = VK_TRUE;
        cm2f.cooperativeMatrixPerElementOperations = cm2f.cooperativeMatrixTensorAddressing = VK_TRUE;
        *tail = &cm2f;
      }
#endif
      (void)tail;
      dci.enabledExtensionCount = uint32_t(extensions.size());
      dci.ppEnabledExtensionNames = extensions.data();
      api_version = VK_API_VERSION_1_3;
    }
    if (ifn<PFN_vkCreateDevice>("vkCreateDevice")(physical, &dci, nullptr, &device) != VK_SUCCESS) {
      skip_reason = "vkCreateDevice failed";
      return false;
    }
    dfn<PFN_vkGetDeviceQueue>("vkGetDeviceQueue")(device, family, 0, &queue);
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, family};
    dfn<PFN_vkCreateCommandPool>("vkCreateCommandPool")(device, &pci, nullptr, &pool);
    return true;
  }

  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    size_t bytes = 0;
  };
  // Host-visible storage buffer with `bytes` copied in.
  Buffer buffer(const std::vector<uint8_t>& init) {
    Buffer b;
    b.bytes = init.size();
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, nullptr, 0, b.bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                           VK_SHARING_MODE_EXCLUSIVE};
    dfn<PFN_vkCreateBuffer>("vkCreateBuffer")(device, &bci, nullptr, &b.buffer);
    VkMemoryRequirements req;
    dfn<PFN_vkGetBufferMemoryRequirements>("vkGetBufferMemoryRequirements")(device, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    ifn<PFN_vkGetPhysicalDeviceMemoryProperties>("vkGetPhysicalDeviceMemoryProperties")(physical, &mp);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = 0;
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) { type = i; break; }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr, req.size, type};
    dfn<PFN_vkAllocateMemory>("vkAllocateMemory")(device, &mai, nullptr, &b.memory);
    dfn<PFN_vkBindBufferMemory>("vkBindBufferMemory")(device, b.buffer, b.memory, 0);
    write(b, init.data());
    return b;
  }
  void write(Buffer& b, const void* src) {
    void* p = nullptr;
    dfn<PFN_vkMapMemory>("vkMapMemory")(device, b.memory, 0, b.bytes, 0, &p);
    std::memcpy(p, src, b.bytes);
    dfn<PFN_vkUnmapMemory>("vkUnmapMemory")(device, b.memory);
  }
  void read(Buffer& b, void* dst) {
    void* p = nullptr;
    dfn<PFN_vkMapMemory>("vkMapMemory")(device, b.memory, 0, b.bytes, 0, &p);
    std::memcpy(dst, p, b.bytes);
    dfn<PFN_vkUnmapMemory>("vkUnmapMemory")(device, b.memory);
  }
  void free(Buffer& b) {
    dfn<PFN_vkDestroyBuffer>("vkDestroyBuffer")(device, b.buffer, nullptr);
    dfn<PFN_vkFreeMemory>("vkFreeMemory")(device, b.memory, nullptr);
  }

  ~App() {
    if (device) {
      dfn<PFN_vkDestroyCommandPool>("vkDestroyCommandPool")(device, pool, nullptr);
      dfn<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr);
    }
    if (messenger) ifn<PFN_vkDestroyDebugUtilsMessengerEXT>("vkDestroyDebugUtilsMessengerEXT")(instance, messenger, nullptr);
    if (instance) ifn<PFN_vkDestroyInstance>("vkDestroyInstance")(instance, nullptr);
    if (lib) dlclose(lib);
  }
};

}  // namespace

TEST_CASE("vulkan host device: OmniGEMM records into the application's command buffer on its VkDevice") {
  App app;
  if (!app.start()) {
    MESSAGE("SKIPPED vulkan: host device: " << app.skip_reason);
    return;
  }
  // What OmniGEMM asks for is what the device offers of the cooperative-matrix extensions.
  CHECK(og_vulkan_required_device_extensions(app.instance, app.physical, nullptr, 0) == app.extensions.size());
  CHECK(og_vulkan_required_device_extensions(nullptr, nullptr, nullptr, 0) == 0);
  og_vulkan_host_handles handles{};
  handles.instance = app.instance;
  handles.physical_device = app.physical;
  handles.device = app.device;
  handles.queue_family_index = app.family;
  handles.queue = app.queue;
  handles.get_instance_proc_addr = reinterpret_cast<void*>(app.gipa);
  handles.api_version = app.api_version;
  handles.enabled_device_extensions = app.extensions.data();
  handles.enabled_device_extension_count = uint32_t(app.extensions.size());
  HostMatrix A(37, 29, Dtype::f16), B(29, 45, Dtype::bf16, Layout::col_major), D(37, 45, Dtype::f32);
  A.randomize();
  B.randomize();
  D.poison();
  std::vector<float> bias(45);
  for (float& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  App::Buffer ba = app.buffer(A.bytes), bb = app.buffer(B.bytes), bd = app.buffer(D.bytes);
  App::Buffer bbias = app.buffer(std::vector<uint8_t>(reinterpret_cast<uint8_t*>(bias.data()),
                                                      reinterpret_cast<uint8_t*>(bias.data() + bias.size())));
  {
    auto ctx = Context::create({.backend = Backend::vulkan, .vulkan = &handles});
    REQUIRE_MESSAGE(ctx.ok(), ctx.status().message);
    Gemm g;
    g.a = A.view(Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(ba.buffer))));
    g.b = B.view(Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(bb.buffer))));
    g.d = D.view(Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(bd.buffer))));
    g.epilogue.activation = Activation::relu;
    g.epilogue.bias_mode = BiasMode::per_n;
    g.epilogue.bias = Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(bbias.buffer)));
    EpilogueSpec e;
    e.act = Activation::relu;
    e.bias_mode = BiasMode::per_n;
    const auto ref = reference_gemm(A, B, nullptr, &bias, e, 1);

    // 1. Recorded into the application's command buffer, submitted by the application.
    VkCommandBuffer cmd;
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, nullptr, app.pool,
                                    VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    REQUIRE(app.dfn<PFN_vkAllocateCommandBuffers>("vkAllocateCommandBuffers")(app.device, &cai, &cmd) == VK_SUCCESS);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    app.dfn<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(cmd, &bi);
    Status s = ctx->run_async(g, cmd);
    REQUIRE_MESSAGE(s.ok(), s.message);
    // The barrier omnigemm_vulkan.h asks for before the application reads D (here: the host).
    VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    app.dfn<PFN_vkCmdPipelineBarrier>("vkCmdPipelineBarrier")(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                                              VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, nullptr, 0, nullptr);
    app.dfn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(cmd);
    CHECK(std::isnan(D.get(0, 0, 0)));  // recorded, not run: the poisoned output is untouched so far
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, nullptr, 0, nullptr, nullptr, 1, &cmd};
    REQUIRE(app.dfn<PFN_vkQueueSubmit>("vkQueueSubmit")(app.queue, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS);
    REQUIRE(app.dfn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle")(app.queue) == VK_SUCCESS);
    app.read(bd, D.bytes.data());
    ErrorReport r = compare(D, ref);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 29));

    // 2. The synchronous call on the application's queue.
    D.poison();
    app.write(bd, D.bytes.data());
    REQUIRE(ctx->run(g).ok());
    app.read(bd, D.bytes.data());
    r = compare(D, ref);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 29));

    // 3. Where the application enabled what og_vulkan_required_device_extensions lists, the
    //    cooperative-matrix paths run on its device too, recorded into its command buffer: per
    //    extension, KHR cooperative matrix with f16 and bf16 (vulkan.coopmat), NV cooperative
    //    matrix 2 (vulkan.coopmat2).
    if (app.extensions.empty()) MESSAGE("SKIPPED vulkan host device coopmat: " << "the device offers no KHR cooperative matrix");
    for (const char* ext : app.extensions) {
      const bool bf16 = std::strcmp(ext, "VK_KHR_shader_bfloat16") == 0;
      const bool cm2 = std::strcmp(ext, "VK_NV_cooperative_matrix2") == 0;
      const Dtype mul = bf16 ? Dtype::bf16 : Dtype::f16;
      CAPTURE(std::string(ext));
      HostMatrix A2(200, 136, mul), B2(136, 264, mul, Layout::col_major), D2(200, 264, Dtype::f16);
      A2.randomize();
      B2.randomize();
      D2.poison();
      App::Buffer b2a = app.buffer(A2.bytes), b2b = app.buffer(B2.bytes), b2d = app.buffer(D2.bytes);
      Gemm g2;
      g2.a = A2.view(Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(b2a.buffer))));
      g2.b = B2.view(Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(b2b.buffer))));
      g2.d = D2.view(Memory::vulkan(uint64_t(reinterpret_cast<uintptr_t>(b2d.buffer))));
      g2.config = cm2 ? "coopmat2:128x128x32-g8-s1-w4" : "coopmat:128x128x32-g8-s2-w4";
      REQUIRE(app.dfn<PFN_vkResetCommandBuffer>("vkResetCommandBuffer")(cmd, 0) == VK_SUCCESS);
      app.dfn<PFN_vkBeginCommandBuffer>("vkBeginCommandBuffer")(cmd, &bi);
      s = ctx->run_async(g2, cmd);
      REQUIRE_MESSAGE(s.ok(), s.message);
      app.dfn<PFN_vkCmdPipelineBarrier>("vkCmdPipelineBarrier")(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                                                VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, nullptr, 0, nullptr);
      app.dfn<PFN_vkEndCommandBuffer>("vkEndCommandBuffer")(cmd);
      REQUIRE(app.dfn<PFN_vkQueueSubmit>("vkQueueSubmit")(app.queue, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS);
      REQUIRE(app.dfn<PFN_vkQueueWaitIdle>("vkQueueWaitIdle")(app.queue) == VK_SUCCESS);
      app.read(b2d, D2.bytes.data());
      r = compare(D2, reference_gemm(A2, B2, nullptr, nullptr, EpilogueSpec{}, 1));
      CHECK(r.non_finite == 0);
      CHECK(r.rel_error <= tolerance(Dtype::f16, 136));
      for (App::Buffer* b : {&b2a, &b2b, &b2d}) app.free(*b);
    }
  }  // the context goes first; the application's device outlives it
  for (App::Buffer* b : {&ba, &bb, &bd, &bbias}) app.free(*b);
  CHECK(g_app_validation_messages == 0);
}

TEST_CASE("vulkan host device: incomplete handles are refused with a message") {
  og_vulkan_host_handles handles{};
  handles.device = reinterpret_cast<void*>(uintptr_t(1));  // a device but no instance/queue
  auto ctx = Context::create({.backend = Backend::vulkan, .vulkan = &handles});
  CHECK_FALSE(ctx.ok());
  CHECK(ctx.status().code == StatusCode::invalid_argument);
  CHECK(ctx.status().message.find("required") != std::string::npos);
}
