// Recorded property sets of Vulkan devices OmniGEMM's selection must handle, as
// vkGetPhysicalDevice*Properties / *Features / vkEnumerateDeviceExtensionProperties /
// vkGetPhysicalDeviceCooperativeMatrix(FlexibleDimensions)PropertiesKHR/NV report them, reduced to
// what backends/vulkan/vulkan_properties.hpp reads. Which ones ran where:
//  - executed: Mesa lavapipe (this machine and CI; the test checks this record against the live
//    device), NVIDIA H100 (the lead's GPU runs; the test prints the live set there, and checks
//    the fields below against it);
//  - modelled (no such GPU was available): AMD RDNA3 on RADV, AMD RDNA2 on RADV (no cooperative
//    matrices), Intel Arc A770 (Xe-HPG) and B580 (Xe2) on ANV, NVIDIA Ada (RTX 4090).
// Sources of the modelled lists, read 2026-11:
//  - RADV: Mesa src/amd/vulkan/radv_physical_device.c, radv_GetPhysicalDeviceCooperativeMatrix-
//    PropertiesKHR (gfx11: 16x16x16 f16 x f16 -> f16 and -> f32, 16x16x16 8-bit integer variants;
//    gfx10.3 exposes no VK_KHR_cooperative_matrix); subgroup sizes 32..64 with size control
//    (radv reports subgroupSize 64); gpuinfo.org reports for "AMD Radeon RX 7900 XTX (RADV NAVI31)"
//    and "AMD Radeon RX 6800 XT (RADV NAVI21)".
//  - ANV: Mesa src/intel/vulkan/anv_physical_device.c, anv_GetPhysicalDeviceCooperativeMatrix-
//    PropertiesKHR over the device's cooperative_matrix_configurations (Xe-HPG: 8x8x16 f16, DPAS
//    at SIMD8; Xe2: 8x16x16 at SIMD16); subgroup sizes 8..32 (Xe2: 16..32), reported size 32;
//    gpuinfo.org reports for "Intel(R) Arc(tm) A770 Graphics (DG2)" and "Intel(R) Arc(tm) B580
//    Graphics (BMG G21)". llama.cpp's ggml-vulkan (ggml_vk_get_device_architecture) tells Xe2 by
//    minSubgroupSize 16 and runs Intel matrix shaders at the smallest subgroup size.
//  - NVIDIA: the lists NVIDIA drivers 575+ report on Ampere and newer (vk_cooperative_matrix_perf
//    prints them; gpuinfo.org reports for RTX 4090 and H100): 16x16x16, 16x8x16 and 16x8x8
//    f16 -> f16/f32, bf16 16x16x16 and 16x8x16 -> f32 (VK_KHR_shader_bfloat16), 8-bit integer
//    16x16x32 / 16x8x32; one subgroup size, 32; 48 KiB of shared memory per workgroup; NV
//    cooperative matrix 2 with workgroup-scope flexible dimensions at 128 and 256 invocations
//    (ggml-vulkan requires M/N/K granularities of at most 32/16/16 and 32/32/16 there, and a
//    largest dimension of at least 512, to enable its coopmat2 path on them).
// Float controls for 16-bit floats (shaderRoundingModeRTEFloat16, shaderDenormPreserveFloat16):
// lavapipe reports RTE but not denormal preservation (vulkaninfo, this machine); NVIDIA, RADV
// and ANV report both (gpuinfo.org reports for the devices above; the Hopper record is checked
// against the live H200).
// The reserved shared memory of NV cooperative matrix 2 is not published: modelled as 0.
// Compute units (VK_NV_shader_sm_builtins' shaderSMCount, VK_AMD_shader_core_properties' engines
// x arrays x CUs): 132 SMs (H100 SXM), 128 (RTX 4090), 96 CUs (RX 7900 XTX); ANV reports none.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "vulkan_properties.hpp"

