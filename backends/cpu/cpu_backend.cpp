// CPU backend: a BLIS/GotoBLAS-style packed GEMM.
//
//   for each W chunk of rows (only when K > KC, see below)
//     for n0 in N step NC                       (Config.block_n)
//       for k0 in K step KC                     (Config.block_k)
//         pack op(B)[k0:+KC, n0:+NC] into NR-column panels, f32      (shared by the team)
//         for each MC block of this thread's rows   (Config.block_m)
//           pack op(A)[rows, k0:+KC] into MR-row panels, f32          (per thread)
//           for each NR panel of this thread's columns, for each MR panel: micro-kernel
//
// Packing converts every input dtype to f32 with the exact decoders of omnigemm/numeric.hpp,
// so the micro-kernels only ever see f32 and accumulate in f32. When K fits one KC block the
// micro-kernel writes a small per-thread tile and the epilogue (alpha, beta * C, bias,
// activation, rounding to the output dtype) runs on it at once; otherwise partial sums live
// in an f32 buffer W (rows x NC) across the K blocks and the epilogue runs after the last one.
//
// The micro-kernel (AVX-512 14x32, AVX2+FMA 6x16 or portable 4x8) is chosen at run time from
// the CPU's features. OMNIGEMM_CPU_KERNEL=auto|scalar|avx2|avx512, read at backend creation,
// overrides the choice (creation fails, naming the available kernels, if the CPU lacks the
// one asked for); so does a forced config's form (packed:...-scalar, -avx2, -avx512).
//
// Threads: a persistent pool owned by the backend (BackendOptions.cpu_threads, default all
// hardware threads); the caller is team member 0. The team splits each rows x NC region into
// a grid of MR-row x NR-column panels and shares packed B; problems under ~2 MFLOP run on the
// caller alone, and many small batches run one batch per thread. Which panels and batches each
// thread takes comes from the shared scheduler (omnigemm/tile_schedule.h). W is capped at
// 16 MiB (rows are processed in chunks beyond that). One run at a time per backend (a mutex),
// since the pool and the packing buffers are shared.
//
// Block-scaled operands (omnigemm/blockscaled.h) run on the cpu.blockscaled family: the same
// driver, whose packing dequantises each element by its block's scale (the engine's
// block_quantize.hpp), so it is f32 GEMM on the dequantised operands, the reference semantics.
//
// Files: thread_pool (the pool and the team barrier), elements (decoding), packing,
// cpu_epilogue (omnigemm/epilogue.h on finished tiles), kernel_registry (the micro-kernels by
// name), packed_gemm (the blocked driver); this file: the cpu.packed and cpu.blockscaled
// families, device quantisation and the backend.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backend.hpp"
#include "elements.hpp"
#include "kernel_registry.hpp"
#include "packed_gemm.hpp"
#include "omnigemm/tile_schedule.h"
#include "thread_pool.hpp"

namespace omnigemm::detail {

namespace {

using namespace cpu;

// The family's config table (families/packed.inc).
constexpr Config kPackedConfigs[] = {
#define OG_CPU_PACKED(bm, bn, bk) Config{"packed", bm, bn, bk, 1, 1, 1, 0, 1, {}},
#include "families/packed.inc"
#undef OG_CPU_PACKED
};
constexpr Config kBlockScaledConfigs[] = {
#define OG_CPU_BLOCKSCALED(bm, bn, bk) Config{"blockscaled", bm, bn, bk, 1, 1, 1, 0, 1, {}},
#include "families/blockscaled.inc"
#undef OG_CPU_BLOCKSCALED
};

bool block_scaled(const Problem& p) { return p.a.scale.present() || p.b.scale.present(); }

class CpuBackend;

// cpu.packed (plain dtypes) and cpu.blockscaled (block-scaled operands, families/blockscaled.inc):
// the same blocked driver, their forms name the micro-kernel.
class PackedFamily final : public KernelFamily {
 public:
  PackedFamily(CpuBackend& be, bool blocked) : be_(be), blocked_(blocked) {}
  const char* name() const override { return blocked_ ? "blockscaled" : "packed"; }
  std::span<const Config> configs() const override {
    return blocked_ ? std::span<const Config>(kBlockScaledConfigs) : std::span<const Config>(kPackedConfigs);
  }
  Status can_implement(const Problem& p, const Config& c) const override;
  Status describe(const Problem& p, const Config& c, PlanSummary& out) const override;
  Status run(const Problem& p, const Config& c, void* stream) override;

