// cuda.sm90_repack: the Hopper TMA/wgmma kernel (cuda.sm90_wgmma) on copies of the operands it
// cannot load as they are: a base, leading dimension or batch stride that is not a multiple of
// 16 bytes, no unit stride, fp8 or tf32 (f32 with compute_mode TF32) that is not K-major, or an
// input type wgmma does not pair with the other's; and of those it loads slowly (sm90/tma_lines.hpp):
// lines on a pitch that straddles 32-byte sectors, and 16-bit MN-major lines of 16-48 bytes (copied
// K-major). Mixed inputs are converted exactly on copy (convert.hpp): 16-bit x fp8 runs as the
// 16-bit type, f16 x bf16 as f32 copies on the TF32 rows.
// The repack copy (copy.hpp; one launch, two where the copies' element sizes differ) writes each
// such operand on a pitch of a multiple of 128 bytes into the call's workspace (16-bit MN-major
// sources keep their layout where the config takes it, the rest is copied K-major), then the
// sm90_wgmma family runs the problem on the copies. Its configs are the sm90_wgmma table's rows
// under this family's name; the cost model ranks them against sm90_wgmma in place, cuda.sm80_mma's
// gathering loader (and simt) with the copy's bytes over the memory bandwidth and its launches.
#include <algorithm>
#include <bit>
#include <vector>

#include "../families.hpp"
#include "../sm90/tma_lines.hpp"
#include "cost_model.hpp"
#include "copy.hpp"
#include "staged.hpp"

namespace omnigemm::detail {

namespace {

constexpr long long kMaxCopyBytes = 1ll << 30;  // copies above 1 GiB are refused
// The copy kernel's share of the memory bandwidth, and the time one more launch on the stream
// costs (its start and the dependency gap before the GEMM), fitted on the H200's random sweeps
// (bench/results/h200): the tiny problems this family ran took a median 3.6 us more than priced
// with a 4 us launch, those of skinny_mma (its rival there) 1.4 us more than theirs, so a launch
// cost about 2 us more (the tiny problem's 10 us: this launch and the Hopper kernel's floor,
// 4.5 us); the copy-bound ones (a few rows against a long K: 5475 x 58 x 10231 155 us, 46 x 13911
// x 5014 183 us) took about half the copy's priced time again at 0.6. Launched programmatically
// dependent (dependent_launch.cuh), copy and GEMM took 1.5 us less on the tall problems of a few
// columns (65536 x {8, 24} x 256, 65536 x 8 x 1024); the launch's price stays, as the copies of
// a batched GEMV (187 x 1 x 3866 x 11: 18.8 us, skinny 13.4) still measure above the model.
constexpr double kCopyBandwidthShare = 0.45;
constexpr double kCopyLaunchUs = 5.5;

// The sm90 kernel loads an operand as it is when it has a unit stride, 16-byte aligned base,
// outer stride and batch stride, and (fp8, tf32) is K-major; `k_major` says which unit stride is K's.
bool loadable_in_place(const Operand& o, bool k_major, bool unit_mn, bool k_major_only, int64_t batch) {
  if (!k_major && !unit_mn) return false;
  if (k_major_only && !k_major) return false;
  const int64_t outer = k_major ? (o.stride_col == 1 ? o.stride_row : o.stride_col) : (o.stride_row == 1 ? o.stride_col : o.stride_row);
  return check_16_byte_operand(o, dtype_bytes(o.dtype), outer, batch, nullptr);
}

bool is_16bit(og_dtype t) { return t == OG_DTYPE_F16 || t == OG_DTYPE_BF16; }

// The input types sm90_wgmma runs a pair as: the pair itself where wgmma takes it (fp8 x fp8, equal
// 16-bit types, f32 x f32 with compute_mode TF32); 16-bit x fp8 as the 16-bit type (fp8 values
// are exact in f16 and bf16); f16 x bf16 as f32 with compute_mode TF32 (TF32 holds every f16 and
// bf16 value, so the products are exact and accumulate in f32). False for any other pair.
bool inner_types(og_dtype a, og_dtype b, og_compute_mode mode, og_dtype& ia, og_dtype& ib) {
  ia = a, ib = b;
  if ((dtype_is_fp8(a) && dtype_is_fp8(b)) || (is_16bit(a) && a == b) || (a == OG_DTYPE_F32 && b == OG_DTYPE_F32 && mode == OG_COMPUTE_TF32))
    return true;
  if (is_16bit(a) && dtype_is_fp8(b)) return ib = a, true;
  if (dtype_is_fp8(a) && is_16bit(b)) return ia = b, true;
  if (is_16bit(a) && is_16bit(b)) return ia = ib = OG_DTYPE_F32, true;
  return false;
}

struct RepackPlan {
  Problem inner;        // the problem on the copies (their addresses relative to the scratch base)
  Config inner_config;  // the config, named for sm90_wgmma
  repack::Args copy;    // sources filled; destinations as offsets into the scratch, set by run()
  long long offsets[2] = {0, 0};
  Operand* copied[2] = {nullptr, nullptr};  // the inner problem's operands that point into the scratch
  long long scratch_bytes = 0;
  double traffic = 0;   // bytes the copy reads and writes
  bool copies_a = false, copies_b = false;
  og_dtype type_a = OG_DTYPE_F16, type_b = OG_DTYPE_F16;  // the inner problem's input types
  bool tf32 = false;    // the inner problem runs with compute_mode TF32
};

class Sm90RepackFamily final : public KernelFamily {
 public:
  Sm90RepackFamily(CudaDevice& device, KernelFamily& inner) : dev_(device), inner_(inner) {
    for (Config c : inner_.configs()) {
      c.family = "sm90_repack";
      configs_.push_back(c);
    }
  }
  const char* name() const override { return "sm90_repack"; }
  std::span<const Config> configs() const override { return configs_; }

