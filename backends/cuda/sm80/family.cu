// cuda.sm80_mma: the mma.sync kernel (gemm_mma_sync.cuh) as a kernel family.
#include <algorithm>
#include <cmath>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "launch.hpp"

namespace omnigemm::detail {

namespace {

struct Sm80Row {
  int block_m, block_n, warps;
  bool gather;
};
constexpr Sm80Row kRows[] = {
#define OG_CUDA_SM80_MMA(bm, bn, bk, gm, st, wa, ga) Sm80Row{bm, bn, wa, ga != 0},
#include "../families/sm80_mma.inc"
#undef OG_CUDA_SM80_MMA
};
constexpr Config kSm80Configs[] = {
#define OG_CUDA_SM80_MMA(bm, bn, bk, gm, st, wa, ga) Config{"sm80_mma", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "../families/sm80_mma.inc"
#undef OG_CUDA_SM80_MMA
};

// The multiplicand type for an input pair: 0 f16, 1 bf16, -1 none. fp8 values are exact in
// either; f32 and mixed f16 x bf16 have no exact 16-bit type.
int mma_multiplicand(og_dtype a, og_dtype b) {
  if ((a == OG_DTYPE_F16 || dtype_is_fp8(a)) && (b == OG_DTYPE_F16 || dtype_is_fp8(b))) return 0;
  if ((a == OG_DTYPE_BF16 || dtype_is_fp8(a)) && (b == OG_DTYPE_BF16 || dtype_is_fp8(b))) return 1;
  return -1;
}

// The cp.async loader takes both operands stored as the multiplicand type, one unit stride each
// and 16-byte aligned bases, leading dimensions and batch strides; the gathering loader the rest.
bool cp_async_loadable(const Problem& p, int multiplicand) {
  const og_dtype mul_dtype = multiplicand ? OG_DTYPE_BF16 : OG_DTYPE_F16;
  const bool a_k_major = p.a.stride_col == 1, b_k_major = p.b.stride_row == 1;
  const bool a_unit = a_k_major || p.a.stride_row == 1, b_unit = b_k_major || p.b.stride_col == 1;
  return p.a.dtype == mul_dtype && p.b.dtype == mul_dtype && a_unit && b_unit &&
         check_16_byte_operand(p.a, 2, a_k_major ? p.a.stride_row : p.a.stride_col, p.batch, nullptr) &&
         check_16_byte_operand(p.b, 2, b_k_major ? p.b.stride_col : p.b.stride_row, p.batch, nullptr);
}

struct Sm80Launch {
  sm80::Launch l;
  int multiplicand;
  size_t smem;
};

class Sm80MmaFamily final : public PlannedFamily<Sm80Launch> {
 public:
  explicit Sm80MmaFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "sm80_mma"; }
  std::span<const Config> configs() const override { return kSm80Configs; }
  Status can_implement(const Problem& p, const Config& c) const override {
    Sm80Launch l{};
    return check(p, c, l, false);
  }
  // mma.sync reaches about a third of Hopper's 16-bit peak (no wgmma, no TMA) and most of the
  // peak of sm_80 to sm_89 devices with the cp.async loader. The gathering loader (element by
  // element, converted on load) is bound by its loads: on the H100 it ran 11-18 TFLOP/s on
  // unaligned mid-size problems (issue 24), under 2% of the 16-bit peak; on sm_80 to sm_89 it is
  // not measured and keeps the cp.async figure. On Hopper it is latency-bound on every problem
  // measured: each wave of resident blocks (two 64x64 or one 128x128 per SM at their register
  // budgets) takes a fixed time per K-tile and per output tile, the floor below (H200, ten
  // problems forced on both tiles, from 2914x1066x3 to 216x9634x198 x 7: within 8%).
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    const bool hopper = dev_.info.limits.arch >= 90;
    const int mul = mma_multiplicand(p.a.dtype, p.b.dtype);
    const bool gather = mul < 0 || !cp_async_loadable(p, mul);
    h.efficiency = hopper ? (gather ? 0.018 : 0.35) : 0.7;
    if (hopper) {
      // Both loaders wait per K tile and per wave of resident blocks, by the block's size.
      const bool small = c.block_m * c.block_n <= 64 * 64, wide = c.block_m * c.block_n > 128 * 128;
      const double tiles = std::ceil(double(p.m) / c.block_m) * std::ceil(double(p.n) / c.block_n) * double(p.batch);
      const double k_tiles = std::ceil(double(std::max<int64_t>(p.k, 1)) / c.block_k);
      const double units = std::max(1, dev_.info.limits.compute_units);
      if (gather) {
        const double per_unit = small ? 2 : 1, k_tile_us = small ? 2.5 : 3.2, tile_us = small ? 5.0 : 6.8;
        h.latency_us = std::ceil(tiles / (units * per_unit)) * (k_tile_us * k_tiles + tile_us);
      } else {
        // The cp.async loader's blocks wait on their K tiles as well, longer the larger the tile:
        // about 1.1 us per K tile of a 64x64 block (H200: 1 x 2897 x 2023 aligned, 72.9 us), 1.9 of
        // 128x128 and 2.3 of 128x256, which holds one block per SM where the others hold two (runs
        // p58, p59: f16, 28 x 3238 x 268 x 14, 60 x 4000 x 300 x 8 and 20 x 2000 x 500 x 16 with A
        // M-major, each tile forced: 128x256 55, 27 and 36 us).
        const double k_tile_us = small ? 1.1 : wide ? 2.3 : 1.9;
        h.latency_us = std::ceil(tiles / (units * (wide ? 1.0 : 2.0))) * (k_tile_us * k_tiles + 4.0);
      }
    }
    // On Hopper its epilogue writes D at about 1.15 TB/s, what bounds a short K (H200, f16, aligned,
    // forced 128x256, K = 8: 3549 x 6616 42.0 us, 8192 x 8192 107.7, 2048 x 4096 15.7).
    if (hopper) h.latency_us = std::max(h.latency_us, double(p.m) * double(p.n) * double(p.batch) * dtype_bytes(p.d.dtype) / 1.15e6);
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, Sm80Launch& l) const override { return check(p, c, l, true); }
  Status launch(Sm80Launch& pl, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    pl.l.stream = static_cast<cudaStream_t>(stream);
    OG_CUDA_TRY(pl.multiplicand == 1 ? sm80::launch_bf16(pl.l) : sm80::launch_f16(pl.l), "gemm_mma_sync launch");
    return {};
  }
  void summarize(const Sm80Launch& pl, PlanSummary& out) const override {
    const sm80::Launch& l = pl.l;
    out.grid[0] = (long long)((l.m + l.block_m - 1) / l.block_m) * ((l.n + l.block_n - 1) / l.block_n);
    out.grid[2] = l.batch;
    out.threads = l.warps * 32;
    out.shared_bytes = (long long)pl.smem;
    out.notes = std::string(pl.multiplicand ? "bf16" : "f16") + " multiplicands, " +
                (l.gather ? "gathering loader (converts on load)" : "cp.async loader");
  }

