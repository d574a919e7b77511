// vulkan.skinny: gemm_skinny.comp, few rows of A streamed against B (see skinny.inc).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "../vulkan_backend.hpp"
#include "vulkan_families.hpp"

namespace omnigemm::detail::vulkan {

namespace {

constexpr Config kSkinnyConfigs[] = {
#define OG_VK_SKINNY(bm, bn, bk, warps) Config{"skinny", bm, bn, bk, 1, 1, warps, 0, 1, {}},
#include "skinny.inc"
#undef OG_VK_SKINNY
};

constexpr int kVec = 4;             // columns per column thread (the shader's VEC)
constexpr int64_t kSkinnyRows = 32;  // the rows of A (or columns of B) up to which the family is offered

// The shader's shared memory: the KT x BLOCK_N partial sums and the staged BLOCK_M x BLOCK_K of A, f32.
int64_t shared_bytes(const Config& c, int threads) { return 4 * (int64_t(threads) * kVec + int64_t(c.block_m) * c.block_k); }

// Few columns and more rows: run D^T = B^T A^T, a problem with few rows.
bool runs_transposed(const Problem& p) { return p.n < p.m && p.n <= kSkinnyRows; }

Problem transposed(const Problem& p) {
  auto flip = [](Operand o) {
    std::swap(o.rows, o.cols);
    std::swap(o.stride_row, o.stride_col);
    return o;
  };
  Problem t = p;
  t.m = p.n;
  t.n = p.m;
  t.a = flip(p.b);
  t.b = flip(p.a);
  t.c = flip(p.c);
  t.d = flip(p.d);
  t.bias_mode = p.bias_mode == OG_BIAS_PER_N ? OG_BIAS_PER_M : p.bias_mode == OG_BIAS_PER_M ? OG_BIAS_PER_N : OG_BIAS_NONE;
  return t;
}

}  // namespace

std::span<const Config> SkinnyFamily::configs() const { return kSkinnyConfigs; }

Status SkinnyFamily::can_implement(const Problem& p, const Config& c) const {
  if (Status s = no_form(c); !s) return s;
  if (p.a.scale.present() || p.b.scale.present())
    return error(StatusCode::unsupported, "block-scaled operands run on the portable family, dequantised on load");
  if (c.split_k != 1 || c.stages != 1)
    return error(StatusCode::unsupported, "tile " + c.to_string() + ": split_k 1 and 1 stage only (K is split among a workgroup's threads)");
  if (c.waves_per_eu) return error(StatusCode::unsupported, "waves_per_eu is an AMD occupancy hint; Vulkan takes none");
  const int threads = c.warps * limits().warp_size, columns = c.block_n / kVec;
  if (c.block_m < 1 || c.block_m > 32 || c.block_n % kVec || columns < 1 || threads % columns || threads > limits().max_threads_per_group ||
      c.block_k % (threads / columns))
    return error(StatusCode::unsupported, "tile " + c.to_string() + ": BLOCK_M 1..32 and BLOCK_N a multiple of 4 whose BLOCK_N/4 column "
                                          "threads divide the " + std::to_string(threads) + " threads (at most " +
                                          std::to_string(limits().max_threads_per_group) + "), BLOCK_K a multiple of the rest");
  if (shared_bytes(c, threads) > limits().max_shared_bytes)
    return error(StatusCode::unsupported, std::to_string(shared_bytes(c, threads)) + " bytes of shared memory exceed the device's " +
                                              std::to_string(limits().max_shared_bytes));
  return {};
}

// Offered for M <= 32 only (a forced config runs any M). Its scalar f32 FMAs reach a small share
// of the 16-bit tensor rate (like the portable family's), but at these M a GEMM is bound by
// reading B: this family spreads the columns over N / BLOCK_N workgroups with all of K in flight
// in each, where the 2-D tile families leave most of the device idle on a long K loop. The tile
// terms of the cost model price a tile's reuse of its operands from shared memory, which this
// family does not rely on: the factor takes that term back out. (The 2-D tile families' predictions
// at few rows miss their latency-bound K loop: on the H100, 16x4096x4096 f16 ran at 0.24 TFLOP/s
// on coopmat; the choice between them at 17..32 rows awaits this family's measurement there.)
CostHints SkinnyFamily::hints(const Problem& p, const Config& c) const {
  CostHints h;
  h.efficiency = 0.06;
  if (dev().coopmat.ok) {
    // Measured on the H100 (f16, N = K = 4096): coopmat's 64x64 tile ran M = 1 and 16 in 0.10 ms,
    // this family in 0.14-1.5 ms (too few loads in flight per thread); offered only where no
    // cooperative-matrix family runs (lavapipe: 4x the portable family at M = 1).
    h.factor = 0;
    h.note = "not offered where the cooperative-matrix family runs";
    return h;
  }
  if (std::min(p.m, p.n) > kSkinnyRows) {
    h.factor = 0;
    h.note = "not offered above 32 rows of A and 32 columns of B";
    return h;
  }
  const double intensity = double(c.block_m) * c.block_n / double(c.block_m + c.block_n);
  const double reference = 128.0 * 256.0 / (128.0 + 256.0);
  h.factor = std::log2(1.0 + reference) / std::log2(1.0 + intensity);
  h.note = "streams B once; no shared-memory tile reuse to price";
  if (runs_transposed(p)) {  // the tile terms see M x N; the launch covers N x M
    auto useful = [&](double m, double n) {
      return m * n / (std::ceil(m / c.block_m) * c.block_m * std::ceil(n / c.block_n) * c.block_n);
    };
    h.factor *= useful(double(p.n), double(p.m)) / useful(double(p.m), double(p.n));
    h.note = "runs D^T = B^T A^T, streaming A once; no shared-memory tile reuse to price";
  }
  return h;
}

Status SkinnyFamily::plan(const Problem& given, const Config& c, VulkanLaunch& out) const {
  if (Status s = can_implement(given, c); !s) return s;
  std::shared_ptr<const Problem> run_as = runs_transposed(given) ? std::make_shared<const Problem>(transposed(given)) : nullptr;
  const Problem& p = run_as ? *run_as : given;
  plan_common(p, c, uint32_t(limits().warp_size), out);
  out.derived = run_as;
  out.tiles = uint64_t((p.n + c.block_n - 1) / c.block_n);  // one work item per BLOCK_N columns; rows loop inside
  out.shader = Shader::skinny;
  out.shared_bytes = shared_bytes(c, int(out.threads));
  return {};
}

void SkinnyFamily::summarize(const VulkanLaunch& l, PlanSummary& out) const {
  summarize_common(l, out);
  const uint32_t columns = l.spec.values[1] / kVec, along_k = l.threads / columns;
  out.notes = std::string(l.derived ? "runs D^T = B^T A^T (few columns); " : "") + "one workgroup per " + std::to_string(l.spec.values[1]) + " columns of D (all rows, " + std::to_string(l.spec.values[0]) +
              " per pass): " + std::to_string(columns) + " column threads of " + std::to_string(kVec) + " columns x " +
              std::to_string(along_k) + " threads along K, partial sums added in a fixed order";
}

}  // namespace omnigemm::detail::vulkan
