// Compute pipelines: one descriptor/pipeline layout shared by every GEMM shader, the embedded
// SPIR-V modules (the bf16 cooperative-matrix modules patched from the f16 ones), and pipelines
// made per (module, specialization constants) through a VkPipelineCache persisted in
// ~/.cache/omnigemm (or $OMNIGEMM_VK_PIPELINE_CACHE), kept in a bounded set (vulkan_pipeline_set.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <vector>

#include "problem.hpp"
#include "vulkan_device.hpp"
#include "vulkan_pipeline_set.hpp"

namespace omnigemm::detail::vulkan {

// Storage-buffer bindings of every shader (gemm_common.glsl): A, B as 32/16/8-bit views; C, D and
// bias as 32/16-bit views; then A's and B's block scales as 8/32-bit views (block_scales.glsl);
// then split-K's f32 workspace (gemm_splitk_reduce.comp).
constexpr uint32_t kBindings = 17;
constexpr uint32_t kWorkspaceBinding = 16;

// gemm_common.glsl's push constants. Tile counts are not among them: the shaders derive them
// from M, N and the tile shape (specialization constants), as the host does.
struct PushConstants {
  uint32_t m, n, k;
  uint32_t epilogue;  // epilogue_word()
  uint32_t a_sr, a_sc, a_bs, b_sr, b_sc, b_bs;
  uint32_t c_sr, c_sc, c_bs, d_sr, d_sc, d_bs;
  uint32_t bias_bs, batch_base;
  uint32_t a_off, b_off, c_off, d_off, bias_off;
  float alpha, beta, slope;
  // Block-scaled A / B: the scale tensor's first scale, ld and batch stride, in scales.
  uint32_t as_off, as_ld, as_bs, bs_off, bs_ld, bs_bs;
};
static_assert(sizeof(PushConstants) == 128, "push constants must stay within the 128 bytes every device has");

// operand_copy.comp's push constants (its own block within the same 128-byte range): one 16-bit
// operand's lines copied into the workspace as whole zero-padded 16-byte vectors.
struct CopyPushConstants {
  uint32_t operand;                   // 0: A's bindings, 1: B's
  uint32_t lines, line_len;           // per batch
  uint32_t src_off, src_line, src_elem, src_batch;  // elements
  uint32_t dst_off, dst_line, dst_batch;            // 16-byte vectors
  uint32_t batch_base;
};
static_assert(sizeof(CopyPushConstants) <= sizeof(PushConstants), "the copy's push constants must fit the shared range");

// The epilogue options as gemm_common.glsl's push-constant word: C's og_dtype (7: no C term), D's,
// the bias mode and dtype, the activation. Run-time values the shaders branch on uniformly, so
// that they select no pipeline.
uint32_t epilogue_word(const Problem& p);

// Specialization ids every GEMM shader shares (gemm_common.glsl: tile, threads, A and B dtypes);
// each shader's own start after them.
constexpr uint32_t kCommonSpecIds = 7;

class VulkanPipelines {
 public:
  // The layouts, the modules of the paths `dev` can run, and the pipeline cache.
  Status create(const VulkanDevice& dev);
  // Saves the pipeline cache, then destroys everything create() made.
  void destroy();

  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  VkPipelineLayout layout() const { return layout_; }
  // The bounded set of pipelines made from these modules (thread-safe).
  PipelineSet& set() { return set_; }
  const PipelineSet& set() const { return set_; }
  // The pipeline cache's current size (vkGetPipelineCacheData), and how often it started again
  // empty to stay within kCacheBudgetBytes.
  size_t cache_bytes() const;
  uint64_t cache_resets() const { return cache_resets_; }
  // An embedded module: its SPIR-V, and the twin that rounds f16 outputs in hardware (the same
  // words where it has none).
  struct Spirv {
    const uint32_t* words;
    size_t bytes;
    const uint32_t* hw_words;
    size_t hw_bytes;
  };
  // Whether the GEMM modules loaded are the twins that round f16 outputs in hardware
  // (f16_rounding_in_hardware).
  bool f16_rounding_in_hardware() const { return f16_rounding_hw_; }
  static constexpr size_t kCacheBudgetBytes = size_t(64) << 20;

 private:
  // PipelineSet's callback: one pipeline of `shader` with `spec`.
  Status build(Shader shader, const Specialization& spec, VkPipeline& out);
  Status add_modules(const Spirv& spirv, bool bf16, Shader f16_shader, Shader bf16_shader);
  std::string cache_path() const;
  Status create_cache();
  void save_cache();

  const VulkanDevice* dev_ = nullptr;
  bool f16_rounding_hw_ = false;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkShaderModule modules_[kShaderCount] = {};
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  mutable std::shared_mutex cache_mutex_;  // shared: pipeline creation; exclusive: replacing cache_
  std::atomic<uint64_t> builds_{0}, cache_resets_{0};
  PipelineSet set_;
};

}  // namespace omnigemm::detail::vulkan