  Status can_implement(const Problem& p, const Config& c) const override {
    RepackPlan pl;
    return plan(p, c, pl);
  }

  CostHints hints(const Problem& p, const Config& c) const override {
    RepackPlan pl;
    if (!plan(p, c, pl)) return {};
    CostHints h = inner_.hints(pl.inner, pl.inner_config);  // its launch floor included
    // The inner efficiency is a share of the peak for the copies' types (TF32 for f16 x bf16);
    // the cost model applies it to the peak for p's own inputs.
    h.efficiency *= peak_tflops(dev_.info.limits, pl.inner) / peak_tflops(dev_.info.limits, p);
    h.extra_bytes += pl.traffic / kCopyBandwidthShare;
    h.extra_us += kCopyLaunchUs * repack::launches(pl.copy);
    return h;
  }

  Status describe(const Problem& p, const Config& c, PlanSummary& out) const override {
    RepackPlan pl;
    Status s = plan(p, c, pl);
    if (!s || !(s = describe_staged(inner_, pl.inner, pl.inner_config, pl.scratch_bytes, out))) return s;
    // What each copy converts and its layout, e.g. "A (fp8_e4m3 converted to f16) copied K-major and B copied N-major".
    auto operand = [&](const char* name, og_dtype from, og_dtype to, bool k_major, const char* mn) {
      return std::string(name) + (from == to ? "" : std::string(" (") + og_dtype_name(from) + " converted to " + og_dtype_name(to) + ")") +
             " copied " + (k_major ? "K" : mn) + "-major";
    };
    std::string what = pl.copies_a ? operand("A", p.a.dtype, pl.type_a, pl.inner.a.stride_col == 1, "M") : "";
    if (pl.copies_b) what += (pl.copies_a ? " and " : "") + operand("B", p.b.dtype, pl.type_b, pl.inner.b.stride_row == 1, "N");
    const int launches = repack::launches(pl.copy);
    out.notes = what + " into " + std::to_string(pl.scratch_bytes) + " B of workspace on 128-byte pitches (" +
                (launches > 1 ? "two launches" : "one launch") + "), then " +
                (pl.tf32 && p.a.dtype != OG_DTYPE_F32 ? "TF32 wgmma (exact for f16 and bf16 inputs), " : "") + out.notes;
    return {};
  }