namespace omnigemm::test::recorded {

using namespace omnigemm::detail::vulkan;

struct Expect {
  bool coopmat = false;
  CoopmatShape f16_shape{};
  uint32_t subgroup = 0;        // the coopmat pipelines' subgroup size
  bool require_subgroup = false;
  bool bf16 = false;
  bool coopmat2 = false;
  const char* f16_family = "portable";  // the family the cost model picks for a large f16 GEMM
  bool f16_rounding_hw = false;          // f16_rounding_in_hardware
};

struct Recorded {
  const char* label;
  bool executed;  // run on the real device by this project (else modelled from the sources above)
  DeviceProperties props;
  Expect expect;
};

inline DeviceProperties base(const char* name, uint32_t vendor, uint32_t driver, uint32_t api, VkPhysicalDeviceType type) {
  DeviceProperties p;
  p.name = name;
  p.vendor_id = vendor;
  p.driver_id = driver;
  p.api_version = api;
  p.type = type;
  p.storage_16bit = p.storage_8bit = p.shader_int16 = p.shader_float16 = p.memory_model = true;
  p.rounding_rte_float16 = p.denorm_preserve_float16 = true;
  p.max_invocations = 1024;
  p.max_groups[0] = 2147483647;
  p.max_groups[1] = p.max_groups[2] = 65535;
  return p;
}

inline void subgroups(DeviceProperties& p, uint32_t reported, uint32_t min, uint32_t max) {
  p.subgroup_size = reported;
  p.min_subgroup_size = min;
  p.max_subgroup_size = max;
  p.subgroup_size_control = p.compute_full_subgroups = true;
  p.required_subgroup_size_stages = VK_SHADER_STAGE_COMPUTE_BIT;
}

inline void f16_fragments(DeviceProperties& p, uint32_t m, uint32_t n, uint32_t k) {
  p.coopmat.push_back({m, n, k, kF16, kF16, kF16, kF16});
  p.coopmat.push_back({m, n, k, kF16, kF16, kF32, kF32});
}

// VkDriverId values.
constexpr uint32_t kNvidiaProprietary = 4, kMesaRadv = 3, kIntelMesa = 6, kMesaLlvmpipe = 13;

inline DeviceProperties nvidia(const char* name) {
  DeviceProperties p = base(name, 0x10de, kNvidiaProprietary, VK_MAKE_API_VERSION(0, 1, 4, 312), VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
  subgroups(p, 32, 32, 32);
  p.max_shared_bytes = 49152;
  p.extensions = {"VK_KHR_cooperative_matrix", "VK_KHR_shader_bfloat16", "VK_NV_cooperative_matrix2", "VK_EXT_subgroup_size_control"};
  p.cooperative_matrix = p.bf16_type = p.bf16_cooperative_matrix = true;
  f16_fragments(p, 16, 16, 16);
  f16_fragments(p, 16, 8, 16);
  f16_fragments(p, 16, 8, 8);
  p.coopmat.push_back({16, 16, 16, kBF16, kBF16, kF32, kF32});
  p.coopmat.push_back({16, 8, 16, kBF16, kBF16, kF32, kF32});
  p.coopmat.push_back({16, 16, 32, kS8, kS8, kS32, kS32});
  p.coopmat.push_back({16, 8, 32, kS8, kS8, kS32, kS32});
  p.cm2_workgroup_scope = p.cm2_flexible_dimensions = p.cm2_per_element = p.cm2_tensor_addressing = true;
  p.cm2_max_workgroup = 256;
  p.cm2_max_dimension = 512;
  for (uint32_t mul : {uint32_t(kF16), uint32_t(kBF16)}) {
    p.flex.push_back({32, 16, 16, mul, mul, kF32, kF32, 128});
    p.flex.push_back({32, 32, 16, mul, mul, kF32, kF32, 256});
  }
  p.flex.push_back({32, 16, 16, kF16, kF16, kF16, kF16, 128});
  return p;
}

inline std::vector<Recorded> devices() {
  std::vector<Recorded> out;
  {
    DeviceProperties p = nvidia("NVIDIA H100 80GB HBM3");
    p.compute_units = 132;
    out.push_back({"NVIDIA Hopper (H100), driver 580", true, p, {true, {16, 16, 16}, 32, false, true, true, "coopmat", true}});
  }
  {
    DeviceProperties p = nvidia("NVIDIA GeForce RTX 4090");
    p.compute_units = 128;
    p.max_shared_bytes = 49152;
    out.push_back({"NVIDIA Ada (RTX 4090), driver 575+", false, p, {true, {16, 16, 16}, 32, false, true, true, "coopmat", true}});
  }
  {
    DeviceProperties p = base("AMD Radeon RX 7900 XTX (RADV NAVI31)", 0x1002, kMesaRadv, VK_MAKE_API_VERSION(0, 1, 4, 305),
                              VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
    p.compute_units = 96;
    subgroups(p, 64, 32, 64);
    p.max_shared_bytes = 65536;
    p.extensions = {"VK_KHR_cooperative_matrix", "VK_EXT_subgroup_size_control"};
    p.cooperative_matrix = true;
    f16_fragments(p, 16, 16, 16);
    p.coopmat.push_back({16, 16, 16, kU8, kU8, kU32, kU32});
    p.coopmat.push_back({16, 16, 16, kS8, kS8, kS32, kS32});
    p.coopmat.push_back({16, 16, 16, kS8, kS8, kS32, kS32, kSubgroup, true});
    out.push_back({"AMD RDNA3 (RX 7900 XTX), Mesa RADV", false, p, {true, {16, 16, 16}, 32, true, false, false, "coopmat", true}});
  }
  {
    DeviceProperties p = base("AMD Radeon RX 6800 XT (RADV NAVI21)", 0x1002, kMesaRadv, VK_MAKE_API_VERSION(0, 1, 3, 289),
                              VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
    subgroups(p, 64, 32, 64);
    p.max_shared_bytes = 65536;
    p.extensions = {"VK_EXT_subgroup_size_control"};
    out.push_back({"AMD RDNA2 (RX 6800 XT), Mesa RADV: no cooperative matrices", false, p, {}});
  }
  {
    DeviceProperties p = base("Intel(R) Arc(tm) A770 Graphics (DG2)", 0x8086, kIntelMesa, VK_MAKE_API_VERSION(0, 1, 3, 289),
                              VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
    subgroups(p, 32, 8, 32);
    p.max_shared_bytes = 65536;
    p.extensions = {"VK_KHR_cooperative_matrix", "VK_EXT_subgroup_size_control"};
    p.cooperative_matrix = true;
    f16_fragments(p, 8, 8, 16);
    p.coopmat.push_back({8, 8, 32, kS8, kS8, kS32, kS32});
    out.push_back({"Intel Arc A770 (Xe-HPG), Mesa ANV", false, p, {true, {8, 8, 16}, 8, true, false, false, "coopmat", true}});
  }
  {
    DeviceProperties p = base("Intel(R) Arc(tm) B580 Graphics (BMG G21)", 0x8086, kIntelMesa, VK_MAKE_API_VERSION(0, 1, 4, 305),
                              VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU);
    subgroups(p, 32, 16, 32);
    p.max_shared_bytes = 65536;
    p.extensions = {"VK_KHR_cooperative_matrix", "VK_EXT_subgroup_size_control"};
    p.cooperative_matrix = true;
    f16_fragments(p, 8, 16, 16);
    out.push_back({"Intel Arc B580 (Xe2), Mesa ANV", false, p, {true, {8, 16, 16}, 16, true, false, false, "coopmat", true}});
  }
  {
    DeviceProperties p = base("llvmpipe (LLVM 15.0.6, 256 bits)", 0x10005, kMesaLlvmpipe, VK_MAKE_API_VERSION(0, 1, 3, 230),
                              VK_PHYSICAL_DEVICE_TYPE_CPU);
    subgroups(p, 8, 8, 8);
    p.compute_full_subgroups = false;
    p.denorm_preserve_float16 = false;
    p.max_shared_bytes = 32768;
    p.extensions = {"VK_EXT_subgroup_size_control"};
    out.push_back({"Mesa lavapipe (llvmpipe, LLVM 15, 256-bit)", true, p, {}});
  }
  return out;
}

// The first recorded device whose label starts with `prefix`, or nullptr.
inline const Recorded* find_record(const std::string& prefix) {
  static const std::vector<Recorded> all = devices();
  for (const Recorded& r : all)
    if (std::string(r.label).rfind(prefix, 0) == 0) return &r;
  return nullptr;
}

// The recorded device whose label starts with `prefix` (fails the test where none does).
inline const Recorded& record(const char* prefix) {
  if (const Recorded* r = find_record(prefix)) return *r;
  FAIL("no recorded device " << prefix);
  return *find_record("");  // the first (every label starts with "")
}

}  // namespace omnigemm::test::recorded
