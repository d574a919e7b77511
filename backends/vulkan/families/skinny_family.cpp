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
#define OG_VK_SKINNY(bm, bn, bk, stages, warps, split) Config{"skinny", bm, bn, bk, 1, stages, warps, 0, split, {}},
#include "skinny.inc"
#undef OG_VK_SKINNY
};

constexpr int64_t kSkinnyRows = 32;  // the rows of A (or columns of B) up to which the family runs as D^T
// Offered up to 32 rows where no cooperative-matrix family runs, up to 8 where one does: from
// 9 rows coopmat's tiles split over K match this family's scalar FMAs where B's N index is
// contiguous and beat them where its K index is (bench/results/h200, the Vulkan section).
constexpr int64_t kSkinnyRowsBesideCoopmat = 8;
// Splits deeper than this are offered only where this many slices leave compute units without a
// workgroup: each workgroup's own work (A's staging, the partial sums added through shared
// memory, its partials) is paid again per slice, which wide B does not win back (measured in
// bench/results/h200, "Narrow B, 2..4 rows and a K of a few elements").
constexpr int kShallowSplit = 16;
// Configs from 2 up to this many rows exist for problems of at most their rows: a problem of more
// rows would run them in passes, each reading B again (the 1-row config's passes measured ~3x
// slower than one pass of the 4-row config, same results section).
constexpr int kFewRowsInOnePass = 8;

// The shader's layout for a config (gemm_skinny.comp's VEC, CT, KT, SET_K).
struct Layout {
  int vec = 0;       // columns per thread
  int columns = 0;   // column threads (CT)
  int along_k = 0;   // threads along K (KT)
  int set_k = 0;     // K covered by one set of loads of all threads
};
Layout layout_of(const Config& c, int threads, bool b_k_contig) {
  Layout l;
  l.vec = c.block_m <= 8 ? 8 : 4;
  l.columns = c.block_n / l.vec;
  l.along_k = l.columns > 0 ? threads / l.columns : 0;
  l.set_k = c.stages * l.along_k * (b_k_contig ? 8 : 1);
  return l;
}

// B's K index is the contiguous one: the shader loads runs of 8 K per column.
bool b_k_contiguous(const Problem& p) { return p.b.stride_row == 1 && p.b.stride_col != 1; }

// The shader's shared memory: the staged BLOCK_M x BLOCK_K of A and the KT x BLOCK_N partial sums
// of ROWS rows at a time (as many as fit 4096 floats, 1..BLOCK_M), f32.
int64_t shared_bytes(const Config& c, const Layout& l) {
  const int64_t per_row = int64_t(l.along_k) * c.block_n;
  const int64_t rows = std::clamp<int64_t>(per_row > 0 ? 4096 / per_row : 1, 1, c.block_m);
  return 4 * (int64_t(c.block_m) * c.block_k + per_row * rows);
}

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

// The shader's UNALIGNED_GATHER: B (as run) in f16/bf16 with unit stride along its contiguous
// dimension whose rows are not whole 16-byte vectors (leading dimension or batch stride not a
// multiple of 8), loaded 8 elements at a time (always where K is contiguous, VEC 8 where N is).
// Only such problems get the pipeline with the aligned-pair loads: elsewhere the shader would
// not use them, and a pipeline that differs only in this id would be compiled for nothing.
bool unaligned_gather(const Problem& p, const Layout& l) {
  if (p.b.dtype != OG_DTYPE_F16 && p.b.dtype != OG_DTYPE_BF16) return false;
  const bool k_contig = b_k_contiguous(p);
  if (!k_contig && (p.b.stride_col != 1 || l.vec != 8)) return false;
  const int64_t outer = k_contig ? p.b.stride_col : p.b.stride_row;
  return outer % 8 != 0 || p.b.batch_stride % 8 != 0;
}

}  // namespace

std::span<const Config> SkinnyFamily::configs() const { return kSkinnyConfigs; }

