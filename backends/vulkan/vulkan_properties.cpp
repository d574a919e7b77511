// The device's properties (query_properties, the one part with Vulkan calls) and the pure choices
// made from them (select_coopmat, select_coopmat2).
#include "vulkan_properties.hpp"

#include <algorithm>
#include <cstring>

namespace omnigemm::detail::vulkan {

namespace {
constexpr uint32_t kVendorIntel = 0x8086;
}  // namespace

bool DeviceProperties::has_extension(const char* ext) const {
  return std::any_of(extensions.begin(), extensions.end(), [&](const std::string& e) { return e == ext; });
}

BuiltShaders BuiltShaders::of_this_build() {
  BuiltShaders b;
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
  b.coopmat = true;
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
  b.coopmat2 = true;
#endif
  return b;
}

bool f16_rounding_in_hardware(const DeviceProperties& p, const CoopmatSupport& coopmat) {
  return coopmat.ok && p.shader_float16 && p.rounding_rte_float16 && p.denorm_preserve_float16;
}

CoopmatSupport select_coopmat(const DeviceProperties& p, const BuiltShaders& built) {
  CoopmatSupport s;
  if (!built.coopmat) {
    s.why = "built without cooperative-matrix shaders (glslang < 14 or Vulkan headers < 1.3.255)";
    return s;
  }
  if (VK_API_VERSION_MAJOR(p.api_version) == 1 && VK_API_VERSION_MINOR(p.api_version) < 3) return s.why = "needs Vulkan 1.3", s;
  if (!p.has_extension("VK_KHR_cooperative_matrix")) return s.why = "no VK_KHR_cooperative_matrix", s;
  if (!p.shader_int16 || !p.shader_float16 || !p.memory_model) return s.why = "needs shaderInt16, shaderFloat16, vulkanMemoryModel", s;
  if (!p.cooperative_matrix) return s.why = "cooperativeMatrix feature off", s;
  // The largest fragment per multiplicand type (fewest instructions), f32 accumulation.
  auto best_shape = [&](uint32_t mul, CoopmatShape& out) {
    uint32_t best = 0;
    for (const CoopmatProperty& cp : p.coopmat) {
      if (cp.a != mul || cp.b != mul || cp.c != kF32 || cp.result != kF32 || cp.scope != kSubgroup || cp.saturating) continue;
      const uint32_t volume = cp.m * cp.n * cp.k;
      if (volume > best) best = volume, out = {cp.m, cp.n, cp.k};
    }
    return best > 0;
  };
  if (!best_shape(kF16, s.shape[0])) return s.why = "no f16 x f16 -> f32 subgroup shape", s;
  // The subgroup size the shader's layout assumes. Where the device lets pipelines choose it
  // (subgroup size control for compute), it is required at pipeline creation: otherwise a
  // SPIR-V 1.6 shader may run at any size in [min, max]. Intel: the smallest, the width of its
  // matrix engines' instructions (8 on Xe-HPG, 16 on Xe2; ggml-vulkan chooses the same);
  // elsewhere 32 (NVIDIA's only size, AMD RDNA's native wave size, whose WMMA instructions run
  // wave32). Without control, the size the device reports.
  const bool control = p.subgroup_size_control && (p.required_subgroup_size_stages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                       p.min_subgroup_size > 0 && p.max_subgroup_size >= p.min_subgroup_size;
  if (control) {
    s.subgroup = p.vendor_id == kVendorIntel ? p.min_subgroup_size : std::clamp(32u, p.min_subgroup_size, p.max_subgroup_size);
    s.require_subgroup = p.min_subgroup_size != p.max_subgroup_size;
  } else {
    s.subgroup = p.subgroup_size;
  }
  if (s.subgroup == 0) return s.why = "the device reports no subgroup size", s;
  s.ok = true;
  // bf16 multiplicands: VK_KHR_shader_bfloat16 with its cooperative-matrix feature and a shape.
  if (!p.has_extension("VK_KHR_shader_bfloat16")) s.bf16_why = "no VK_KHR_shader_bfloat16";
  else if (!p.bf16_type || !p.bf16_cooperative_matrix) s.bf16_why = "shaderBFloat16CooperativeMatrix feature off";
  else if (!best_shape(kBF16, s.shape[1])) s.bf16_why = "no bf16 x bf16 -> f32 subgroup shape";
  else s.bf16 = true;
  return s;
}

Coopmat2Support select_coopmat2(const DeviceProperties& p, const CoopmatSupport& coopmat, const BuiltShaders& built) {
  Coopmat2Support s;
  if (!built.coopmat2) {
    s.why = "built without the NV cooperative matrix 2 shader (glslang or Vulkan headers without GL/VK_NV_cooperative_matrix2)";
    return s;
  }
  if (!coopmat.ok) return s.why = "it builds on KHR cooperative matrix, which is unusable here (" + coopmat.why + ")", s;
  if (!p.has_extension("VK_NV_cooperative_matrix2")) return s.why = "no VK_NV_cooperative_matrix2", s;
  if (!p.cm2_workgroup_scope || !p.cm2_flexible_dimensions || !p.cm2_per_element || !p.cm2_tensor_addressing)
    return s.why = "needs the features cooperativeMatrixWorkgroupScope, cooperativeMatrixFlexibleDimensions, "
                   "cooperativeMatrixPerElementOperations and cooperativeMatrixTensorAddressing",
           s;
  s.max_workgroup = p.cm2_max_workgroup;
  s.max_dim = p.cm2_max_dimension;
  s.reserved_shared = p.cm2_reserved_shared;
  for (const FlexProperty& f : p.flex) {
    const int mul = f.a == kF16 ? 0 : f.a == kBF16 ? 1 : -1;
    if (mul >= 0 && f.b == f.a && f.c == kF32 && f.result == kF32 && f.scope == kWorkgroup && !f.saturating && f.m_granularity &&
        f.n_granularity && f.k_granularity)
      s.shapes.push_back({mul, f.workgroup_invocations, f.m_granularity, f.n_granularity, f.k_granularity});
  }
  auto any = [&](int mul) { return std::any_of(s.shapes.begin(), s.shapes.end(), [&](const auto& f) { return f.mul == mul; }); };
  if (!any(0)) return s.why = "no f16 x f16 -> f32 workgroup-scope flexible dimensions", s;
  s.ok = true;
  if (!coopmat.bf16) s.bf16_why = coopmat.bf16_why;
  else if (!any(1)) s.bf16_why = "no bf16 x bf16 -> f32 workgroup-scope flexible dimensions";
  else s.bf16 = true;
  return s;
}

DeviceProperties query_properties(const Vk& vk, VkInstance instance, VkPhysicalDevice physical) {
  DeviceProperties p;
  VkPhysicalDeviceFloatControlsProperties fc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties ssc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES, &fc};
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, &ssc};
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, &sub};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &drv};
  vk.vkGetPhysicalDeviceProperties2(physical, &p2);
  p.rounding_rte_float16 = fc.shaderRoundingModeRTEFloat16;
  p.denorm_preserve_float16 = fc.shaderDenormPreserveFloat16;
  const VkPhysicalDeviceLimits& l = p2.properties.limits;
  p.name = p2.properties.deviceName;
  p.api_version = p2.properties.apiVersion;
  p.vendor_id = p2.properties.vendorID;
  p.driver_id = uint32_t(drv.driverID);
  p.type = p2.properties.deviceType;
  p.subgroup_size = sub.subgroupSize;
  const bool v13 = !(VK_API_VERSION_MAJOR(p.api_version) == 1 && VK_API_VERSION_MINOR(p.api_version) < 3);
  if (v13) {  // subgroup size control is core in 1.3 (the struct is not filled before)
    p.min_subgroup_size = ssc.minSubgroupSize;
    p.max_subgroup_size = ssc.maxSubgroupSize;
    p.required_subgroup_size_stages = ssc.requiredSubgroupSizeStages;
  }
  p.max_shared_bytes = l.maxComputeSharedMemorySize;
  p.max_invocations = l.maxComputeWorkGroupInvocations;
  std::copy(l.maxComputeWorkGroupCount, l.maxComputeWorkGroupCount + 3, p.max_groups);

  uint32_t n = 0;
  vk.vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vk.vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, exts.data());
  for (uint32_t i = 0; i < n; ++i) p.extensions.emplace_back(exts[i].extensionName);
  if (p.has_extension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sm};
    vk.vkGetPhysicalDeviceProperties2(physical, &q);
    p.compute_units = sm.shaderSMCount;
  } else if (p.has_extension(VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderCorePropertiesAMD core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &core};
    vk.vkGetPhysicalDeviceProperties2(physical, &q);
    p.compute_units = core.shaderEngineCount * core.shaderArraysPerEngineCount * core.computeUnitsPerShaderArray;
  }

  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, v13 ? &f13 : nullptr};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  vk.vkGetPhysicalDeviceFeatures2(physical, &f2);
  p.storage_16bit = f11.storageBuffer16BitAccess;
  p.storage_8bit = f12.storageBuffer8BitAccess;
  p.shader_int16 = f2.features.shaderInt16;
  p.shader_float16 = f12.shaderFloat16;
  p.memory_model = f12.vulkanMemoryModel;
  p.subgroup_size_control = v13 && f13.subgroupSizeControl;
  p.compute_full_subgroups = v13 && f13.computeFullSubgroups;

