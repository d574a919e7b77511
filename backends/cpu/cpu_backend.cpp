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
// caller alone, and many small batches run one batch per thread. W is capped at 16 MiB (rows
// are processed in chunks beyond that). One run at a time per backend (a mutex), since the
// pool and the packing buffers are shared.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "cpu_kernels.hpp"
#include "omnigemm/numeric.hpp"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace omnigemm::detail {

namespace {

using cpu::MicroKernelFn;

// ---------------------------------------------------------------------------------------------
// Micro-kernel registry

enum class KernelKind : int { automatic = 0, scalar = 1, avx2 = 2, avx512 = 3 };

struct MicroKernel {
  KernelKind kind;
  const char* name;
  int mr, nr;
  MicroKernelFn fn;
};

bool cpu_has(KernelKind k) {
  switch (k) {
    case KernelKind::scalar: return true;
#if defined(OMNIGEMM_CPU_X86_KERNELS)
    case KernelKind::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case KernelKind::avx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
    default: return false;
  }
}

MicroKernel kernel_of(KernelKind k) {
  switch (k) {
#if defined(OMNIGEMM_CPU_X86_KERNELS)
    case KernelKind::avx512: return {k, "avx512", cpu::kAvx512MR, cpu::kAvx512NR, cpu::micro_kernel_avx512};
    case KernelKind::avx2: return {k, "avx2", cpu::kAvx2MR, cpu::kAvx2NR, cpu::micro_kernel_avx2};
#endif
    default: return {KernelKind::scalar, "scalar", cpu::kScalarMR, cpu::kScalarNR, cpu::micro_kernel_scalar};
  }
}

KernelKind best_kernel() {
  for (KernelKind k : {KernelKind::avx512, KernelKind::avx2})
    if (cpu_has(k)) return k;
  return KernelKind::scalar;
}

const char* kernel_name(KernelKind k) {
  switch (k) {
    case KernelKind::scalar: return "scalar";
    case KernelKind::avx2: return "avx2";
    case KernelKind::avx512: return "avx512";
    default: return "auto";
  }
}

std::string supported_kernels() {
  std::string s;
  for (KernelKind k : {KernelKind::scalar, KernelKind::avx2, KernelKind::avx512})
    if (cpu_has(k)) s += std::string(s.empty() ? "" : ", ") + kernel_name(k);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Element decoding (bit-identical to omnigemm/numeric.hpp) and encoding

struct Fp8Tables {
  float e4m3[256];
  float e5m2[256];
  Fp8Tables() {
    for (int i = 0; i < 256; ++i) {
      e4m3[i] = numeric::e4m3_to_f32(uint8_t(i));
      e5m2[i] = numeric::e5m2_to_f32(uint8_t(i));
    }
  }
};
const Fp8Tables& fp8_tables() {
  static const Fp8Tables t;
  return t;
}

// numeric::f16_to_f32, branch-free (selects only, so packing loops vectorise and random bit
// patterns do not mispredict): subnormals come out as (2^-14 + man * 2^-24) - 2^-14, which is
// exact because every f16 subnormal is a normal f32.
inline float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t shifted = uint32_t(h & 0x7fff) << 13;  // exponent and mantissa in f32 position
  const uint32_t exp = shifted & 0x0f800000u;
  const uint32_t normal = shifted + (112u << 23);       // rebias 15 -> 127
  const uint32_t inf_nan = normal + (112u << 23);       // exponent 31 -> 255
  const float subnormal = std::bit_cast<float>(normal + (1u << 23)) - 0x1p-14f;
  const uint32_t magnitude = exp == 0x0f800000u ? inf_nan : exp == 0 ? std::bit_cast<uint32_t>(subnormal) : normal;
  return std::bit_cast<float>(magnitude | sign);
}

// Loads element i (in elements) of a typed array as f32.
template <og_dtype T>
struct Loader;
template <>
struct Loader<OG_DTYPE_F32> {
  const float* p;
  explicit Loader(const void* base) : p(static_cast<const float*>(base)) {}
  float operator()(int64_t i) const { return p[i]; }
};
template <>
struct Loader<OG_DTYPE_F16> {
  const uint16_t* p;
  explicit Loader(const void* base) : p(static_cast<const uint16_t*>(base)) {}
  float operator()(int64_t i) const { return f16_bits_to_f32(p[i]); }
};
template <>
struct Loader<OG_DTYPE_BF16> {
  const uint16_t* p;
  explicit Loader(const void* base) : p(static_cast<const uint16_t*>(base)) {}
  float operator()(int64_t i) const { return numeric::bf16_to_f32(p[i]); }
};
template <>
struct Loader<OG_DTYPE_FP8_E4M3> {
  const uint8_t* p;
  const float* table;
  explicit Loader(const void* base) : p(static_cast<const uint8_t*>(base)), table(fp8_tables().e4m3) {}
  float operator()(int64_t i) const { return table[p[i]]; }
};
template <>
struct Loader<OG_DTYPE_FP8_E5M2> {
  const uint8_t* p;
  const float* table;
  explicit Loader(const void* base) : p(static_cast<const uint8_t*>(base)), table(fp8_tables().e5m2) {}
  float operator()(int64_t i) const { return table[p[i]]; }
};

// Calls f(Loader<T>) for the runtime dtype `t` (one of the five input dtypes).
template <class F>
void with_loader(og_dtype t, const void* base, F&& f) {
  switch (t) {
    case OG_DTYPE_F32: f(Loader<OG_DTYPE_F32>(base)); break;
    case OG_DTYPE_F16: f(Loader<OG_DTYPE_F16>(base)); break;
    case OG_DTYPE_BF16: f(Loader<OG_DTYPE_BF16>(base)); break;
    case OG_DTYPE_FP8_E4M3: f(Loader<OG_DTYPE_FP8_E4M3>(base)); break;
    case OG_DTYPE_FP8_E5M2: f(Loader<OG_DTYPE_FP8_E5M2>(base)); break;
    default: break;  // rejected by validation / input_dtypes()
  }
}

// ---------------------------------------------------------------------------------------------
// Packing

// op(X) of one batch as a strided matrix: element (r, c) at base[r * sr + c * sc].
struct View {
  og_dtype dtype = OG_DTYPE_F32;
  const char* base = nullptr;  // points at element (0, 0)
  int64_t sr = 0, sc = 0;
};

const char* element_ptr(const View& v, int64_t r, int64_t c) {
  return v.base + (r * v.sr + c * v.sc) * dtype_bytes(v.dtype);
}

// One panel of `h` <= w rows x `cols` columns: dst[c * w + i] = X(i, c), zero for i >= h.
// W > 0 is the compile-time panel width (full panels of the kernels' MR / NR); W == 0 is the
// generic version for edge panels and unusual widths.
template <int W, class L>
void pack_one_panel(const L& load, int64_t base, int64_t sr, int64_t sc, int h, int w, int64_t cols, float* dst) {
  if constexpr (W > 0) w = h = W;
  if (sr == 1) {  // the panel's rows are adjacent in memory: copy w values per column
    for (int64_t c = 0; c < cols; ++c) {
      float* d = dst + c * w;
      const int64_t col = base + c * sc;
      for (int i = 0; i < h; ++i) d[i] = load(col + i);
      for (int i = h; i < w; ++i) d[i] = 0.0f;
    }
  } else if (sc == 1) {  // each row is contiguous: transpose blocks of 16 columns
    constexpr int64_t kBlock = 16;
    for (int64_t c0 = 0; c0 < cols; c0 += kBlock) {
      const int64_t n = std::min(kBlock, cols - c0);
      float* d = dst + c0 * w;
      for (int i = 0; i < h; ++i) {
        const int64_t row = base + i * sr + c0;
        if (n == kBlock) {  // decode 16 contiguous values (vectorisable), then scatter them
          float decoded[kBlock];
          for (int64_t c = 0; c < kBlock; ++c) decoded[c] = load(row + c);
          for (int64_t c = 0; c < kBlock; ++c) d[c * w + i] = decoded[c];
        } else {
          for (int64_t c = 0; c < n; ++c) d[c * w + i] = load(row + c);
        }
      }
      for (int i = h; i < w; ++i)
        for (int64_t c = 0; c < n; ++c) d[c * w + i] = 0.0f;
    }
  } else {
    for (int64_t c = 0; c < cols; ++c) {
      float* d = dst + c * w;
      for (int i = 0; i < h; ++i) d[i] = load(base + i * sr + c * sc);
      for (int i = h; i < w; ++i) d[i] = 0.0f;
    }
  }
}

// Packs rows [r0, r0 + rows) x columns [c0, c0 + cols) of `v` into panels of `w` rows:
// panel p holds rows r0 + p*w ..., stored as dst[p * w * cols + c * w + i]; rows past the end
// are zero. Used for A (rows = M, cols = K, w = MR) and, through a transposed view, for B.
void pack_panels(const View& v, int64_t r0, int64_t rows, int64_t c0, int64_t cols, int w, float* dst) {
  with_loader(v.dtype, element_ptr(v, r0, c0), [&](auto load) {
    const int64_t sr = v.sr, sc = v.sc;
    for (int64_t p0 = 0; p0 < rows; p0 += w, dst += int64_t(w) * cols) {
      const int h = int(std::min<int64_t>(w, rows - p0));
      const int64_t base = p0 * sr;
      if (h == w) {
        switch (w) {
          case cpu::kAvx512MR: pack_one_panel<cpu::kAvx512MR>(load, base, sr, sc, h, w, cols, dst); continue;
          case cpu::kAvx512NR: pack_one_panel<cpu::kAvx512NR>(load, base, sr, sc, h, w, cols, dst); continue;
          case cpu::kAvx2MR: pack_one_panel<cpu::kAvx2MR>(load, base, sr, sc, h, w, cols, dst); continue;
          case cpu::kAvx2NR: pack_one_panel<cpu::kAvx2NR>(load, base, sr, sc, h, w, cols, dst); continue;
          case cpu::kScalarMR: pack_one_panel<cpu::kScalarMR>(load, base, sr, sc, h, w, cols, dst); continue;
          case cpu::kScalarNR: pack_one_panel<cpu::kScalarNR>(load, base, sr, sc, h, w, cols, dst); continue;
          default: break;
        }
      }
      pack_one_panel<0>(load, base, sr, sc, h, w, cols, dst);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Epilogue

float activate(og_activation a, float x, float slope) {
  switch (a) {
    case OG_ACT_RELU: return x > 0.0f ? x : 0.0f;
    case OG_ACT_LEAKY_RELU: return x >= 0.0f ? x : slope * x;
    case OG_ACT_GELU_TANH: return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
    case OG_ACT_SILU: return x / (1.0f + std::exp(-x));
    default: return x;
  }
}

// Everything the epilogue needs for one batch.
struct EpilogueArgs {
  float alpha = 1, beta = 0;
  og_activation act = OG_ACT_NONE;
  float slope = 0.01f;
  og_bias_mode bias_mode = OG_BIAS_NONE;
  const float* bias = nullptr;  // f32 copy of this batch's bias vector
  View c;                       // c.base == nullptr: no C
  og_dtype d_dtype = OG_DTYPE_F32;
  char* d = nullptr;            // element (0, 0) of this batch's D
  int64_t d_sr = 0, d_sc = 0;
};

// D[i0 + r, j0 + c] = act(alpha * tile[r * ldt + c] + beta * C[..] + bias) for r < rows, c < cols,
// in the same operation order as the reference: ((alpha * acc) + beta * C) + bias.
void epilogue_tile(const EpilogueArgs& e, const float* tile, int64_t ldt, int64_t i0, int64_t j0, int rows, int cols) {
  float v[cpu::kMaxNR];
  float cv[cpu::kMaxNR];
  for (int r = 0; r < rows; ++r) {
    const float* t = tile + r * ldt;
    const int64_t i = i0 + r;
    for (int c = 0; c < cols; ++c) v[c] = e.alpha * t[c];
    if (e.c.base) {
      with_loader(e.c.dtype, element_ptr(e.c, i, j0), [&](auto load) {
        for (int c = 0; c < cols; ++c) cv[c] = load(c * e.c.sc);
      });
      for (int c = 0; c < cols; ++c) v[c] += e.beta * cv[c];
    }
    if (e.bias_mode == OG_BIAS_PER_N) {
      const float* b = e.bias + j0;
      for (int c = 0; c < cols; ++c) v[c] += b[c];
    } else if (e.bias_mode == OG_BIAS_PER_M) {
      const float b = e.bias[i];
      for (int c = 0; c < cols; ++c) v[c] += b;
    }
    switch (e.act) {
      case OG_ACT_NONE: break;
      case OG_ACT_RELU:
        for (int c = 0; c < cols; ++c) v[c] = v[c] > 0.0f ? v[c] : 0.0f;
        break;
      default:
        for (int c = 0; c < cols; ++c) v[c] = activate(e.act, v[c], e.slope);
        break;
    }
    const int64_t sc = e.d_sc;
    const int64_t first = i * e.d_sr + j0 * sc;
    switch (e.d_dtype) {
      case OG_DTYPE_F32: {
        float* d = reinterpret_cast<float*>(e.d) + first;
        if (sc == 1) for (int c = 0; c < cols; ++c) d[c] = v[c];  // inlined, unlike a short memcpy
        else for (int c = 0; c < cols; ++c) d[c * sc] = v[c];
        break;
      }
      case OG_DTYPE_F16: {
        uint16_t* d = reinterpret_cast<uint16_t*>(e.d) + first;
        for (int c = 0; c < cols; ++c) d[c * sc] = numeric::f32_to_f16(v[c]);
        break;
      }
      case OG_DTYPE_BF16: {
        uint16_t* d = reinterpret_cast<uint16_t*>(e.d) + first;
        for (int c = 0; c < cols; ++c) d[c * sc] = numeric::f32_to_bf16(v[c]);
        break;
      }
      default: break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Threads

void cpu_relax() {
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
  _mm_pause();
#endif
}

// The CPU the calling thread runs on, or -1 where the OS does not tell.
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// A team barrier: spins briefly (team members are running on their own cores), then yields.
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void wait() {
    if (n_ <= 1) return;
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; phase_.load(std::memory_order_acquire) == phase; ++spins) {
      if (spins < 4000) cpu_relax();
      else std::this_thread::yield();
    }
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> phase_{0};
};

// Persistent workers; run(fn) calls fn(t) for every t in [0, size()) (t = 0 on the caller)
// and returns when all have finished. After a job, workers spin for kSpinAfterJob before they
// sleep: waking a sleeping thread can take a millisecond (an idle vCPU must be rescheduled),
// which would dominate back-to-back small GEMMs. A worker that finds itself on the caller's CPU
// sleeps at once instead: spinning there would keep it off the idle core the scheduler picks
// for a woken thread (seen on a 2-vCPU VM: 5x slower small GEMMs).
class ThreadPool {
 public:
  // If the OS refuses a thread, the pool runs with the threads it got.
  explicit ThreadPool(int size) {
    for (int t = 1; t < size; ++t) {
      try {
        workers_.emplace_back([this, t] { worker(t); });
      } catch (const std::system_error&) {
        break;
      }
    }
    size_ = int(workers_.size()) + 1;
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return size_; }

  void run(const std::function<void(int)>& fn) {
    if (size_ == 1) { fn(0); return; }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
      pending_.store(size_ - 1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    fn(0);
    // The other members usually finish within microseconds of the caller: spin, then sleep.
    for (int spins = 0; spins < 20000 && pending_.load(std::memory_order_acquire) != 0; ++spins) cpu_relax();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    job_ = nullptr;
  }

 private:
  static constexpr auto kSpinAfterJob = std::chrono::microseconds(2000);

  void worker(int t) {
    uint64_t seen = 0;
    for (;;) {
      // Spin for a new generation a while, then sleep on the condition variable.
      const auto spin_start = std::chrono::steady_clock::now();
      for (unsigned spins = 1; generation_.load(std::memory_order_acquire) == seen &&
                               !stop_.load(std::memory_order_acquire);
           ++spins) {
        cpu_relax();
        if (spins % 256 == 0) {
          if (std::chrono::steady_clock::now() - spin_start > kSpinAfterJob) break;
          const int cpu = current_cpu();
          if (cpu >= 0 && cpu == caller_cpu_.load(std::memory_order_relaxed)) break;
        }
      }
      const std::function<void(int)>* job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] {
          return stop_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_relaxed) != seen;
        });
        if (stop_.load(std::memory_order_relaxed)) return;
        seen = generation_.load(std::memory_order_relaxed);
        job = job_;
      }
      (*job)(t);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // the caller checks pending_ under this lock
        done_.notify_one();
      }
    }
  }

  int size_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;  // guarded by mutex_
  std::atomic<uint64_t> generation_{0};           // written under mutex_, read by spinning workers
  std::atomic<int> pending_{0};                   // workers still inside the current job
  std::atomic<bool> stop_{false};
  std::atomic<int> caller_cpu_{-1};  // where the last run() was called from
};

// ---------------------------------------------------------------------------------------------
// Buffers

// A grow-only 64-byte-aligned f32 buffer.
class FloatBuffer {
 public:
  FloatBuffer() = default;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  ~FloatBuffer() { std::free(data_); }
  bool reserve(size_t n) {
    if (n <= size_) return true;
    const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) return false;
    std::free(data_);
    data_ = static_cast<float*>(p);
    size_ = bytes / sizeof(float);
    return true;
  }
  float* data() const { return data_; }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};

struct Workspace {
  FloatBuffer a_pack;  // MC x KC, this thread's A block
  FloatBuffer b_pack;  // KC x NC (used by the team leader's copy only, or per thread for batch-parallel runs)
  FloatBuffer partial; // W: rows x NC partial sums when K > KC
  FloatBuffer bias;    // f32 copy of the current batch's bias vector
  FloatBuffer tile;    // one MR x NR tile when K <= KC
};

// ---------------------------------------------------------------------------------------------
// The blocked GEMM of one batch, run by a team of `team` threads (member t)

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

constexpr int64_t kMaxPartialFloats = int64_t(4) << 20;  // W is capped at 16 MiB

struct Plan {
  MicroKernel kernel;
  int64_t mc = 0, nc = 0, kc = 0;  // MC multiple of MR, NC multiple of NR
  int64_t partial_rows = 0;        // rows of W per chunk (0: K fits one block, no W)
  size_t a_floats = 0, b_floats = 0, partial_floats = 0, bias_floats = 0, tile_floats = 0;
};

Plan make_plan(const Problem& p, const Config& cfg, const MicroKernel& k) {
  Plan pl;
  pl.kernel = k;
  pl.mc = round_up(std::max<int64_t>(cfg.block_m, k.mr), k.mr);
  pl.nc = round_up(std::max<int64_t>(cfg.block_n, k.nr), k.nr);
  pl.kc = std::max<int64_t>(cfg.block_k, 1);
  // Do not allocate for blocks larger than the problem.
  pl.mc = std::min(pl.mc, round_up(std::max<int64_t>(p.m, 1), k.mr));
  pl.nc = std::min(pl.nc, round_up(std::max<int64_t>(p.n, 1), k.nr));
  pl.kc = std::min(pl.kc, std::max<int64_t>(p.k, 1));
  if (p.k > pl.kc) {
    const int64_t rows_cap = std::max<int64_t>(pl.mc, kMaxPartialFloats / pl.nc / pl.mc * pl.mc);
    pl.partial_rows = std::min(round_up(p.m, k.mr), rows_cap);
    pl.partial_floats = size_t(pl.partial_rows * pl.nc);
  }
  pl.a_floats = size_t(pl.mc * pl.kc);
  pl.b_floats = size_t(pl.kc * pl.nc);
  pl.bias_floats = size_t(std::max(p.m, p.n));
  pl.tile_floats = size_t(k.mr * k.nr);
  return pl;
}

// Splits `count` items into `parts` near-equal contiguous ranges; returns range `idx`.
void split_range(int64_t count, int parts, int idx, int64_t& begin, int64_t& end) {
  begin = count * idx / parts;
  end = count * (idx + 1) / parts;
}

// Chooses a tm x tn grid of the team over (row panels x column panels) that minimises the
// largest per-thread share; ties go to more row splits (each thread keeps whole B panels hot).
void team_grid(int team, int64_t row_panels, int64_t col_panels, int& tm, int& tn) {
  tm = team;
  tn = 1;
  int64_t best = INT64_MAX;
  for (int r = team; r >= 1; --r) {
    if (team % r) continue;
    const int c = team / r;
    const int64_t work = ((row_panels + r - 1) / r) * ((col_panels + c - 1) / c);
    if (work < best) { best = work; tm = r; tn = c; }
  }
}

struct BatchOperands {
  View a, b;
  EpilogueArgs epi;
  const char* bias_src = nullptr;
};

BatchOperands batch_operands(const Problem& p, int64_t batch) {
  auto host = [](const og_memory& m) { return static_cast<const char*>(m.ptr) + m.offset; };
  BatchOperands o;
  if (p.k > 0) {
    o.a = {p.a.dtype, host(p.a.mem) + batch * p.a.batch_stride * dtype_bytes(p.a.dtype), p.a.stride_row, p.a.stride_col};
    o.b = {p.b.dtype, host(p.b.mem) + batch * p.b.batch_stride * dtype_bytes(p.b.dtype), p.b.stride_row, p.b.stride_col};
  }
  EpilogueArgs& e = o.epi;
  e.alpha = p.alpha;
  e.beta = p.beta;
  e.act = p.activation;
  e.slope = p.leaky_slope;
  e.bias_mode = p.bias_mode;
  if (p.c.present)
    e.c = {p.c.dtype, host(p.c.mem) + batch * p.c.batch_stride * dtype_bytes(p.c.dtype), p.c.stride_row, p.c.stride_col};
  e.d_dtype = p.d.dtype;
  e.d = const_cast<char*>(host(p.d.mem)) + batch * p.d.batch_stride * dtype_bytes(p.d.dtype);
  e.d_sr = p.d.stride_row;
  e.d_sc = p.d.stride_col;
  if (p.bias_mode != OG_BIAS_NONE)
    o.bias_src = host(p.bias) + batch * p.bias_batch_stride * dtype_bytes(p.bias_dtype);
  return o;
}

// One batch. `shared` is the team leader's workspace (packed B and W are shared), `own` this
// member's (packed A, bias copy, tile). Every member runs this with the same arguments.
void gemm_batch(const Problem& p, const Plan& pl, int64_t batch, int t, int team, SpinBarrier& barrier,
                Workspace& shared, Workspace& own) {
  BatchOperands ops = batch_operands(p, batch);
  EpilogueArgs& e = ops.epi;
  if (ops.bias_src) {  // each member converts the (short) bias vector for itself
    const int64_t len = p.bias_mode == OG_BIAS_PER_N ? p.n : p.m;
    float* dst = own.bias.data();
    with_loader(p.bias_dtype, ops.bias_src, [&](auto load) {
      for (int64_t i = 0; i < len; ++i) dst[i] = load(i);
    });
    e.bias = dst;
  }
  const MicroKernel& kern = pl.kernel;
  const int mr = kern.mr, nr = kern.nr;
  float* tile = own.tile.data();

  if (p.k == 0) {  // D = act(alpha * 0 + beta * C + bias): the epilogue on zero tiles
    std::fill(tile, tile + mr * nr, 0.0f);
    const int64_t rp = (p.m + mr - 1) / mr, cp = (p.n + nr - 1) / nr;
    int64_t b0, b1;
    split_range(rp * cp, team, t, b0, b1);
    for (int64_t idx = b0; idx < b1; ++idx) {
      const int64_t i0 = idx / cp * mr, j0 = idx % cp * nr;
      epilogue_tile(e, tile, nr, i0, j0, int(std::min<int64_t>(mr, p.m - i0)), int(std::min<int64_t>(nr, p.n - j0)));
    }
    return;
  }

  // Packed B is laid out as NR-column panels: the transposed view of op(B) packed in NR-row panels.
  const View bt{ops.b.dtype, ops.b.base, ops.b.sc, ops.b.sr};
  const int64_t chunk_rows = pl.partial_rows ? pl.partial_rows : p.m;
  for (int64_t m0 = 0; m0 < p.m; m0 += chunk_rows) {
    const int64_t mlen = std::min(chunk_rows, p.m - m0);
    const int64_t row_panels = (mlen + mr - 1) / mr;
    for (int64_t n0 = 0; n0 < p.n; n0 += pl.nc) {
      const int64_t nlen = std::min(pl.nc, p.n - n0);
      const int64_t col_panels = (nlen + nr - 1) / nr;
      int tm, tn;
      team_grid(team, row_panels, col_panels, tm, tn);
      int64_t rp0, rp1, cp0, cp1;
      split_range(row_panels, tm, t / tn, rp0, rp1);
      split_range(col_panels, tn, t % tn, cp0, cp1);
      for (int64_t k0 = 0; k0 < p.k; k0 += pl.kc) {
        const int64_t klen = std::min(pl.kc, p.k - k0);
        const bool first = k0 == 0, last = k0 + klen >= p.k;
        // Pack B: the team splits the column panels.
        int64_t pb0, pb1;
        split_range(col_panels, team, t, pb0, pb1);
        if (pb1 > pb0)
          pack_panels(bt, n0 + pb0 * nr, std::min(nlen, pb1 * nr) - pb0 * nr, k0, klen, nr,
                      shared.b_pack.data() + pb0 * nr * klen);
        barrier.wait();
        for (int64_t ib = rp0 * mr; ib < rp1 * mr; ib += pl.mc) {  // MC blocks of my rows
          const int64_t ilen = std::min({pl.mc, rp1 * mr - ib, mlen - ib});
          if (ilen <= 0) break;
          pack_panels(ops.a, m0 + ib, ilen, k0, klen, mr, own.a_pack.data());
          const int64_t ipanels = (ilen + mr - 1) / mr;
          for (int64_t jp = cp0; jp < cp1; ++jp) {
            const float* bpanel = shared.b_pack.data() + jp * nr * klen;
            const int cols = int(std::min<int64_t>(nr, nlen - jp * nr));
            for (int64_t ip = 0; ip < ipanels; ++ip) {
              const float* apanel = own.a_pack.data() + ip * mr * klen;
              const int64_t row = ib + ip * mr;  // within the chunk
              float* dst;
              int64_t ldt;
              if (pl.partial_rows) {
                dst = shared.partial.data() + row * pl.nc + jp * nr;
                ldt = pl.nc;
              } else {
                dst = tile;
                ldt = nr;
              }
              kern.fn(klen, apanel, bpanel, dst, ldt, first ? 0 : 1);
              if (last)
                epilogue_tile(e, dst, ldt, m0 + row, n0 + jp * nr, int(std::min<int64_t>(mr, mlen - row)), cols);
            }
          }
        }
        barrier.wait();  // packed B is overwritten by the next K block
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

KernelKind parse_kernel_name(const char* s, bool& ok) {
  ok = true;
  if (!s || !*s || !std::strcmp(s, "auto")) return KernelKind::automatic;
  if (!std::strcmp(s, "scalar")) return KernelKind::scalar;
  if (!std::strcmp(s, "avx2")) return KernelKind::avx2;
  if (!std::strcmp(s, "avx512")) return KernelKind::avx512;
  ok = false;
  return KernelKind::automatic;
}

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
    (void)fp8_tables();
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
    if (!pool_) pool_ = std::make_unique<ThreadPool>(threads_);
    const int threads = pool_->size();  // threads_, unless the OS refused some

    // Small problems run on one thread; many small batches run one batch per thread.
    const double flops = 2.0 * double(p.m) * double(p.n) * double(std::max<int64_t>(p.k, 1));
    const bool tiny = flops < double(1 << 21);
    const bool batch_parallel = p.batch > 1 && (flops < double(1 << 24) || p.batch >= 4 * threads);
    const int team = tiny || batch_parallel ? 1 : threads;
    const int members = batch_parallel ? int(std::min<int64_t>(threads, p.batch)) : team;

    // Workspaces: every member needs its own A block, bias and tile; packed B and W are
    // needed by team leaders only (member 0 of the team, or every member when batch-parallel).
    for (int t = 0; t < members; ++t) {
      Workspace& w = workspaces_[size_t(t)];
      bool ok = w.a_pack.reserve(pl.a_floats) && w.bias.reserve(pl.bias_floats) && w.tile.reserve(pl.tile_floats);
      if (t == 0 || batch_parallel)
        ok = ok && w.b_pack.reserve(pl.b_floats) && w.partial.reserve(std::max<size_t>(pl.partial_floats, 1));
      if (!ok) return error(StatusCode::out_of_memory, "cpu backend: cannot allocate packing buffers");
    }

    if (members == 1) {
      SpinBarrier solo(1);
      for (int64_t b = 0; b < p.batch; ++b) gemm_batch(p, pl, b, 0, 1, solo, workspaces_[0], workspaces_[0]);
      return {};
    }
    if (batch_parallel) {
      pool_->run([&](int t) {
        if (t >= members) return;
        SpinBarrier solo(1);
        int64_t b0, b1;
        split_range(p.batch, members, t, b0, b1);
        for (int64_t b = b0; b < b1; ++b)
          gemm_batch(p, pl, b, 0, 1, solo, workspaces_[size_t(t)], workspaces_[size_t(t)]);
      });
      return {};
    }
    SpinBarrier barrier(team);
    pool_->run([&](int t) {
      for (int64_t b = 0; b < p.batch; ++b)
        gemm_batch(p, pl, b, t, team, barrier, workspaces_[0], workspaces_[size_t(t)]);
    });
    return {};
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
