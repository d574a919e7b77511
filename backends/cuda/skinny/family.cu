// cuda.skinny: the memory-bound kernels of skinny_kernel.cuh as a kernel family.
#include <algorithm>
#include <array>
#include <cstdint>

#include "../families.hpp"
#include "cost_model.hpp"
#include "launch.hpp"

namespace omnigemm::detail {

namespace {

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
constexpr bool form_is(const char* f, const char* g) {
  return std::char_traits<char>::length(f) == std::char_traits<char>::length(g) &&
         std::char_traits<char>::compare(f, g, std::char_traits<char>::length(f)) == 0;
}
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
constexpr auto kConfigs = table_configs(kRows, kSplits, row_config);

using Kernel = void (*)(cuda::SkinnyArgs);
// vec: the lanes_k loader's four-element loads where they exist: typed loads, and not for
// sixteen rows of 16-bit elements (ptxas spilled those at the two-blocks-per-SM budget).
constexpr bool has_vector_k_loads(int rows, int lt) {
  return lt == cuda::skinny::kF32 || (lt != cuda::skinny::kAny && rows < 16);
}
template <int ROWS, int LT>
constexpr Kernel kernel_of(bool lanes_k, bool vec) {
  if (!lanes_k) return cuda::skinny_lanes_n<ROWS, LT>;
  if constexpr (has_vector_k_loads(ROWS, LT))
    if (vec) return cuda::skinny_lanes_k<ROWS, LT, true>;
  return cuda::skinny_lanes_k<ROWS, LT, false>;
}
template <int ROWS>
Kernel kernel_for_lt(int lt, bool lanes_k, bool vec) {
  switch (lt) {
    case cuda::skinny::kF16: return kernel_of<ROWS, cuda::skinny::kF16>(lanes_k, vec);
    case cuda::skinny::kBf16: return kernel_of<ROWS, cuda::skinny::kBf16>(lanes_k, vec);
    case cuda::skinny::kF32: return kernel_of<ROWS, cuda::skinny::kF32>(lanes_k, vec);
    default: return kernel_of<ROWS, cuda::skinny::kAny>(lanes_k, vec);
  }
}
Kernel kernel_for(int rows, int lt, bool lanes_k, bool vec) {
  switch (rows) {
    case 1: return kernel_for_lt<1>(lt, lanes_k, vec);
    case 2: return kernel_for_lt<2>(lt, lanes_k, vec);
    case 4: return kernel_for_lt<4>(lt, lanes_k, vec);
    case 8: return kernel_for_lt<8>(lt, lanes_k, vec);
    default: return kernel_for_lt<16>(lt, lanes_k, vec);
  }
}

int load_type(og_dtype large) {
  return large == OG_DTYPE_F16 ? cuda::skinny::kF16 : large == OG_DTYPE_BF16 ? cuda::skinny::kBf16
       : large == OG_DTYPE_F32 ? cuda::skinny::kF32 : cuda::skinny::kAny;
}

// The lanes_k loader's four-element loads: L (the large operand as oriented) f16, bf16 or f32,
// contiguous along K, its base on a whole element. `shifted`: some column starts off a group of
// four elements (the base, column stride or batch stride), so the kernel stages S at every shift
// (cuda::skinny::lanes_k_shifts); elsewhere L must be aligned.
bool vector_k_loads(const Problem& p, bool transposed, int rows, bool& shifted) {
  const Operand& l = skinny_large(p, transposed);
  if (l.dtype != OG_DTYPE_F16 && l.dtype != OG_DTYPE_BF16 && l.dtype != OG_DTYPE_F32) return false;
  const uintptr_t base = reinterpret_cast<uintptr_t>(l.mem.ptr) + uintptr_t(l.mem.offset);
  const int64_t unit = transposed ? l.stride_col : l.stride_row, cols = transposed ? l.stride_row : l.stride_col;
  const int eb = dtype_bytes(l.dtype);
  if (unit != 1 || base % eb != 0) return false;
  shifted = cols % 4 != 0 || base % (4 * eb) != 0 || (p.batch > 1 && l.batch_stride % 4 != 0);
  return !shifted || cuda::skinny::lanes_k_shifts(rows, load_type(l.dtype));
}

// Whether a lanes_k row of `rows` runs the four-element loader on p (and whether shifted).
bool runs_vector_k(const Problem& p, bool transposed, int rows, bool& shifted) {
  shifted = false;
  return has_vector_k_loads(rows, load_type(skinny_large(p, transposed).dtype)) && vector_k_loads(p, transposed, rows, shifted);
}

class SkinnyFamily final : public SkinnyFamilyBase {
 public:
  explicit SkinnyFamily(CudaDevice& device) : SkinnyFamilyBase(device) {}
  const char* name() const override { return "skinny"; }
  std::span<const Config> configs() const override { return kConfigs; }
  // The FMAs run on CUDA cores at about half the f32 peak; the large operand streams at a lower
  // share of the memory bandwidth than a TMA-fed kernel's (element loads, no bulk copies), and
  // only with two blocks per SM in flight (at most two are resident): split-K supplies them. The
  // cluster's split-K reduction costs about one K chunk.
  // The dot loaders with 8 or 16 rows keep 32-64 accumulators per lane and load the rows of S
  // per K step: on the H100 they ran far below the axpy loaders' rate (the random sweep, seed
  // 101), so their FMAs are priced at a third of it; with four-element loads (S read as float4,
  // four K per load of L) they ran 1.5x (8 rows) and 1.2x (16 rows) that rate (H200, f32).
  // Streaming 16-bit operands (where skinny_mma competes; bench/results/h200 runs r1 and r2,
  // same problems): the dot loaders (L contiguous along K) reached about half skinny_mma's rate
  // and the axpy loaders about its rate, so their shares are set below and near its 0.4 (the dot
  // loaders 0.2 element by element, 0.25 with four-element loads: one and two rows against 12 MB
  // and more of L ran at 0.23-0.28 of the H200's bandwidth with them, 0.19-0.22 without); the
  // other input types keep the H100's 0.6 (nothing else reads them in place).
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    const DeviceLimits& lim = dev_.info.limits;
    const bool t = transposed_form(c.form.text);
    const int rows = t ? c.block_n : c.block_m;
    const bool lanes_k = lanes_k_form(c.form.text);
    bool shifted = false;
    const bool vec = lanes_k && runs_vector_k(p, t, rows, shifted);
    const double vec_share = rows >= 16 ? 0.2 : 0.25;
    const double share = !lanes_k || rows < 8 ? 0.5 : vec ? vec_share : 0.17;
    h.efficiency = lim.peak_tflops_f32 > 0 ? share * lim.peak_tflops_f32 / peak_tflops(lim, p) : 0.1 * share;
    const bool sixteen_bit = dtype_bytes(p.a.dtype) == 2 && dtype_bytes(p.b.dtype) == 2 && p.a.dtype == p.b.dtype;
    const bool fp8_in_place = hopper_loads_fp8_in_place(p);
    h.memory_efficiency = !sixteen_bit ? 0.6 : lanes_k ? (vec ? 0.25 : 0.2) : 0.35;
    h.memory_items_per_unit = 2;
    h.split_fixed_steps = 1;
    // Where it competes with skinny_mma (16-bit inputs), the latency floor skinny_mma has too
    // (skinny_latency_us), fitted on the H200's random-sweep rows: about 3 us per launch, then
    // per K chunk of a slice 1.8 us (axpy, 64 K; 2.5 at 16 rows), 1.5 us (dot with four-element
    // loads, 256 K) or 5.2 us (dot element by element: three dependent loads per chunk). So do
    // fp8 inputs sm90_wgmma reads in place (without the floor the kernel took fp8 seed 303's
    // few-row problems from it: 2 x 1712 x 608 5.1 -> 33.7 us on the H200); f32 and the other
    // fp8 problems keep the throughput terms their choices against sgemm and sm90_repack were set on.
    // With S staged at the columns' shifts (L off four-element boundaries) 0.5 us more per
    // launch (H200: one- and two-row problems of seeds 808-5757 against skinny_mma, same process).
    if (sixteen_bit || fp8_in_place) {
      const double chunk_us = !lanes_k ? 1.8 + 0.045 * rows : vec ? 1.5 : 5.2;
      const int resident = lanes_k ? cuda::skinny::lanes_k_min_blocks(rows, vec) : 2;
      h.latency_us = skinny_latency_us(p, c, lim.compute_units, resident, vec && shifted ? 3.5 : 3.0, chunk_us);
      h.extra_us = skinny_split_tail_us(c, rows, lanes_k ? cuda::skinny::kColsK : cuda::skinny::kColsN);
    }
    return h;
  }

