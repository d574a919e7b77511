// hip.gfx90a_mfma: the MFMA kernel (gemm_mfma.hip.h) as a kernel family. Its table is
// families/gfx90a_mfma.inc; the kernels of a row are looked up by the names symbols.h derives
// from the same row, so the table is also the launch dispatch.
#include <algorithm>
#include <cstdint>

#include "../families.hpp"
#include "kernel_args.h"
#include "symbols.h"

namespace omnigemm::detail {

namespace {

struct Row {
  int block_m, block_n, block_k, stages, waves, waves_per_eu;
  const char* symbols[2][2];  // [bf16][gather]
};
#define OG_GFX90A_ROW_SYMBOLS(t, bm, bn, bk, w, e) \
  { OG_GFX90A_STRING(OG_GFX90A_SYMBOL(t, bm, bn, bk, w, e)), OG_GFX90A_STRING(OG_GFX90A_GATHER_SYMBOL(t, bm, bn, bk, w, e)) }
constexpr Row kRows[] = {
#define OG_HIP_GFX90A_MFMA(bm, bn, bk, gm, st, wa, e) \
  Row{bm, bn, bk, st, wa, e, {OG_GFX90A_ROW_SYMBOLS(f16, bm, bn, bk, wa, e), OG_GFX90A_ROW_SYMBOLS(bf16, bm, bn, bk, wa, e)}},
#include "../families/gfx90a_mfma.inc"
#undef OG_HIP_GFX90A_MFMA
};
constexpr Config kConfigs[] = {
#define OG_HIP_GFX90A_MFMA(bm, bn, bk, gm, st, wa, e) Config{"gfx90a_mfma", bm, bn, bk, gm, st, wa, e, 1, {}},
#include "../families/gfx90a_mfma.inc"
#undef OG_HIP_GFX90A_MFMA
};
constexpr int kRowCount = int(sizeof kRows / sizeof kRows[0]);

bool is_fp8(og_dtype t) { return t == OG_DTYPE_FP8_E4M3 || t == OG_DTYPE_FP8_E5M2; }

// The multiplicand type for an input pair: 0 f16, 1 bf16, -1 none. fp8 values are exact in both;
// fp8 x fp8 takes bf16, whose exponent range keeps e5m2's subnormals normal (MI200's MFMAs flush
// f16 subnormal inputs to zero).
int multiplicand(og_dtype a, og_dtype b) {
  if (is_fp8(a) && is_fp8(b)) return 1;
  if ((a == OG_DTYPE_F16 || is_fp8(a)) && (b == OG_DTYPE_F16 || is_fp8(b))) return 0;
  if ((a == OG_DTYPE_BF16 || is_fp8(a)) && (b == OG_DTYPE_BF16 || is_fp8(b))) return 1;
  return -1;
}

bool fits_int(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

struct Launch {
  hip::KernelArgs args{};
  hipFunction_t fn = nullptr;
  const char* symbol = nullptr;
  long long tiles = 0;
  int batch = 1, threads = 0, lds = 0, mfma = 32;
  bool gather = false;
};

const char* mode_name(int mode) { return mode == hip::kVecK ? "vec_k" : mode == hip::kVecMn ? "vec_mn" : "gather"; }

class Gfx90aMfmaFamily final : public PlannedFamily<Launch> {
 public:
  explicit Gfx90aMfmaFamily(HipDevice& device) : dev_(device) {}
  const char* name() const override { return "gfx90a_mfma"; }
  std::span<const Config> configs() const override { return kConfigs; }
  Status can_implement(const Problem& p, const Config& c) const override {
    Launch l;
    return check(p, c, l, false);
  }
  // Main loops of MFMA kernels like this one reach about two thirds of the MI200's 16-bit peak
  // (hipBLASLt: about 0.8); the gathering loader moves one element per load instruction.
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    Launch l;
    h.efficiency = check(p, c, l, true) && l.gather ? 0.35 : 0.65;
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, Launch& l) const override { return check(p, c, l, true); }
  Status launch(Launch& l, void* stream) override {
    if (Status s = dev_.select(); !s) return s;
    for (int b0 = 0; b0 < l.batch; b0 += int(dev_.max_grid_z)) {
      l.args.batch_base = b0;
      void* params[] = {&l.args};
      const unsigned z = unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0));
      OG_HIP_TRY(dev_, dev_.api->ModuleLaunchKernel(l.fn, unsigned(l.tiles), 1, z, unsigned(l.threads), 1, 1, 0,
                                                    static_cast<hipStream_t>(stream), params, nullptr),
                 l.symbol);
    }
    return {};
  }
  void summarize(const Launch& l, PlanSummary& out) const override {
    out.grid[0] = l.tiles;
    out.grid[2] = std::min<long long>(l.batch, dev_.max_grid_z);
    out.threads = l.threads;
    out.shared_bytes = l.lds;
    out.notes = std::string(l.args.bf16 ? "bf16" : "f16") + " multiplicands, v_mfma_f32_" + (l.mfma == 32 ? "32x32x8" : "16x16x16") +
                (l.args.bf16 ? "bf16_1k" : "f16") + ", " +
                (l.gather ? std::string("gathering loads (any strides; fp8 converted on load)")
                          : std::string("dwordx4 loads (A ") + mode_name(l.args.a.mode) + ", B " + mode_name(l.args.b.mode) + ")") +
                (l.batch > dev_.max_grid_z ? ", batches in launches of " + std::to_string(dev_.max_grid_z) : std::string());
  }

