// Compute pipelines: one descriptor/pipeline layout shared by every GEMM shader, the embedded
// SPIR-V modules (the bf16 cooperative-matrix modules patched from the f16 ones), and pipelines
// made lazily per (module, specialization constants) through a VkPipelineCache persisted in
// ~/.cache/omnigemm (or $OMNIGEMM_VK_PIPELINE_CACHE).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "vulkan_device.hpp"

namespace omnigemm::detail::vulkan {

// Storage-buffer bindings of every shader (gemm_common.glsl): A, B as 32/16/8-bit views; C, D and
// bias as 32/16-bit views; then A's and B's block scales as 8/32-bit views (block_scales.glsl).
constexpr uint32_t kBindings = 16;

// gemm_common.glsl's push constants. Tile counts are not among them: the shaders derive them
// from M, N and the tile shape (specialization constants), as the host does.
struct PushConstants {
  uint32_t m, n, k;
  uint32_t pid_base;
  uint32_t a_sr, a_sc, a_bs, b_sr, b_sc, b_bs;
  uint32_t c_sr, c_sc, c_bs, d_sr, d_sc, d_bs;
  uint32_t bias_bs, batch_base;
  uint32_t a_off, b_off, c_off, d_off, bias_off;
  float alpha, beta, slope;
  // Block-scaled A / B: the scale tensor's first scale, ld and batch stride, in scales.
  uint32_t as_off, as_ld, as_bs, bs_off, bs_ld, bs_bs;
};
static_assert(sizeof(PushConstants) == 128, "push constants must stay within the 128 bytes every device has");

enum class Shader : uint32_t { portable, coopmat, coopmat_bf16, coopmat2, coopmat2_bf16, block_quantize };
constexpr int kShaderCount = 6;

// Specialization constants ids 0..count-1 (ids past `count` keep the shader's defaults).
struct Specialization {
  static constexpr uint32_t kMax = 22;
  uint32_t values[kMax] = {};
  uint32_t count = 0;
};

class VulkanPipelines {
 public:
  // The layouts, the modules of the paths `dev` can run, and the pipeline cache.
  Status create(const VulkanDevice& dev);
  // Saves the pipeline cache, then destroys everything create() made.
  void destroy();

  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  VkPipelineLayout layout() const { return layout_; }
  // The pipeline of `shader` with `spec`, made on first use (thread-safe).
  Status get(Shader shader, const Specialization& spec, VkPipeline& out);

 private:
  Status add_modules(const uint32_t* words, size_t bytes, bool bf16, Shader f16_shader, Shader bf16_shader);
  std::string cache_path() const;
  Status create_cache();
  void save_cache();

  const VulkanDevice* dev_ = nullptr;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkShaderModule modules_[kShaderCount] = {};
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::mutex mutex_;
  std::map<std::pair<Shader, std::vector<uint32_t>>, VkPipeline> pipelines_;
};

}  // namespace omnigemm::detail::vulkan
