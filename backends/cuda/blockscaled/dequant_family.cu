// cuda.sm90_dequant: any block-scaled GEMM on Hopper as the sm90_wgmma bf16 kernel on dequantised
// copies. One launch per operand and batch of the device dequantisation (block_quantize.cu: the
// exact element * scale of every format) writes A M x K and B N x K in bf16, K-major with a
// leading dimension rounded up to 16 bytes, into the call's workspace; sm90_wgmma then runs the
// problem on the copies. Exact: element * scale has at most 4 + 4 significant bits (e4m3, e5m2 or
// e2m1 times an E8M0 or e4m3 scale), within bf16's 8; nvfp4's per-tensor factors move into alpha
// (the GEMM is linear in them). So it takes the formats with one-byte scales (mxfp8, mxfp4, nvfp4),
// in every scale layout and operand view, at about half the fp8 rate (bf16 tensor cores) plus the
// copies; 128-blockwise fp8 (f32 scales: element * scale does not fit bf16) runs on
// cuda.sm90_blockscaled.
#include <algorithm>
#include <vector>

#include "../block_quantize.hpp"
#include "../families.hpp"
#include "../repack/staged.hpp"

namespace omnigemm::detail {

namespace {

constexpr long long kMaxCopyBytes = 1ll << 31;  // copies above 2 GiB are refused
// The dequantisation kernel's share of the memory bandwidth (one thread per element) and the cost
// of its launches: estimates, to calibrate on the H100.
constexpr double kCopyBandwidthShare = 0.3;
constexpr double kLaunchUs = 4.0;

struct DequantPlan {
  Problem inner;        // the bf16 problem on the copies (addresses set by run())
  Config inner_config;  // named for sm90_wgmma
  long long offsets[2] = {0, 0};  // of A's and B's copies in the scratch
  long long scratch_bytes = 0;
  double traffic = 0;   // bytes the dequantisation reads and writes
};

class Sm90DequantFamily final : public KernelFamily {
 public:
  Sm90DequantFamily(CudaDevice& device, KernelFamily& inner) : dev_(device), inner_(inner) {
    for (Config c : inner_.configs())
      if (c.block_k == 64) {  // the 16-bit rows
        c.family = "sm90_dequant";
        configs_.push_back(c);
      }
  }
  const char* name() const override { return "sm90_dequant"; }
  std::span<const Config> configs() const override { return configs_; }

  Status can_implement(const Problem& p, const Config& c) const override {
    DequantPlan pl;
    return plan(p, c, pl);
  }

  // bf16 wgmma runs at half the 8-bit peak the cost model scales block-scaled problems by.
  CostHints hints(const Problem& p, const Config& c) const override {
    DequantPlan pl;
    if (!plan(p, c, pl)) return {};
    CostHints h = inner_.hints(pl.inner, pl.inner_config);
    h.efficiency *= 0.5;
    h.extra_bytes += pl.traffic / kCopyBandwidthShare;
    h.extra_us += kLaunchUs * 2 * double(p.batch);
    return h;
  }

  Status describe(const Problem& p, const Config& c, PlanSummary& out) const override {
    DequantPlan pl;
    Status s = plan(p, c, pl);
    if (!s || !(s = describe_staged(inner_, pl.inner, pl.inner_config, pl.scratch_bytes, out))) return s;
    out.notes = "A and B dequantised to bf16 into " + std::to_string(pl.scratch_bytes) +
                " B of workspace (one launch per operand and batch), then " + out.notes;
    return {};
  }

  Status run(const Problem& p, const Config& c, void* stream) override {
    DequantPlan pl;
    Status s = plan(p, c, pl);
    if (!s) return s;
    return run_staged(dev_, inner_, p, pl.inner, pl.inner_config, pl.scratch_bytes, stream,
                      [&](char* scratch, cudaStream_t st) -> Status {
                        pl.inner.a.mem.ptr = scratch + pl.offsets[0];
                        pl.inner.b.mem.ptr = scratch + pl.offsets[1];
                        // Each batch's matrix of each operand: elements and scales at the batch's
                        // offsets, the global factor left to alpha.
                        for (int which = 0; which < 2; ++which) {
                          const Operand& src = which ? p.b : p.a;
                          const Operand& dst = which ? pl.inner.b : pl.inner.a;
                          for (int64_t b = 0; b < p.batch; ++b) {
                            Operand in = src, out = dst;
                            in.mem.offset += uint64_t(storage_bytes(src.dtype, b * src.batch_stride));
                            in.scale.mem.offset += uint64_t(b * src.scale.batch_stride * src.scale.bytes);
                            in.scale.global = 1.0f;
                            out.mem.offset += uint64_t(b * dst.batch_stride * 2);
                            if (Status d = cuda_dequantize(in, out, which == 1, st); !d) return d;
                          }
                        }
                        return {};
                      });
  }

 private:
  Status plan(const Problem& p, const Config& c, DequantPlan& pl) const {
    if (!p.a.scale.present() || !p.b.scale.present()) return unsupported("runs GEMMs whose A and B are both block-scaled");
    if (p.a.scale.bytes != 1 || p.b.scale.bytes != 1)
      return unsupported("takes one-byte scales (mxfp8, mxfp4, nvfp4) only: f32 scales do not dequantise exactly to bf16");
    if (p.k < 1) return unsupported("K must be at least 1");
    if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) return unsupported("dimensions must be below 2^31");
    pl.inner = p;
    pl.inner.workspace = og_memory{};
    pl.inner.workspace_bytes = 0;
    pl.inner.alpha = p.alpha * p.a.scale.global * p.b.scale.global;
    pl.inner_config = c;
    pl.inner_config.family = inner_.name();
    const int64_t ld = (p.k + 7) / 8 * 8;  // K rounded up to 16 bytes of bf16
    auto copy_of = [&](const Operand& src, Operand& dst, bool is_a, long long& offset) -> Status {
      const int64_t mn = is_a ? p.m : p.n;
      const long long bytes = (long long)(mn * ld * 2) * p.batch;
      if (bytes > kMaxCopyBytes) return unsupported("the dequantised copies would exceed 2 GiB");
      dst = Operand{};
      dst.present = true;
      dst.dtype = OG_DTYPE_BF16;
      dst.rows = src.rows;
      dst.cols = src.cols;
      dst.stride_row = is_a ? ld : 1;  // A M x K row-major; B K x N column-major: both K-major
      dst.stride_col = is_a ? 1 : ld;
      dst.batch_stride = p.batch > 1 ? mn * ld : 0;
      dst.mem = og_memory{OG_MEMORY_CUDA, reinterpret_cast<void*>(uintptr_t(256)), 0, 0};  // placeholder, aligned
      offset = pl.scratch_bytes;
      pl.scratch_bytes += WorkspaceNeed::round(bytes);
      pl.traffic += double(storage_bytes(src.dtype, src.rows * src.cols)) * double(p.batch) + double(bytes);
      return {};
    };
    Status s;
    if (!(s = copy_of(p.a, pl.inner.a, true, pl.offsets[0])) || !(s = copy_of(p.b, pl.inner.b, false, pl.offsets[1]))) return s;
    return inner_.can_implement(pl.inner, pl.inner_config);
  }

  CudaDevice& dev_;
  KernelFamily& inner_;
  std::vector<Config> configs_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_sm90_dequant_family(CudaDevice& device, KernelFamily& sm90_wgmma) {
  return std::make_unique<Sm90DequantFamily>(device, sm90_wgmma);
}

}  // namespace omnigemm::detail
