#include "cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace omnigemm::detail {

double peak_tflops(const DeviceLimits& lim, const Problem& p) {
  const int bytes = std::max(dtype_bytes(p.a.dtype), dtype_bytes(p.b.dtype));
  const double peak = bytes >= 4 ? lim.peak_tflops_f32 : bytes == 2 ? lim.peak_tflops_16bit : lim.peak_tflops_8bit;
  return peak > 0 ? peak : 1.0;
}

CostTerms predict(const Problem& p, const Config& c, const CostHints& h, const DeviceLimits& lim) {
  CostTerms t;
  const double units = lim.compute_units > 0 ? lim.compute_units : 1;
  // Work items: tiles x batch x split-K slices, run in waves of one per compute unit.
  const double tm = std::ceil(double(p.m) / c.block_m), tn = std::ceil(double(p.n) / c.block_n);
  const double items = tm * tn * double(p.batch) * c.split_k;
  t.waves = std::ceil(items / units);
  t.occupancy = items / (t.waves * units);
  // Edge tiles compute their padding too.
  t.useful = double(p.m) * double(p.n) / (tm * c.block_m * tn * c.block_n);
  // A tile amortises its loads over its area: intensity BM*BN/(BM+BN), on a log scale so that
  // it breaks ties between tiles that fill the machine equally rather than overriding waves.
  const double intensity = double(c.block_m) * c.block_n / double(c.block_m + c.block_n);
  const double reference = 128.0 * 256.0 / (128.0 + 256.0);
  t.intensity = std::log2(1.0 + intensity) / std::log2(1.0 + reference);
  // Split-K fills idle units with slices, but each split tile pays a fixed price (partials'
  // round trip through memory, one more epilogue) of h.split_fixed_steps K-steps of a 128x64x64
  // tile whatever the slice length, scaled by the bytes a step of this tile loads: the tiles
  // that split are the skinny ones, whose steps stream operands.
  const double k_steps = std::max(1.0, std::ceil(double(p.k) / c.block_k));
  const double slice_steps = std::ceil(k_steps / c.split_k);
  const double fixed =
      c.split_k > 1 ? h.split_fixed_steps * ((128.0 + 64) * 64) / (double(c.block_m + c.block_n) * c.block_k) : 0.0;
  t.split = k_steps / (c.split_k * (slice_steps + fixed));

  const double share = t.occupancy * t.useful * t.split * t.intensity * h.efficiency * h.factor;
  t.rate_tflops = peak_tflops(lim, p) * share;
  const int bytes = std::max(dtype_bytes(p.a.dtype), dtype_bytes(p.b.dtype));
  t.absolute = (bytes >= 4 ? lim.peak_tflops_f32 : bytes == 2 ? lim.peak_tflops_16bit : lim.peak_tflops_8bit) > 0;
  const double flops = 2.0 * double(p.m) * double(p.n) * double(std::max<int64_t>(p.k, 1)) * double(p.batch);
  const double bytes_per_ms = lim.memory_gbps > 0 ? lim.memory_gbps * 1e6 : peak_tflops(lim, p) * 1e9 / 100.0;
  const double mn = double(p.m) * double(p.n) * double(p.batch);
  const double kk = double(p.k) * double(p.batch);
  const double traffic = double(p.m) * kk * dtype_bytes(p.a.dtype) + double(p.n) * kk * dtype_bytes(p.b.dtype) +
                         mn * (dtype_bytes(p.d.dtype) + (p.c.present ? dtype_bytes(p.c.dtype) : 0));
  // A family that needs several work items per unit in flight to stream reaches its share of the
  // bandwidth only with that many.
  const double streaming = h.memory_items_per_unit > 0 ? std::min(1.0, items / (h.memory_items_per_unit * units)) : 1.0;
  t.memory_ms = traffic / (bytes_per_ms * std::max(h.memory_efficiency * streaming, 1e-3));
  t.extra_ms = h.extra_bytes / bytes_per_ms + h.extra_us * 1e-3;
  if (share > 0) {
    const double compute_ms = flops / (t.rate_tflops * 1e9);
    // A latency floor joins the same way: the larger plus a tenth of the smaller, so that configs
    // under the floor keep their throughput order (more tiles in flight still rank first).
    const double main_ms = std::max(compute_ms, t.memory_ms) + 0.1 * std::min(compute_ms, t.memory_ms);
    t.latency_ms = h.latency_us * 1e-3;
    t.ms = std::max(main_ms, t.latency_ms) + 0.1 * std::min(main_ms, t.latency_ms) + t.extra_ms;
  } else {
    t.ms = std::numeric_limits<double>::infinity();
  }
  return t;
}

}  // namespace omnigemm::detail
