// cuda.simt: the generic kernel (generic_kernel.cuh) as a kernel family.
#include <algorithm>
#include <cmath>

#include "cost_model.hpp"
#include "families.hpp"
#include "kernel_views.hpp"
#include "generic_kernel.cuh"

namespace omnigemm::detail {

namespace {

constexpr Config kSimtConfigs[] = {
#define OG_CUDA_SIMT(bm, bn, bk, gm, st, wa) Config{"simt", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "families/simt.inc"
#undef OG_CUDA_SIMT
};

struct SimtLaunch {
  cuda::GenericArgs args;
  int thread_m = 0, threads = 0;
  size_t smem = 0;
  long long tiles = 0, batch = 0;
};

class SimtFamily final : public PlannedFamily<SimtLaunch> {
 public:
  explicit SimtFamily(CudaDevice& device) : dev_(device) {}
  const char* name() const override { return "simt"; }
  std::span<const Config> configs() const override { return kSimtConfigs; }

  Status can_implement(const Problem& p, const Config& c) const override {
    if (Status s = refuse_block_scales(p); !s) return s;
    std::string why;
    Config single_stage = c;  // the kernel keeps one f32 stage in shared memory
    single_stage.stages = 1;
    if (!config_fits(single_stage, dev_.info.limits, 4, &why)) return error(StatusCode::unsupported, why);
    const int threads = c.warps * 32, cols = c.block_n / 4;
    const char* bad = nullptr;
    if (p.a.scale.present() || p.b.scale.present()) bad = "block-scaled inputs run on sm100_tcgen05 (compute capability 10.x)";
    else if (!c.form.empty()) bad = "the family has no forms";
    else if (c.block_n % 4 || cols == 0 || threads % cols) bad = "threads must be a multiple of BLOCK_N / 4";
    else if (c.block_m % (threads / cols)) bad = "BLOCK_M must be a multiple of the thread rows";
    else if (int tm = c.block_m / (threads / cols); tm != 8 && tm != 16 && tm != 32) bad = "each thread must own 8, 16 or 32 rows";
    else if (c.split_k != 1) bad = "split-K is not implemented";
    else if (p.m > 0x7fffffff || p.n > 0x7fffffff || p.k > 0x7fffffff) bad = "dimensions must be below 2^31";
    else if (((p.m + c.block_m - 1) / c.block_m) * ((p.n + c.block_n - 1) / c.block_n) > 0x7fffffffLL)
      bad = "more than 2^31 - 1 output tiles";
    if (bad) return error(StatusCode::unsupported, bad);
    return {};
  }

  // f32 FMA on CUDA cores: about a sixth of the device's f32 peak (no register blocking beyond
  // THREAD_M x 4, one shared-memory stage), expressed against the peak of p's inputs. On Hopper
  // also a latency floor per wave of tiles (one block per SM assumed): 23 us per 32 of K for
  // tiles up to 64x128, in proportion to the area beyond (H200, forced on five problems from
  // 34x126x4 to 372x74x94 x 3 and on 64x32 to 128x128 tiles: within 5%).
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    const double peak = peak_tflops(dev_.info.limits, p);
    h.efficiency = dev_.info.limits.peak_tflops_f32 > 0 ? 0.15 * dev_.info.limits.peak_tflops_f32 / peak : 0.15;
    if (dev_.info.limits.arch >= 90) {
      const double tiles = std::ceil(double(p.m) / c.block_m) * std::ceil(double(p.n) / c.block_n) * double(p.batch);
      const double waves = std::ceil(tiles / std::max(1, dev_.info.limits.compute_units));
      const double k_steps = std::ceil(double(std::max<int64_t>(p.k, 1)) / 32.0);
      h.latency_us = waves * k_steps * 23.0 * std::max(1.0, c.block_m * c.block_n / (64.0 * 128.0));
    }
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, SimtLaunch& l) const override {
    if (Status s = can_implement(p, c); !s) return s;
    cuda::GenericArgs& k = l.args;
    k.m = int(p.m); k.n = int(p.n); k.k = int(p.k);
    k.block_m = c.block_m; k.block_n = c.block_n; k.block_k = c.block_k; k.group_m = c.group_m;
    k.num_pid_m = int((p.m + c.block_m - 1) / c.block_m);
    k.num_pid_n = int((p.n + c.block_n - 1) / c.block_n);
    k.a = operand_args(p.a); k.b = operand_args(p.b);
    k.ep = epilogue_args(p);
    l.tiles = (long long)k.num_pid_m * k.num_pid_n;
    l.batch = p.batch;
    l.threads = c.warps * 32;
    l.smem = size_t(c.block_k) * (c.block_m + c.block_n) * sizeof(float);
    l.thread_m = c.block_m / (l.threads / (c.block_n / 4));
    return {};
  }

  Status launch(SimtLaunch& l, void* stream) override {
    OG_CUDA_TRY(cudaSetDevice(dev_.index), "cudaSetDevice");
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    for (long long b0 = 0; b0 < l.batch; b0 += dev_.max_grid_z) {
      l.args.batch_base = int(b0);
      const dim3 grid(unsigned(l.tiles), 1, unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0)));
      switch (l.thread_m) {
        case 8: OG_CUDA_TRY(launch_tm<8>(grid, l, s), "gemm_generic launch"); break;
        case 16: OG_CUDA_TRY(launch_tm<16>(grid, l, s), "gemm_generic launch"); break;
        default: OG_CUDA_TRY(launch_tm<32>(grid, l, s), "gemm_generic launch"); break;
      }
    }
    return {};
  }

  void summarize(const SimtLaunch& l, PlanSummary& out) const override {
    out.grid[0] = l.tiles;
    out.grid[2] = l.batch;
    out.threads = l.threads;
    out.shared_bytes = (long long)l.smem;
    out.notes = "f32 FMA, " + std::to_string(l.thread_m) + "x4 outputs per thread";
  }

 private:
  template <int TM>
  static cudaError_t launch_tm(dim3 grid, const SimtLaunch& l, cudaStream_t s) {
    if (l.smem > 48 * 1024) {
      cudaError_t e = cudaFuncSetAttribute(cuda::gemm_generic<TM>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.smem));
      if (e != cudaSuccess) return e;
    }
    cuda::gemm_generic<TM><<<grid, l.threads, l.smem, s>>>(l.args);
    return cudaGetLastError();
  }

  CudaDevice& dev_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_simt_family(CudaDevice& device) { return std::make_unique<SimtFamily>(device); }

}  // namespace omnigemm::detail