 private:
  // The operand as the kernel sees it (rows x K), and whether dwordx4 loads can take it: stored
  // as the multiplicand type, unit stride along K or along the rows, 16-byte aligned base,
  // leading dimension and batch stride.
  static hip::OperandView view(const Operand& o, bool b_operand, og_dtype mul, int64_t batch) {
    hip::OperandView v{};
    v.ptr = static_cast<const char*>(o.mem.ptr) + o.mem.offset;
    v.batch_stride = o.batch_stride;
    const int64_t sr = b_operand ? o.stride_col : o.stride_row, sk = b_operand ? o.stride_row : o.stride_col;
    v.stride_row = int(sr);
    v.stride_k = int(sk);
    v.dtype = o.dtype;
    v.k_fastest = std::abs(sk) <= std::abs(sr);
    const bool aligned = reinterpret_cast<uintptr_t>(v.ptr) % 16 == 0 && (batch == 1 || (o.batch_stride * 2) % 16 == 0);
    v.mode = hip::kGather;
    if (o.dtype == mul && aligned) {
      if (sk == 1 && (sr * 2) % 16 == 0) v.mode = hip::kVecK;
      else if (sr == 1 && (sk * 2) % 16 == 0) v.mode = hip::kVecMn;
    }
    return v;
  }

  // Can the kernel run `p` with `c`? With `fill`, also builds the launch.
  Status check(const Problem& p, const Config& c, Launch& out, bool fill) const {
    auto fail = [](std::string msg) { return error(StatusCode::unsupported, std::move(msg)); };
    int row = -1;
    for (int r = 0; r < kRowCount; ++r)
      if (c.block_m == kRows[r].block_m && c.block_n == kRows[r].block_n && c.block_k == kRows[r].block_k &&
          c.warps == kRows[r].waves && c.waves_per_eu == kRows[r].waves_per_eu)
        row = r;
    if (row < 0)
      return fail("the tile, waves and waves_per_eu must be one of the table's rows (families/gfx90a_mfma.inc)");
    if (!c.form.empty()) return fail("the family has no forms");
    if (c.stages != kRows[row].stages) return fail("num_stages must be 0 (one LDS buffer, the next K tile prefetched into registers)");
    if (c.split_k != 1) return fail("split-K is not implemented for the MFMA kernel");
    std::string why;
    if (!config_fits(c, dev_.info.limits, 2, &why)) return fail(why);
    const int mul = multiplicand(p.a.dtype, p.b.dtype);
    if (mul < 0)
      return fail("inputs must be f16 or bf16 (not both; fp8 is converted on load to either), as MI200 has no fp8 or f32 path here");
    if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || p.batch > INT32_MAX) return fail("dimensions must be below 2^31");
    const long long tiles = ((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n);
    const int threads = c.warps * 64;
    if (tiles * threads > UINT32_MAX) return fail("more than 2^32 threads in one launch");
    for (const Operand* o : {&p.a, &p.b, &p.c, &p.d})
      if (o->present && !(fits_int(o->stride_row) && fits_int(o->stride_col)))
        return fail("row and column strides must be below 2^31 elements");
    if (!fill) return {};
    const og_dtype mul_dtype = mul ? OG_DTYPE_BF16 : OG_DTYPE_F16;
    Launch& l = out;
    hip::KernelArgs& a = l.args;
    a.a = view(p.a, false, mul_dtype, p.batch);
    a.b = view(p.b, true, mul_dtype, p.batch);
    l.gather = a.a.mode == hip::kGather || a.b.mode == hip::kGather;
    if (l.gather) a.a.mode = a.b.mode = hip::kGather;  // the gathering kernel loads both operands so
    hip::EpilogueView& e = a.ep;
    e.d = static_cast<char*>(p.d.mem.ptr) + p.d.mem.offset;
    e.d_sr = int(p.d.stride_row);
    e.d_sc = int(p.d.stride_col);
    e.d_bs = p.d.batch_stride;
    e.d_dtype = p.d.dtype;
    e.has_c = p.c.present;
    if (p.c.present) {
      e.c = static_cast<const char*>(p.c.mem.ptr) + p.c.mem.offset;
      e.c_sr = int(p.c.stride_row);
      e.c_sc = int(p.c.stride_col);
      e.c_bs = p.c.batch_stride;
      e.c_dtype = p.c.dtype;
    }
    e.bias_mode = p.bias_mode;
    e.bias_dtype = p.bias_dtype;
    e.bias_bs = p.bias_batch_stride;
    if (p.bias_mode != OG_BIAS_NONE) e.bias = static_cast<const char*>(p.bias.ptr) + p.bias.offset;
    e.alpha = p.alpha;
    e.beta = p.beta;
    e.slope = p.leaky_slope;
    e.act = p.activation;
    a.m = int(p.m);
    a.n = int(p.n);
    a.k = int(p.k);
    a.num_pid_m = int((p.m + c.block_m - 1) / c.block_m);
    a.num_pid_n = int((p.n + c.block_n - 1) / c.block_n);
    a.group_m = c.group_m;
    a.bf16 = mul;
    const hip::Geometry g = hip::make_geometry(c.block_m, c.block_n, c.block_k, c.warps);
    l.symbol = kRows[row].symbols[mul][l.gather ? 1 : 0];
    l.tiles = tiles;
    l.batch = int(p.batch);
    l.threads = threads;
    l.lds = hip::lds_bytes(g);
    l.mfma = g.mfma;
    if (Status s = dev_.function(mul != 0, l.symbol, l.fn); !s) return s;
    return {};
  }

  HipDevice& dev_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_gfx90a_mfma_family(HipDevice& device) { return std::make_unique<Gfx90aMfmaFamily>(device); }

}  // namespace omnigemm::detail
