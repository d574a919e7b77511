// cuda.sm90_wgmma: the Hopper TMA + wgmma kernel (gemm_tma_wgmma.cuh) as a kernel family. Its
// rows (families/sm90_wgmma.inc) name a tile, split-K and a form; kernel_key.hpp derives the
// instantiation; this file checks a problem against it, builds the tensor maps and the launch.
#include <algorithm>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "cost_model.hpp"
#include "launch.hpp"
#include "tma_lines.hpp"
#include "tensor_map_encode.hpp"
#include "omnigemm/tile_schedule.h"

namespace omnigemm::detail {

namespace {

using sm90::encode_3d;
using sm90::Form;
using sm90::KernelKey;

// The kernel each row instantiates, with its BLOCK_K (which input width it is built for).
struct Sm90RowKernel {
  int block_k;
  KernelKey key;
};
constexpr Sm90RowKernel kRowKernels[] = {
#define OG_CUDA_SM90_WGMMA(bm, bn, bk, gm, st, sk, form) Sm90RowKernel{bk, sm90::kernel_key(bm, bn, sk, Form::form)},
#include "../families/sm90_wgmma.inc"
#undef OG_CUDA_SM90_WGMMA
};
constexpr Config kSm90Configs[] = {
#define OG_CUDA_SM90_WGMMA(bm, bn, bk, gm, st, sk, form) Config{"sm90_wgmma", bm, bn, bk, gm, st, 12, 0, sk, #form},
#include "../families/sm90_wgmma.inc"
#undef OG_CUDA_SM90_WGMMA
};

constexpr int kMaxSplitK = 16;
constexpr long long kMaxPartialFloats = 1ll << 28;  // 1 GiB of split-K partials
// The least time of one launch of the kernel, whatever the problem: the tiny problems of the H200's
// random sweeps (bench/results/h200, runs r16-r23) took 4.5 us and more (median 6.1).
constexpr double kLaunchFloorUs = 4.5;
// Few-tile problems (hints): one CTA's operand stream, the kernel's fixed time, and the split-K
// reduction's fixed and per-slice time (per slice of a 128x64 tile's partials, 32 KB of f32, it is
// twice kSplitSliceUs). Fitted on the H200's forced sweep of 128x64, 64x128 and 128x128 tiles.
constexpr double kCtaStreamGBps = 137;
constexpr double kFewTileFixedUs = 2.9;
constexpr double kSplitFixedUs = 1.5;
constexpr double kSplitSliceUs = 0.2;
// Where K is a step or two, each wave of work items takes about a tile's pipeline fill, MMA and
// epilogue: kTileWaveUs plus kTileWaveUsPer1024Elements for each 1024 elements of the tile, after
// kFewTileFixedUs, where there are two waves or more (one wave: kLaunchFloorUs). Fitted as a
// floor under the H200's random-sweep rows of a short K, 64x128 to 256x128 tiles, 2 to 26 waves
// (bench/results/h200).
constexpr double kTileWaveUs = 1.0;
constexpr double kTileWaveUsPer1024Elements = 0.075;
// The time a K step of a work item waits on an operand of narrow MN-major lines
// (sm90::narrow_mn_lines), by the lines' bytes: 16, 32, 48; for at most kNarrowLineSteps steps of
// each item (a long K waits less per step). Fitted on the H200's forced 128x64 tiles of tall
// problems of 8, 16 and 24 columns, K 64 to 1024, 512 and 1024 tiles, with B N-major against the
// same problems with B K-major (bench/results/h200, runs p44 and p45).
constexpr double kNarrowLineStepUs[3] = {1.0, 0.4, 0.7};
constexpr double kNarrowLineSteps = 8;
// A wait for MN-major lines of 256-511 bytes on a pitch that straddles sectors
// (sm90::short_straddling_mn_lines): 65536 x N x 256 f16 with B N-major on pitches of 2N bytes,
// N = 136 and 200, waited 0.52-0.6 us per K step of each program's 128-row tiles of A over the
// same problems on 128-byte pitches (runs p51, p52).
constexpr double kShortStraddlingStepUs = 0.5;
// The share of an SM's peak a K step's MMAs reach on full tiles of a compute-bound problem, the
// tiles' prologue and epilogue included: what the lines of a slow pitch (sm90/tma_lines.hpp) are
// compared with. H200, f16 4096 x 4096 x 1000 on 128-byte pitches: 128x128 0.57, 128x256 0.6.
constexpr double kStepEfficiency = 0.58;

struct Sm90Launch {
  sm90::Launch l;
  bool swapped = false;            // runs D^T = B^T A^T
  og_dtype a = OG_DTYPE_F16, b = OG_DTYPE_F16;
  WorkspaceNeed need;              // split-K counters and partials, when slices meet in global memory
  CallerWorkspace caller;          // the workspace the launch carves (none: the device's own)
};

class Sm90WgmmaFamily final : public PlannedFamily<Sm90Launch> {
 public:
  explicit Sm90WgmmaFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "sm90_wgmma"; }
  std::span<const Config> configs() const override { return kSm90Configs; }

