// cuda.skinny: the memory-bound kernels of skinny_kernel.cuh as a kernel family.
#include <algorithm>
#include <array>

#include "../families.hpp"
#include "../kernel_views.hpp"
#include "cost_model.hpp"
#include "skinny_kernel.cuh"

namespace omnigemm::detail {

namespace {

struct SkinnyRow {
  int rows;
  const char* form;
};
constexpr SkinnyRow kRows[] = {
#define OG_CUDA_SKINNY(r, f) SkinnyRow{r, #f},
#define OG_CUDA_SKINNY_SPLITS(...)
#include "../families/skinny.inc"
#undef OG_CUDA_SKINNY
#undef OG_CUDA_SKINNY_SPLITS
};
constexpr int kSplits[] = {
#define OG_CUDA_SKINNY(r, f)
#define OG_CUDA_SKINNY_SPLITS(...) __VA_ARGS__
#include "../families/skinny.inc"
#undef OG_CUDA_SKINNY
#undef OG_CUDA_SKINNY_SPLITS
};
constexpr size_t kRowCount = sizeof(kRows) / sizeof(kRows[0]);
constexpr size_t kSplitCount = sizeof(kSplits) / sizeof(kSplits[0]);

constexpr bool form_is(const char* f, const char* g) {
  return std::char_traits<char>::length(f) == std::char_traits<char>::length(g) &&
         std::char_traits<char>::compare(f, g, std::char_traits<char>::length(f)) == 0;
}
constexpr bool transposed_form(const char* f) { return f[0] == 't'; }
constexpr bool lanes_k_form(const char* f) { return form_is(f, "dot") || form_is(f, "tdot"); }

// The config of a row: the tile in the caller's orientation (ROWS x the block's columns, or its
// transpose), BLOCK_K the K chunk of S in shared memory.
constexpr Config row_config(const SkinnyRow& r, int split) {
  namespace sk = cuda::skinny;
  const int cols = lanes_k_form(r.form) ? sk::kColsK : sk::kColsN;
  const int chunk = lanes_k_form(r.form) ? sk::kChunkK : sk::kChunkN;
  const bool t = transposed_form(r.form);
  return Config{"skinny", t ? cols : r.rows, t ? r.rows : cols, chunk, 1, 1, sk::kWarps, 0, split, r.form};
}
constexpr std::array<Config, kRowCount * kSplitCount> make_configs() {
  std::array<Config, kRowCount * kSplitCount> out{};
  for (size_t i = 0; i < kRowCount; ++i)
    for (size_t j = 0; j < kSplitCount; ++j) out[i * kSplitCount + j] = row_config(kRows[i], kSplits[j]);
  return out;
}
constexpr auto kConfigs = make_configs();

using Kernel = void (*)(cuda::SkinnyArgs);
template <int ROWS, int LT>
constexpr Kernel kernel_of(bool lanes_k) {
  return lanes_k ? cuda::skinny_lanes_k<ROWS, LT> : cuda::skinny_lanes_n<ROWS, LT>;
}
template <int ROWS>
Kernel kernel_for_lt(int lt, bool lanes_k) {
  switch (lt) {
    case cuda::skinny::kF16: return kernel_of<ROWS, cuda::skinny::kF16>(lanes_k);
    case cuda::skinny::kBf16: return kernel_of<ROWS, cuda::skinny::kBf16>(lanes_k);
    case cuda::skinny::kF32: return kernel_of<ROWS, cuda::skinny::kF32>(lanes_k);
    default: return kernel_of<ROWS, cuda::skinny::kAny>(lanes_k);
  }
}
Kernel kernel_for(int rows, int lt, bool lanes_k) {
  switch (rows) {
    case 1: return kernel_for_lt<1>(lt, lanes_k);
    case 2: return kernel_for_lt<2>(lt, lanes_k);
    case 4: return kernel_for_lt<4>(lt, lanes_k);
    case 8: return kernel_for_lt<8>(lt, lanes_k);
    default: return kernel_for_lt<16>(lt, lanes_k);
  }
}

constexpr int kMaxClusterSplit = 8;                 // deeper splits meet in a workspace
constexpr long long kMaxPartialFloats = 1ll << 26;  // 256 MiB of deep-split partial sums

struct SkinnyLaunch {
  cuda::SkinnyArgs args;
  WorkspaceNeed need;      // deep splits: partial sums and counters
  CallerWorkspace caller;  // the workspace the launch carves (none: the device's own)
  Kernel kernel = nullptr;
  int rows = 0;
  bool lanes_k = false, transposed = false;
  long long col_blocks = 0, batch = 0;
};

// Both operands f16 (or both bf16) with a unit stride and 16-byte aligned base, leading dimension
// and batch stride: the Hopper TMA kernel loads them where they are, and streams them faster.
bool hopper_loads_in_place(const Problem& p) {
  if (p.a.dtype != p.b.dtype || (p.a.dtype != OG_DTYPE_F16 && p.a.dtype != OG_DTYPE_BF16)) return false;
  auto in_place = [&](const Operand& o) {
    const bool unit_col = o.stride_col == 1, unit_row = o.stride_row == 1;
    return (unit_col || unit_row) && check_16_byte_operand(o, 2, unit_col ? o.stride_row : o.stride_col, p.batch, nullptr);
  };
  return in_place(p.a) && in_place(p.b);
}

class SkinnyFamily final : public PlannedFamily<SkinnyLaunch> {
 public:
  explicit SkinnyFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "skinny"; }
  std::span<const Config> configs() const override { return kConfigs; }
  Status can_implement(const Problem& p, const Config& c) const override {
    SkinnyLaunch l{};
    return check(p, c, l, false);
  }
  // The FMAs run on CUDA cores at about half the f32 peak; the large operand streams at a lower
  // share of the memory bandwidth than a TMA-fed kernel's (element loads, no bulk copies), and
  // only with two blocks per SM in flight (at most two are resident): split-K supplies them. The
  // cluster's split-K reduction costs about one K chunk.
  // The dot loaders with 8 or 16 rows keep 32-64 accumulators per lane and load the rows of S
  // per K step: on the H100 they ran far below the axpy loaders' rate (the random sweep, seed
  // 101), so their FMAs are priced at a third of it.
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    const DeviceLimits& lim = dev_.info.limits;
    const bool t = transposed_form(c.form.text);
    const int rows = t ? c.block_n : c.block_m;
    const double share = lanes_k_form(c.form.text) && rows >= 8 ? 0.17 : 0.5;
    h.efficiency = lim.peak_tflops_f32 > 0 ? share * lim.peak_tflops_f32 / peak_tflops(lim, p) : 0.1 * share;
    h.memory_efficiency = 0.6;
    h.memory_items_per_unit = 2;
    h.split_fixed_steps = 1;
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, SkinnyLaunch& l) const override { return check(p, c, l, true); }

