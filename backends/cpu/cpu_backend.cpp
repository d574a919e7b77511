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
// Files: thread_pool (the pool and the team barrier), elements (decoding), packing,
// cpu_epilogue (omnigemm/epilogue.h on finished tiles), kernel_registry (the micro-kernels by
// name), packed_gemm (the blocked driver); this file: the cpu.packed family and the backend.
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

class CpuBackend;

// cpu.packed: the one CPU family; its forms name the micro-kernel.
class PackedFamily final : public KernelFamily {
 public:
  explicit PackedFamily(CpuBackend& be) : be_(be) {}
  const char* name() const override { return "packed"; }
  std::span<const Config> configs() const override { return kPackedConfigs; }
  Status can_implement(const Problem& p, const Config& c) const override;
  Status describe(const Problem& p, const Config& c, PlanSummary& out) const override;
  Status run(const Problem& p, const Config& c, void* stream) override;

 private:
  CpuBackend& be_;
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
  uint32_t input_dtypes() const override { return 0x1f; }
  uint32_t output_dtypes() const override { return 0x07; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_HOST; }
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
  PackedFamily packed_{*this};
  KernelFamily* const families_[1] = {&packed_};
  std::mutex mutex_;  // one run at a time: the pool and the workspaces are shared
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Workspace[]> workspaces_;
};

Status PackedFamily::can_implement(const Problem&, const Config& c) const {
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
