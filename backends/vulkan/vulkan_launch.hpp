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
  // The workspace the launch uses (the caller's or the context's, binding kWorkspaceBinding):
  // split-K's partial sums first, then the operand copies (each at its `offset`).
  uint64_t workspace_bytes = 0;
  // Split-K: the first dispatch leaves partial sums in the first `split_bytes` of the workspace;
  // a second, of `reduce_shader` with `reduce_spec` over `reduce_groups` workgroups per batch,
  // adds them in a fixed order and runs the epilogue. No second dispatch where reduce_groups is 0.
  uint64_t split_bytes = 0;
  Shader reduce_shader = Shader::splitk_reduce;
  Specialization reduce_spec;
  uint64_t reduce_groups = 0;
  // Operand copies (vulkan.coopmat_repack), dispatched before the GEMM: copy[0] writes A, copy[1]
  // B into the workspace at `offset` bytes (a multiple of 256), where the GEMM's bindings of that
  // operand then point (`problem` describes the copy). `given` is the caller's problem, whose
  // operands the copies read.
  struct OperandCopy {
    bool present = false;
    CopyPushConstants push{};
    uint64_t offset = 0;
    uint64_t groups = 0;  // workgroups of kCopyThreads per batch
    uint64_t batch = 1;
  };
  OperandCopy copy[2];
  const Problem* given = nullptr;
  static constexpr uint32_t kCopyThreads = 256;
};

}  // namespace omnigemm::detail::vulkan