Status SkinnyFamily::can_implement(const Problem& given, const Config& c) const {
  if (Status s = no_form(c); !s) return s;
  if (given.a.scale.present() || given.b.scale.present())
    return error(StatusCode::unsupported, "block-scaled operands run on the portable family, dequantised on load");
  if (c.waves_per_eu) return error(StatusCode::unsupported, "waves_per_eu is an AMD occupancy hint; Vulkan takes none");
  const Problem p = runs_transposed(given) ? transposed(given) : given;
  const bool k_contig = b_k_contiguous(p);
  const int threads = c.warps * limits().warp_size;
  const Layout l = layout_of(c, threads, k_contig);
  if (c.block_m < 1 || c.block_m > 32 || c.stages < 1 || c.stages > 8 || c.block_n % l.vec || l.columns < 1 || threads % l.columns ||
      threads > limits().max_threads_per_group || l.set_k < 1 || c.block_k % l.set_k || c.block_k % 4)
    return error(StatusCode::unsupported,
                 "tile " + c.to_string() + ": BLOCK_M 1..32, 1..8 stages, BLOCK_N a multiple of " + std::to_string(l.vec) + " whose " +
                     std::to_string(std::max(l.columns, 0)) + " column threads divide the " + std::to_string(threads) + " threads (at most " +
                     std::to_string(limits().max_threads_per_group) + "), BLOCK_K a multiple of 4 and of " + std::to_string(l.set_k) +
                     " (stages x threads along K" + (k_contig ? " x 8, B's K being contiguous)" : ", B's N being contiguous)"));
  if (shared_bytes(c, l) > limits().max_shared_bytes)
    return error(StatusCode::unsupported, std::to_string(shared_bytes(c, l)) + " bytes of shared memory exceed the device's " +
                                              std::to_string(limits().max_shared_bytes));
  if (c.split_k > 1 && split_workspace_bytes(p, uint32_t(c.split_k), 1, 4) > kMaxWorkspaceBytes)
    return error(StatusCode::unsupported, "split-K in " + std::to_string(c.split_k) + " slices would need " +
                                              std::to_string(split_workspace_bytes(p, uint32_t(c.split_k), 1, 4)) +
                                              " bytes of workspace, more than the " + std::to_string(kMaxWorkspaceBytes) + " bound");
  return {};
}

// Offered for M <= 32 only (a forced config runs any M). Its scalar f32 FMAs reach a small share
// of the 16-bit tensor rate, but at these M a GEMM is bound by reading B: this family spreads
// the columns and K over N / BLOCK_N x SPLIT workgroups, each streaming its part of B with
// vector loads, where the 2-D tile families leave most of the device idle on a long K loop. The
// tile terms of the cost model price a tile's reuse of its operands from shared memory, which
// this family does not rely on: the factor takes that term back out. Each further pass over the
// rows (M > BLOCK_M) reads B again; rows of BLOCK_M past M are computed and thrown away (the
// tile terms' edge waste). Split-K's partial sums go through memory once more (their bytes,
// written and read) and a second dispatch.
CostHints SkinnyFamily::hints(const Problem& given, const Config& c) const {
  CostHints h;
  h.efficiency = 0.06;
  if (std::min(given.m, given.n) > (dev().coopmat.ok ? kSkinnyRowsBesideCoopmat : kSkinnyRows)) {
    h.factor = 0;
    h.note = dev().coopmat.ok ? "not offered above 8 rows of A and 8 columns of B where the cooperative-matrix family runs"
                              : "not offered above 32 rows of A and 32 columns of B";
    return h;
  }
  const bool flipped = runs_transposed(given);
  const Problem p = flipped ? transposed(given) : given;
  if (c.block_m > 1 && c.block_m < kFewRowsInOnePass && p.m > c.block_m) {
    h.factor = 0;
    h.note = "configs of 2 to 7 rows serve only problems they cover in one pass (each further pass reads B again)";
    return h;
  }
  const double column_groups = std::ceil(double(p.n) / c.block_n) * double(p.batch);
  if (c.split_k > kShallowSplit && column_groups * kShallowSplit >= std::max(1, limits().compute_units)) {
    h.factor = 0;
    h.note = "splits deeper than 16 are offered only where 16 slices of the columns leave compute units idle";
    return h;
  }
  const double intensity = double(c.block_m) * c.block_n / double(c.block_m + c.block_n);
  const double reference = 128.0 * 256.0 / (128.0 + 256.0);
  h.factor = std::log2(1.0 + reference) / std::log2(1.0 + intensity);
  h.note = "streams B once per pass over the rows; no shared-memory tile reuse to price";
  if (flipped) {  // the tile terms see M x N; the launch covers N x M
    auto useful = [&](double m, double n) {
      return m * n / (std::ceil(m / c.block_m) * c.block_m * std::ceil(n / c.block_n) * c.block_n);
    };
    h.factor *= useful(double(given.n), double(given.m)) / useful(double(given.m), double(given.n));
    h.note = "runs D^T = B^T A^T, streaming A once per pass over its columns; no shared-memory tile reuse to price";
  }
  // Each further pass over the rows reads B again; B's loads coalesce into runs of (N
  // contiguous) a subgroup row's columns or (K contiguous) its 8-deep K runs, full speed from
  // 256 bytes.
  const double passes = std::ceil(double(p.m) / c.block_m);
  const bool k_contig = b_k_contiguous(p);
  const Layout l = layout_of(c, c.warps * limits().warp_size, k_contig);
  const double run_bytes = k_contig ? 16.0 * std::min(l.along_k, limits().warp_size) : 2.0 * l.vec * std::min(l.columns, limits().warp_size);
  h.memory_efficiency = 0.75 / passes * std::min(1.0, run_bytes / 256.0);
  // Streaming B takes enough of it in flight per compute unit: the workgroups a unit needs are
  // that amount over one workgroup's loads in flight (a set of STAGES rows or runs per thread),
  // so configs with deeper or wider sets need fewer workgroups. 64 KiB per unit: the four
  // workgroups of 16 KiB that the 16-row config was first calibrated with (H100).
  const double set_elements = double(c.stages) * l.vec * (k_contig ? 8.0 : 1.0);
  const double in_flight = double(c.warps) * limits().warp_size * set_elements * dtype_bytes(p.b.dtype);
  h.memory_items_per_unit = 65536.0 / std::max(in_flight, 1.0);
  h.split_fixed_steps = 0.5;  // the partial sums' traffic is priced below; a slice's own cost is small
  if (c.split_k > 1) h.extra_bytes = 2.0 * double(split_workspace_bytes(p, uint32_t(c.split_k), 1, 4));
  return h;
}