  Status launch(SkinnyLaunch& l, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (l.need.bytes() > 0) {
      WorkspaceParts parts;
      if (Status st = dev_.workspace(l.caller, s, l.need, parts); !st) return st;
      l.args.partials = parts.partials;
      l.args.counters = parts.counters;
    }
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      const unsigned chunk = unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0));
      l.args.batch_base = int(b0);
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(unsigned(l.col_blocks * l.args.split), 1, chunk);
      config.blockDim = dim3(cuda::skinny::kThreads);
      config.stream = s;
      cudaLaunchAttribute attribute[1];
      if (l.args.split > 1 && l.args.split <= kMaxClusterSplit) {
        attribute[0].id = cudaLaunchAttributeClusterDimension;
        attribute[0].val.clusterDim.x = unsigned(l.args.split);
        attribute[0].val.clusterDim.y = attribute[0].val.clusterDim.z = 1;
        config.attrs = attribute;
        config.numAttrs = 1;
      }
      OG_CUDA_TRY(cudaLaunchKernelEx(&config, l.kernel, l.args), "skinny kernel launch");
    }
    return {};
  }

  void summarize(const SkinnyLaunch& l, PlanSummary& out) const override {
    out.grid[0] = l.col_blocks * l.args.split;
    out.grid[2] = l.batch;
    out.cluster = l.args.split <= kMaxClusterSplit ? l.args.split : 1;
    out.workspace_bytes = l.need.bytes();
    out.threads = cuda::skinny::kThreads;
    out.shared_bytes = l.lanes_k ? (long long)sizeof(float) * l.rows * (cuda::skinny::kChunkK + cuda::skinny::kColsK)
                                 : (long long)sizeof(float) * l.rows * cuda::skinny::kChunkN * (1 + cuda::skinny::kWarps);
    out.notes = std::string(l.transposed ? "runs D^T = B^T A^T, " : "") + "f32 FMA, " +
                (l.lanes_k ? "lanes along K" : "lanes along the output's long side") +
                (l.args.split > kMaxClusterSplit ? ", split-K slices summed from a workspace by the last to finish"
                 : l.args.split > 1       ? ", split-K slices summed in a cluster"
                                          : "");
  }

 private:
  Status check(const Problem& p, const Config& c, SkinnyLaunch& out, bool fill) const {
    auto fail = [](std::string msg) { return error(StatusCode::unsupported, std::move(msg)); };
    const SkinnyRow* row = nullptr;
    for (size_t i = 0; i < kRowCount; ++i)
      for (size_t j = 0; j < kSplitCount; ++j)
        if (kConfigs[i * kSplitCount + j] == c) row = &kRows[i];
    if (!row) return fail("the config must be one of the table's rows (families/skinny.inc) with one of its splits");
    if (Status s = refuse_block_scales(p); !s) return s;
    if (dev_.info.limits.arch >= 90 && hopper_loads_in_place(p))
      return fail("sm90_wgmma streams this problem's 16-bit operands in place through TMA");
    const bool t = transposed_form(row->form), lanes_k = lanes_k_form(row->form);
    const int64_t small = t ? p.n : p.m;
    if (small > row->rows || (row->rows > 1 && small <= row->rows / 2))
      return fail("the " + std::to_string(row->rows) + "-row tile serves problems of " +
                  (row->rows > 1 ? std::to_string(row->rows / 2 + 1) + " to " : "") + std::to_string(row->rows) +
                  (t ? " columns" : " rows"));
    // The large operand: B (K x N), or A^T (K x M) when transposed.
    const Operand& big = t ? p.a : p.b;
    const bool unit_k = t ? big.stride_col == 1 : big.stride_row == 1;
    const bool unit_cols = t ? big.stride_row == 1 : big.stride_col == 1;
    if (lanes_k && !unit_k) return fail("lanes along K need the large operand contiguous along K");
    if (!lanes_k && unit_k && !unit_cols) return fail("the large operand is contiguous along K: the dot forms load it");
    if (c.split_k > 1 && c.split_k <= kMaxClusterSplit && dev_.info.limits.arch < 90)
      return fail("split-K of 2 to 8 needs thread-block clusters (sm_90); deeper splits run anywhere");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff)
      return fail("dimensions must be below 2^31");
    const int cols_per_block = lanes_k ? cuda::skinny::kColsK : cuda::skinny::kColsN;
    const int chunk = c.block_k;
    const int64_t cols = t ? p.m : p.n;
    const int64_t col_blocks = (cols + cols_per_block - 1) / cols_per_block;
    if (col_blocks * c.split_k > 0x7fffffffLL) return fail("more than 2^31 - 1 blocks");
    const int64_t chunks = std::max<int64_t>(1, (p.k + chunk - 1) / chunk);
    if (c.split_k > chunks) return fail("split-K " + std::to_string(c.split_k) + " needs as many K chunks of " + std::to_string(chunk));
    const long long partial_floats =
        c.split_k > kMaxClusterSplit ? (long long)p.batch * col_blocks * c.split_k * row->rows * cols_per_block : 0;
    if (partial_floats > kMaxPartialFloats) return fail("the split-K partial sums would exceed 256 MiB");
    if (!fill) return {};
    out.need.partial_floats = partial_floats;
    out.need.counters = partial_floats > 0 ? (long long)p.batch * col_blocks : 0;
    out.caller = caller_workspace(p);

    cuda::SkinnyArgs& a = out.args;
    a.rows = int(small);
    a.cols = int(cols);
    a.k = int(p.k);
    a.split = c.split_k;
    a.slice_k = int(((chunks + c.split_k - 1) / c.split_k) * chunk);
    cuda::OperandArgs va = operand_args(p.a), vb = operand_args(p.b);
    a.ep = epilogue_args(p);
    if (!t) {
      a.s = va;
      a.l = vb;
    } else {  // S = B^T (N x K), L = A^T (K x M), D' = D^T
      a.s = vb;
      std::swap(a.s.sr, a.s.sc);
      a.l = va;
      std::swap(a.l.sr, a.l.sc);
      std::swap(a.ep.d.sr, a.ep.d.sc);
      std::swap(a.ep.c.sr, a.ep.c.sc);
      if (a.ep.bias_mode == OG_BIAS_PER_N) a.ep.bias_mode = OG_BIAS_PER_M;
      else if (a.ep.bias_mode == OG_BIAS_PER_M) a.ep.bias_mode = OG_BIAS_PER_N;
    }
    const og_dtype ld = a.l.dtype;
    const int lt = ld == OG_DTYPE_F16 ? cuda::skinny::kF16 : ld == OG_DTYPE_BF16 ? cuda::skinny::kBf16
                 : ld == OG_DTYPE_F32 ? cuda::skinny::kF32 : cuda::skinny::kAny;
    out.kernel = kernel_for(row->rows, lt, lanes_k);
    out.rows = row->rows;
    out.lanes_k = lanes_k;
    out.transposed = t;
    out.col_blocks = col_blocks;
    out.batch = p.batch;
    return {};
  }

  CudaDevice& dev_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_skinny_family(CudaDevice& device) { return std::make_unique<SkinnyFamily>(device); }

}  // namespace omnigemm::detail