  Status run(const Problem& p, const Config& c, void* stream) override {
    RepackPlan pl;
    Status s = plan(p, c, pl);
    if (!s) return s;
    return run_staged(dev_, inner_, p, pl.inner, pl.inner_config, pl.scratch_bytes, stream,
                      [&](char* scratch, cudaStream_t st) -> Status {
                        for (int i = 0; i < pl.copy.count; ++i) {
                          pl.copy.copy[i].dst = scratch + pl.offsets[i];
                          pl.copied[i]->mem.ptr = scratch + pl.offsets[i];
                        }
                        OG_CUDA_TRY(repack::launch(pl.copy, dependent_launch_on(dev_), st), "repack copy launch");
                        return {};
                      });
  }

 private:
  // The copies and the problem on them; the copies' addresses are placeholders (aligned) until
  // run() knows the scratch. Refused where no operand needs a copy (sm90_wgmma runs the problem
  // as it is) and with sm90_wgmma's reason where it cannot run the copied problem.
  Status plan(const Problem& p, const Config& c, RepackPlan& pl) const {
    if (Status s = refuse_block_scales(p); !s) return s;
    const og_dtype ta = p.a.dtype, tb = p.b.dtype;
    if (!inner_types(ta, tb, p.compute_mode, pl.type_a, pl.type_b))
      return unsupported("inputs must be f16 x f16, bf16 x bf16, fp8 (e4m3/e5m2) x fp8, f32 x f32 with compute_mode TF32, "
                  "16-bit x fp8 (fp8 converted to the 16-bit type) or f16 x bf16 (both converted to f32, run as TF32)");
    if (p.k < 1) return unsupported("K must be at least 1");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) return unsupported("dimensions must be below 2^31");
    const bool k_major_only = dtype_bytes(pl.type_a) != 2;  // fp8 and tf32 wgmma read K-major operands only
    const bool a_mn = sm90::mn_major(p, true), b_mn = sm90::mn_major(p, false);
    // An MN-major operand of narrow lines (sm90/tma_lines.hpp) is copied K-major: the copy
    // is small, and TMA loads such lines one by one.
    const bool narrow_a = sm90::narrow_mn_line_bytes(p, true, dtype_bytes(ta)) > 0;
    const bool narrow_b = sm90::narrow_mn_line_bytes(p, false, dtype_bytes(tb)) > 0;
    // So is one whose lines straddle 32-byte sectors (copies have 128-byte pitches).
    const bool straddles_a = sm90::sector_straddling_pitch(sm90::line_pitch_bytes(p.a, dtype_bytes(ta)));
    const bool straddles_b = sm90::sector_straddling_pitch(sm90::line_pitch_bytes(p.b, dtype_bytes(tb)));
    pl.copies_a = pl.type_a != ta || narrow_a || straddles_a ||
                  !loadable_in_place(p.a, p.a.stride_col == 1, p.a.stride_row == 1, k_major_only, p.batch);
    pl.copies_b = pl.type_b != tb || narrow_b || straddles_b ||
                  !loadable_in_place(p.b, p.b.stride_row == 1, p.b.stride_col == 1, k_major_only, p.batch);
    if (!pl.copies_a && !pl.copies_b)
      return unsupported("every operand is 16-byte aligned with a unit stride (and K-major where fp8 or tf32): sm90_wgmma runs it without copies");
    // 16-bit copies keep an MN-major source's orientation (a straight copy, no transpose) where
    // the config takes that layout and its lines are not narrow; K-major copies otherwise.
    const bool keep_a = !k_major_only && a_mn && !narrow_a;
    const bool keep_b = !k_major_only && b_mn && !narrow_b;
    if (keep_a || keep_b) {
      const RepackPlan start = pl;
      if (build(p, c, keep_a, keep_b, pl)) return {};
      pl = start;
    }
    return build(p, c, false, false, pl);
  }

