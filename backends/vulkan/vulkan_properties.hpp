// What a Vulkan device reports that the backend's choices depend on, as plain data, and those
// choices as a pure function of it: whether the cooperative-matrix families run, with which
// fragment shapes and subgroup size, and the limits the config space uses. query_properties() is
// the only part that talks to a device; everything else runs on recorded property sets too
// (tests/vulkan/recorded_devices.hpp), so other vendors' devices are testable without them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vulkan_api.hpp"

namespace omnigemm::detail::vulkan {

// VkComponentTypeKHR and VkScopeKHR values (the registry's; plain numbers, so that builds with
// Vulkan headers older than VK_KHR_cooperative_matrix compile this too).
enum ComponentType : uint32_t {
  kF16 = 0,
  kF32 = 1,
  kF64 = 2,
  kS8 = 3,
  kS32 = 5,
  kU8 = 7,
  kU32 = 9,
  kBF16 = 1000141000,
  kE4M3 = 1000491002,
  kE5M2 = 1000491003,
};
enum Scope : uint32_t { kWorkgroup = 2, kSubgroup = 3 };

// One entry of vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR.
struct CoopmatProperty {
  uint32_t m, n, k;
  uint32_t a, b, c, result;  // ComponentType
  uint32_t scope = kSubgroup;
  bool saturating = false;
};

// One entry of vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV.
struct FlexProperty {
  uint32_t m_granularity, n_granularity, k_granularity;
  uint32_t a, b, c, result;  // ComponentType
  uint32_t workgroup_invocations;
  uint32_t scope = kWorkgroup;
  bool saturating = false;
};

struct DeviceProperties {
  std::string name;
  uint32_t api_version = 0;
  uint32_t vendor_id = 0;
  uint32_t driver_id = 0;  // VkDriverId
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::vector<std::string> extensions;
  // Features.
  bool storage_16bit = false, storage_8bit = false, shader_int16 = false, shader_float16 = false, memory_model = false;
  bool cooperative_matrix = false, bf16_type = false, bf16_cooperative_matrix = false;
  bool subgroup_size_control = false, compute_full_subgroups = false;
  // Float controls (Vulkan 1.2 properties): 16-bit float conversions can be made to round to
  // nearest even, and to keep subnormals.
  bool rounding_rte_float16 = false, denorm_preserve_float16 = false;
  bool cm2_workgroup_scope = false, cm2_flexible_dimensions = false, cm2_per_element = false, cm2_tensor_addressing = false;
  // Limits and subgroups.
  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  VkShaderStageFlags required_subgroup_size_stages = 0;
  uint32_t max_shared_bytes = 0, max_invocations = 0;
  uint32_t max_groups[3] = {65535, 65535, 65535};
  // Compute units (NVIDIA SMs: VK_NV_shader_sm_builtins; AMD CUs: VK_AMD_shader_core_properties);
  // 0 where the device does not say (the cost model then assumes 64).
  uint32_t compute_units = 0;
  // Cooperative matrices.
  std::vector<CoopmatProperty> coopmat;
  uint32_t cm2_max_workgroup = 0, cm2_max_dimension = 0, cm2_reserved_shared = 0;
  std::vector<FlexProperty> flex;

  bool has_extension(const char* name) const;
};

struct CoopmatShape {
  uint32_t m = 16, n = 16, k = 16;
};

// The KHR cooperative-matrix path (gemm_coopmat.comp): usable, or why not; the largest
// subgroup-scope fragment per multiplicand type (0 f16, 1 bf16) with f32 accumulation; the
// subgroup size its pipelines run with, and whether pipeline creation must require it (where the
// device lets a shader's subgroup size vary, the shader's layout needs the size it assumes).
struct CoopmatSupport {
  bool ok = false;
  std::string why;
  CoopmatShape shape[2];
  bool bf16 = false;  // bf16 multiplicands too (VK_KHR_shader_bfloat16)
  std::string bf16_why;
  uint32_t subgroup = 0;
  bool require_subgroup = false;
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

// Which shaders this build carries (the cooperative-matrix ones need a recent glslang).
struct BuiltShaders {
  bool coopmat = false, coopmat2 = false;
  static BuiltShaders of_this_build();
};

// The cooperative-matrix families' support on a device with properties `p` (pure).
CoopmatSupport select_coopmat(const DeviceProperties& p, const BuiltShaders& built);
Coopmat2Support select_coopmat2(const DeviceProperties& p, const CoopmatSupport& coopmat, const BuiltShaders& built);
// Whether the GEMM modules round f16 outputs in hardware (their *_f16hw twins, gemm_common.glsl):
// where the device can make 16-bit conversions round to nearest even and keep subnormals, and
// shaderFloat16 is on. The cooperative-matrix path already has it enabled, on the backend's own
// VkDevice and on a host's (omnigemm_vulkan.h), so the twins go where that path runs (pure).
bool f16_rounding_in_hardware(const DeviceProperties& p, const CoopmatSupport& coopmat);

// The properties of `physical`, read through the instance functions in `vk`.
DeviceProperties query_properties(const Vk& vk, VkInstance instance, VkPhysicalDevice physical);

}  // namespace omnigemm::detail::vulkan
