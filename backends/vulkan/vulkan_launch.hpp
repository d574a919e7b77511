// One planned Vulkan GEMM: the pipeline (module and specialization constants), the push
// constants and the workgroup counts, computed once by a family's plan() and recorded as is.
#pragma once

#include <cstdint>
#include <memory>

#include "problem.hpp"
#include "vulkan_pipelines.hpp"

namespace omnigemm::detail::vulkan {

struct VulkanLaunch {
  const Problem* problem = nullptr;  // the buffers bound to the descriptor set
  std::shared_ptr<const Problem> derived;  // the problem as run, where a family rewrites it (problem points here)
  Shader shader = Shader::portable;
  Specialization spec;
  // pid_base and batch_base are set per dispatch when the grid is split (see `tiles`).
  PushConstants push{};
  // Workgroups: one per output tile (tiles_m x tiles_n, ordered by tile_schedule.h's grouped
  // mapping in the shader) along x, one per batch along z; recorded as several dispatches where
  // either exceeds the device's maxComputeWorkGroupCount.
  uint64_t tiles = 0;
  uint64_t batch = 0;
  uint32_t threads = 0;       // per workgroup: warps x subgroup size
  int64_t shared_bytes = 0;   // what the shader declares for this specialization
  // Split-K: the first dispatch leaves partial sums in `workspace_bytes` of the context's
  // workspace (binding kWorkspaceBinding); a second, of `reduce_shader` with `reduce_spec` over
  // `reduce_groups` workgroups per batch, adds them in a fixed order and runs the epilogue. No
  // second dispatch where workspace_bytes is 0.
  uint64_t workspace_bytes = 0;
  Shader reduce_shader = Shader::splitk_reduce;
  Specialization reduce_spec;
  uint64_t reduce_groups = 0;
};

}  // namespace omnigemm::detail::vulkan
