// A call run as staged launches: operands written into device scratch by the caller's own kernels
// (the repack copy, the dequantisation), then an inner family (cuda.sm90_wgmma) run on the
// copies. Shared by cuda.sm90_repack and cuda.sm90_dequant, which differ only in what they stage.
//
// The workspace layout both follow: with a caller's workspace, the inner call's part (split-K
// counters and partials, og_gemm_workspace_size's inner share) comes first, rounded to 256 bytes,
// then `scratch_bytes` of copies; without one, the copies live in the device's per-stream scratch,
// whose order lock is held while copies and GEMM are enqueued so that two threads on one stream
// cannot interleave them.
#pragma once
#include <mutex>
#include <string>

#include "../families.hpp"

namespace omnigemm::detail {

// describe() of a staged call: the inner plan with the scratch added to its workspace.
inline Status describe_staged(const KernelFamily& inner, const Problem& inner_problem, const Config& inner_config,
                              long long scratch_bytes, PlanSummary& out) {
  if (Status s = inner.describe(inner_problem, inner_config, out); !s) return s;
  out.workspace_bytes = WorkspaceNeed::round(out.workspace_bytes) + scratch_bytes;
  return {};
}

// run() of a staged call. `stage(char* scratch, cudaStream_t)` enqueues the copies into `scratch`
// (256-byte aligned, `scratch_bytes` long) and points `inner_problem`'s copied operands at them;
// then `inner` runs `inner_problem` on `stream`. A caller's workspace smaller than the call needs
// is refused before anything is enqueued.
template <class Stage>
Status run_staged(CudaDevice& dev, KernelFamily& inner, const Problem& outer, Problem& inner_problem,
                  const Config& inner_config, long long scratch_bytes, void* stream, Stage&& stage) {
  OG_CUDA_TRY(cudaSetDevice(dev.index), "cudaSetDevice");
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const CallerWorkspace caller = caller_workspace(outer);
  long long inner_bytes = 0;
  Status s;
  if (caller.ptr) {
    PlanSummary inner_plan;
    if (!(s = inner.describe(inner_problem, inner_config, inner_plan))) return s;
    inner_bytes = WorkspaceNeed::round(inner_plan.workspace_bytes);
    if (caller.bytes < uint64_t(inner_bytes + scratch_bytes))
      return error(StatusCode::invalid_argument, "workspace: " + std::to_string(caller.bytes) +
                                                     " bytes given but this call needs " +
                                                     std::to_string(inner_bytes + scratch_bytes) + " (og_gemm_workspace_size)");
  }
  std::unique_lock<std::mutex> order(dev.scratch_order(), std::defer_lock);
  char* scratch = nullptr;
  if (caller.ptr) {
    scratch = caller.ptr + inner_bytes;
    inner_problem.workspace = outer.workspace;
    inner_problem.workspace_bytes = uint64_t(inner_bytes);
  } else {
    order.lock();
    WorkspaceNeed need;
    need.scratch_bytes = scratch_bytes;
    WorkspaceParts parts;
    if (!(s = dev.workspace(CallerWorkspace{}, st, need, parts))) return s;
    scratch = parts.scratch;
  }
  if (!(s = stage(scratch, st))) return s;
  return inner.run(inner_problem, inner_config, stream);
}

}  // namespace omnigemm::detail
