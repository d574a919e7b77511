// cuda.skinny_mma: skinny_mma_kernel.cuh (tensor cores, operands of any 2-byte alignment read in
// place) as a kernel family, on the skinny families' shared launch (launch.hpp).
#include "../families.hpp"
#include "cost_model.hpp"
#include "launch.hpp"
#include "skinny_mma_kernel.cuh"

namespace omnigemm::detail {

namespace {

constexpr SkinnyRow kRows[] = {
#define OG_CUDA_SKINNY_MMA(r, f) SkinnyRow{r, #f},
#define OG_CUDA_SKINNY_MMA_SPLITS(...)
#include "../families/skinny_mma.inc"
#undef OG_CUDA_SKINNY_MMA
#undef OG_CUDA_SKINNY_MMA_SPLITS
};
constexpr int kSplits[] = {
#define OG_CUDA_SKINNY_MMA(r, f)
#define OG_CUDA_SKINNY_MMA_SPLITS(...) __VA_ARGS__
#include "../families/skinny_mma.inc"
#undef OG_CUDA_SKINNY_MMA
#undef OG_CUDA_SKINNY_MMA_SPLITS
};
// The config of a row: the tile in the caller's orientation (ROWS x 64 columns, or its
// transpose), BLOCK_K the K of a stage.
constexpr Config row_config(const SkinnyRow& r, int split) {
  namespace sm = skinny_mma;
  const bool t = transposed_form(r.form);
  return Config{"skinny_mma", t ? sm::kCols : r.rows, t ? r.rows : sm::kCols, sm::kChunk, 1, sm::stages(r.rows), cuda::skinny::kWarps, 0, split, r.form};
}
constexpr auto kConfigs = table_configs(kRows, kSplits, row_config);
// The K (80 chunks) from which a problem TMA could load in place is taken (check()).
constexpr int kAlignedMinK = 80 * skinny_mma::kChunk;

// The instantiation for a launch and its shared memory.
template <int ROWS, bool S_K_FAST, bool L_K_FAST>
void pick(og_dtype t, SkinnyLaunch& out) {
  out.kernel = t == OG_DTYPE_F16 ? cuda::skinny_mma_kernel<ROWS, S_K_FAST, L_K_FAST, __half>
                                 : cuda::skinny_mma_kernel<ROWS, S_K_FAST, L_K_FAST, __nv_bfloat16>;
  out.shared_bytes = out.dynamic_shared = skinny_mma::block_shared_bytes(ROWS, S_K_FAST, L_K_FAST);
  static std::atomic<unsigned long long> raised_on[2]{};  // per dtype's instantiation
  out.raised_on = &raised_on[t == OG_DTYPE_F16 ? 0 : 1];
}
template <int ROWS>
void pick(og_dtype t, bool s_k_fast, bool l_k_fast, SkinnyLaunch& out) {
  if (s_k_fast) l_k_fast ? pick<ROWS, true, true>(t, out) : pick<ROWS, true, false>(t, out);
  else l_k_fast ? pick<ROWS, false, true>(t, out) : pick<ROWS, false, false>(t, out);
}

class SkinnyMmaFamily final : public SkinnyFamilyBase {
 public:
  explicit SkinnyMmaFamily(CudaDevice& device) : SkinnyFamilyBase(device) {}
  const char* name() const override { return "skinny_mma"; }
  std::span<const Config> configs() const override { return kConfigs; }
  // Bound by streaming the large operand once through 16-byte copies, three blocks per SM (two
  // at 64 rows) with three stages in flight each (two at 64 rows; split-K supplies the blocks);
  // the tensor cores far from busy at 64 rows or fewer. Its memory share is the one measured on
  // the H200's large streaming rows (bench/results/h200), below the TMA-fed families' 0.75.
  // Below the memory term it runs at the time its blocks take on the SMs (skinny_sm_time_us):
  // about 3.8 us per launch and 0.6 us per K chunk of a block at 16 rows, 5.9 and 0.7 at 32, 10
  // and 0.9 at 64 (the fragments are gathered from shared memory element by element, so the
  // larger tiles' chunks take longer), per wave of one block per SM, and in every wave after the
  // first a block 0.8 us more unsplit (the many-wave rows of one or two chunks), 0.3 us per slice
  // of its cluster (as 8 beyond one) when split. Fitted on
  // the H200's random-sweep rows: one-chunk problems, forced splits of long ones and of tall
  // ones (7001 x 7 x 1037 ran 15.2 / 14.9 / 17.0 / 23.8 / 27.7 us in 1 / 2 / 4 / 8 / 16 slices), so
  // that splits pay only where the column blocks leave SMs idle. Deep splits add their serial
  // tail (extra time).
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    h.efficiency = 0.25;
    h.memory_efficiency = 0.4;
    h.memory_items_per_unit = 2;
    h.split_fixed_steps = 2;
    const int rows = transposed_form(c.form.text) ? c.block_n : c.block_m;
    const double share = rows / 64.0;
    const double block_us = c.split_k > 1 ? 0.3 * std::min(c.split_k, kMaxClusterSplit) : 0.8;
    h.latency_us = skinny_sm_time_us(p, c, dev_.info.limits.compute_units, 1.7 + 8.3 * share, 0.5 + 0.4 * share, block_us);
    h.extra_us = skinny_split_tail_us(c, rows, skinny_mma::kCols);
    return h;
  }

