// cuda.sgemm: the f32 GEMM kernel (sgemm_kernel.cuh) as a kernel family; its instantiations and
// launch dispatch come from the rows of families/sgemm.inc.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "../split_reduce.hpp"
#include "cost_model.hpp"
#include "sgemm_kernel.cuh"

namespace omnigemm::detail {

namespace {

constexpr Config kRows[] = {
#define OG_CUDA_SGEMM(bm, bn, bk, gm, st, wa, eff) Config{"sgemm", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "../families/sgemm.inc"
#undef OG_CUDA_SGEMM
};
// Each row's EFFICIENCY column (the same order as kRows).
constexpr double kRowEfficiency[] = {
#define OG_CUDA_SGEMM(bm, bn, bk, gm, st, wa, eff) eff,
#include "../families/sgemm.inc"
#undef OG_CUDA_SGEMM
};
static_assert(std::size(kRowEfficiency) == std::size(kRows));
// The row of config c's tile (can_implement accepts only a row's tile).
double row_efficiency(const Config& c) {
  for (size_t i = 0; i < std::size(kRows); ++i)
    if (kRows[i].block_m == c.block_m && kRows[i].block_n == c.block_n && kRows[i].block_k == c.block_k) return kRowEfficiency[i];
  return 0;
}
// Split-K: the rows below 256 threads are offered with each of these splits (the 256-thread row
// runs unsplit: its main loop measured slower with the split's partial stores beside its
// epilogue). Slices write partial sums to the workspace; split_reduce.cu adds them in order.
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8, 16, 32, 64};
constexpr bool splits(const Config& r) { return r.warps * 32 < 256; }
constexpr size_t kConfigCount = [] {
  size_t n = 0;
  for (const Config& r : kRows) n += splits(r) ? std::size(kSplits) : 1;
  return n;
}();
constexpr std::array<Config, kConfigCount> kSgemmConfigs = [] {
  std::array<Config, kConfigCount> out{};
  size_t i = 0;
  for (const Config& r : kRows)
    for (int s : kSplits)
      if (s == 1 || splits(r)) {
        out[i] = r;
        out[i++].split_k = s;
      }
  return out;
}();
constexpr long long kMaxPartialFloats = 1ll << 26;  // 256 MiB of split-K partial sums
constexpr double kReduceLaunchUs = 3.0;             // the reduction's launch on the stream

struct SgemmLaunch {
  sgemm::Args args{};
  int block_m = 0, block_n = 0, block_k = 0, threads = 0;
  bool a_k_major = false, b_k_major = false, vec = false;
  long long blocks = 0, batch = 0;  // per batch: tiles x K slices
  WorkspaceNeed need;      // split-K: the slices' partial sums
  CallerWorkspace caller;  // the workspace the launch carves (none: the device's own)
};

// An operand as the kernel's (MN, K) view: K-major when its K stride is 1 (or, with neither
// stride 1, the smaller one: the scalar loader then walks its quads along it).
struct OperandView {
  long long s_mn, s_k;
  bool k_major, vec;
};
OperandView view_of(const Operand& o, bool is_a, int64_t batch) {
  OperandView v;
  v.s_mn = is_a ? o.stride_row : o.stride_col;
  v.s_k = is_a ? o.stride_col : o.stride_row;
  const bool k_unit = v.s_k == 1, mn_unit = v.s_mn == 1;
  v.k_major = k_unit || (!mn_unit && std::llabs(v.s_k) <= std::llabs(v.s_mn));
  v.vec = (k_unit || mn_unit) && check_16_byte_operand(o, 4, k_unit ? v.s_mn : v.s_k, batch, nullptr);
  return v;
}

template <class S>
cudaError_t launch_shape(const SgemmLaunch& l, dim3 grid, cudaStream_t stream) {
  sgemm::gemm_sgemm<S><<<grid, S::kThreads, 0, stream>>>(l.args);
  return cudaGetLastError();
}

template <int WM, int WN, int BK>
cudaError_t launch_tile(const SgemmLaunch& l, dim3 grid, cudaStream_t s) {
  using namespace sgemm;
  const int layout = (l.a_k_major ? 1 : 0) | (l.b_k_major ? 2 : 0) | (l.vec ? 4 : 0);
  switch (layout) {
    case 0: return launch_shape<Shape<WM, WN, BK, false, false, false>>(l, grid, s);
    case 1: return launch_shape<Shape<WM, WN, BK, true, false, false>>(l, grid, s);
    case 2: return launch_shape<Shape<WM, WN, BK, false, true, false>>(l, grid, s);
    case 3: return launch_shape<Shape<WM, WN, BK, true, true, false>>(l, grid, s);
    case 4: return launch_shape<Shape<WM, WN, BK, false, false, true>>(l, grid, s);
    case 5: return launch_shape<Shape<WM, WN, BK, true, false, true>>(l, grid, s);
    case 6: return launch_shape<Shape<WM, WN, BK, false, true, true>>(l, grid, s);
    default: return launch_shape<Shape<WM, WN, BK, true, true, true>>(l, grid, s);
  }
}

cudaError_t launch_row(const SgemmLaunch& l, dim3 grid, cudaStream_t s) {
#define OG_CUDA_SGEMM(bm, bn, bk, gm, st, wa, eff)                                                   \
  static_assert(bm % 32 == 0 && bn % 64 == 0 && (bm / 32) * (bn / 64) == wa, "families/sgemm.inc"); \
  if (l.block_m == bm && l.block_n == bn && l.block_k == bk) return launch_tile<bm / 32, bn / 64, bk>(l, grid, s);
#include "../families/sgemm.inc"
#undef OG_CUDA_SGEMM
  return cudaErrorInvalidValue;
}

class SgemmFamily final : public PlannedFamily<SgemmLaunch> {
 public:
  explicit SgemmFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "sgemm"; }
  std::span<const Config> configs() const override { return kSgemmConfigs; }

