// Pipelines: the shared layouts, the shader modules (with the bf16 re-encoding of the
// cooperative-matrix ones), the persisted pipeline cache and the pipelines per specialization.
#include "vulkan_pipelines.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "block_quantize.spv.h"
#include "gemm_portable.spv.h"
#include "gemm_portable_f16hw.spv.h"
#include "gemm_skinny.spv.h"
#include "gemm_skinny_f16hw.spv.h"
#include "gemm_splitk_reduce.spv.h"
#include "gemm_splitk_reduce_f16hw.spv.h"
#include "operand_copy.spv.h"
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
#include "gemm_coopmat.spv.h"
#include "gemm_coopmat_f16hw.spv.h"
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
#include "gemm_coopmat2.spv.h"
#include "gemm_coopmat2_f16hw.spv.h"
#endif
#include "vulkan_debug.hpp"

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

namespace vulkan {
namespace {

template <size_t N, size_t H>
VulkanPipelines::Spirv spirv(const uint32_t (&words)[N], const uint32_t (&hw_words)[H]) {
  return {words, sizeof words, hw_words, sizeof hw_words};
}
template <size_t N>
VulkanPipelines::Spirv spirv(const uint32_t (&words)[N]) {
  return {words, sizeof words, words, sizeof words};
}

}  // namespace

Status VulkanPipelines::create(const VulkanDevice& dev) {
  dev_ = &dev;
  const Vk& vk = dev.vk;
  VkDescriptorSetLayoutBinding bindings[kBindings];
  for (uint32_t i = 0; i < kBindings; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, nullptr, 0, kBindings, bindings};
  OG_VK_TRY(vk.vkCreateDescriptorSetLayout(dev.device, &dli, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, nullptr, 0, 1, &set_layout_, 1, &range};
  OG_VK_TRY(vk.vkCreatePipelineLayout(dev.device, &pli, nullptr, &layout_), "vkCreatePipelineLayout");
  f16_rounding_hw_ = vulkan::f16_rounding_in_hardware(dev.props, dev.coopmat);
#ifdef OMNIGEMM_DEVELOPER
  // A/B switch: the software-rounding modules on a device that would take the twins (the same
  // results; for timing the two roundings on one device).
  if (const char* r = std::getenv("OMNIGEMM_VK_F16_ROUNDING"); r && std::strcmp(r, "software") == 0) f16_rounding_hw_ = false;
#endif
  Status s = add_modules(spirv(og_spv_gemm_portable, og_spv_gemm_portable_f16hw), false, Shader::portable, Shader::portable);
  if (s) s = add_modules(spirv(og_spv_gemm_skinny, og_spv_gemm_skinny_f16hw), false, Shader::skinny, Shader::skinny);
  if (s)
    s = add_modules(spirv(og_spv_gemm_splitk_reduce, og_spv_gemm_splitk_reduce_f16hw), false, Shader::splitk_reduce, Shader::splitk_reduce);
  if (s) s = add_modules(spirv(og_spv_block_quantize), false, Shader::block_quantize, Shader::block_quantize);
  if (s) s = add_modules(spirv(og_spv_operand_copy), false, Shader::operand_copy, Shader::operand_copy);
  if (!s) return s;
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
  if (dev.coopmat.ok &&
      !(s = add_modules(spirv(og_spv_gemm_coopmat, og_spv_gemm_coopmat_f16hw), dev.coopmat.bf16, Shader::coopmat, Shader::coopmat_bf16)))
    return s;
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
  if (dev.coopmat2.ok &&
      !(s = add_modules(spirv(og_spv_gemm_coopmat2, og_spv_gemm_coopmat2_f16hw), dev.coopmat2.bf16, Shader::coopmat2, Shader::coopmat2_bf16)))
    return s;
#endif
  set_.init([this](Shader shader, const Specialization& spec, VkPipeline& out) { return build(shader, spec, out); },
            [this](VkPipeline p) { dev_->vk.vkDestroyPipeline(dev_->device, p, nullptr); }, PipelineSet::default_budget());
  return create_cache();
}

void VulkanPipelines::destroy() {
  if (!dev_ || !dev_->device) return;
  const Vk& vk = dev_->vk;
  save_cache();
  set_.clear();
  for (VkShaderModule& m : modules_) {
    if (m) vk.vkDestroyShaderModule(dev_->device, m, nullptr);
    m = VK_NULL_HANDLE;
  }
  if (cache_) vk.vkDestroyPipelineCache(dev_->device, cache_, nullptr);
  if (layout_) vk.vkDestroyPipelineLayout(dev_->device, layout_, nullptr);
  if (set_layout_) vk.vkDestroyDescriptorSetLayout(dev_->device, set_layout_, nullptr);
  cache_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  dev_ = nullptr;
}

// A module as embedded (its twin rounding f16 outputs in hardware where f16_rounding_hw_) and,
// when `bf16`, the module with bf16 multiplicands, re-encoded from the plain module (the twin
// uses the 16-bit float type outside cooperative matrices, which the re-encoding refuses; bf16
// multiplicands with an f16 output are rare enough to round in software).
Status VulkanPipelines::add_modules(const Spirv& spirv, bool bf16, Shader f16_shader, Shader bf16_shader) {
  const Vk& vk = dev_->vk;
  VkShaderModuleCreateInfo cmi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, nullptr, 0, f16_rounding_hw_ ? spirv.hw_bytes : spirv.bytes,
                               f16_rounding_hw_ ? spirv.hw_words : spirv.words};
  OG_VK_TRY(vk.vkCreateShaderModule(dev_->device, &cmi, nullptr, &modules_[int(f16_shader)]), "vkCreateShaderModule");
  if (!bf16) return {};
  std::string why;
  const std::vector<uint32_t> patched = spirv_with_bf16_multiplicands(spirv.words, spirv.bytes / 4, &why);
  if (patched.empty()) return error(StatusCode::internal, "vulkan: " + why);
  cmi.codeSize = patched.size() * 4;
  cmi.pCode = patched.data();
  OG_VK_TRY(vk.vkCreateShaderModule(dev_->device, &cmi, nullptr, &modules_[int(bf16_shader)]), "vkCreateShaderModule");
  return {};
}

// Pipeline cache file: the driver validates its header (vendor, device, cache UUID); a file it
// rejects, or that cannot be read, is ignored with a warning.
std::string VulkanPipelines::cache_path() const {
  if (const char* p = std::getenv("OMNIGEMM_VK_PIPELINE_CACHE"); p && *p) return p;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/omnigemm/vk_pipeline_cache.bin";
  return "";
}

Status VulkanPipelines::create_cache() {
  const Vk& vk = dev_->vk;
  std::vector<char> data;
  const std::string path = cache_path();
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Header (Vulkan spec, "Pipeline Cache"): size, version, vendor, device, cache UUID.
  VkPipelineCacheHeaderVersionOne header{};
  const bool matches = data.size() >= sizeof header && (std::memcpy(&header, data.data(), sizeof header), true) &&
                       header.headerSize >= sizeof header && header.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
                       header.vendorID == dev_->properties.vendorID && header.deviceID == dev_->properties.deviceID &&
                       std::memcmp(header.pipelineCacheUUID, dev_->properties.pipelineCacheUUID, VK_UUID_SIZE) == 0;
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, nullptr, 0, data.size(), data.data()};
  if (!matches || vk.vkCreatePipelineCache(dev_->device, &ci, nullptr, &cache_) != VK_SUCCESS) {
    if (!data.empty())
      std::fprintf(stderr, "omnigemm vulkan: pipeline cache %s is corrupt or from another device/driver; ignoring it\n", path.c_str());
    ci.initialDataSize = 0;
    ci.pInitialData = nullptr;
    OG_VK_TRY(vk.vkCreatePipelineCache(dev_->device, &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
  return {};
}

void VulkanPipelines::save_cache() {
  const Vk& vk = dev_->vk;
  const std::string path = cache_path();
  if (path.empty() || !cache_) return;
  size_t size = 0;
  if (vk.vkGetPipelineCacheData(dev_->device, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<char> data(size);
  if (vk.vkGetPipelineCacheData(dev_->device, cache_, &size, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(reinterpret_cast<uintptr_t>(this));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), std::streamsize(size));
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  std::rename(tmp.c_str(), path.c_str());  // atomic: concurrent processes never see half a file
}

uint32_t epilogue_word(const Problem& p) {
  const uint32_t c_type = p.c.present ? uint32_t(p.c.dtype) : 7u;  // 7: no C term
  return c_type | uint32_t(p.d.dtype) << 3 | uint32_t(p.bias_mode) << 5 | uint32_t(p.bias_dtype) << 7 | uint32_t(p.activation) << 10;
}

// One pipeline through the pipeline cache. The cache's contents stay bounded: past
// kCacheBudgetBytes (checked every 16 pipelines) it starts again empty, as a fresh process would.
Status VulkanPipelines::build(Shader shader, const Specialization& spec, VkPipeline& out) {
  const VkShaderModule module = modules_[int(shader)];
  if (!module)
    return error(StatusCode::internal, "vulkan: the shader module " + std::to_string(int(shader)) + " was not created on this device");
  VkSpecializationMapEntry entries[Specialization::kMax];
  for (uint32_t i = 0; i < spec.count; ++i) entries[i] = {i, i * 4, 4};
  VkSpecializationInfo info{spec.count, entries, spec.count * 4, spec.values};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module, "main", &info};
  // The KHR cooperative-matrix shader's layout assumes its subgroup size (SUBGROUP): required
  // where the device could choose another (CoopmatSupport::require_subgroup).
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo required{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  if ((shader == Shader::coopmat || shader == Shader::coopmat_bf16) && dev_->coopmat.require_subgroup) {
    required.requiredSubgroupSize = dev_->coopmat.subgroup;
    ci.stage.pNext = &required;
  }
  ci.layout = layout_;
  const Vk& vk = dev_->vk;
  {
    std::shared_lock<std::shared_mutex> lock(cache_mutex_);
    OG_VK_TRY(vk.vkCreateComputePipelines(dev_->device, cache_, 1, &ci, nullptr, &out), "vkCreateComputePipelines");
  }
  if (++builds_ % 16 != 0) return {};
  std::unique_lock<std::shared_mutex> lock(cache_mutex_);
  size_t size = 0;
  if (vk.vkGetPipelineCacheData(dev_->device, cache_, &size, nullptr) != VK_SUCCESS || size <= kCacheBudgetBytes) return {};
  VkPipelineCache fresh = VK_NULL_HANDLE;
  VkPipelineCacheCreateInfo fci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  if (vk.vkCreatePipelineCache(dev_->device, &fci, nullptr, &fresh) != VK_SUCCESS) return {};
  vk.vkDestroyPipelineCache(dev_->device, cache_, nullptr);
  cache_ = fresh;
  ++cache_resets_;
  return {};
}

size_t VulkanPipelines::cache_bytes() const {
  std::shared_lock<std::shared_mutex> lock(cache_mutex_);
  size_t size = 0;
  if (!dev_ || !cache_ || dev_->vk.vkGetPipelineCacheData(dev_->device, cache_, &size, nullptr) != VK_SUCCESS) return 0;
  return size;
}

}  // namespace vulkan
}  // namespace omnigemm::detail
