// cuda.short_k: short_k_kernel.cuh as a kernel family (families/short_k.inc).
#include <algorithm>
#include <string>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "cost_model.hpp"
#include "short_k_kernel.cuh"

namespace omnigemm::detail {

namespace {

namespace sk = cuda::short_k;

constexpr Config kConfigs[] = {
#define OG_CUDA_SHORT_K(h) Config{"short_k", sk::kRows, sk::kHalfCols * (h), sk::kChunkK, 1, 1, sk::kWarps, 0, 1, {}},
#include "../families/short_k.inc"
#undef OG_CUDA_SHORT_K
};
// The longest K offered: past it the FMAs, not D, are the work and the tensor-core families win.
constexpr int64_t kMaxK = 128;
constexpr int64_t kMaxGridY = 65535;  // row blocks in grid y

using Kernel = void (*)(cuda::ShortKArgs);
template <int H>
Kernel kernel_for_out(int out_bytes) {
  return out_bytes == 4 ? cuda::short_k_gemm<H, 4> : cuda::short_k_gemm<H, 2>;
}
Kernel kernel_for(int halves, int out_bytes) { return halves == 1 ? kernel_for_out<1>(out_bytes) : kernel_for_out<2>(out_bytes); }

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

struct ShortKLaunch {
  cuda::ShortKArgs args{};
  Kernel kernel = nullptr;
  bool transposed = false;
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
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      l.args.batch_base = int(b0);
      const dim3 grid(unsigned(l.col_blocks), unsigned(l.row_blocks), unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0)));
      l.kernel<<<grid, sk::kThreads, 0, static_cast<cudaStream_t>(stream)>>>(l.args);
      OG_CUDA_TRY(cudaGetLastError(), "short_k kernel launch");
    }
    return {};
  }
  void summarize(const ShortKLaunch& l, PlanSummary& out) const override {
    out.grid[0] = l.col_blocks;
    out.grid[1] = l.row_blocks;
    out.grid[2] = l.batch;
    out.threads = sk::kThreads;
    out.shared_bytes = (long long)sizeof(float) * (sk::kChunkK * (sk::kHalfCols * l.halves + 4) + sk::kRows * (sk::kChunkK + 1));
    out.notes = std::string(l.transposed ? "runs D^T = B^T A^T, " : "") +
                "f32 FMA, warps own whole rows of D written in aligned 16-byte units";
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
  out.kernel = kernel_for(halves, eb);
  out.transposed = transposed;
  out.col_blocks = col_blocks;
  out.row_blocks = row_blocks;
  out.batch = p.batch;
  out.halves = halves;
  return {};
}

// The kernel is bound by its blocks' latency: each wave of resident blocks (sk::blocks_per_sm)
// takes a fixed time to stage, compute and write its rows, more where D's lines are not 16-byte
// aligned (each row's first and last windows are partial), and 0.37 us more per K. H200, f16, 23
// problems of K 1 to 40 forced on both rows (3549 x 6617 x K: K 1 / 8 / 32 41.6 / 60.0 / 131.7 us
// on 256 columns, 41.0 / 53.0 / 109.7 on 512; 8192 x 8192 x 1 74.3, 144 x 15765 x 2 8.1, 2449 x
// 3849 x 25 56.7), within 15% of this but for the narrowest problems (16060 x 12 x 12: 16.4,
// priced 20.6).
CostHints ShortKFamily::hints(const Problem& p, const Config& c) const {
  CostHints h;
  const RowsView v = rows_view(p);
  const int halves = c.block_n / sk::kHalfCols;
  const bool wide = halves > 1;
  const double blocks = std::ceil(double(v.rows) / sk::kRows) * std::ceil(double(v.cols) / c.block_n) * double(p.batch);
  const double waves = std::ceil(blocks / (double(dev_.programs()) * sk::blocks_per_sm(halves)));
  const bool aligned = d_line_alignment(p) >= 16;
  const double wave_us = (wide ? (aligned ? 5.1 : 6.0) : (aligned ? 3.3 : 4.4)) + 0.37 * double(p.k);
  h.latency_us = 3.0 + waves * wave_us;
  // The throughput terms stay below the floor: its fit holds the FMAs and the stores.
  h.efficiency = 1.0;
  return h;
}

}  // namespace

std::unique_ptr<KernelFamily> make_short_k_family(CudaDevice& device) { return std::make_unique<ShortKFamily>(device); }

}  // namespace omnigemm::detail
