// vulkan.coopmat: gemm_coopmat.comp, KHR cooperative matrices at subgroup scope.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "../vulkan_backend.hpp"
#include "vulkan_families.hpp"

namespace omnigemm::detail::vulkan {

namespace {

constexpr Config kCoopmatConfigs[] = {
#define OG_VK_COOPMAT(bm, bn, bk, group_m, stages, warps, split, rate) Config{"coopmat", bm, bn, bk, group_m, stages, warps, 0, split, {}},
#include "coopmat.inc"
#undef OG_VK_COOPMAT
};
constexpr int kCoopmatRates[] = {
#define OG_VK_COOPMAT(bm, bn, bk, group_m, stages, warps, split, rate) rate,
#include "coopmat.inc"
#undef OG_VK_COOPMAT
};
static_assert(std::size(kCoopmatRates) == std::size(kCoopmatConfigs));
static_assert(std::ranges::all_of(kCoopmatRates, [](int r) { return r > 0 && r <= 200; }), "a RATE is a percentage in (0, 200]");

// The table's RATE of c as a fraction (a config that is not a row: 1).
double row_rate(const Config& c) {
  for (size_t i = 0; i < std::size(kCoopmatConfigs); ++i)
    if (kCoopmatConfigs[i] == c) return kCoopmatRates[i] / 100.0;
  return 1.0;
}

// Few-row tiles (decode, A of few rows) and their mirror, few-column tiles (B of few columns):
// tiles with a side under kFewRows, the tile whose residency they count as, and the K-steps a
// slice needs.
constexpr int kFewRows = 32;
constexpr int kFewRowsTile = 64;
constexpr int kFewRowsSteps = 4;
// The price of a 2-D tile's split-K partial sums per workspace byte, in bytes of memory
// traffic: written once and read once by the reduction, each at a quarter of the model's memory
// rate (H200: 3000^3 ran 352 us unsplit and 422 us in 4 slices, bench/results/h200). The
// few-row tiles' partial sums (16 rows a slice) keep the plain price: at 8 rows the heavier
// one ranks the skinny family first, which streams B slower there.
constexpr double kSplitTrafficCost = 2 * 4;
constexpr double kFewRowsSplitTrafficCost = 2;

// Subgroups along M (the rest along N): the shader's WARPS_M. Tiles of fewer than 32 rows keep
// every subgroup along N, tiles of fewer than 32 columns every subgroup along M.
int warps_m(const Config& c) {
  if (c.block_m < kFewRows) return 1;
  if (c.block_n < kFewRows) return c.warps;
  return c.warps >= 4 ? 2 : 1;
}

// Operand orientation in shared memory (A_M_CONTIG / B_K_CONTIG): tiles are staged in the order
// they lie in global memory.
bool a_m_contiguous(const Problem& p) { return p.a.stride_row == 1 && p.a.stride_col != 1; }
bool b_k_contiguous(const Problem& p) { return p.b.stride_row == 1 && p.b.stride_col != 1; }

// Shared memory the shader declares for this specialization (mirrors its SMEM_VECS), in bytes:
// the larger of the staged K tiles (16-byte vectors, one of padding per row) and the epilogue's
// fragment rows.
int64_t shared_bytes(const Problem& p, const Config& c, const CoopmatShape& cm) {
  const bool a_m = a_m_contiguous(p), b_k = b_k_contiguous(p);
  const int64_t a_tile = int64_t(a_m ? c.block_k : c.block_m) * ((a_m ? c.block_m : c.block_k) / 8 + 1);
  const int64_t b_tile = int64_t(b_k ? c.block_n : c.block_k) * ((b_k ? c.block_k : c.block_n) / 8 + 1);
  const int wn = c.warps / warps_m(c);
  const int64_t epilogue = int64_t(c.warps) * cm.m * (c.block_n / wn / 4 + 1);
  return 16 * std::max(int64_t(c.stages) * (a_tile + b_tile), epilogue);
}

// The shader's UNALIGNED_GATHER: some operand in the multiplicand dtype with unit stride along its
// contiguous dimension is not vector-aligned, so its 8-element runs are read as the two aligned
// vectors that hold them. Aligned problems keep the element-by-element fallback only, whose code
// is smaller (the pipelines that run them are the ones measured before this path existed).
bool unaligned_gather(const Problem& p, int mul, uint32_t padded) {
  const og_dtype native = mul ? OG_DTYPE_BF16 : OG_DTYPE_F16;
  auto unit = [](const Operand& o) { return o.stride_col == 1 || o.stride_row == 1; };
  const bool a = p.a.dtype == native && unit(p.a) && !coopmat_vector_aligned(p.a, false, p.k, p.m, padded & 1u);
  const bool b = p.b.dtype == native && unit(p.b) && !coopmat_vector_aligned(p.b, true, p.k, p.n, padded & 2u);
  return a || b;
}

// Operands in the multiplicand dtype that the shader cannot read as whole aligned vectors: each
// costs the K loop two vector loads and a shift per vector (unit stride) or eight element loads.
// On the H200 (f16, 128x256x32 tiles) 2047x2049x2051 took 532 us gathering both operands and
// 212 us on aligned copies (coopmat_repack, the copies included): a K-step at about 0.6 of its
// rate per gathered operand. Problems of a few K-steps (K of 3..10) ran as fast either way: a
// tile's fixed work (its start, its epilogue) is not slowed.
constexpr double kGatherRate = 0.6;
constexpr double kTileFixedSteps = 8;  // a tile's fixed work, in K-steps
// Where streaming an operand bounds the problem, its gathers run at about a quarter of the
// aligned loads' bandwidth: 14653x8x7890 (A's K odd, 16-column tiles) 414 us gathering, 225 us
// on an aligned copy (the copy of A's 231 MB included).
constexpr double kGatherStreamRate = 0.25;
struct Gathered {
  int operands = 0;
  double bytes = 0;  // theirs, over all batches
};
Gathered gathered_operands(const Problem& p, uint32_t padded) {
  const uint32_t which = coopmat_gathered(p, padded);
  Gathered g;
  const double k = double(p.k) * double(p.batch);
  if (which & 1u) ++g.operands, g.bytes += 2.0 * double(p.m) * k;
  if (which & 2u) ++g.operands, g.bytes += 2.0 * double(p.n) * k;
  return g;
}

std::string shape_text(const CoopmatShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

}  // namespace

bool coopmat_vector_aligned(const Operand& o, bool k_rows, int64_t k, int64_t other, bool padded) {
  const bool rows = o.stride_col == 1;  // contiguous along its columns
  if (!rows && o.stride_row != 1) return false;
  const int64_t extent = rows == k_rows ? other : k;  // A: columns are K; B: rows are K
  const int64_t outer = rows ? o.stride_row : o.stride_col;
  return (padded || extent % 8 == 0) && outer % 8 == 0 && o.batch_stride % 8 == 0;
}

uint32_t coopmat_gathered(const Problem& p, uint32_t padded) {
  const int mul = coopmat_mul_type(p);
  if (mul < 0) return 0;
  const og_dtype native = mul ? OG_DTYPE_BF16 : OG_DTYPE_F16;
  return (p.a.dtype == native && !coopmat_vector_aligned(p.a, false, p.k, p.m, padded & 1u) ? 1u : 0u) |
         (p.b.dtype == native && !coopmat_vector_aligned(p.b, true, p.k, p.n, padded & 2u) ? 2u : 0u);
}

std::span<const Config> CoopmatFamily::configs() const { return kCoopmatConfigs; }

Status CoopmatFamily::can_implement(const Problem& p, const Config& c) const {
  const VulkanDevice& d = dev();
  if (!d.coopmat.ok)
    return error(StatusCode::unsupported, d.info.name + " has no usable KHR cooperative matrix (f16 x f16 -> f32, subgroup scope) in this "
                                          "build/device" + (d.coopmat.why.empty() ? "" : ": " + d.coopmat.why));
  if (Status s = no_form(c); !s) return s;
  std::string why;
  if (!config_well_formed(c, &why)) return error(StatusCode::unsupported, why);
  const int mul = coopmat_mul_type(p);
  if (mul < 0) return coopmat_dtype_refusal(p);
  if (mul == 1 && !d.coopmat.bf16)
    return error(StatusCode::unsupported, "bf16 inputs need bf16 cooperative matrices (VK_KHR_shader_bfloat16), which " + d.info.name +
                                              " lacks" + (d.coopmat.bf16_why.empty() ? "" : " (" + d.coopmat.bf16_why + ")") +
                                              "; supported: f16 and fp8");
  const CoopmatShape& cm = d.coopmat.shape[mul];
  const int wm = warps_m(c), wn = c.warps / wm;
  if (c.warps % wm || c.stages < 1 || c.stages > 2 || c.block_m % (wm * int(cm.m)) || c.block_n % (wn * int(cm.n)) ||
      c.block_k % int(cm.k) || c.block_m % 8 || c.block_k % 8 || (c.block_n / wn) % 4)
    return error(StatusCode::unsupported, "tile " + c.to_string() + " does not divide into " + std::to_string(wm) + "x" + std::to_string(wn) +
                                              " subgroups of " + shape_text(cm) +
                                              " fragments (1 or 2 stages, tile sides multiples of 8)");
  if (c.waves_per_eu) return error(StatusCode::unsupported, "waves_per_eu is an AMD occupancy hint; Vulkan takes none");
  if (c.split_k > 1 && split_workspace_bytes(p, uint32_t(c.split_k), uint32_t(c.block_m), uint32_t(c.block_n)) > kMaxWorkspaceBytes)
    return error(StatusCode::unsupported, "split-K in " + std::to_string(c.split_k) + " slices would need " +
                                              std::to_string(split_workspace_bytes(p, uint32_t(c.split_k), uint32_t(c.block_m), uint32_t(c.block_n))) +
                                              " bytes of workspace, more than the " + std::to_string(kMaxWorkspaceBytes) + " bound");
  // Every slice gets at least one BLOCK_K of K: more slices than K blocks only add empty work
  // items and partial sums to add.
  if (c.split_k > 1 && p.k < int64_t(c.split_k) * c.block_k)
    return error(StatusCode::unsupported, "split-K in " + std::to_string(c.split_k) + " slices needs K >= " + std::to_string(c.split_k) +
                                              " x BLOCK_K = " + std::to_string(int64_t(c.split_k) * c.block_k) + ", not " + std::to_string(p.k));
  const int threads = c.warps * int(d.coopmat.subgroup);
  const int64_t shared = shared_bytes(p, c, cm);
  if (threads > limits().max_threads_per_group || shared > limits().max_shared_bytes)
    return error(StatusCode::unsupported, std::to_string(threads) + " threads / " + std::to_string(shared) +
                                              " bytes of shared memory exceed the device's " + std::to_string(limits().max_threads_per_group) +
                                              " / " + std::to_string(limits().max_shared_bytes));
  return {};
}

// KHR cooperative matrices on the tensor cores: the family's best H100 tile reached 236 TFLOP/s
// f16 at 8192^3, about a quarter of the dense 16-bit peak; OmniGEMM's fastest Vulkan family there.
// Each row's K loop runs at its RATE of that (coopmat.inc). Few work items leave the K loop
// latency-bound (tile_residency); split-K supplies the items for problems of few tiles, its
// partial sums going through memory once more with a second dispatch: their bytes, written and
// read, at a quarter of the rate the model gives memory traffic (kSplitTrafficCost).
CostHints CoopmatFamily::hints(const Problem& p, const Config& c) const { return hints_padded(p, c, 0); }

CostHints CoopmatFamily::hints_padded(const Problem& p, const Config& c, uint32_t padded) const {
  CostHints h;
  h.efficiency = 0.24 * row_rate(c);
  h.factor = tile_residency(p, c);
  if (h.factor < 1) h.note = "fewer work items than the compute units need to hide the K loop's load latency";
  if (c.block_m < kFewRows || c.block_n < kFewRows) {
    // Tiles under 32 rows are for decode: A of at most one tile of rows, slices of K long enough
    // to stream B (kFewRowsSteps K-steps each); elsewhere 2-D tiles or the skinny family do
    // better. Each step of such a tile loads as many bytes (all B's, BLOCK_N x BLOCK_K) as a
    // kFewRowsTile-row tile of its width: in flight it counts as that tile. Tiles under 32
    // columns are the same for B of few columns, streaming A.
    const bool rows = c.block_m < kFewRows;
    if ((rows ? p.m > c.block_m : p.n > c.block_n) || p.k < int64_t(kFewRowsSteps) * c.split_k * c.block_k) {
      h.factor = 0;
      h.note = rows ? "a tile under 32 rows is offered for at most its rows of A and K of 4 steps per slice"
                    : "a tile under 32 columns is offered for at most its columns of B and K of 4 steps per slice";
      return h;
    }
    h.factor = std::min(1.0, h.factor * kFewRowsTile / (rows ? c.block_m : c.block_n));
  }
  if (const Gathered g = gathered_operands(p, padded); g.operands) {
    // The K loop at kGatherRate per gathered operand, a tile's fixed work (kTileFixedSteps
    // K-steps' worth) not slowed; where streaming bounds the problem, the gathered operands'
    // bytes as if read at kGatherStreamRate (D's traffic is not slowed).
    const double steps = std::ceil(double(p.k) / std::max(1, c.split_k) / c.block_k);
    h.factor *= (steps + kTileFixedSteps) / (steps / std::pow(kGatherRate, g.operands) + kTileFixedSteps);
    h.extra_bytes += g.bytes * (1 / kGatherStreamRate - 1) / h.memory_efficiency;
    if (!h.note) h.note = "operands not vector-aligned are gathered, each at about 0.6 of the K loop's rate";
  }
  // Each output's epilogue, through shared memory: twice the price where D is stored element by
  // element, and twice again for subgroups of more than 4 fragment rows, which stage their rows
  // in as many rounds of half-width rows (H200, f16 D, K = 8 on 64x64 tiles: 2000 x 3000 17.9 us,
  // 2000 x 3001 35.4; K = 1 on 256x128 tiles: 301 x 8204 33.4, on the portable family 13.4).
  const CoopmatShape& cm = dev().coopmat.shape[coopmat_mul_type(p)];
  const bool many_rows = cm.m > 0 && c.block_m / warps_m(c) / int(cm.m) > 4;
  h.factor *= epilogue_factor(p, (d_vector_stores(p) ? 1 : 2) * (many_rows ? 2 : 1));
  h.split_fixed_steps = 1;  // the partial sums' traffic is priced below
  if (c.split_k > 1)
    h.extra_bytes += (c.block_m < kFewRows || c.block_n < kFewRows ? kFewRowsSplitTrafficCost : kSplitTrafficCost) *
                     double(split_workspace_bytes(p, uint32_t(c.split_k), uint32_t(c.block_m), uint32_t(c.block_n)));
  return h;
}

Status CoopmatFamily::plan(const Problem& p, const Config& c, VulkanLaunch& out) const { return plan_padded(p, c, 0, out); }

Status CoopmatFamily::plan_padded(const Problem& p, const Config& c, uint32_t padded, VulkanLaunch& out) const {
  if (Status s = can_implement(p, c); !s) return s;
  plan_common(p, c, dev().coopmat.subgroup, out);
  const VulkanDevice& d = dev();
  const int mul = coopmat_mul_type(p);
  const CoopmatShape& cm = d.coopmat.shape[mul];
  out.shader = mul ? Shader::coopmat_bf16 : Shader::coopmat;
  const uint32_t own[9] = {cm.m, cm.n, cm.k, d.coopmat.subgroup, uint32_t(warps_m(c)), uint32_t(c.stages), uint32_t(mul),
                           uint32_t(a_m_contiguous(p)), uint32_t(b_k_contiguous(p))};  // ids 7..15
  std::copy(own, own + 9, out.spec.values + kCommonSpecIds);
  out.spec.count = kCommonSpecIds + 9;
#ifdef OMNIGEMM_DEVELOPER
  // id 16, MAINLOOP_PROBE: only a developer build ever sets it (ceiling measurements; results
  // WRONG when nonzero). Elsewhere it keeps the shader's default 0 and the probe code folds away.
  out.spec.values[kCommonSpecIds + 9] = be_.mainloop_probe();
  out.spec.count = kCommonSpecIds + 10;
#endif
  // Ids 17, SPLIT (1: none), 18, UNALIGNED_GATHER, and 19, PADDED, up to the last that is not its
  // default (id 16 stays 0 outside developer builds).
  const bool unaligned = unaligned_gather(p, mul, padded);
  if (c.split_k > 1 || unaligned || padded) {
    out.spec.values[kCommonSpecIds + 10] = uint32_t(std::max(1, c.split_k));
    out.spec.values[kCommonSpecIds + 11] = unaligned ? 1u : 0u;
    out.spec.values[kCommonSpecIds + 12] = padded;
    out.spec.count = kCommonSpecIds + (padded ? 13 : 12);
  }
  if (c.split_k > 1) {
    out.tiles *= uint64_t(c.split_k);
    plan_split(p, uint32_t(c.split_k), uint32_t(c.block_m), uint32_t(c.block_n), out);
  }
  out.shared_bytes = shared_bytes(p, c, cm);
  return {};
}

void CoopmatFamily::summarize(const VulkanLaunch& l, PlanSummary& out) const {
  summarize_common(l, out);
  const uint32_t* v = l.spec.values + kCommonSpecIds;  // the family's own ids
  const uint32_t subgroups = l.threads / v[3];
  out.notes += "; " + std::to_string(v[4]) + "x" + std::to_string(subgroups / v[4]) + " subgroups of " +
               shape_text({v[0], v[1], v[2]}) + " " + (v[6] ? "bf16" : "f16") + " fragments, " + std::to_string(v[5]) +
               " shared stage(s), A staged " + (v[7] ? "K x M" : "M x K") + ", B staged " + (v[8] ? "N x K" : "K x N");
  if (l.spec.count > kCommonSpecIds + 11 && v[11]) out.notes += "; unaligned runs of 8 elements read as the two aligned vectors that hold them";
  if (l.spec.count > kCommonSpecIds + 12 && v[12])
    out.notes += std::string("; ") + (v[12] == 3 ? "A's and B's" : v[12] == 1 ? "A's" : "B's") + " zero-padded lines read as whole vectors";
#ifdef OMNIGEMM_DEVELOPER
  if (l.spec.count > kCommonSpecIds + 9 && v[9]) out.notes += "; MAINLOOP_PROBE " + std::to_string(v[9]) + ": results WRONG by design";
#endif
}

}  // namespace omnigemm::detail::vulkan
