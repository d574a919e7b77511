// The one small interface every backend implements (backends/<name>/). The engine does the
// validation, the config choice (cost model, tuner) and the host-memory convenience path; a
// backend reports what it can do, lists its kernel families (which run a validated Problem with
// a Config), moves bytes and times launches.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "config_space.hpp"
#include "kernel_family.hpp"
#include "omnigemm/omnigemm.hpp"
#include "problem.hpp"

namespace omnigemm::detail {

// Build a failed Status with a message (the engine stores it as og_last_error_message()).
inline Status error(StatusCode code, std::string message) { return Status{code, std::move(message)}; }
// A family's or backend's refusal of a problem or config it cannot run.
inline Status unsupported(std::string message) { return error(StatusCode::unsupported, std::move(message)); }

struct DeviceInfo {
  std::string name;    // e.g. "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string driver;  // driver / runtime version text
  DeviceLimits limits;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual og_backend kind() const = 0;
  virtual const DeviceInfo& device() const = 0;

  // Bit masks (1 << og_dtype / og_memory_kind) of what run() accepts.
  virtual uint32_t input_dtypes() const = 0;
  virtual uint32_t output_dtypes() const = 0;
  virtual uint32_t memory_kinds() const = 0;
  virtual bool supports_async() const { return false; }
  // Bit mask (1 << og_scale_mode) of the block-scale modes run() accepts; DEFAULT stands for
  // operands without block scales.
  virtual uint32_t scale_modes() const { return 1u << OG_SCALE_MODE_DEFAULT; }

  // Backend-specific limits beyond the dtype masks (index width, mixed A/B dtypes, ...).
  // Called after the engine's validation; the message must name what is supported.
  virtual Status check_problem(const Problem&) const { return {}; }

  // Every kernel family of this backend, fastest first (the engine's dispatch asks each one; see
  // kernel_family.hpp). A family this device cannot run refuses every config in can_implement,
  // saying why, so that explain can show it. Never empty.
  virtual std::span<KernelFamily* const> families() const = 0;

  virtual Status synchronize(void* stream) = 0;

  // Device quantisation (og_quantize / og_dequantize) of one validated matrix in this backend's
  // memory: src and dst have the same op() shape; operand_b says the blocks run along op()'s
  // rows (GEMM operand B) rather than its columns. quantize: nvfp4 with global == 0 finds the
  // global factor first and returns it in `global`. Backends without it say so (unsupported).
  virtual Status quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream) {
    (void)src, (void)dst, (void)operand_b, (void)global, (void)stream;
    return no_device_quantization();
  }
  virtual Status dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream) {
    (void)src, (void)dst, (void)operand_b, (void)stream;
    return no_device_quantization();
  }

  // Device memory for the host convenience call, the tuner and the benchmarks.
  virtual Status allocate(size_t bytes, og_memory& out) = 0;
  virtual void release(const og_memory& mem) = 0;
  virtual Status upload(const og_memory& dst, const void* src, size_t bytes) = 0;
  virtual Status download(void* dst, const og_memory& src, size_t bytes) = 0;

  // Device time in milliseconds of what `launch` enqueues on the backend's default queue
  // (CUDA events, Vulkan timestamp queries, a host clock on the CPU).
  virtual Status time_ms(const std::function<Status()>& launch, double& ms) = 0;
  // How long (wall clock, ms) to keep the device busy with back-to-back work before timings
  // mean anything: some drivers drop the clocks when the device idles for about a second and
  // raise them again only after sustained work (timers and tuners run their first candidate
  // that long first).
  virtual double clock_ramp_ms() const { return 0; }

 protected:
  Status no_device_quantization() const {
    return Status{StatusCode::unsupported, std::string("backend ") + og_backend_name(kind()) +
                                               " has no device quantisation; use og_quantize_host / "
                                               "og_dequantize_host and og_memory_upload / og_memory_download"};
  }
};

// Factories, one per backend; each returns backend_unavailable with a reason when its
// runtime or device is missing. Only the backends compiled in are linked (engine/src/registry.cpp).
struct BackendOptions {
  int device_index = 0;
  int cpu_threads = 0;
  const og_vulkan_host_handles* vulkan = nullptr;
};
using BackendFactory = Status (*)(const BackendOptions&, std::unique_ptr<Backend>&);

// The factory of `kind`, or nullptr when that backend was not compiled in.
BackendFactory backend_factory(og_backend kind);

}  // namespace omnigemm::detail
