// What the two skinny families (cuda.skinny: f32 FMA; cuda.skinny_mma: tensor cores) share:
// their tables' form, their common checks, and the launch: the problem oriented as D' = S * L
// (S the few-row operand; D^T = B^T A^T when the few rows are D's columns), column blocks times
// split-K slices in grid x, batches in grid z (in chunks of the device's limit), up to
// kMaxClusterSplit slices in a thread-block cluster and deeper splits through a workspace of
// partial sums (skinny_kernel.cuh's skinny_finish).
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <string>

#include "../cuda_device.hpp"
#include "../kernel_views.hpp"
#include "../shared_limit.hpp"
#include "kernel_family.hpp"
#include "skinny_kernel.cuh"

namespace omnigemm::detail {

// A row of a skinny family's table (families/skinny*.inc): the tile's rows of D' and its form,
// transposed (D^T = B^T A^T) when the form starts with 't'. Every row is offered with every split.
struct SkinnyRow {
  int rows;
  const char* form;
};
constexpr bool transposed_form(const char* f) { return f[0] == 't'; }
// The table's configs: row i with split j at i * S + j, made by make(row, split).
template <size_t R, size_t S, class MakeConfig>
constexpr std::array<Config, R * S> table_configs(const SkinnyRow (&rows)[R], const int (&splits)[S], MakeConfig make) {
  std::array<Config, R * S> out{};
  for (size_t i = 0; i < R; ++i)
    for (size_t j = 0; j < S; ++j) out[i * S + j] = make(rows[i], splits[j]);
  return out;
}
// The row whose config `c` is, or null when c is not in the table.
template <size_t R, size_t N>
const SkinnyRow* table_row(const SkinnyRow (&rows)[R], const std::array<Config, N>& configs, const Config& c) {
  for (size_t i = 0; i < N; ++i)
    if (configs[i] == c) return &rows[i / (N / R)];
  return nullptr;
}

constexpr int kMaxClusterSplit = 8;                 // deeper splits meet in a workspace
constexpr long long kMaxPartialFloats = 1ll << 26;  // 256 MiB of deep-split partial sums

struct SkinnyLaunch {
  cuda::SkinnyArgs args;
  WorkspaceNeed need;      // deep splits: partial sums and counters
  CallerWorkspace caller;  // the workspace the launch carves (none: the device's own)
  void (*kernel)(cuda::SkinnyArgs) = nullptr;
  bool transposed = false;
  long long shared_bytes = 0;  // per block, for explain
  // Dynamic shared memory per block (0: the kernel's is static) and, past 48 KB, the kernel's
  // record of the devices whose limit has been raised for it (bit d: device d).
  int dynamic_shared = 0;
  std::atomic<unsigned long long>* raised_on = nullptr;
  const char* note = "";       // the kernel's loads and math, for explain
  long long col_blocks = 0, batch = 0;
};

// Both operands f16 (or both bf16) with a unit stride and 16-byte aligned base, leading dimension
// and batch stride: the Hopper TMA kernel loads them where they are, and streams them faster.
inline bool hopper_loads_in_place(const Problem& p) {
  if (p.a.dtype != p.b.dtype || (p.a.dtype != OG_DTYPE_F16 && p.a.dtype != OG_DTYPE_BF16)) return false;
  auto in_place = [&](const Operand& o) {
    const bool unit_col = o.stride_col == 1, unit_row = o.stride_row == 1;
    return (unit_col || unit_row) && check_16_byte_operand(o, 2, unit_col ? o.stride_row : o.stride_col, p.batch, nullptr);
  };
  return in_place(p.a) && in_place(p.b);
}

// Both operands fp8 (e4m3 or e5m2), K-major (A with unit column stride, B with unit row stride)
// and 16-byte aligned: sm90_wgmma reads them in place.
inline bool hopper_loads_fp8_in_place(const Problem& p) {
  auto k_major = [&](const Operand& o, bool is_a) {
    const int64_t ld = is_a ? o.stride_row : o.stride_col;
    const bool unit_k = (is_a ? o.stride_col : o.stride_row) == 1;
    return dtype_is_fp8(o.dtype) && unit_k && check_16_byte_operand(o, 1, ld, p.batch, nullptr);
  };
  return k_major(p.a, true) && k_major(p.b, false);
}

// The problem's few rows (D's rows, or its columns when transposed) and its large operand as
// oriented: L = B (K x N), or A^T (K x M) when transposed.
inline int64_t skinny_rows(const Problem& p, bool transposed) { return transposed ? p.n : p.m; }
inline const Operand& skinny_large(const Problem& p, bool transposed) { return transposed ? p.a : p.b; }

// The checks every skinny launch has (sizes, cluster support, split against K, the partial
// sums' bound) and, with fill, the oriented launch without its kernel: `rows` is the tile's
// rows of D', `cols_per_block` its columns, `chunk` the K a slice is a multiple of.
inline Status plan_skinny(const CudaDevice& dev, const Problem& p, bool transposed, int rows, int cols_per_block, int chunk,
                          int split, bool fill, SkinnyLaunch& out) {
  if (split > 1 && split <= kMaxClusterSplit && dev.info.limits.arch < 90)
    return unsupported("split-K of 2 to 8 needs thread-block clusters (sm_90); deeper splits run anywhere");
  if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff || p.batch > 0x7fffffff)
    return unsupported("dimensions must be below 2^31");
  const int64_t cols = transposed ? p.m : p.n;
  const int64_t col_blocks = (cols + cols_per_block - 1) / cols_per_block;
  if (col_blocks * split > 0x7fffffffLL) return unsupported("more than 2^31 - 1 blocks");
  const int64_t chunks = std::max<int64_t>(1, (p.k + chunk - 1) / chunk);
  if (split > chunks) return unsupported("split-K " + std::to_string(split) + " needs as many K chunks of " + std::to_string(chunk));
  const long long partial_floats = split > kMaxClusterSplit ? (long long)p.batch * col_blocks * split * rows * cols_per_block : 0;
  if (partial_floats > kMaxPartialFloats) return unsupported("the split-K partial sums would exceed 256 MiB");
  if (!fill) return {};
  out.need.partial_floats = partial_floats;
  out.need.counters = partial_floats > 0 ? (long long)p.batch * col_blocks : 0;
  out.caller = caller_workspace(p);

