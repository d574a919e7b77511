// cuda.sgemm: the f32 GEMM kernel (sgemm_kernel.cuh) as a kernel family; its instantiations and
// launch dispatch come from the rows of families/sgemm.inc.
#include <algorithm>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "cost_model.hpp"
#include "sgemm_kernel.cuh"

namespace omnigemm::detail {

namespace {

constexpr Config kSgemmConfigs[] = {
#define OG_CUDA_SGEMM(bm, bn, bk, gm, st, wa) Config{"sgemm", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "../families/sgemm.inc"
#undef OG_CUDA_SGEMM
};

struct SgemmLaunch {
  sgemm::Args args{};
  int block_m = 0, block_n = 0, block_k = 0, threads = 0;
  bool a_k_major = false, b_k_major = false, vec = false;
  long long tiles = 0, batch = 0;
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
#define OG_CUDA_SGEMM(bm, bn, bk, gm, st, wa)                                                        \
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
    auto fail = [](const char* msg) { return error(StatusCode::unsupported, msg); };
    bool row = false;
    for (const Config& r : kSgemmConfigs)
      row |= r.block_m == c.block_m && r.block_n == c.block_n && r.block_k == c.block_k && r.warps == c.warps;
    if (!row) return fail("the tile, BLOCK_K and warps must be one of the table's rows (families/sgemm.inc)");
    if (!c.form.empty()) return fail("the family has no forms");
    if (c.stages != 2) return fail("the kernel double-buffers its tiles: stages must be 2");
    if (c.split_k != 1) return fail("split-K is not implemented");
    if (dev_.info.limits.arch < 80) return fail("needs an sm_80 or newer device");
    if (p.a.dtype != OG_DTYPE_F32 || p.b.dtype != OG_DTYPE_F32) return fail("inputs must be f32 x f32");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) return fail("dimensions must be below 2^31");
    if (((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) > 0x7fffffffLL)
      return fail("more than 2^31 - 1 output tiles");
    return {};
  }

  // Register-blocked f32 FMA on full tiles with the vector loader, as a share of the f32 peak
  // beside the model's tile intensity (64x64 a little below 128x128 at equal waves, as measured
  // in bench/results/h200); the scalar loader halves it. Several blocks of a row share an SM
  // (blocks_per_sm), which the model's waves of one work item per SM do not see: a launch runs
  // in rounds of that many blocks per SM, and where the whole launch is resident at once the
  // ceil(items / SMs) blocks on each busy SM run at a rate that grows with their share of the
  // SM's complement.
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    const double peak = peak_tflops(dev_.info.limits, p);
    const double f32 = dev_.info.limits.peak_tflops_f32 > 0 ? dev_.info.limits.peak_tflops_f32 / peak : 1.0;
    const bool vec = view_of(p.a, true, p.batch).vec && view_of(p.b, false, p.batch).vec;
    const double tile = c.block_m * c.block_n >= 128 * 128 ? 0.75 : c.block_m * c.block_n >= 128 * 64 ? 0.68 : 0.8;
    h.efficiency = f32 * tile * (vec ? 1.0 : 0.5);
    const double units = std::max(1, dev_.info.limits.compute_units);
    const double items = std::ceil(double(p.m) / c.block_m) * std::ceil(double(p.n) / c.block_n) * double(p.batch);
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
    const OperandView a = view_of(p.a, true, p.batch), b = view_of(p.b, false, p.batch);
    k.a = reinterpret_cast<const float*>(static_cast<const char*>(p.a.mem.ptr) + p.a.mem.offset);
    k.b = reinterpret_cast<const float*>(static_cast<const char*>(p.b.mem.ptr) + p.b.mem.offset);
    k.a_mn = a.s_mn; k.a_k = a.s_k; k.a_bs = p.a.batch_stride;
    k.b_mn = b.s_mn; k.b_k = b.s_k; k.b_bs = p.b.batch_stride;
    k.ep = epilogue_args(p);
    l.block_m = c.block_m; l.block_n = c.block_n; l.block_k = c.block_k; l.threads = c.warps * 32;
    l.a_k_major = a.k_major; l.b_k_major = b.k_major;
    l.vec = a.vec && b.vec;
    l.tiles = (long long)k.num_pid_m * k.num_pid_n;
    l.batch = p.batch;
    return {};
  }

  Status launch(SgemmLaunch& l, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      l.args.batch_base = int(b0);
      const dim3 grid(unsigned(l.tiles), 1, unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0)));
      OG_CUDA_TRY(launch_row(l, grid, s), "gemm_sgemm launch");
    }
    return {};
  }

  void summarize(const SgemmLaunch& l, PlanSummary& out) const override {
    out.grid[0] = l.tiles;
    out.grid[2] = l.batch;
    out.threads = l.threads;
    out.shared_bytes = 2LL * l.block_k * (l.block_m + l.block_n + 8) * 4;
    out.notes = std::string("full f32 FMA, 8x8 outputs per thread, ") +
                (l.vec ? "16-byte vector loads" : "scalar loads (operands not 16-byte aligned with a unit stride)") +
                ", A " + (l.a_k_major ? "K" : "M") + "-major, B " + (l.b_k_major ? "K" : "N") + "-major";
  }

 private:
  CudaDevice& dev_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_sgemm_family(CudaDevice& device) { return std::make_unique<SgemmFamily>(device); }

}  // namespace omnigemm::detail