 protected:
  Status check(const Problem& p, const Config& c, SkinnyLaunch& out, bool fill) const override {
    const SkinnyRow* row = table_row(kRows, kConfigs, c);
    if (!row) return unsupported("the config must be one of the table's rows (families/skinny_mma.inc) with one of its splits");
    if (Status s = refuse_block_scales(p); !s) return s;
    if (dev_.info.limits.arch < 80) return unsupported("mma.sync with bf16 and cp.async need sm_80 or newer");
    if (p.a.dtype != p.b.dtype || (p.a.dtype != OG_DTYPE_F16 && p.a.dtype != OG_DTYPE_BF16))
      return unsupported("the tensor-core skinny kernel takes f16 x f16 or bf16 x bf16");
    const bool t = transposed_form(row->form);
    const int64_t small = skinny_rows(p, t);
    const int lowest = row->rows == 16 ? 1 : row->rows / 2 + 1;
    if (small > row->rows || small < lowest)
      return unsupported("the " + std::to_string(row->rows) + "-row tile serves problems of " + std::to_string(lowest) + " to " +
                  std::to_string(row->rows) + (t ? " columns" : " rows"));
    // Operands TMA loads in place are sm90_wgmma's, except at most 16 rows against a long K,
    // where its splits (at most 4) leave most SMs idle and this kernel's deep splits streamed
    // faster on the H200 (bench/results/h200); with more rows or a shorter K it ran slower.
    if (dev_.info.limits.arch >= 90 && hopper_loads_in_place(p) && (row->rows > 16 || p.k < kAlignedMinK))
      return unsupported("sm90_wgmma streams this problem's 16-bit operands in place through TMA (this kernel takes them at most 16 " +
                  std::string(t ? "columns" : "rows") + " against K >= " + std::to_string(kAlignedMinK) + ")");
    // The oriented operands' unit strides: S = A (or B^T) along K or its rows, L = B (or A^T)
    // along K or its columns.
    const Operand& s_op = t ? p.b : p.a;
    const Operand& l_op = skinny_large(p, t);
    const bool s_k_fast = (t ? s_op.stride_row : s_op.stride_col) == 1, s_r_fast = (t ? s_op.stride_col : s_op.stride_row) == 1;
    const bool l_k_fast = (t ? l_op.stride_col : l_op.stride_row) == 1, l_c_fast = (t ? l_op.stride_row : l_op.stride_col) == 1;
    if (!s_k_fast && !s_r_fast) return unsupported("the few-row operand needs a unit stride");
    if (!l_k_fast && !l_c_fast) return unsupported("the large operand needs a unit stride");
    namespace sm = skinny_mma;
    if (Status s = plan_skinny(dev_, p, t, row->rows, sm::kCols, sm::kChunk, c.split_k, fill, out); !s || !fill) return s;
    if (row->rows == 16) pick<16>(p.a.dtype, s_k_fast, l_k_fast, out);
    else if (row->rows == 32) pick<32>(p.a.dtype, s_k_fast, l_k_fast, out);
    else pick<64>(p.a.dtype, s_k_fast, l_k_fast, out);
    out.note = "mma.sync, operands read in place at any alignment";
    return {};
  }
};

}  // namespace

std::unique_ptr<KernelFamily> make_skinny_mma_family(CudaDevice& device) { return std::make_unique<SkinnyMmaFamily>(device); }

}  // namespace omnigemm::detail