Status SkinnyFamily::plan(const Problem& given, const Config& c, VulkanLaunch& out) const {
  if (Status s = can_implement(given, c); !s) return s;
  std::shared_ptr<const Problem> run_as = runs_transposed(given) ? std::make_shared<const Problem>(transposed(given)) : nullptr;
  const Problem& p = run_as ? *run_as : given;
  plan_common(p, c, uint32_t(limits().warp_size), out);
  out.derived = run_as;
  const bool k_contig = b_k_contiguous(p);
  const Layout l = layout_of(c, int(out.threads), k_contig);
  // One work item per BLOCK_N columns and K slice; rows loop inside.
  out.tiles = uint64_t((p.n + c.block_n - 1) / c.block_n) * uint64_t(c.split_k);
  out.shader = Shader::skinny;
  const uint32_t own[4] = {uint32_t(c.split_k), uint32_t(k_contig), uint32_t(c.stages), unaligned_gather(p, l) ? 1u : 0u};  // ids 7..10
  std::copy(own, own + 4, out.spec.values + kCommonSpecIds);
  out.spec.count = kCommonSpecIds + (own[3] ? 4 : 3);
  out.shared_bytes = shared_bytes(c, l);
  if (c.split_k > 1) plan_split(p, uint32_t(c.split_k), 1, 4, out);  // partials of rows < M, columns padded to 4
  return {};
}

void SkinnyFamily::summarize(const VulkanLaunch& l, PlanSummary& out) const {
  summarize_common(l, out, /*tile_note=*/false);
  const uint32_t* v = l.spec.values + kCommonSpecIds;
  const Layout lay = layout_of(Config{"skinny", int(l.spec.values[0]), int(l.spec.values[1]), int(l.spec.values[2]), 1, int(v[2]), 1, 0, 1, {}},
                               int(l.threads), v[1] != 0);
  std::string notes = std::string(l.derived ? "runs D^T = B^T A^T (few columns); " : "") + "one workgroup per " +
                      std::to_string(l.spec.values[1]) + " columns of D and K slice (all rows, " + std::to_string(l.spec.values[0]) +
                      " per pass): " + std::to_string(lay.columns) + " column threads of " + std::to_string(lay.vec) + " columns x " +
                      std::to_string(lay.along_k) + " threads along K, " +
                      (v[1] ? "B's K contiguous (8-deep runs per column)" : "B's N contiguous (rows of " + std::to_string(lay.vec) + " columns)") +
                      ", " + std::to_string(v[2]) + " load stage(s) in flight, partial sums added in a fixed order" +
                      (l.spec.count > kCommonSpecIds + 3 && v[3] ? ", B's unaligned rows read as the aligned vector pairs that hold them" : "");
  out.notes = notes + (out.notes.empty() ? "" : "; " + out.notes);
}

}  // namespace omnigemm::detail::vulkan