  Status can_implement(const Problem& p, const Config& c) const override {
    Sm90Launch l{};
    return check(p, c, l, false);
  }

  CostHints hints(const Problem& p, const Config& c) const override;

 protected:
  Status plan(const Problem& p, const Config& c, Sm90Launch& l) const override { return check(p, c, l, true); }

  Status launch(Sm90Launch& pl, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    sm90::Launch& l = pl.l;
    l.stream = static_cast<cudaStream_t>(stream);
    if (pl.need.bytes() > 0) {
      WorkspaceParts parts;
      if (Status s = dev_.workspace(pl.caller, l.stream, pl.need, parts); !s) return s;
      l.partials = parts.partials;
      l.counters = parts.counters;
    }
    cudaError_t e = cudaErrorInvalidValue;
    if (pl.a == OG_DTYPE_F16) e = sm90::launch_f16(l);
    else if (pl.a == OG_DTYPE_BF16) e = sm90::launch_bf16(l);
    else if (pl.a == OG_DTYPE_F32) e = sm90::launch_tf32(l);
    else e = sm90::launch_fp8(l, pl.a == OG_DTYPE_FP8_E5M2, pl.b == OG_DTYPE_FP8_E5M2);
    OG_CUDA_TRY(e, "gemm_tma_wgmma launch");
    return {};
  }

  void summarize(const Sm90Launch& pl, PlanSummary& out) const override {
    const sm90::Launch& l = pl.l;
    out.grid[0] = l.grid;
    out.cluster = l.key.cluster_size();
    out.threads = 128 * (1 + sm90::kConsumers);
    out.shared_bytes = (long long)sm90::shared_bytes(l.key.block_m(), l.key.block_n, l.stages);
    out.workspace_bytes = pl.need.bytes();
    std::string n = "persistent, " + std::to_string(l.key.block_m()) + "x" + std::to_string(l.key.block_n) + " kernel tiles";
    if (pl.swapped) n += " on D^T = B^T A^T";
    if (l.key.pingpong) n += ", ping-pong consumers";
    if (l.key.split_n) n += ", consumers split the columns";
    if (l.key.cluster_m > 1) n += ", B multicast in clusters of " + std::to_string(l.key.cluster_m);
    if (l.split_k > 1) n += l.key.split_pairs ? ", split-K pairs in clusters" : ", split-K partials in global memory";
    if (l.defer_epilogue && l.ep.d.dtype == OG_DTYPE_F32) n += ", f32 epilogue chunks through TMA stores";
    else if (l.defer_epilogue) n += ", epilogue deferred into the next tile through TMA stores";
    if (l.dependent_launch) n += ", programmatic dependent launch";
    out.notes = n;
  }

 private:
  Status check(const Problem& p, const Config& c, Sm90Launch& out, bool fill) const;
  Status check_kernel(const Problem& p, const Config& c, Form form, Sm90Launch& out, bool fill) const;
  bool encode_operand(CUtensorMap& map, const Operand& o, int eb, int64_t inner, int64_t outer, int64_t outer_stride,
                      int64_t batch, int box_inner, int box_outer, std::string* why) const;
  bool encode_output(CUtensorMap& map, const Problem& p, const cuda::EpilogueArgs& e) const;

