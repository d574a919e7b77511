// cuda.short_k: short_k_kernel.cuh as a kernel family (families/short_k.inc).
#include <algorithm>
#include <atomic>
#include <string>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "../shared_limit.hpp"
#include "../dependent_launch.cuh"
#include "cost_model.hpp"
#include "short_k_mma_kernel.cuh"

namespace omnigemm::detail {

namespace {

namespace sk = cuda::short_k;

constexpr Config kConfigs[] = {
#define OG_CUDA_SHORT_K(h, form) Config{"short_k", sk::kRows, sk::kHalfCols * (h), sk::kChunkK, 1, 1, sk::kWarps, 0, 1, form},
#include "../families/short_k.inc"
#undef OG_CUDA_SHORT_K
};
// The longest K offered: past it the FMAs, not D, are the work and the tensor-core families win.
constexpr int64_t kMaxK = 128;
constexpr int64_t kMaxGridY = 65535;  // row blocks in grid y

using Kernel = void (*)(cuda::ShortKArgs);
bool is_mma(const Config& c) { return c.form == "mma"; }
// The kernel of a row: FMA, or mma.sync on T (the MMA type of the inputs).
template <int H, int OUT>
Kernel kernel_for(bool mma, og_dtype in) {
  if (!mma) return cuda::short_k_gemm<H, OUT>;
  return in == OG_DTYPE_BF16 ? cuda::short_k_mma_gemm<H, OUT, __nv_bfloat16> : cuda::short_k_mma_gemm<H, OUT, __half>;
}
Kernel kernel_for(int halves, int out_bytes, bool mma, og_dtype in) {
  if (halves == 1) return out_bytes == 4 ? kernel_for<1, 4>(mma, in) : kernel_for<1, 2>(mma, in);
  return out_bytes == 4 ? kernel_for<2, 4>(mma, in) : kernel_for<2, 2>(mma, in);
}
// Each MMA kernel's record of the devices where its shared limit was raised.
std::atomic<unsigned long long> g_mma_limit_raised[2][2][2];

// D' as the kernel sees it: D with unit column stride, or D^T where D is column-major (its rows
// are then D's columns).
struct RowsView {
  bool transposed;
  int64_t rows, cols;
};
RowsView rows_view(const Problem& p) {
  const bool t = p.d.stride_col != 1;
  return {t, t ? p.n : p.m, t ? p.m : p.n};
}

// Whether B' (B, or A^T for D^T) has a unit stride along K and none along its columns.
bool b_along_k(const Problem& p, const RowsView& v) {
  const Operand& o = v.transposed ? p.a : p.b;
  const int64_t along_k = v.transposed ? o.stride_col : o.stride_row, along_cols = v.transposed ? o.stride_row : o.stride_col;
  return along_k == 1 && along_cols != 1;
}

struct ShortKLaunch {
  cuda::ShortKArgs args{};
  Kernel kernel = nullptr;
  bool transposed = false;
  bool mma = false;      // the mma.sync form (dynamic shared memory), else the FMA form (static)
  int shared_bytes = 0;  // dynamic (the MMA kernels)
  std::atomic<unsigned long long>* limit_raised = nullptr;
  long long col_blocks = 0, row_blocks = 0, batch = 0;
  int halves = 1;
};

class ShortKFamily final : public PlannedFamily<ShortKLaunch> {
 public:
  explicit ShortKFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "short_k"; }
  std::span<const Config> configs() const override { return kConfigs; }
  Status can_implement(const Problem& p, const Config& c) const override {
    ShortKLaunch l;
    return check(p, c, l, false);
  }
  CostHints hints(const Problem& p, const Config& c) const override;

 protected:
  Status plan(const Problem& p, const Config& c, ShortKLaunch& l) const override { return check(p, c, l, true); }
  Status launch(ShortKLaunch& l, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    if (l.limit_raised) OG_CUDA_TRY(raise_shared_limit_once(l.kernel, l.shared_bytes, *l.limit_raised), "short_k shared-memory limit");
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      l.args.batch_base = int(b0);
      const dim3 grid(unsigned(l.col_blocks), unsigned(l.row_blocks), unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0)));
      cudaLaunchConfig_t config{};
      cudaLaunchAttribute attrs[1]{};
      config.gridDim = grid;
      config.blockDim = dim3(sk::kThreads);
      config.dynamicSmemBytes = size_t(l.shared_bytes);
      config.stream = static_cast<cudaStream_t>(stream);
      cuda::add_dependent_launch(config, attrs, dependent_launch_on(dev_));
      OG_CUDA_TRY(cudaLaunchKernelEx(&config, l.kernel, l.args), "short_k kernel launch");
    }
    return {};
  }
  void summarize(const ShortKLaunch& l, PlanSummary& out) const override {
    out.grid[0] = l.col_blocks;
    out.grid[1] = l.row_blocks;
    out.grid[2] = l.batch;
    out.threads = sk::kThreads;
    out.shared_bytes = l.mma ? l.shared_bytes : sk::fma_shared_bytes(l.halves);
    out.notes = std::string(l.transposed ? "runs D^T = B^T A^T, " : "") + (l.mma ? "mma.sync m16n8k16" : "f32 FMA") +
                ", warps own whole rows of D written in aligned 16-byte units";
  }

 private:
  Status check(const Problem& p, const Config& c, ShortKLaunch& out, bool fill) const;
  CudaDevice& dev_;
};