 private:
  // Can the kernel run `p` with `c`? With `fill`, also builds the launch. The cp.async loader needs
  // both operands stored as the multiplicand type, one unit stride each and 16-byte aligned bases,
  // leading dimensions and batch strides; the gathering loader takes everything else.
  Status check(const Problem& p, const Config& c, Sm80Launch& out, bool fill) const {
    if (Status s = refuse_block_scales(p); !s) return s;
    if (p.a.scale.present() || p.b.scale.present()) return unsupported("block-scaled inputs run on sm100_tcgen05 (compute capability 10.x)");
    const Sm80Row* row = nullptr;
    for (const Sm80Row& r : kRows)
      if (c.block_m == r.block_m && c.block_n == r.block_n && c.warps == r.warps) row = &r;
    if (!row) return unsupported("the tile and warps must be one of the table's rows (families/sm80_mma.inc)");
    if (!c.form.empty()) return unsupported("the family has no forms");
    if (c.block_k != sm80::kBlockK) return unsupported("BLOCK_K must be " + std::to_string(sm80::kBlockK));
    if (c.split_k != 1) return unsupported("split-K is not implemented for the mma.sync kernel");
    if (c.stages < sm80::kMinStages || c.stages > sm80::kMaxStages)
      return unsupported("needs " + std::to_string(sm80::kMinStages) + " to " + std::to_string(sm80::kMaxStages) + " pipeline stages");
    const int mul = mma_multiplicand(p.a.dtype, p.b.dtype);
    if (mul < 0) return unsupported("inputs must be f16 or bf16 (not both; fp8 converts exactly to either); f16 x bf16 runs on sm90_repack (Hopper, as TF32) or simt, f32 on sgemm or simt");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff) return unsupported("dimensions must be below 2^31");
    if (((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) > 0x7fffffffLL)
      return unsupported("more than 2^31 - 1 output tiles");
    const bool a_k_major = p.a.stride_col == 1, b_k_major = p.b.stride_row == 1;
    const bool copy = cp_async_loadable(p, mul);
    if (!copy && !row->gather)
      return unsupported("the " + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) +
                  " tile has only the cp.async loader: both inputs f16 or both bf16, a unit stride each, 16-byte aligned bases, "
                  "leading dimensions and batch strides (the table's gathering tiles take any operands)");
    const size_t smem = sm80::shared_bytes(c.block_m, c.block_n, c.warps, !copy || a_k_major, !copy || b_k_major, c.stages);
    if (smem > size_t(dev_.info.limits.max_shared_bytes))
      return unsupported(std::to_string(c.stages) + " stages need " + std::to_string(smem) + " bytes of shared memory");
    if (!fill) return {};
    sm80::Launch& l = out.l;
    l.m = int(p.m); l.n = int(p.n); l.k = int(p.k); l.batch = int(p.batch);
    l.group_m = c.group_m; l.stages = c.stages;
    l.block_m = c.block_m; l.block_n = c.block_n; l.warps = c.warps;
    l.gather = !copy;
    l.a_k_major = a_k_major; l.b_k_major = b_k_major;
    l.a = operand_args(p.a); l.b = operand_args(p.b);
    l.ep = epilogue_args(p);
    l.max_grid_z = int(std::min<long long>(dev_.max_grid_z, 0x7fffffff));
    l.max_shared = size_t(dev_.info.limits.max_shared_bytes);
    out.multiplicand = mul;
    out.smem = smem;
    return {};
  }

  CudaDevice& dev_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_sm80_mma_family(CudaDevice& device) { return std::make_unique<Sm80MmaFamily>(device); }

}  // namespace omnigemm::detail