  Status can_implement(const Problem& p, const Config& c) const override {
    const Config* row = nullptr;
    for (const Config& r : kRows)
      if (r.block_m == c.block_m && r.block_n == c.block_n && r.block_k == c.block_k && r.warps == c.warps) row = &r;
    if (!row) return unsupported("the tile, BLOCK_K and warps must be one of the table's rows (families/sgemm.inc)");
    if (!c.form.empty()) return unsupported("the family has no forms");
    if (c.stages != 2) return unsupported("the kernel double-buffers its tiles: stages must be 2");
    if (std::find(std::begin(kSplits), std::end(kSplits), c.split_k) == std::end(kSplits) || (c.split_k > 1 && !splits(*row)))
      return unsupported("split-K must be 1, 2, 3, 4, 6, 8, 16, 32 or 64, and 1 on the 256-thread row");
    if (dev_.info.limits.arch < 80) return unsupported("needs an sm_80 or newer device");
    if (p.a.dtype != OG_DTYPE_F32 || p.b.dtype != OG_DTYPE_F32) return unsupported("inputs must be f32 x f32");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) return unsupported("dimensions must be below 2^31");
    if (((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) * c.split_k > 0x7fffffffLL)
      return unsupported("more than 2^31 - 1 blocks (output tiles x K slices)");
    const long long k_steps = (p.k + c.block_k - 1) / c.block_k;
    if (c.split_k > 1 && c.split_k > k_steps)
      return unsupported("split-K " + std::to_string(c.split_k) + " needs as many K-steps of " + std::to_string(c.block_k));
    if (c.split_k > 1 && cuda::split_partials_floats(p.m, p.n, c.split_k, p.batch) > kMaxPartialFloats)
      return unsupported("the split-K partial sums would exceed 256 MiB");
    return {};
  }