 protected:
  Status check(const Problem& p, const Config& c, SkinnyLaunch& out, bool fill) const override {
    const SkinnyRow* row = table_row(kRows, kConfigs, c);
    if (!row) return unsupported("the config must be one of the table's rows (families/skinny.inc) with one of its splits");
    if (Status s = refuse_block_scales(p); !s) return s;
    if (dev_.info.limits.arch >= 90 && hopper_loads_in_place(p))
      return unsupported("sm90_wgmma streams this problem's 16-bit operands in place through TMA");
    const bool t = transposed_form(row->form), lanes_k = lanes_k_form(row->form);
    const int64_t small = skinny_rows(p, t);
    if (small > row->rows || (row->rows > 1 && small <= row->rows / 2))
      return unsupported("the " + std::to_string(row->rows) + "-row tile serves problems of " +
                  (row->rows > 1 ? std::to_string(row->rows / 2 + 1) + " to " : "") + std::to_string(row->rows) +
                  (t ? " columns" : " rows"));
    const Operand& big = skinny_large(p, t);
    const bool unit_k = t ? big.stride_col == 1 : big.stride_row == 1;
    const bool unit_cols = t ? big.stride_row == 1 : big.stride_col == 1;
    if (lanes_k && !unit_k) return unsupported("lanes along K need the large operand contiguous along K");
    if (!lanes_k && unit_k && !unit_cols) return unsupported("the large operand is contiguous along K: the dot forms load it");
    const int cols_per_block = lanes_k ? cuda::skinny::kColsK : cuda::skinny::kColsN;
    if (Status s = plan_skinny(dev_, p, t, row->rows, cols_per_block, c.block_k, c.split_k, fill, out); !s || !fill) return s;
    bool shifted = false;
    const bool vec = lanes_k && runs_vector_k(p, t, row->rows, shifted);
    out.args.l_shifted = vec && shifted;
    out.kernel = kernel_for(row->rows, load_type(out.args.l.dtype), lanes_k, vec);
    // skinny_lanes_k's chunk of S, or its shifted copies (lanes_k_groups.h).
    const long long s_floats = vec && cuda::skinny::lanes_k_shifts(row->rows, load_type(out.args.l.dtype))
                                   ? skinny_groups::kCopies * skinny_groups::kCopyLen : cuda::skinny::kChunkK;
    out.shared_bytes = lanes_k ? (long long)sizeof(float) * row->rows * (s_floats + cuda::skinny::kColsK)
                               : (long long)sizeof(float) * row->rows * cuda::skinny::kChunkN * (1 + cuda::skinny::kWarps);
    out.note = !lanes_k   ? "f32 FMA, lanes along the output's long side"
               : shifted && vec ? "f32 FMA, lanes along K, four elements per load (aligned groups, S staged at each column's shift)"
               : vec       ? "f32 FMA, lanes along K, four elements per load"
                           : "f32 FMA, lanes along K";
    return {};
  }

};

}  // namespace

std::unique_ptr<KernelFamily> make_skinny_family(CudaDevice& device) { return std::make_unique<SkinnyFamily>(device); }

}  // namespace omnigemm::detail