 private:
  CpuBackend& be_;
  bool blocked_;
};

class CpuBackend final : public Backend {
 public:
  CpuBackend(int threads, KernelKind kernel) : default_kernel_(kernel) {
    unsigned hw = std::thread::hardware_concurrency();
    threads_ = threads > 0 ? threads : int(hw ? hw : 1);
    info_.name = "cpu (" + std::to_string(threads_) + " threads, " + kernel_name(default_kernel_) + " kernel)";
    info_.driver = "omnigemm-cpu";
    info_.limits.compute_units = threads_;
    workspaces_ = std::make_unique<Workspace[]>(size_t(threads_));
    (void)fp8_tables();  // built now, not inside a timed run
  }
  og_backend kind() const override { return OG_BACKEND_CPU; }
  const DeviceInfo& device() const override { return info_; }
  uint32_t input_dtypes() const override { return (1u << OG_DTYPE_COUNT) - 1; }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_HOST; }
  uint32_t scale_modes() const override { return (1u << OG_SCALE_MODE_COUNT) - 1; }
  std::span<KernelFamily* const> families() const override { return families_; }

  // The micro-kernel a config's form asks for ("" = the backend's default), or why not.
  Status kernel_for(const Config& cfg, KernelKind& kk) const {
    kk = default_kernel_;
    if (cfg.form.empty()) return {};
    bool ok = false;
    const std::string form(cfg.form.view());
    kk = parse_kernel_name(form.c_str(), ok);
    if (!ok || kk == KernelKind::automatic)
      return error(StatusCode::unsupported, "the form names the micro-kernel: scalar, avx2 or avx512 (none: the best available)");
    if (!cpu_has(kk))
      return error(StatusCode::unsupported, "the " + std::string(kernel_name(kk)) +
                                                " micro-kernel is not in this CPU/build; available: " + supported_kernels());
    return {};
  }

  Status run_packed(const Problem& p, const Config& cfg, void* stream) {
    if (stream) return error(StatusCode::invalid_argument, "the cpu backend has no streams: pass NULL");
    if (p.empty()) return {};
    KernelKind kk;
    if (Status s = kernel_for(cfg, kk); !s) return error(s.code, "cpu config " + cfg.to_string() + ": " + s.message);
    const Plan pl = make_plan(p, cfg, kernel_of(kk));

    std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_) pool_ = std::make_unique<ThreadPool>(threads_);  // threads_, unless the OS refuses some
    return run_packed_gemm(p, pl, *pool_, workspaces_.get());
  }
  Status synchronize(void*) override { return {}; }

  // Device quantisation is the host's (the CPU's memory is the host's), over the pool's threads
  // in whole scale-block rows.
  Status quantize(const Operand& src, const Operand& dst, bool operand_b, float& global, void* stream) override {
    if (stream) return error(StatusCode::invalid_argument, "the cpu backend has no streams: pass NULL");
    const KView sv = kview_of(src, operand_b), dv = kview_of(dst, operand_b);
    if (global == 0.0f) global = nvfp4_global(sv);
    clear_packed_scales(dv);
    const float g = global;
    return over_rows(dv.rows, dv.scale.block_rows, [&](int64_t r0, int64_t r1) { quantize_rows(sv, dv, g, r0, r1); });
  }
  Status dequantize(const Operand& src, const Operand& dst, bool operand_b, void* stream) override {
    if (stream) return error(StatusCode::invalid_argument, "the cpu backend has no streams: pass NULL");
    const KView sv = kview_of(src, operand_b), dv = kview_of(dst, operand_b);
    return over_rows(sv.rows, 1, [&](int64_t r0, int64_t r1) { dequantize_rows(sv, dv, r0, r1); });
  }

