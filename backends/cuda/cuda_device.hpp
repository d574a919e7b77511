// What the CUDA kernel families share about their device: its identity and limits, the driver's
// tensor-map encoder, the split-K workspaces, and status conversion. Owned by the backend
// (cuda_backend.cu); every family holds a reference. Host code only (kernel_views.hpp has the
// kernels' argument views).
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>

#include "backend.hpp"

namespace omnigemm::detail {

Status cuda_status(cudaError_t e, const char* what);
#define OG_CUDA_TRY(call, what)                                \
  do {                                                         \
    if (Status s_ = cuda_status((call), what); !s_) return s_; \
  } while (0)

// The device workspace one launch needs, in the layout a caller's workspace is carved into:
// split-K arrival counters, split-K partials, then scratch (e.g. repacked operands), each part on
// a 256-byte boundary. bytes() is what og_gemm_workspace_size reports.
struct WorkspaceNeed {
  long long counters = 0;        // ints: zero when a launch starts, and left zero by it
  long long partial_floats = 0;
  long long scratch_bytes = 0;
  static constexpr long long kAlign = 256;
  static constexpr long long round(long long b) { return (b + kAlign - 1) / kAlign * kAlign; }
  constexpr long long bytes() const { return round(counters * 4) + round(partial_floats * 4) + round(scratch_bytes); }
};
// A caller's workspace (og_gemm_desc.workspace) as a planned launch carries it; ptr null: none.
struct CallerWorkspace {
  char* ptr = nullptr;
  uint64_t bytes = 0;
};
inline CallerWorkspace caller_workspace(const Problem& p) {
  if (!p.has_workspace()) return {};
  return {static_cast<char*>(p.workspace.ptr) + p.workspace.offset, p.workspace_bytes};
}
struct WorkspaceParts {
  int* counters = nullptr;
  float* partials = nullptr;
  char* scratch = nullptr;
};

class CudaDevice {
 public:
  ~CudaDevice();
  // Queries device `index`; backend_unavailable when there is none or it is older than sm_80.
  Status init(int index);

  DeviceInfo info;
  int index = 0;
  long long max_grid_z = 65535;
  PFN_cuTensorMapEncodeTiled_v12000 encode_tiled = nullptr;  // set on sm_90 devices only

  // Persistent programs of a launch: one per SM.
  int programs() const { return info.limits.compute_units > 0 ? info.limits.compute_units : 1; }

  // The device workspace of one launch: carved from the caller's workspace when there is one
  // (refused when smaller than need.bytes(); its counters are cleared on the stream first), else from this device's buffers, one set per stream (launches on one
  // stream run in order; two streams must not share them), grown on demand and never shrunk, the
  // counters zeroed when allocated (every launch leaves them zero).
  Status workspace(const CallerWorkspace& caller, cudaStream_t stream, const WorkspaceNeed& need, WorkspaceParts& out);

  // Held by a family whose one call is several launches sharing the per-stream scratch (copy,
  // then GEMM), while it enqueues them: two threads on one stream must not interleave them.
  std::mutex& scratch_order() { return scratch_order_; }

 private:
  struct Workspace {
    float* partials = nullptr;
    int* counters = nullptr;
    char* scratch = nullptr;
    long long floats = 0, count = 0, scratch_bytes = 0;
  };
  std::mutex workspace_mutex_;
  std::mutex scratch_order_;
  std::map<cudaStream_t, Workspace> workspaces_;
};

// Switches for measuring what a technique buys. A user's build has them fixed on; a developer
// build (OMNIGEMM_DEVELOPER) reads `variable` ("0" turns the technique off).
bool cuda_technique_on(const char* variable);

// Whether this backend's kernels may be launched programmatically dependent on `dev`
// (dependent_launch.cuh): an sm_90 device, whose sm_90a code holds the kernels' waits.
bool dependent_launch_on(const CudaDevice& dev);

// The problem D^T = B^T A^T: its A is B transposed, and so on; per-M and per-N bias swap.
Problem transposed(const Problem& p);

// 16-byte aligned base, leading dimension and batch stride: what TMA boxes and cp.async's 16-byte
// vectors need. False (and why) otherwise.
bool check_16_byte_operand(const Operand& o, int element_bytes, int64_t outer_stride, int64_t batch, std::string* why);

}  // namespace omnigemm::detail