#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
  if (p.has_extension(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME)) {
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmf{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &cmf};
    vk.vkGetPhysicalDeviceFeatures2(physical, &q);
    p.cooperative_matrix = cmf.cooperativeMatrix;
    auto props_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vk.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (props_fn) {
      props_fn(physical, &n, nullptr);
      std::vector<VkCooperativeMatrixPropertiesKHR> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
      props_fn(physical, &n, props.data());
      for (uint32_t i = 0; i < n; ++i) {
        const auto& c = props[i];
        p.coopmat.push_back({c.MSize, c.NSize, c.KSize, uint32_t(c.AType), uint32_t(c.BType), uint32_t(c.CType),
                             uint32_t(c.ResultType), uint32_t(c.scope), c.saturatingAccumulation == VK_TRUE});
      }
    }
  }
  if (p.has_extension(VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderBfloat16FeaturesKHR bff{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &bff};
    vk.vkGetPhysicalDeviceFeatures2(physical, &q);
    p.bf16_type = bff.shaderBFloat16Type;
    p.bf16_cooperative_matrix = bff.shaderBFloat16CooperativeMatrix;
  }
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
  if (p.has_extension(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) {
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    VkPhysicalDeviceFeatures2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f};
    vk.vkGetPhysicalDeviceFeatures2(physical, &q);
    p.cm2_workgroup_scope = f.cooperativeMatrixWorkgroupScope;
    p.cm2_flexible_dimensions = f.cooperativeMatrixFlexibleDimensions;
    p.cm2_per_element = f.cooperativeMatrixPerElementOperations;
    p.cm2_tensor_addressing = f.cooperativeMatrixTensorAddressing;
    VkPhysicalDeviceCooperativeMatrix2PropertiesNV props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 q2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &props};
    vk.vkGetPhysicalDeviceProperties2(physical, &q2);
    p.cm2_max_workgroup = props.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    p.cm2_max_dimension = props.cooperativeMatrixFlexibleDimensionsMaxDimension;
    p.cm2_reserved_shared = props.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
    auto flex_fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV>(
        vk.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
    if (flex_fn) {
      flex_fn(physical, &n, nullptr);
      std::vector<VkCooperativeMatrixFlexibleDimensionsPropertiesNV> flex(
          n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV});
      flex_fn(physical, &n, flex.data());
      for (uint32_t i = 0; i < n; ++i) {
        const auto& f = flex[i];
        p.flex.push_back({f.MGranularity, f.NGranularity, f.KGranularity, uint32_t(f.AType), uint32_t(f.BType), uint32_t(f.CType),
                          uint32_t(f.ResultType), f.workgroupInvocations, uint32_t(f.scope), f.saturatingAccumulation == VK_TRUE});
      }
    }
  }
#endif
  (void)instance;
  return p;
}

}  // namespace omnigemm::detail::vulkan