  Status allocate(size_t bytes, og_memory& out) override {
    void* p = std::aligned_alloc(64, std::max<size_t>((bytes + 63) / 64 * 64, 64));
    if (!p) return error(StatusCode::out_of_memory, "host allocation of " + std::to_string(bytes) + " bytes failed");
    out = og_memory{OG_MEMORY_HOST, p, 0, 0};
    return {};
  }
  void release(const og_memory& m) override { std::free(m.ptr); }
  Status upload(const og_memory& dst, const void* src, size_t bytes) override {
    std::memcpy(static_cast<char*>(dst.ptr) + dst.offset, src, bytes);
    return {};
  }
  Status download(void* dst, const og_memory& src, size_t bytes) override {
    std::memcpy(dst, static_cast<const char*>(src.ptr) + src.offset, bytes);
    return {};
  }
  Status time_ms(const std::function<Status()>& launch, double& ms) override {
    auto t0 = std::chrono::steady_clock::now();
    Status s = launch();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return s;
  }

 private:
  DeviceInfo info_;
  int threads_ = 1;
  KernelKind default_kernel_;
  // f(r0, r1) over an even split of `rows` in multiples of `granule` across the pool.
  template <class F>
  Status over_rows(int64_t rows, int64_t granule, F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_) pool_ = std::make_unique<ThreadPool>(threads_);
    const int64_t units = (rows + granule - 1) / granule;
    const int parts = int(std::min<int64_t>(pool_->size(), units));
    pool_->run([&](int t) {
      if (t >= parts) return;
      int b, e;
      og_split_k_range(int(units), parts, t, b, e);
      f(std::min(rows, b * granule), std::min(rows, e * granule));
    });
    return {};
  }

  PackedFamily packed_{*this, false};
  PackedFamily blockscaled_{*this, true};
  KernelFamily* const families_[2] = {&packed_, &blockscaled_};
  std::mutex mutex_;  // one run at a time: the pool and the workspaces are shared
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Workspace[]> workspaces_;
};

Status PackedFamily::can_implement(const Problem& p, const Config& c) const {
  if (block_scaled(p) && !blocked_) return error(StatusCode::unsupported, "block-scaled operands run on cpu.blockscaled");
  if (!block_scaled(p) && blocked_)
    return error(StatusCode::unsupported, "runs block-scaled operands only (mx, nvfp4, fp8 with 128-blockwise scales)");
  KernelKind kk;
  if (Status s = be_.kernel_for(c, kk); !s) return s;
  if (c.block_m <= 0 || c.block_n <= 0 || c.block_k <= 0) return error(StatusCode::invalid_argument, "block sizes must be positive");
  return {};
}

Status PackedFamily::describe(const Problem& p, const Config& c, PlanSummary& out) const {
  if (Status s = can_implement(p, c); !s) return s;
  out.threads = be_.device().limits.compute_units;
  out.notes = "host threads: " + std::to_string(out.threads);
  return {};
}

Status PackedFamily::run(const Problem& p, const Config& c, void* stream) { return be_.run_packed(p, c, stream); }

}  // namespace

Status make_cpu_backend(const BackendOptions& opt, std::unique_ptr<Backend>& out) {
  if (opt.cpu_threads < 0) return error(StatusCode::invalid_argument, "cpu_threads is negative");
  bool ok;
  const char* env = std::getenv("OMNIGEMM_CPU_KERNEL");
  KernelKind k = parse_kernel_name(env, ok);
  if (!ok)
    return error(StatusCode::invalid_argument, std::string("OMNIGEMM_CPU_KERNEL=") + env +
                                                   " is not one of auto, scalar, avx2, avx512");
  if (k == KernelKind::automatic) k = best_kernel();
  else if (!cpu_has(k))
    return error(StatusCode::backend_unavailable, std::string("OMNIGEMM_CPU_KERNEL=") + env +
                                                      " but this CPU/build lacks that kernel; available: " +
                                                      supported_kernels());
  out = std::make_unique<CpuBackend>(opt.cpu_threads, k);
  return {};
}

}  // namespace omnigemm::detail
