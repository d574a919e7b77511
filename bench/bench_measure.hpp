// How omnigemm-bench measures: device memory of the context's backend, rotating buffer sets
// larger than the device's cache, a warm-up that also covers the device's clock ramp, and timed
// samples of back-to-back launches (og_context_time: CUDA events on the legacy default stream,
// Vulkan timestamp queries, a host clock on the CPU).
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench_options.hpp"
#include "omnigemm/omnigemm.hpp"

namespace omnigemm::bench {

Status invalid(std::string message);

// What measurement needs to know of a context's device (from og_context_capabilities).
struct DeviceInfo {
  og_backend kind = OG_BACKEND_AUTO;
  std::string name, driver;
  int compute_units = 1;
  long long l2_bytes = 0;
  double clock_ramp_ms = 0;
};
Status device_info(og_context* ctx, DeviceInfo& out);

// Memory from og_memory_alloc on one context, freed (before the context goes) with this object.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(og_context* ctx) : ctx_(ctx) {}
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  // At least 16 bytes, so that an empty operand still has an address.
  Status add(size_t bytes, og_memory& out);

 private:
  og_context* ctx_;
  std::vector<og_memory> mems_;
};

Status upload(og_context* ctx, const og_memory& dst, const void* src, size_t bytes);
Status download(og_context* ctx, void* dst, const og_memory& src, size_t bytes);
Status synchronize(og_context* ctx);

// Device milliseconds of the work `launch` enqueues on the backend's default queue. A failure of
// `launch` itself comes back with its own message.
Status time_launch(og_context* ctx, const std::function<Status()>& launch, double& ms);

// How many buffer sets of `set_bytes` to rotate over so that their total exceeds twice the
// device's L2 (32 MiB assumed when unknown): at least 2, at most 64, and no more than ~6 GiB.
int set_count(long long l2_bytes, size_t set_bytes);

struct Timing {
  double median = NAN, q20 = NAN, q80 = NAN;  // milliseconds per launch
  // Host time to enqueue one launch (median over the samples): where it reaches the device
  // time, the device waits for the host and the timing measures the launch path.
  double host_us = NAN;
  int samples = 0, inner = 0;
};

// Warm-up (at least o.warmup_ms of device time and the device's clock ramp), then samples of
// `inner` back-to-back launches each, launch(i) using buffer set i of `sets` in turn.
Status measure(og_context* ctx, const DeviceInfo& dev, const std::function<Status(int)>& launch, int sets,
               const Options& o, Timing& t);

}  // namespace omnigemm::bench
