// hip.gfx90a_mfma's plan: its table as rows and Configs, the operand views and the choice of
// kernel variant (plan.hpp).
#include "plan.hpp"

#include <cstdint>
#include <cstdlib>

#include "symbols.h"

namespace omnigemm::detail::gfx90a {

namespace {

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


// The multiplicand type for an input pair: 0 f16, 1 bf16, -1 none. fp8 values are exact in both;
// fp8 x fp8 takes bf16, whose exponent range keeps e5m2's subnormals normal (MI200's MFMAs flush
// f16 subnormal inputs to zero).
int multiplicand(og_dtype a, og_dtype b) {
  if (dtype_is_fp8(a) && dtype_is_fp8(b)) return 1;
  if ((a == OG_DTYPE_F16 || dtype_is_fp8(a)) && (b == OG_DTYPE_F16 || dtype_is_fp8(b))) return 0;
  if ((a == OG_DTYPE_BF16 || dtype_is_fp8(a)) && (b == OG_DTYPE_BF16 || dtype_is_fp8(b))) return 1;
  return -1;
}

bool fits_int(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// The operand as the kernel sees it (rows x K: op(A), or op(B) transposed), and whether dwordx4
// loads can take it: stored as the multiplicand type, unit stride along K or along the rows,
// 16-byte aligned base, leading dimension and batch stride.
hip::OperandView view(const Operand& o, bool b_operand, og_dtype mul, int64_t batch) {
  hip::OperandView v{};
  v.ptr = static_cast<const char*>(o.mem.ptr) + o.mem.offset;
  v.batch_stride = o.batch_stride;
  const int64_t sr = b_operand ? o.stride_col : o.stride_row, sk = b_operand ? o.stride_row : o.stride_col;
  v.stride_row = int(sr);
  v.stride_k = int(sk);
  v.dtype = o.dtype;
  v.k_fastest = std::llabs(sk) <= std::llabs(sr);
  const bool aligned = reinterpret_cast<uintptr_t>(v.ptr) % 16 == 0 && (batch == 1 || (o.batch_stride * 2) % 16 == 0);
  v.mode = hip::kGather;
  if (o.dtype == mul && aligned) {
    if (sk == 1 && (sr * 2) % 16 == 0) v.mode = hip::kVecK;
    else if (sr == 1 && (sk * 2) % 16 == 0) v.mode = hip::kVecMn;
  }
  return v;
}

}  // namespace

std::span<const Row> rows() { return kRows; }
std::span<const Config> configs() { return kConfigs; }

Status plan(const Problem& p, const Config& c, const DeviceLimits& limits, Plan* out) {
  int row = -1;
  for (int r = 0; r < int(std::size(kRows)); ++r)
    if (c.block_m == kRows[r].block_m && c.block_n == kRows[r].block_n && c.block_k == kRows[r].block_k &&
        c.warps == kRows[r].waves && c.waves_per_eu == kRows[r].waves_per_eu)
      row = r;
  if (row < 0) return unsupported("the tile, waves and waves_per_eu must be one of the table's rows (families/gfx90a_mfma.inc)");
  if (!c.form.empty()) return unsupported("the family has no forms");
  if (c.stages != kRows[row].stages) return unsupported("num_stages must be 0 (one LDS buffer, the next K tile prefetched into registers)");
  if (c.split_k != 1) return unsupported("split-K is not implemented for the MFMA kernel");
  std::string why;
  if (!config_fits(c, limits, 2, &why)) return unsupported(why);
  const int mul = multiplicand(p.a.dtype, p.b.dtype);
  if (mul < 0)
    return unsupported("inputs must be f16 or bf16, not both (fp8 is converted to either on load; MI200 has no fp8 MFMA and this "
                "family no f32 path)");
  if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || p.batch > INT32_MAX) return unsupported("dimensions must be below 2^31");
  const long long tiles = ((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n);
  const int threads = c.warps * hip::kWave;
  if (tiles * threads > UINT32_MAX) return unsupported("more than 2^32 threads in one launch");
  for (const Operand* o : {&p.a, &p.b, &p.c, &p.d})
    if (o->present && !(fits_int(o->stride_row) && fits_int(o->stride_col))) return unsupported("row and column strides must be below 2^31 elements");
  if (!out) return {};

  Plan& l = *out;
  hip::KernelArgs& a = l.args;
  a = hip::KernelArgs{};
  const og_dtype mul_dtype = mul ? OG_DTYPE_BF16 : OG_DTYPE_F16;
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
  l.row = row;
  l.tiles = tiles;
  l.batch = int(p.batch);
  l.threads = threads;
  l.lds_bytes = hip::lds_bytes(g);
  l.mfma = g.mfma;
  return {};
}

}  // namespace omnigemm::detail::gfx90a
