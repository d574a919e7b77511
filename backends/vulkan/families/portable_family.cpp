// vulkan.portable: gemm_portable.comp on any Vulkan 1.2 device, every input dtype, block-scaled
// ones dequantised on load.
#include <algorithm>
#include <string>

#include "../vulkan_backend.hpp"
#include "vulkan_families.hpp"

namespace omnigemm::detail::vulkan {

namespace {

constexpr Config kPortableConfigs[] = {
#define OG_VK_PORTABLE(bm, bn, bk, group_m, warps) Config{"portable", bm, bn, bk, group_m, 1, warps, 0, 1, {}},
#include "portable.inc"
#undef OG_VK_PORTABLE
};

// The shader's thread layout: COLS = BLOCK_N / 4 columns of threads, ROWS = threads / COLS rows,
// each thread a (BLOCK_M / ROWS) x 4 sub-tile.
constexpr int kThreadN = 4;

}  // namespace

std::span<const Config> PortableFamily::configs() const { return kPortableConfigs; }

Status PortableFamily::can_implement(const Problem&, const Config& c) const {
  if (Status s = no_form(c); !s) return s;
  if (c.split_k != 1) return error(StatusCode::unsupported, "split_k must be 1 (the shader has no split-K), not " + std::to_string(c.split_k));
  std::string why;
  if (!config_fits(c, limits(), 4, &why)) return error(StatusCode::unsupported, why);  // f32 tiles in shared memory
  const int threads = c.warps * limits().warp_size;
  const int cols = c.block_n / kThreadN;
  if (c.block_n % kThreadN || cols == 0 || threads < cols || threads % cols || c.block_m % (threads / cols))
    return error(StatusCode::unsupported,
                 "tile " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + " does not fit the thread layout: BLOCK_N must be a "
                 "multiple of 4 whose BLOCK_N/4 columns divide the " + std::to_string(threads) + " threads (" + std::to_string(c.warps) +
                 " warps x subgroup size " + std::to_string(limits().warp_size) + "), and the resulting rows must divide BLOCK_M");
  return {};
}

// Scalar FMAs on f32 tiles in shared memory: on a GPU a small fraction of the 16-bit tensor
// rate the cooperative-matrix families reach (18.8 against 236 TFLOP/s on the H100, 8192^3).
// On a GPU its K loop waits on each K tile's loads as theirs does (residency_factor): few tiles
// leave it latency-bound (H200: 21 x 283 x 679 took 360 us on it, 11.8 on coopmat). A CPU
// implementation (lavapipe) runs it at the host's cores' rate whatever the tile count. On a GPU
// each output's epilogue (staged through shared memory, stored element by element) costs about
// kEpilogueK of its K loop's FMAs per output (H200, f16 and f32 D, K = 8: 2000 x 3000 24.8 us,
// 4000 x 6000 79.7, 3.5x the K loop's price alone).
CostHints PortableFamily::hints(const Problem& p, const Config& c) const {
  constexpr double kEpilogueK = 20;
  CostHints h;
  h.efficiency = 0.02;
  if (dev().cpu_device) {
    h.factor = 1.0;
    return h;
  }
  h.factor = residency_factor(p, c);
  if (h.factor < 1) h.note = "fewer work items than the compute units need to hide the K loop's load latency";
  const double k = double(std::max<int64_t>(p.k, 1));  // K = 0 is the epilogue alone, still offered
  h.factor *= k / (k + kEpilogueK);
  return h;
}

Status PortableFamily::plan(const Problem& p, const Config& c, VulkanLaunch& out) const {
  if (Status s = can_implement(p, c); !s) return s;
  plan_common(p, c, uint32_t(limits().warp_size), out);
  // Block scales (block_scales.glsl, ids 7..10): mode and layout per operand, 0 when none.
  const uint32_t scales[4] = {uint32_t(p.a.scale.mode), uint32_t(p.a.scale.layout), uint32_t(p.b.scale.mode),
                              uint32_t(p.b.scale.layout)};
  for (uint32_t i = 0; i < 4; ++i) out.spec.values[kCommonSpecIds + i] = scales[i];
  out.spec.count = kCommonSpecIds + 4;
  out.shader = Shader::portable;
  // The f32 K tiles of A and B, or (if larger) one row of every thread's outputs for the epilogue.
  out.shared_bytes = int64_t(4) * std::max<int64_t>(int64_t(c.block_k) * (c.block_m + c.block_n), int64_t(out.threads) * kThreadN);
  return {};
}

void PortableFamily::summarize(const VulkanLaunch& l, PlanSummary& out) const {
  summarize_common(l, out);
  const uint32_t cols = l.spec.values[1] / kThreadN, rows = l.threads / cols;
  out.notes += "; " + std::to_string(rows) + "x" + std::to_string(cols) + " threads of " + std::to_string(l.spec.values[0] / rows) + "x" +
               std::to_string(kThreadN) + " outputs each, f32 FMAs";
  if (l.spec.values[kCommonSpecIds] || l.spec.values[kCommonSpecIds + 2]) out.notes += "; block-scaled operands dequantised on load";
}

}  // namespace omnigemm::detail::vulkan