  // Register-blocked f32 FMA on full tiles with the vector loader, as a share of the f32 peak
  // beside the model's tile intensity: the row's EFFICIENCY column (families/sgemm.inc); the
  // scalar loader halves it. Several blocks of a row share an SM
  // (blocks_per_sm), which the model's waves of one work item per SM do not see: a launch runs
  // in rounds of that many blocks per SM, and where the whole launch is resident at once the
  // ceil(items / SMs) blocks on each busy SM run at a rate that grows with their share of the
  // SM's complement.
  //
  // Split-K: each slice stores its partial sums instead of an epilogue (a few K-steps'
  // worth), and the reduction is one more launch that reads them back.
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    if (c.split_k > 1) {
      h.split_fixed_steps = 0.25;
      h.extra_bytes = 2.0 * 4 * double(cuda::split_partials_floats(p.m, p.n, c.split_k, p.batch));
      h.extra_us = kReduceLaunchUs;
    }
    const double peak = peak_tflops(dev_.info.limits, p);
    const double f32 = dev_.info.limits.peak_tflops_f32 > 0 ? dev_.info.limits.peak_tflops_f32 / peak : 1.0;
    const bool vec = view_of(p.a, true, p.batch).vec && view_of(p.b, false, p.batch).vec;
    h.efficiency = f32 * row_efficiency(c) * (vec ? 1.0 : 0.5);
    // The 256-thread row's two blocks per SM hide the scalar loader's latency and its
    // element-wise epilogue (D without 16-byte aligned rows) worse than the smaller rows' six.
    const bool d_rows = p.d.stride_col == 1 && check_16_byte_operand(p.d, dtype_bytes(p.d.dtype), p.d.stride_row, p.batch, nullptr);
    if (c.warps * 32 >= 256 && !(vec && d_rows)) h.efficiency *= 0.6;
    const double units = std::max(1, dev_.info.limits.compute_units);
    const double items =
        std::ceil(double(p.m) / c.block_m) * std::ceil(double(p.n) / c.block_n) * double(p.batch) * c.split_k;
    const double per_sm = sgemm::blocks_per_sm(32 * c.warps);
    if (items <= units * per_sm) {
      h.factor = std::min(1.0, 0.4 + 0.6 * std::ceil(items / units) / per_sm);
      h.note = "the launch is resident at once; fewer blocks than an SM holds hide less latency";
    } else {
      h.factor = std::ceil(items / units) / (std::ceil(items / (units * per_sm)) * per_sm);
    }
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, SgemmLaunch& l) const override {
    if (Status s = can_implement(p, c); !s) return s;
    sgemm::Args& k = l.args;
    k.m = int(p.m); k.n = int(p.n); k.k = int(p.k);
    k.num_pid_m = int((p.m + c.block_m - 1) / c.block_m);
    k.num_pid_n = int((p.n + c.block_n - 1) / c.block_n);
    k.group_m = c.group_m;
    k.split = c.split_k;
    const long long k_steps = (p.k + c.block_k - 1) / c.block_k;
    k.slice_k = int((k_steps + c.split_k - 1) / c.split_k * c.block_k);
    k.partial_ld = cuda::split_partials_ld(p.n);
    l.need = {};
    if (c.split_k > 1) l.need.partial_floats = cuda::split_partials_floats(p.m, p.n, c.split_k, p.batch);
    l.caller = caller_workspace(p);
    const OperandView a = view_of(p.a, true, p.batch), b = view_of(p.b, false, p.batch);
    k.a = reinterpret_cast<const float*>(static_cast<const char*>(p.a.mem.ptr) + p.a.mem.offset);
    k.b = reinterpret_cast<const float*>(static_cast<const char*>(p.b.mem.ptr) + p.b.mem.offset);
    k.a_mn = a.s_mn; k.a_k = a.s_k; k.a_bs = p.a.batch_stride;
    k.b_mn = b.s_mn; k.b_k = b.s_k; k.b_bs = p.b.batch_stride;
    k.ep = epilogue_args(p);
    l.block_m = c.block_m; l.block_n = c.block_n; l.block_k = c.block_k; l.threads = c.warps * 32;
    l.a_k_major = a.k_major; l.b_k_major = b.k_major;
    l.vec = a.vec && b.vec;
    l.blocks = (long long)k.num_pid_m * k.num_pid_n * c.split_k;
    l.batch = p.batch;
    return {};
  }

  Status launch(SgemmLaunch& l, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (l.need.bytes() > 0) {
      WorkspaceParts parts;
      if (Status st = dev_.workspace(l.caller, s, l.need, parts); !st) return st;
      l.args.partials = parts.partials;
    }
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      l.args.batch_base = int(b0);
      const dim3 grid(unsigned(l.blocks), 1, unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0)));
      OG_CUDA_TRY(launch_row(l, grid, s), "gemm_sgemm launch");
    }
    if (l.args.split > 1) {
      const cuda::SplitPartials sp{l.args.partials, l.args.m, l.args.n, l.args.split, l.args.partial_ld};
      OG_CUDA_TRY(cuda::launch_split_reduce(sp, l.args.ep, l.batch, dev_.max_grid_z, s), "split-K reduction launch");
    }
    return {};
  }

  void summarize(const SgemmLaunch& l, PlanSummary& out) const override {
    out.grid[0] = l.blocks;
    out.grid[2] = l.batch;
    out.workspace_bytes = l.need.bytes();
    out.threads = l.threads;
    out.shared_bytes = 2LL * l.block_k * (l.block_m + l.block_n + 8) * 4;
    out.notes = std::string("full f32 FMA, 8x8 outputs per thread, ") +
                (l.vec ? "16-byte vector loads" : "scalar loads (operands not 16-byte aligned with a unit stride)") +
                ", A " + (l.a_k_major ? "K" : "M") + "-major, B " + (l.b_k_major ? "K" : "N") + "-major" +
                (l.args.split > 1 ? ", split-K slices summed in slice order by a second launch from the workspace" : "");
  }

 private:
  CudaDevice& dev_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_sgemm_family(CudaDevice& device) { return std::make_unique<SgemmFamily>(device); }

}  // namespace omnigemm::detail