  // The copies (MN-major where keep_a / keep_b, else K-major) and the problem on them, after
  // plan() set the inner types and which operands are copied.
  Status build(const Problem& p, const Config& c, bool keep_a, bool keep_b, RepackPlan& pl) const {
    const og_dtype ta = p.a.dtype, tb = p.b.dtype;
    pl.inner = p;
    pl.inner.workspace = og_memory{};
    pl.inner.workspace_bytes = 0;
    pl.tf32 = pl.type_a == OG_DTYPE_F32;
    if (pl.tf32) pl.inner.compute_mode = OG_COMPUTE_TF32;  // exact on f32 copies of f16 and bf16 (convert.hpp)
    pl.inner_config = c;
    pl.inner_config.family = inner_.name();
    const int eb = dtype_bytes(pl.type_a);  // the copies' element size (both operands' inner type has it)
    auto add = [&](const Operand& src, Operand& dst, og_dtype to, bool is_a) -> Status {
      const int64_t mn = is_a ? p.m : p.n;
      // K-major: lines of K; MN-major (keep): lines of M or N. Pitches of a multiple of 128
      // bytes (TMA's fast lines, sm90/tma_lines.hpp); a line under 128 bytes on the next power
      // of two from 16 bytes.
      const bool keep = is_a ? keep_a : keep_b;
      const int64_t line = keep ? mn : p.k, lines = keep ? p.k : mn;
      const int64_t line_bytes = std::max<int64_t>(line * eb, 16);
      const int64_t ld = (line_bytes >= 128 ? (line_bytes + 127) / 128 * 128 : int64_t(std::bit_ceil(uint64_t(line_bytes)))) / eb;
      const long long matrix = (long long)(lines * ld * eb);
      const long long bytes = matrix * p.batch;
      if (bytes > kMaxCopyBytes) return unsupported("the operand copies would exceed 1 GiB");
      const int i = pl.copy.count++;
      repack::Copy& cp = pl.copy.copy[i];
      if (!repack::set_conversion(src.dtype, to, cp)) return unsupported("no exact conversion for this input pair");
      cp.src = static_cast<const char*>(src.mem.ptr) + src.mem.offset;
      cp.src_row = src.stride_row;
      cp.src_col = src.stride_col;
      cp.src_batch = p.batch > 1 ? src.batch_stride : 0;
      cp.rows = int(src.rows);
      cp.cols = int(src.cols);
      cp.batches = int(p.batch);
      // Unit stride along A's (M x K) columns where K-major, along B's (K x N) rows; the other way MN-major.
      cp.dst_unit_cols = is_a != keep;
      cp.dst_ld = ld;
      cp.dst_batch = lines * ld;
      pl.offsets[i] = pl.scratch_bytes;
      pl.scratch_bytes += WorkspaceNeed::round(bytes);
      pl.traffic += double(src.rows) * double(src.cols) * double(p.batch) * dtype_bytes(src.dtype) + double(bytes);
      dst.dtype = to;
      dst.stride_row = cp.dst_unit_cols ? ld : 1;
      dst.stride_col = cp.dst_unit_cols ? 1 : ld;
      dst.batch_stride = p.batch > 1 ? lines * ld : 0;
      dst.mem = og_memory{OG_MEMORY_CUDA, reinterpret_cast<void*>(uintptr_t(256)), 0, 0};  // placeholder
      pl.copied[i] = &dst;
      return {};
    };
    Status s;
    if (pl.copies_a && !(s = add(p.a, pl.inner.a, pl.type_a, true))) return s;
    if (pl.copies_b && !(s = add(p.b, pl.inner.b, pl.type_b, false))) return s;
    if (!(s = inner_.can_implement(pl.inner, pl.inner_config))) {
      if (pl.type_a == ta && pl.type_b == tb) return s;
      return error(s.code, std::string("as ") + og_dtype_name(pl.type_a) + " x " + og_dtype_name(pl.type_b) +
                               (pl.tf32 ? " (f32 copies run as TF32)" : " (the fp8 operand converted)") + ": " + s.message);
    }
    return {};
  }

  CudaDevice& dev_;
  KernelFamily& inner_;
  std::vector<Config> configs_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_sm90_repack_family(CudaDevice& device, KernelFamily& sm90_wgmma) {
  return std::make_unique<Sm90RepackFamily>(device, sm90_wgmma);
}

}  // namespace omnigemm::detail
