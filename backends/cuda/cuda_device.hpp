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

  // Split-K workspace, one per stream (launches on one stream run in order; two streams must not
  // share partials or counters). Grown on demand, never shrunk; counters zeroed on allocation
  // (each launch leaves them zero).
  Status split_workspace(cudaStream_t stream, long long floats, long long counters, float*& partials_out,
                         int*& counters_out);

 private:
  struct Workspace {
    float* partials = nullptr;
    int* counters = nullptr;
    long long floats = 0, count = 0;
  };
  std::mutex workspace_mutex_;
  std::map<cudaStream_t, Workspace> workspaces_;
};

// Switches for measuring what a technique buys. A user's build has them fixed on; a developer
// build (OMNIGEMM_DEVELOPER) reads `variable` ("0" turns the technique off).
bool cuda_technique_on(const char* variable);

// The problem D^T = B^T A^T: its A is B transposed, and so on; per-M and per-N bias swap.
Problem transposed(const Problem& p);

// 16-byte aligned base, leading dimension and batch stride: what TMA boxes and cp.async's 16-byte
// vectors need. False (and why) otherwise.
bool check_16_byte_operand(const Operand& o, int element_bytes, int64_t outer_stride, int64_t batch, std::string* why);

}  // namespace omnigemm::detail