Status ShortKFamily::check(const Problem& p, const Config& c, ShortKLaunch& out, bool fill) const {
  if (std::find(std::begin(kConfigs), std::end(kConfigs), c) == std::end(kConfigs))
    return unsupported("the config must be one of the table's rows (families/short_k.inc)");
  if (Status s = refuse_block_scales(p); !s) return s;
  if (p.k < 1 || p.k > kMaxK) return unsupported("K from 1 to " + std::to_string(kMaxK) + " (writing D is the work)");
  const og_dtype dt = p.d.dtype;
  if (dt != OG_DTYPE_F16 && dt != OG_DTYPE_BF16 && dt != OG_DTYPE_F32) return unsupported("D must be f16, bf16 or f32");
  const auto [transposed, rows, cols] = rows_view(p);
  if (transposed && p.d.stride_row != 1) return unsupported("D needs a unit stride along its rows or its columns");
  const bool mma = is_mma(c);
  if (mma && !(p.a.dtype == p.b.dtype && (p.a.dtype == OG_DTYPE_F16 || p.a.dtype == OG_DTYPE_BF16)) && !(dtype_is_fp8(p.a.dtype) && dtype_is_fp8(p.b.dtype)))
    return unsupported("the mma form takes f16 x f16, bf16 x bf16 or fp8 x fp8 inputs (the FMA rows take any)");
  const int eb = dtype_bytes(dt);
  if ((reinterpret_cast<uintptr_t>(p.d.mem.ptr) + uintptr_t(p.d.mem.offset)) % eb != 0)
    return unsupported("D's base must be aligned to its element size");
  // Column indices stay 32-bit in the kernel, a block's end included.
  if (rows > 0x7fffffff || cols > 0x7fffffff - 1024 || p.batch > 0x7fffffff) return unsupported("dimensions must be below 2^31 - 1024");
  const int halves = c.block_n / sk::kHalfCols;
  const int64_t col_blocks = (cols + c.block_n - 1) / c.block_n, row_blocks = (rows + sk::kRows - 1) / sk::kRows;
  if (col_blocks > 0x7fffffff || row_blocks > kMaxGridY)
    return unsupported("more than " + std::to_string(kMaxGridY) + " blocks of " + std::to_string(sk::kRows) + " rows");
  if (!fill) return {};
  cuda::ShortKArgs& a = out.args;
  a.m = int(rows);
  a.n = int(cols);
  a.k = int(p.k);
  a.ep = epilogue_args(p);
  a.a = operand_args(p.a);
  a.b = operand_args(p.b);
  if (transposed) transpose_views(a.a, a.b, a.ep);  // A' = B^T (N x K), B' = A^T (K x M), D' = D^T
  out.kernel = kernel_for(halves, eb, mma, p.a.dtype);
  out.mma = mma;
  out.shared_bytes = mma ? sk::mma_shared_bytes(halves) : 0;
  out.limit_raised = mma ? &g_mma_limit_raised[halves - 1][eb == 4][p.a.dtype == OG_DTYPE_BF16] : nullptr;
  out.transposed = transposed;
  out.col_blocks = col_blocks;
  out.row_blocks = row_blocks;
  out.batch = p.batch;
  out.halves = halves;
  return {};
}

// The kernel is bound by its blocks' latency: each wave of resident blocks (sk::blocks_per_sm)
// takes a fixed time to stage, compute and write its rows, more where D's lines are not 16-byte
// aligned (each row's first and last windows are partial), then per K: 0.37 us per K with FMA,
// per chunk of 16 K with mma.sync (1.75 us on 256 columns, 2.65 on 512, after 0.2 / 1.15 more
// for the result tile). H200, f16, forced on every row: 3549 x 6617 x K, K 1 to 128 (FMA K 1 / 8
// / 32 41.6 / 60.0 / 131.7 us on 256 columns; mma K 16 / 32 / 128 55.7 / 71.0 / 153.9 on 256,
// 62.3 / 77.7 / 175.0 on 512), 8192 x 8192 x 1 74.3, 144 x 15765 x 2 8.1, 2449 x 3849 x 25 56.7
// (mma 33.0), within 15% but for the narrowest problems (16060 x 12 x 12: 16.4, priced 20.6).
// A whole chunk of a B' stored along K is priced at the slowest one measured (9957 x 4443 x 63 x
// 2, B column-major: 960 / 985 us on 256 / 512 columns; 4245 x 14402 x 19 x 2 ran 314 on 256).
CostHints ShortKFamily::hints(const Problem& p, const Config& c) const {
  CostHints h;
  const RowsView v = rows_view(p);
  const int halves = c.block_n / sk::kHalfCols;
  const bool wide = halves > 1;
  const double blocks = std::ceil(double(v.rows) / sk::kRows) * std::ceil(double(v.cols) / c.block_n) * double(p.batch);
  const double waves = std::ceil(blocks / (double(dev_.programs()) * sk::blocks_per_sm(halves)));
  const bool aligned = d_line_alignment(p) >= 16;
  const double base_us = wide ? (aligned ? 5.1 : 6.0) : (aligned ? 3.3 : 4.4);
  // The mma form's chunks of 16 K; whole ones cost more where B' is stored along K.
  const double whole = std::floor(double(p.k) / sk::kChunkK), part = p.k % sk::kChunkK != 0 ? 1.0 : 0.0;
  const double chunk_us = wide ? 2.65 : 1.75;
  const double whole_us = b_along_k(p, v) ? (wide ? 12.5 : 9.25) : chunk_us;
  const double wave_us = !is_mma(c) ? base_us + 0.37 * double(p.k) : base_us + (wide ? 1.15 : 0.2) + whole * whole_us + part * chunk_us;
  h.latency_us = 3.0 + waves * wave_us;
  // The throughput terms stay below the floor: its fit holds the FMAs and the stores.
  h.efficiency = 1.0;
  return h;
}

}  // namespace

std::unique_ptr<KernelFamily> make_short_k_family(CudaDevice& device) { return std::make_unique<ShortKFamily>(device); }

}  // namespace omnigemm::detail