  cuda::SkinnyArgs& a = out.args;
  a.rows = int(skinny_rows(p, transposed));
  a.cols = int(cols);
  a.k = int(p.k);
  a.split = split;
  a.slice_k = int(((chunks + split - 1) / split) * chunk);
  a.ep = epilogue_args(p);
  a.s = operand_args(p.a);
  a.l = operand_args(p.b);
  if (transposed) transpose_views(a.s, a.l, a.ep);  // S = B^T (N x K), L = A^T (K x M), D' = D^T
  out.transposed = transposed;
  out.col_blocks = col_blocks;
  out.batch = p.batch;
  return {};
}

// A skinny config's launch as its floors count it: column blocks x split-K slices x batches, and
// the K chunks (block_k) of a slice.
struct SkinnyGrid {
  double blocks, chunks_per_slice;
};
inline SkinnyGrid skinny_grid(const Problem& p, const Config& c) {
  const bool transposed = transposed_form(c.form.text);
  const int64_t cols = transposed ? p.m : p.n, per_block = transposed ? c.block_m : c.block_n;
  const double chunks = double(std::max<int64_t>(1, (p.k + c.block_k - 1) / c.block_k));
  return {double((cols + per_block - 1) / per_block) * c.split_k * double(p.batch), std::ceil(chunks / c.split_k)};
}
// The least time of a skinny launch where latency bounds it (CostHints::latency_us): a fixed
// price per launch, then each slice's K chunks one after another at `chunk_us` each, once per
// round of resident blocks (`resident` per SM). The chunks of a slice wait on their loads in
// turn: on the small problems of the random sweeps (bench/results/h200) the kernels ran at
// this floor, several times their throughput terms.
inline double skinny_latency_us(const Problem& p, const Config& c, int compute_units, int resident, double fixed_us,
                                double chunk_us) {
  const SkinnyGrid g = skinny_grid(p, c);
  const double rounds = std::ceil(g.blocks / (double(std::max(compute_units, 1)) * resident));
  return fixed_us + chunk_us * g.chunks_per_slice * rounds;
}
// The least time of a launch whose SMs issue its loads and fragment reads one block's K chunk
// after another (CostHints::latency_us): the blocks run in waves of one per SM (an SM's resident
// blocks overlap little), a block's K chunks at `chunk_us` each, and every wave after the first
// `block_us` more (a block's start and stores, and where split, its cluster's start and
// synchronisation and the slices' sums) that a lone wave hides; all after the fixed price per launch.
inline double skinny_sm_time_us(const Problem& p, const Config& c, int compute_units, double fixed_us, double chunk_us,
                                double block_us) {
  const SkinnyGrid g = skinny_grid(p, c);
  const double waves = std::ceil(g.blocks / double(std::max(compute_units, 1)));
  return fixed_us + waves * g.chunks_per_slice * chunk_us + (waves - 1) * block_us;
}
// A split deeper than a cluster ends with one block per tile adding every slice's partial sums
// from the workspace in slice order: per slice at least one L2 round trip (the sums go two
// slices at a time), and the slice's rows x cols floats read at about one SM's share of the L2
// bandwidth (~100 GB/s), priced as extra time (CostHints::extra_us).
inline double skinny_split_tail_us(const Config& c, int rows, int cols_per_block) {
  if (c.split_k <= kMaxClusterSplit) return 0.0;
  return c.split_k * std::max(0.1, 2.0 * rows * cols_per_block * 4 / 100e3);
}