  CudaDevice& dev_;
  mutable sm90::TensorMapMemo maps_;
};

Status Sm90WgmmaFamily::check(const Problem& p, const Config& c, Sm90Launch& out, bool fill) const {
  if (Status s = refuse_block_scales(p); !s) return s;
  Form form;
  if (!sm90::parse_form(c.form.text, form))
    return error(StatusCode::unsupported, "the form must be coop, pingpong, mcast or swap");
  if (form != Form::swap) return check_kernel(p, c, form, out, fill);
  // swap: the coop kernel on D^T = B^T A^T, its tile transposed.
  Config t = c;
  std::swap(t.block_m, t.block_n);
  Status s = check_kernel(transposed(p), t, Form::coop, out, fill);
  if (!s)
    return error(s.code, "on D^T = B^T A^T, as tile " + std::to_string(t.block_m) + "x" + std::to_string(t.block_n) + ": " +
                             s.message);
  out.swapped = true;
  return {};
}

// Can the kernel run `p` (in its own orientation) with tile c.block_m x c.block_n in `form`? With
// `fill`, also builds the launch (tensor maps included). TMA needs 16-byte aligned bases and strides
// and one unit stride per operand; wgmma needs equal 16-bit input types or fp8 inputs, fp8 K-major.
Status Sm90WgmmaFamily::check_kernel(const Problem& p, const Config& c, Form form, Sm90Launch& out, bool fill) const {
  if (dev_.info.limits.arch / 10 != 9 || !dev_.encode_tiled)
    return unsupported("needs an sm_90 device and a driver with cuTensorMapEncodeTiled (this is " + dev_.info.name + ")");
  const og_dtype ta = p.a.dtype, tb = p.b.dtype;
  const bool fp8 = dtype_is_fp8(ta) && dtype_is_fp8(tb);
  const bool sixteen = (ta == OG_DTYPE_F16 || ta == OG_DTYPE_BF16) && ta == tb;
  const bool tf32 = ta == OG_DTYPE_F32 && tb == OG_DTYPE_F32 && p.compute_mode == OG_COMPUTE_TF32;
  if (!fp8 && !sixteen && !tf32)
    return unsupported("inputs must be f16 x f16, bf16 x bf16, fp8 (e4m3/e5m2) x fp8, or f32 x f32 with compute_mode TF32");
  const int eb = sixteen ? 2 : tf32 ? 4 : 1;
  if (c.block_k * eb != 128) return unsupported("BLOCK_K must be 128 bytes of K (" + std::to_string(128 / eb) + " elements)");
  if (c.warps != 12) return unsupported("the kernel runs 12 warps (a producer and two consumer warpgroups)");
  if (c.split_k > kMaxSplitK) return unsupported("split_k above " + std::to_string(kMaxSplitK));
  if (c.stages < 2) return unsupported("needs at least 2 pipeline stages");
  const KernelKey key = sm90::kernel_key(c.block_m, c.block_n, c.split_k, form, cuda_technique_on("OMNIGEMM_CUDA_SPLIT_PAIRS"));
  bool instantiated = false;
  for (const Sm90RowKernel& r : kRowKernels) instantiated |= r.block_k == c.block_k && r.key == key;
  if (!instantiated || key.wg_m == 0 || key.block_m() != c.block_m)
    return unsupported("no kernel instantiated for a " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + " " +
                std::string(c.form.empty() ? "coop" : c.form.view()) + " tile with " + std::to_string(128 / eb) +
                "-element K steps (the rows of families/sm90_wgmma.inc)");
  const size_t smem = sm90::shared_bytes(c.block_m, c.block_n, c.stages);
  if (smem > size_t(dev_.info.limits.max_shared_bytes))
    return unsupported(std::to_string(c.stages) + " stages need " + std::to_string(smem) + " bytes of shared memory");
  if (p.k < 1) return unsupported("K must be at least 1 (a TMA box needs a non-empty K extent)");
  if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff) return unsupported("dimensions must be below 2^31");
  const long long tiles = ((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) * p.batch;
  if (tiles * c.split_k > 0x7fffffffLL) return unsupported("more than 2^31 - 1 work items (output tiles x split-K slices)");
  long long split_floats = 0, split_counters = 0;
  if (c.split_k > 1 && !key.split_pairs) {  // the workspace of slices that meet through global memory
    const long long split_tiles = sm90::split_tiles((p.m + c.block_m - 1) / c.block_m, (p.n + c.block_n - 1) / c.block_n,
                                                    p.batch, key.cluster_m);
    split_floats = sm90::partial_floats(split_tiles, c.block_m, c.block_n, c.split_k);
    split_counters = sm90::counter_count(split_tiles);
    if (split_floats > kMaxPartialFloats)
      return unsupported("the split-K workspace would exceed " + std::to_string(kMaxPartialFloats * 4 >> 20) +
                  " MiB: split_k 1 for a problem this large");
    if (split_tiles * c.split_k > 0x7fffffffLL) return unsupported("more than 2^31 - 1 work items");
  }

  // Operand layouts. A (M x K): K-major when stride_col == 1, M-major when stride_row == 1.
  // B (K x N): K-major when stride_row == 1, N-major when stride_col == 1.
  const bool a_k_major = p.a.stride_col == 1, b_k_major = p.b.stride_row == 1;
  const bool a_mn = sm90::mn_major(p, true), b_mn = sm90::mn_major(p, false);
  if (!a_k_major && !a_mn) return unsupported("A needs a unit stride along M or K");
  if (!b_k_major && !b_mn) return unsupported("B needs a unit stride along K or N");
  if (fp8 && (a_mn || b_mn)) return unsupported("fp8 wgmma needs K-major operands (A row-major, B column-major)");
  if (tf32 && (a_mn || b_mn)) return unsupported("tf32 wgmma needs K-major operands (A row-major, B column-major)");
  if (key.needs_k_major_b() && !b_k_major)
    return unsupported("a " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + " tile (" +
                std::to_string(key.split_n ? c.block_n / 2 : c.block_n) +
                " columns per consumer) needs a K-major B (unit stride along K)");
  std::string why;
  if (!fill) {
    if (!check_16_byte_operand(p.a, eb, a_k_major ? p.a.stride_row : p.a.stride_col, p.batch, &why) ||
        !check_16_byte_operand(p.b, eb, b_k_major ? p.b.stride_col : p.b.stride_row, p.batch, &why))
      return unsupported(why);
    return {};
  }

  sm90::Launch& l = out.l;
  l.m = int(p.m); l.n = int(p.n); l.k = int(p.k); l.batch = int(p.batch);
  l.group_m = c.group_m; l.stages = c.stages;
  l.key = key;
  l.a_mn_major = a_mn; l.b_mn_major = b_mn;
  l.max_shared = size_t(dev_.info.limits.max_shared_bytes);
  l.ep = epilogue_args(p);
  l.split_k = c.split_k;
  l.grid = og_persistent_grid(int(tiles * c.split_k), dev_.programs());
  l.dependent_launch = dependent_launch_on(dev_);
  // The deferred epilogue stores through map_d; where D cannot have one, tiles store at once.
  l.defer_epilogue = cuda_technique_on("OMNIGEMM_CUDA_DEFER_EPILOGUE") && encode_output(l.map_d, p, l.ep);
  out.a = ta;
  out.b = tb;
  out.need.partial_floats = split_floats;
  out.need.counters = split_counters;
  out.caller = caller_workspace(p);
  const int block_k = 128 / eb;
  // K-major: rows of K (box: BLOCK_K x tile rows); MN-major: rows of M or N (box: 64 x BLOCK_K).
  if (!encode_operand(l.map_a, p.a, eb, a_k_major ? p.k : p.m, a_k_major ? p.m : p.k, a_k_major ? p.a.stride_row : p.a.stride_col,
                      p.batch, a_k_major ? block_k : 64, a_k_major ? c.block_m : block_k, &why) ||
      !encode_operand(l.map_b, p.b, eb, b_k_major ? p.k : p.n, b_k_major ? p.n : p.k, b_k_major ? p.b.stride_col : p.b.stride_row,
                      p.batch, b_k_major ? block_k : 64, b_k_major ? c.block_n / key.cluster_m : block_k, &why))
    return unsupported(why);
  return {};
}

// The least time the kernel's epilogue takes to write D, whatever the K: D's bytes at the rate its
// stores reach by the alignment of D's lines (16 bytes: TMA stores; else the packed thread
// stores). H200, f16, 3549 x N x 1 with lines 8-, 4- and 2-byte aligned (N = 6620, 6618, 6617):
// 45, 55, 67 us (1533 x 8629 x 1: 38.9); TMA stores wrote 8192 x 8192 x 1 at 2.4 TB/s.
double d_store_us(const Problem& p) {
  const int align = d_line_alignment(p);
  const double tb_per_s = align >= 16 ? 2.4 : align == 8 ? 1.0 : align == 4 ? 0.85 : align == 2 ? 0.7 : 0.35;
  return double(p.m) * double(p.n) * double(p.batch) * dtype_bytes(p.d.dtype) / (tb_per_s * 1e6);
}

// The sm90 corrections to the cost model: where a config's tile is the wrong shape for the problem
// in ways the tile counts do not see, it is not offered (a forced config still runs).
CostHints Sm90WgmmaFamily::hints(const Problem& p, const Config& c) const {
  CostHints h;
  // The kernel's main loop on full tiles: about three quarters of the 16-bit and fp8 dense peak;
  // TF32 (f32 inputs, whose peak in the limits is the CUDA cores' f32 rate) runs at half the
  // 16-bit rate.
  h.efficiency = 0.75;
  const DeviceLimits& lim = dev_.info.limits;
  if (p.a.dtype == OG_DTYPE_F32 && lim.peak_tflops_f32 > 0 && lim.peak_tflops_16bit > 0)
    h.efficiency = 0.75 * 0.5 * lim.peak_tflops_16bit / lim.peak_tflops_f32;
  // A persistent CTA streaming a long K alone runs at its own latency-bound rate (about 40-50
  // GB/s measured on the H200, where an SM's share of the bandwidth is about 36): with fewer
  // tiles in flight than a quarter of the SMs the kernel streams proportionally slower. Short
  // K slices are bound by the pipeline's fill and the epilogue instead.
  if (std::ceil(double(p.k) / std::max(1, c.split_k)) >= 32.0 * c.block_k) h.memory_items_per_unit = 0.25;
  // Where the whole problem is a few 128x128 tiles (fewer than an eighth of the SMs), each CTA's
  // K steps follow one another at the pipeline's latency, and the kernel takes one slice's time per
  // wave of work items: a fixed kFewTileFixedUs, each K step at the slower of one CTA's operand
  // stream (kCtaStreamGBps) and one SM's share of the tensor-core peak, and, where slices meet in
  // global memory, the partials' reduction (kSplitFixedUs plus kSplitSliceUs per slice and 32 KB
  // tile). A cluster pair's slices step a third slower (their exchange through shared memory). The
  // H200's forced sweeps fit it (f16, 32 x 32 to 512 x 1024, K 4096 and 16384: 128x64 tiles step
  // 0.18 us, 128x128 0.29; splits of 4 / 8 / 16 cost 2.9 / 4.4 / 7.1 us on 128x64). The tile test
  // is the problem's, so that its configs compare alike; with more tiles the throughput terms
  // decide (the LLM set's choices stand) and splits deeper than 4, made for few tiles, are not
  // offered.
  const double tiles = std::ceil(double(p.m) / 128) * std::ceil(double(p.n) / 128) * double(p.batch);
  const bool few_tiles = tiles < dev_.programs() / 8.0;
  const bool swap = c.form == "swap";
  if (!few_tiles && (c.split_k > 4 || (swap && c.block_m == 64 && c.split_k > 2))) {
    h.factor = 0;
    h.note = "splits deeper than 4 (64x128 swap: than its cluster pair) are for problems of a few tiles";
    return h;
  }
  Form form = Form::coop;
  const bool form_ok = sm90::parse_form(c.form.text, form);
  const sm90::KernelKey key = form_ok ? sm90::kernel_key(c.block_m, c.block_n, c.split_k, form) : sm90::KernelKey{};
  // Waves of work items (tiles times slices) over the CTAs the device holds, clusters whole: a
  // multicast cluster's tile rows come in pairs, the last pair half idle where the rows are odd.
  // The model's waves count one item per SM; the padded waves' excess is a factor on the rate
  // (runs p56, p57: 4466 x 3626 x 1296, 35 tile rows, mcast 87.6 us against coop's 78.7).
  const double tile_rows = std::ceil(double(p.m) / c.block_m);
  const double items_per_row = std::ceil(double(p.n) / c.block_n) * double(p.batch) * c.split_k;
  const double items = std::ceil(tile_rows / key.cluster_m) * key.cluster_m * items_per_row;
  const double waves = form_ok ? std::ceil(items / (key.cluster_size() * std::floor(double(dev_.programs()) / key.cluster_size()))) : 0;
  if (key.cluster_m > 1 && waves > 0) h.factor = std::ceil(tile_rows * items_per_row / dev_.programs()) / waves;
  const int eb = dtype_bytes(p.a.dtype);
  // A work item's K steps (its slice of K; the kernel refuses K < 1), and one SM's share of the
  // tensor-core peak for the inputs (TF32: half the 16-bit rate).
  const double slice_steps = std::ceil(std::ceil(double(std::max<int64_t>(p.k, 1)) / c.block_k) / std::max(1, c.split_k));
  const double sm_tflops = (p.a.dtype == OG_DTYPE_F32 ? 0.5 * lim.peak_tflops_16bit : peak_tflops(lim, p)) / dev_.programs();
  if (few_tiles && form_ok) {
    const double step_bytes = double(c.block_m + c.block_n) * c.block_k * eb;
    double step_us = std::max(step_bytes / (kCtaStreamGBps * 1e3), 2.0 * c.block_m * c.block_n * c.block_k / (sm_tflops * 1e6));
    double split_us = 0;
    if (key.split_pairs) step_us *= 4.0 / 3.0;
    else if (c.split_k > 1) split_us = kSplitFixedUs + kSplitSliceUs * c.split_k * (1.0 + double(c.block_m) * c.block_n / 8192.0);
    h.latency_us = kFewTileFixedUs + waves * (step_us * slice_steps + split_us);
  }
  // Every launch takes at least kLaunchFloorUs (the bench's least time of a tiny problem), its
  // waves of tiles (kTileWaveUs), and the time its epilogue takes to write D (d_store_us): what
  // bounds a short K.
  const double wave_floor =
      waves >= 2 ? kFewTileFixedUs + waves * (kTileWaveUs + kTileWaveUsPer1024Elements * c.block_m * c.block_n / 1024.0) : 0.0;
  h.latency_us = std::max({h.latency_us, kLaunchFloorUs, wave_floor, d_store_us(p)});
  // An operand whose MN-major lines are narrow (sm90/tma_lines.hpp; the same test in either
  // orientation) adds to the first K steps of a program's work items the wait on its
  // line-by-line fetches, kNarrowLineStepUs by the lines' bytes, where the problem has more
  // 128x128 tiles than the device has programs (within one wave the measured waits were small and
  // erratic); the test is the problem's, so that its configs compare alike. Short lines on a
  // sector-straddling pitch wait kShortStraddlingStepUs per K step of each 128 rows of the other
  // operand that a program takes, whatever the tile (the same 7.7-8.4 us on 128x128, 128x192 and
  // 192x192 tiles at N = 136).
  if (form_ok && tiles > dev_.programs()) {
    auto step_us = [&](bool is_a) {
      const int64_t bytes = sm90::narrow_mn_line_bytes(p, is_a, eb);
      return bytes == 0 ? 0.0 : bytes == 16 ? kNarrowLineStepUs[0] : bytes % 32 == 0 ? kNarrowLineStepUs[1] : kNarrowLineStepUs[2];
    };
    const double narrow_us = step_us(true) + step_us(false);
    h.extra_us += std::ceil(items / dev_.programs()) * std::min(kNarrowLineSteps, slice_steps) * narrow_us;
    const double k_steps = std::min(kNarrowLineSteps, std::ceil(double(p.k) / c.block_k));
    for (const bool is_a : {true, false})
      if (sm90::short_straddling_mn_lines(p, is_a, eb)) {
        const double row_tiles = std::ceil(double(is_a ? p.n : p.m) / 128) * double(p.batch);
        h.extra_us += std::ceil(row_tiles / dev_.programs()) * k_steps * kShortStraddlingStepUs;
      }
  }
  // Lines on pitches that are not multiples of 128 bytes (sm90/tma_lines.hpp): a K step loads the
  // tile's valid rows of A and columns of B as lines (an MN-major operand in boxes of 64, each box
  // BLOCK_K lines), at the SM's line rate by their pitch; where that takes longer than the step's
  // MMAs at the rate the steps reach (kStepEfficiency of the SM's peak) and than the same lines
  // at the fast rate, each step of each wave of work items waits the difference. Fitted on whole
  // 128-byte lines where every SM has a work item (the rate was measured with all SMs loading);
  // an operand whose matrix lines are shorter (narrow ones are priced above) counts at the fast
  // rate. In a multicast cluster each program loads its share of the B tile's lines (run p55:
  // 4096 x 4096 x 1000 on 2000-byte pitches, 128x256 coop 77 us, mcast 56.8, as on 2048-byte).
  const int64_t pitch_a = sm90::line_pitch_bytes(p.a, eb), pitch_b = sm90::line_pitch_bytes(p.b, eb);
  if (form_ok && (pitch_a % 128 != 0 || pitch_b % 128 != 0) && items >= dev_.programs()) {
    double line_ns = 0, fast_ns = 0;  // the step's lines at their rate and at the fast rate
    auto add_lines = [&](int64_t valid, bool is_a, int64_t pitch) {
      const bool mn = sm90::mn_major(p, is_a);
      const int64_t line_bytes = (mn ? (is_a ? p.m : p.n) : p.k) * eb;
      const double count = (mn ? std::ceil(valid / 64.0) * 64.0 : double(valid)) / (is_a ? 1 : key.cluster_m);
      line_ns += count * sm90::tma_line_ns(line_bytes >= 128 ? pitch : 128);
      fast_ns += count * sm90::tma_line_ns(128);
    };
    add_lines(std::min<int64_t>(c.block_m, p.m), true, pitch_a);
    add_lines(std::min<int64_t>(c.block_n, p.n), false, pitch_b);
    const double mma_ns = 2.0 * c.block_m * c.block_n * c.block_k / (sm_tflops * 1e3 * kStepEfficiency);
    const double step_ns = std::max(mma_ns, fast_ns);  // what the fitted main loop already prices
    if (line_ns > step_ns) h.extra_us += waves * slice_steps * (line_ns - step_ns) * 1e-3;
  }
  // A fused epilogue (activation, bias or C) or an f32 D on a kernel without the register
  // epilogue (kernel_key.hpp) leaves through shared memory and the general per-element code (or
  // the vector way), chunk by chunk, while the tensor cores wait: priced as moving D twice more
  // through device memory (f32 D: bench/results/h100, the forced f16 -> f32 tiles).
  // The same holds for a plain 16-bit D on a kernel whose consumers own 96 columns (192x192's
  // column split) where D's rows, in the kernel's orientation, are its unit-stride lines: the
  // row-major packed chunks are 64 columns wide, so those tiles leave through the vector way
  // (it decides short-K problems, where writing D is the kernel's time).
  const bool fused = p.activation != OG_ACT_NONE || p.bias_mode != OG_BIAS_NONE || p.c.present || p.d.dtype == OG_DTYPE_F32;
  if (form_ok) {
    const bool kernel_rows_unit = (swap ? p.d.stride_row : p.d.stride_col) == 1;
    const bool unpacked_16_bit = dtype_bytes(p.d.dtype) == 2 && key.consumer_n() % 64 != 0 && kernel_rows_unit;
    if ((fused && !key.register_epilogue(p.c.present && p.d.dtype == OG_DTYPE_F32)) || unpacked_16_bit)
      h.extra_bytes += 2.0 * double(p.m) * double(p.n) * double(p.batch) * double(dtype_bytes(p.d.dtype));
  }
  // Narrow tiles (16 or 32 columns of the kernel's problem, the swap form's 16x128 and 32x128)
  // exist for skinny problems: where one does not span the skinny dimension it loads the other
  // operand (the weights) once per tile row.
  const int narrow = swap ? c.block_m : c.block_n;
  if (narrow < 64 && (swap ? p.m : p.n) > narrow) {
    h.factor = 0;
    h.note = "a narrow tile that does not span the skinny dimension re-reads the other operand per tile row";
    return h;
  }
  // The column-split 192x192 tile runs at 128x256's rate per SM, so it pays only where its waves
  // cover less tile area than 128x256's (e.g. 3072^2: 2 waves against 3).
  if (c.block_m == 192 && c.block_n == 192) {
    const long long units = dev_.programs();
    auto wave_area = [&](long long bm, long long bn) {
      const long long tiles = (p.m + bm - 1) / bm * ((p.n + bn - 1) / bn) * p.batch;
      return (tiles + units - 1) / units * bm * bn;
    };
    if (wave_area(192, 192) >= wave_area(128, 256)) {
      h.factor = 0;
      h.note = "192x192 pays only where its waves cover less area than 128x256's";
      return h;
    }
  }
  // For M <= 64 a tile of 128 or more rows of D stages mostly padding rows of A, where the swap
  // form's 64, 32 and 16-row tiles stage only real rows; such a tile is not offered where a
  // shorter one can run the problem.
  if (p.m <= 64 && c.block_m >= 128) {
    for (const Config& s : kSm90Configs)
      if (s.block_m < 128 && can_implement(p, s)) {
        h.factor = 0;
        h.note = "for M <= 64 a 128-row tile stages mostly padding where a shorter tile runs";
        return h;
      }
  }
  return h;
}

// An operand's map: its TMA boxes are the kernel's A and B tiles.
bool Sm90WgmmaFamily::encode_operand(CUtensorMap& map, const Operand& o, int eb, int64_t inner, int64_t outer,
                                     int64_t outer_stride, int64_t batch, int box_inner, int box_outer, std::string* why) const {
  if (!check_16_byte_operand(o, eb, outer_stride, batch, why)) return false;
  const CUtensorMapDataType type = o.dtype == OG_DTYPE_F16    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : o.dtype == OG_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : o.dtype == OG_DTYPE_F32  ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                              : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const CUresult r =
      encode_3d(dev_, maps_, map, o, type, eb, inner, outer, outer_stride, batch, box_inner, box_outer, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  if (r != CUDA_SUCCESS) {
    if (why) *why = "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")";
    return false;
  }
  return true;
}

// D for the deferred epilogue's TMA stores: a 16-bit row-major D with 16-byte aligned base, rows
// and batches whose epilogue fits in registers (tile_epilogue.cuh: alpha, an f32 bias, any
// activation, a 16-bit C), in boxes of 64 x 64 with the staging chunks' 128-byte swizzle. TMA drops the rows
// of edge boxes beyond D but columns only in whole 16-byte units, so N must be a multiple of 8.
// An f32 D of the same kind (N a multiple of 4) gets boxes of 32 x 64 (128-byte rows) for the f32
// chunks' TMA stores. False where D is anything else.
bool Sm90WgmmaFamily::encode_output(CUtensorMap& map, const Problem& p, const cuda::EpilogueArgs& e) const {
  if (e.d.dtype == OG_DTYPE_F32) {
    if (!sm90::d_rows_packable(e) || !sm90::register_epilogue_fits(e, p.n) || p.d.stride_row <= 0 || p.n % 4 != 0) return false;
    return encode_3d(dev_, maps_, map, p.d, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.n, p.m, p.d.stride_row, p.batch, 32, 64,
                     CU_TENSOR_MAP_L2_PROMOTION_NONE) == CUDA_SUCCESS;
  }
  if (!(e.d.dtype == OG_DTYPE_F16 || e.d.dtype == OG_DTYPE_BF16) || !sm90::d_rows_packable(e) || !sm90::register_epilogue_fits(e, p.n) ||
      p.d.stride_row <= 0 || p.n % 8 != 0)
    return false;
  return encode_3d(dev_, maps_, map, p.d, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, p.n, p.m, p.d.stride_row, p.batch, 64, 64,
                   CU_TENSOR_MAP_L2_PROMOTION_NONE) == CUDA_SUCCESS;
}

}  // namespace

std::unique_ptr<KernelFamily> make_sm90_wgmma_family(CudaDevice& device) { return std::make_unique<Sm90WgmmaFamily>(device); }

}  // namespace omnigemm::detail
