// The pipelines a context has made, bounded and shared by its threads: at most `budget` of them
// are kept (least recently used first out), besides those a host application prepared
// (og_gemm_prepare: kept for the context's life) and those in use. A pipeline is made once
// however many threads ask for it at the same time (the others wait for it; threads asking for
// other pipelines go on), and destroyed only when nothing recorded with it can still run:
//  - submit: the backend submits the recording and waits for it, then releases the hold;
//  - caller: recorded into a host application's command buffer, which only the application
//    knows the end of: when such a pipeline leaves the set it is kept, outside the budget, until
//    the context is destroyed (as the descriptor sets of those recordings are, omnigemm_vulkan.h);
//  - prepare: kept (pinned) until the context is destroyed.
// Making and destroying are callbacks, so the policy is testable without a device.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "vulkan_api.hpp"

namespace omnigemm::detail::vulkan {

enum class Shader : uint32_t {
  portable, coopmat, coopmat_bf16, coopmat2, coopmat2_bf16, block_quantize, skinny, splitk_reduce, operand_copy
};
constexpr int kShaderCount = 9;

// Specialization constants ids 0..count-1 (ids past `count` keep the shader's defaults).
struct Specialization {
  static constexpr uint32_t kMax = 22;
  uint32_t values[kMax] = {};
  uint32_t count = 0;
};

// What the set has done since it was created, for tests and explain.
struct PipelineStats {
  uint64_t created = 0;   // pipelines made (each one compile)
  uint64_t hits = 0;      // requests served by a pipeline already made
  uint64_t evicted = 0;   // pipelines that left the set to stay within the budget
  size_t live = 0;        // pipelines in the set now (pinned ones included)
  size_t pinned = 0;      // prepared ones among them
  size_t retired = 0;     // evicted after a recording into a caller's command buffer: kept until destruction
  size_t budget = 0;      // the most unpinned pipelines kept when none is in use
};

class PipelineSet {
 public:
  using Build = std::function<Status(Shader, const Specialization&, VkPipeline&)>;
  using Destroy = std::function<void(VkPipeline)>;
  enum class Use { submit, caller, prepare };
  // An acquired pipeline: not destroyed until released.
  struct Hold {
    void* entry = nullptr;
    Use use = Use::submit;
  };

  // The default budget: $OMNIGEMM_VK_PIPELINE_BUDGET when set to a positive number, else 32.
  static size_t default_budget();

  void init(Build build, Destroy destroy, size_t budget);
  // The pipeline of (shader, spec), made on first request. Release the hold once whatever was
  // recorded with it has completed (Use::submit), right after recording (Use::caller), or at
  // once (Use::prepare, which pins the pipeline).
  Status acquire(Shader shader, const Specialization& spec, Use use, VkPipeline& out, Hold& hold);
  void release(Hold& hold);
  // Destroys every pipeline, retired ones included (the device must be idle; no holds remain).
  void clear();

  PipelineStats stats() const;
  // Changes the budget (tests); pipelines over it leave as soon as they are unused.
  void set_budget(size_t budget);

 private:
  using Key = std::pair<Shader, std::vector<uint32_t>>;
  struct Entry {
    VkPipeline pipeline = VK_NULL_HANDLE;
    bool building = true;
    bool pinned = false;
    bool caller_recorded = false;
    int users = 0;
    uint64_t last_use = 0;
  };
  // Takes pipelines out of the set until the unpinned ones fit the budget (skipping those in use
  // or being made); returns those that can be destroyed now. Called with mutex_ held.
  std::vector<VkPipeline> shrink();

  Build build_;
  Destroy destroy_;
  mutable std::mutex mutex_;
  std::condition_variable built_;
  std::map<Key, Entry> entries_;
  std::vector<VkPipeline> retired_;
  size_t budget_ = 32;
  uint64_t clock_ = 0;
  PipelineStats stats_;
};

}  // namespace omnigemm::detail::vulkan