// A skinny family: can_implement and plan are its check() (plan fills the launch); the launch
// and explain's summary are the shared ones.
class SkinnyFamilyBase : public PlannedFamily<SkinnyLaunch> {
 public:
  explicit SkinnyFamilyBase(CudaDevice& device) : dev_(device) {}
  Status can_implement(const Problem& p, const Config& c) const final {
    SkinnyLaunch l{};
    return check(p, c, l, false);
  }

 protected:
  // The family's rules for (p, c) and, with fill, the launch: plan_skinny plus the kernel.
  virtual Status check(const Problem& p, const Config& c, SkinnyLaunch& out, bool fill) const = 0;
  Status plan(const Problem& p, const Config& c, SkinnyLaunch& l) const final { return check(p, c, l, true); }

  // The workspace first (deep splits), then one launch per chunk of batches.
  Status launch(SkinnyLaunch& l, void* stream) final {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (l.need.bytes() > 0) {
      WorkspaceParts parts;
      if (Status st = dev_.workspace(l.caller, s, l.need, parts); !st) return st;
      l.args.partials = parts.partials;
      l.args.counters = parts.counters;
    }
    if (l.dynamic_shared > 48 * 1024 && l.raised_on)
      OG_CUDA_TRY(raise_shared_limit_once(l.kernel, l.dynamic_shared, *l.raised_on), "skinny kernel shared memory limit");
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      const unsigned chunk = unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0));
      l.args.batch_base = int(b0);
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(unsigned(l.col_blocks * l.args.split), 1, chunk);
      config.blockDim = dim3(cuda::skinny::kThreads);
      config.dynamicSmemBytes = size_t(l.dynamic_shared);
      config.stream = s;
      cudaLaunchAttribute attribute[2]{};
      if (l.args.split > 1 && l.args.split <= kMaxClusterSplit) {
        attribute[0].id = cudaLaunchAttributeClusterDimension;
        attribute[0].val.clusterDim.x = unsigned(l.args.split);
        attribute[0].val.clusterDim.y = attribute[0].val.clusterDim.z = 1;
        config.attrs = attribute;
        config.numAttrs = 1;
      }
      cuda::add_dependent_launch(config, attribute, dependent_launch_on(dev_));
      OG_CUDA_TRY(cudaLaunchKernelEx(&config, l.kernel, l.args), "skinny kernel launch");
    }
    return {};
  }

  void summarize(const SkinnyLaunch& l, PlanSummary& out) const final {
    out.grid[0] = l.col_blocks * l.args.split;
    out.grid[2] = l.batch;
    out.cluster = l.args.split <= kMaxClusterSplit ? l.args.split : 1;
    out.workspace_bytes = l.need.bytes();
    out.threads = cuda::skinny::kThreads;
    out.shared_bytes = l.shared_bytes;
    out.notes = std::string(l.transposed ? "runs D^T = B^T A^T, " : "") + l.note +
                (l.args.split > kMaxClusterSplit ? ", split-K slices summed from a workspace by the last to finish"
                 : l.args.split > 1       ? ", split-K slices summed in a cluster"
                                          : "");
  }

  CudaDevice& dev_;
};

}  // namespace omnigemm::detail
