#include "bench_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

namespace omnigemm::bench {

Status invalid(std::string message) { return Status{StatusCode::invalid_argument, std::move(message)}; }

Status device_info(og_context* ctx, DeviceInfo& out) {
  og_capabilities caps{};
  if (og_status s = og_context_capabilities(ctx, &caps); s != OG_OK) return Status::from_c(s);
  out.kind = caps.backend;
  out.name = caps.device_name;
  out.driver = caps.driver_version;
  out.compute_units = std::max(1, caps.compute_units);
  out.l2_bytes = caps.l2_bytes;
  out.clock_ramp_ms = caps.clock_ramp_ms;
  return {};
}

DeviceBuffers::~DeviceBuffers() {
  for (const og_memory& m : mems_) og_memory_free(ctx_, m);
}

Status DeviceBuffers::add(size_t bytes, og_memory& out) {
  Status s = Status::from_c(og_memory_alloc(ctx_, std::max<size_t>(bytes, 16), &out));
  if (s) mems_.push_back(out);
  return s;
}

Status upload(og_context* ctx, const og_memory& dst, const void* src, size_t bytes) {
  return Status::from_c(og_memory_upload(ctx, dst, src, bytes));
}

Status download(og_context* ctx, void* dst, const og_memory& src, size_t bytes) {
  return Status::from_c(og_memory_download(ctx, dst, src, bytes));
}

Status synchronize(og_context* ctx) { return Status::from_c(og_context_synchronize(ctx, nullptr)); }

namespace {

// og_context_time calls back through a C function pointer: the launch and its Status travel in
// `user`, and no exception may cross back into the library.
struct LaunchCall {
  const std::function<Status()>* launch;
  Status result;
};

og_status call_launch(void* user) {
  auto* call = static_cast<LaunchCall*>(user);
  try {
    call->result = (*call->launch)();
  } catch (const std::exception& e) {
    call->result = Status{StatusCode::internal, std::string("launch threw: ") + e.what()};
  } catch (...) {
    call->result = Status{StatusCode::internal, "launch threw"};
  }
  return call->result ? OG_OK : static_cast<og_status>(call->result.code);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

}  // namespace

Status time_launch(og_context* ctx, const std::function<Status()>& launch, double& ms) {
  LaunchCall call{&launch, {}};
  const og_status s = og_context_time(ctx, call_launch, &call, &ms);
  if (!call.result) return call.result;
  return Status::from_c(s);
}

int set_count(long long l2_bytes, size_t set_bytes) {
  // Unknown L2 (CPU backends report none): assume 32 MiB, the size of a large server L3 slice.
  const long long target = 2 * (l2_bytes > 0 ? l2_bytes : (32ll << 20));
  const long long bytes = std::max<long long>(1, (long long)set_bytes);
  long long sets = std::clamp<long long>(target / bytes + 1, 2, 64);
  // Never more than ~6 GiB of rotating buffers (but always 2 sets).
  sets = std::max<long long>(2, std::min<long long>(sets, (6ll << 30) / bytes));
  return int(sets);
}

Status measure(og_context* ctx, const DeviceInfo& dev, const std::function<Status(int)>& launch, int sets,
               const Options& o, Timing& t) {
  int next = 0;
  const std::function<Status()> one = [&]() { return launch(next++ % sets); };
  double first = 0;
  Status s = time_launch(ctx, one, first);
  if (!s) return s;
  double warm = first;
  int warm_runs = 1;
  // At least warmup_ms of device time, and the device's clock ramp of back-to-back runs.
  const auto start = std::chrono::steady_clock::now();
  auto ramping = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < dev.clock_ramp_ms;
  };
  double last = first;  // the estimate: the last warm-up run, at the clocks the timing will see
  while ((warm < o.warmup_ms || ramping()) && warm_runs < 1000000) {
    if (!(s = time_launch(ctx, one, last))) return s;
    warm += last;
    ++warm_runs;
  }
  const double est = std::max(last, 1e-4);
  // Samples of at least ~1 ms so that the event/clock resolution and launch gaps do not dominate.
  // On Vulkan too: a timestamp pair around one dispatch also counts the queue's start-up, which
  // back-to-back launches in one command buffer share as CUDA's share one stream.
  t.inner = int(std::clamp(std::ceil(1.0 / est), 1.0, 64.0));
  t.samples = int(std::clamp(o.budget_ms / (est * t.inner), double(o.min_samples), double(o.max_samples)));
  std::vector<double> per_launch, host_us;
  per_launch.reserve(size_t(t.samples));
  host_us.reserve(size_t(t.samples));
  const std::function<Status()> sample = [&]() -> Status {
    const auto enqueue_start = std::chrono::steady_clock::now();
    for (int j = 0; j < t.inner; ++j)
      if (Status r = one(); !r) return r;
    host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - enqueue_start).count() /
                      t.inner);
    return {};
  };
  for (int i = 0; i < t.samples; ++i) {
    double ms = 0;
    if (!(s = time_launch(ctx, sample, ms))) return s;
    per_launch.push_back(ms / t.inner);
  }
  t.host_us = quantile(host_us, 0.5);
  t.median = quantile(per_launch, 0.5);
  t.q20 = quantile(per_launch, 0.2);
  t.q80 = quantile(per_launch, 0.8);
  return {};
}

}  // namespace omnigemm::bench
