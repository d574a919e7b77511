// cuda.short_k's kernel: D' = A' B' for a short K, where writing D is the work. D' has unit column
// stride (the family runs D^T = B^T A^T for a column-major D) and any alignment: each warp owns
// whole rows of its block's columns and writes them once, in aligned 16-byte windows
// (row_units.h), so a row's bytes leave in long runs with two partial units per block, where a
// tile kernel's staged lines at an offset have two per 64 columns.
// f32 FMA on CUDA cores: a block is kRows rows x HALVES * 256 columns; each lane keeps
// kRowsPerThread rows x HALVES x 8 columns of accumulators; K runs in chunks of kChunkK whose rows
// of B' and A' are staged in shared memory as f32 (typed loads for f16, bf16 and f32, the generic
// decoder for fp8), any strides and alignment.
#pragma once
#include <stdint.h>

#include <type_traits>

#include "../dependent_launch.cuh"
#include "../epilogue.cuh"
#include "row_units.h"

namespace omnigemm::detail::cuda {

namespace short_k {
constexpr int kWarps = 8, kThreads = 32 * kWarps;
constexpr int kRowsPerThread = 4;
constexpr int kRows = kWarps * kRowsPerThread;  // rows of D' per block: each warp kRowsPerThread
constexpr int kHalfCols = 32 * detail::short_k::kLaneCols;  // columns per warp-wide pass
constexpr int kChunkK = 16;
// The FMA kernel's static shared memory: B's chunk (padded rows) and A's chunk (padded columns).
constexpr int fma_shared_bytes(int halves) { return int(sizeof(float)) * (kChunkK * (kHalfCols * halves + 4) + kRows * (kChunkK + 1)); }
// Resident blocks per SM the kernels are built for (launch bounds): the register budgets at which
// ptxas keeps 256-column (80 registers) and 512-column blocks (128) without spills.
constexpr int blocks_per_sm(int halves) { return halves == 1 ? 3 : 2; }
}  // namespace short_k

struct ShortKArgs {
  OperandArgs a, b;  // A' (M' x K) and B' (K x N'), any strides
  EpilogueArgs ep;   // D' with unit column stride
  int m, n, k;
  int batch_base;
};

namespace short_k_detail {

// Where column j of a block's B' row sits in shared memory: per half, the low four columns of
// every lane's eight first, then the high four, so that a warp's two float4 reads are each
// contiguous (no bank conflicts).
__device__ __forceinline__ int b_slot(int j) {
  constexpr int half = short_k::kHalfCols;
  return (j / half) * half + ((j % 8) / 4) * (half / 2) + ((j % half) / 8) * 4 + j % 4;
}

// Bytes [lo, hi) of one 16-byte unit of words w[W0..W0+4) at the 16-byte aligned p.
template <int W0, int W>
__device__ __forceinline__ void store_unit(unsigned char* p, const uint32_t (&w)[W], int lo, int hi) {
  detail::short_k::unit_pieces(lo, hi, [&](int off, int bytes) {
    const int i = W0 + off / 4;
    if (bytes == 16) *reinterpret_cast<uint4*>(p) = make_uint4(w[W0], w[W0 + 1], w[W0 + 2], w[W0 + 3]);
    else if (bytes == 8) *reinterpret_cast<uint2*>(p + off) = make_uint2(w[i], w[i + 1]);
    else if (bytes == 4) *reinterpret_cast<uint32_t*>(p + off) = w[i];
    else *reinterpret_cast<uint16_t*>(p + off) = uint16_t(off % 4 ? w[i] >> 16 : w[i]);
  });
}

// The window of W words shifted by s bytes from (left, own) (row_units.h window_source); s is
// the same for the whole warp, so the switch does not diverge.
template <int W>
__device__ __forceinline__ void shift_window(const uint32_t (&left)[W], const uint32_t (&own)[W], int s, uint32_t (&out)[W]) {
  auto x = [&](int j) { return j < W ? left[j] : own[j - W]; };
  auto fill = [&](auto a_const) {
    constexpr int a = decltype(a_const)::value;
#pragma unroll
    for (int i = 0; i < W; ++i) {
      const detail::short_k::WindowSource src = detail::short_k::window_source(W, 4 * a + (s & 2), i);
      out[i] = __funnelshift_rc(x(src.lo), x(src.hi), unsigned(src.shift));
    }
  };
  switch (s / 4) {
    case 0: fill(std::integral_constant<int, 0>{}); break;
    case 1: fill(std::integral_constant<int, 1>{}); break;
    case 2: fill(std::integral_constant<int, 2>{}); break;
    default: fill(std::integral_constant<int, 3>{}); break;
  }
}

// The epilogue and the stores of a warp's kRowsPerThread rows of D' from row `row` on, columns
// col0 .. col0 + HALVES * kHalfCols (row_units.h): value(i, h, q) is the f32 sum of row `row` + i,
// column col0 + h * kHalfCols + lane * kLaneCols + q. Every lane of the warp calls it.
template <int HALVES, int OUT_BYTES, class Value>
__device__ __forceinline__ void store_rows(const ShortKArgs& args, long long batch, int row, int col0, int lane, Value&& value) {
  using namespace short_k;
  constexpr int kLaneCols = detail::short_k::kLaneCols;
  constexpr int kCols = HALVES * kHalfCols;
  constexpr int W = kLaneCols * OUT_BYTES / 4;  // words per lane and half
  const EpilogueArgs& e = args.ep;
  const bool bf16 = e.d.dtype == OG_DTYPE_BF16;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int gm = row + i;
    if (gm >= args.m) break;  // the warp's rows: uniform
    uint32_t own[HALVES][W];
#pragma unroll
    for (int h = 0; h < HALVES; ++h) {
      const int gn = col0 + h * kHalfCols + lane * kLaneCols;
#pragma unroll
      for (int g = 0; g < kLaneCols / 4; ++g) {
        float v[4] = {value(i, h, 4 * g), value(i, h, 4 * g + 1), value(i, h, 4 * g + 2), value(i, h, 4 * g + 3)};
        const long long left = args.n - (gn + 4 * g);
        if (left > 0) epilogue_values<true, true>(e, batch, gm, int(gn + 4 * g), left < 4 ? int(left) : 4, v);
        if constexpr (OUT_BYTES == 4) {
#pragma unroll
          for (int q = 0; q < 4; ++q) own[h][4 * g + q] = __float_as_uint(v[q]);
        } else {
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            const float x = v[2 * q], y = v[2 * q + 1];
            own[h][2 * g + q] = bf16 ? uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(x))) |
                                           uint32_t(__bfloat16_as_ushort(__float2bfloat16_rn(y))) << 16
                                     : uint32_t(__half_as_ushort(__float2half_rn(x))) |
                                           uint32_t(__half_as_ushort(__float2half_rn(y))) << 16;
          }
        }
      }
    }
    // Left neighbours: lane l - 1 of the same half; for lane 0, lane 31 of the half before.
    uint32_t left[HALVES][W];
#pragma unroll
    for (int h = 0; h < HALVES; ++h)
#pragma unroll
      for (int w = 0; w < W; ++w) left[h][w] = __shfl_sync(0xffffffffu, own[h][w], (lane + 31) & 31);
#pragma unroll
    for (int h = HALVES - 1; h > 0; --h)
#pragma unroll
      for (int w = 0; w < W; ++w) left[h][w] = lane == 0 ? left[h - 1][w] : left[h][w];

    unsigned char* row = static_cast<unsigned char*>(const_cast<void*>(e.d.ptr)) + (batch * e.d.bs + (long long)gm * e.d.sr) * OUT_BYTES;
    const int s = int(reinterpret_cast<uintptr_t>(row) & 15u);
    const int block_end = col0 + kCols;
#pragma unroll
    for (int h = 0; h <= HALVES; ++h) {
      // h == HALVES: lane 31's last s bytes, the first of the next block's first window.
      if (h == HALVES && (lane != 31 || s == 0)) break;
      const int hh = h < HALVES ? h : HALVES - 1;
      const int chunk_col = col0 + hh * kHalfCols + lane * kLaneCols + (h < HALVES ? 0 : kLaneCols);
      const int window_col0 = chunk_col - s / OUT_BYTES;
      uint32_t out[W];
      if (h < HALVES) short_k_detail::shift_window<W>(left[h], own[h], s, out);
      else short_k_detail::shift_window<W>(own[hh], own[hh], s, out);  // only its first s bytes are stored
      const detail::short_k::ByteRange r =
          detail::short_k::window_bytes_owned(window_col0, W * 4, OUT_BYTES, col0, block_end, args.n);
      if (r.hi <= r.lo) continue;
      unsigned char* p = row + (long long)window_col0 * OUT_BYTES;
      if (r.lo == 0 && r.hi == W * 4) {  // a whole window: the common case
        *reinterpret_cast<uint4*>(p) = make_uint4(out[0], out[1], out[2], out[3]);
        if constexpr (W == 8) *reinterpret_cast<uint4*>(p + 16) = make_uint4(out[4], out[5], out[6], out[7]);
        continue;
      }
      short_k_detail::store_unit<0>(p, out, r.lo, r.hi);
      if constexpr (W == 8) short_k_detail::store_unit<4>(p + 16, out, r.lo - 16, r.hi - 16);
    }
  }
}

// An operand's element i as f32, its dtype fixed at compile time (T: an og_dtype; kAnyDtype: any,
// decoded per element).
constexpr int kAnyDtype = -1;
template <int T>
__device__ __forceinline__ float load_as(const OperandArgs& o, long long i) {
  if constexpr (T == OG_DTYPE_F16) return __half2float(static_cast<const __half*>(o.ptr)[i]);
  else if constexpr (T == OG_DTYPE_BF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(o.ptr)[i]);
  else if constexpr (T == OG_DTYPE_F32) return static_cast<const float*>(o.ptr)[i];
  else return load(o.dtype, o.ptr, i);
}
// Calls f(integral_constant<int, T>) with the operand's dtype as T (kAnyDtype for the fp8 types).
template <class F>
__device__ __forceinline__ void with_dtype(og_dtype t, F&& f) {
  switch (t) {
    case OG_DTYPE_F16: f(std::integral_constant<int, OG_DTYPE_F16>{}); break;
    case OG_DTYPE_BF16: f(std::integral_constant<int, OG_DTYPE_BF16>{}); break;
    case OG_DTYPE_F32: f(std::integral_constant<int, OG_DTYPE_F32>{}); break;
    default: f(std::integral_constant<int, kAnyDtype>{}); break;
  }
}

}  // namespace short_k_detail

template <int HALVES, int OUT_BYTES>
__global__ void __launch_bounds__(short_k::kThreads, short_k::blocks_per_sm(HALVES)) short_k_gemm(const ShortKArgs args) {
  using namespace short_k;
  dependent_launch_begin();
  constexpr int kLaneCols = detail::short_k::kLaneCols;
  constexpr int kCols = HALVES * kHalfCols;
  __shared__ __align__(16) float sb[kChunkK][kCols + 4];
  __shared__ float sa[kRows][kChunkK + 1];
  static_assert(sizeof(sb) + sizeof(sa) == fma_shared_bytes(HALVES), "explain reports the kernel's shared memory");
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long long batch = (long long)args.batch_base + blockIdx.z;
  const int row0 = int(blockIdx.y) * kRows;
  const int col0 = int(blockIdx.x) * kCols;  // the family keeps col0 + kCols below 2^31
  const OperandArgs& a = args.a;
  const OperandArgs& b = args.b;

  float acc[kRowsPerThread][HALVES][kLaneCols];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i)
#pragma unroll
    for (int h = 0; h < HALVES; ++h)
#pragma unroll
      for (int q = 0; q < kLaneCols; ++q) acc[i][h][q] = 0.0f;

  // Staging walks each operand along its unit stride, so the loads coalesce either way; only the
  // chunk's `steps` rows of K are staged (and read).
  const bool b_n_contiguous = b.sc == 1 || b.sr != 1;
  for (int k0 = 0; k0 < args.k; k0 += kChunkK) {
    const int steps = min(kChunkK, args.k - k0);
    // A K-contiguous B' is read along K only for a whole chunk: a shorter one would leave all but
    // `steps` of each 16 threads idle and the rest loading every sixteenth column in turn.
    const bool b_along_n = b_n_contiguous || steps < kChunkK;
    short_k_detail::with_dtype(b.dtype, [&](auto t) {
      constexpr int T = decltype(t)::value;
      if (b_along_n) {  // thread: one column per half, every row of the chunk
#pragma unroll
        for (int h = 0; h < HALVES; ++h) {
          const int j = h * kHalfCols + tid, slot = short_k_detail::b_slot(j);
          const bool in = col0 + j < args.n;
          const long long base = batch * b.bs + (long long)(col0 + j) * b.sc + (long long)k0 * b.sr;
          for (int kk = 0; kk < steps; ++kk) sb[kk][slot] = in ? short_k_detail::load_as<T>(b, base + kk * b.sr) : 0.0f;
        }
      } else if (tid % kChunkK < steps) {  // thread: one row of the chunk, every sixteenth column
        const int kk = tid % kChunkK;
        const long long base = batch * b.bs + (long long)(k0 + kk) * b.sr;
        constexpr int kStride = kThreads / kChunkK, kPasses = kCols / kStride;
        // Unrolled over a fixed count so that the loads of a pass group issue before their stores.
#pragma unroll 8
        for (int s = 0; s < kPasses; ++s) {
          const int j = tid / kChunkK + s * kStride;
          sb[kk][short_k_detail::b_slot(j)] = col0 + j < args.n ? short_k_detail::load_as<T>(b, base + (long long)(col0 + j) * b.sc) : 0.0f;
        }
      }
    });
    short_k_detail::with_dtype(a.dtype, [&](auto t) {
      constexpr int T = decltype(t)::value;
      for (int e = tid; e < kRows * steps; e += kThreads) {
        const int r = e / steps, kk = e - r * steps;
        sa[r][kk] = row0 + r < args.m ? short_k_detail::load_as<T>(a, batch * a.bs + (long long)(row0 + r) * a.sr + (long long)(k0 + kk) * a.sc)
                                     : 0.0f;
      }
    });
    __syncthreads();
#pragma unroll 2
    for (int kk = 0; kk < steps; ++kk) {
      float bv[HALVES][kLaneCols];
#pragma unroll
      for (int h = 0; h < HALVES; ++h) {
        const float4 lo = *reinterpret_cast<const float4*>(&sb[kk][h * kHalfCols + lane * 4]);
        const float4 hi = *reinterpret_cast<const float4*>(&sb[kk][h * kHalfCols + kHalfCols / 2 + lane * 4]);
        bv[h][0] = lo.x, bv[h][1] = lo.y, bv[h][2] = lo.z, bv[h][3] = lo.w;
        bv[h][4] = hi.x, bv[h][5] = hi.y, bv[h][6] = hi.z, bv[h][7] = hi.w;
      }
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        const float av = sa[warp * kRowsPerThread + i][kk];
#pragma unroll
        for (int h = 0; h < HALVES; ++h)
#pragma unroll
          for (int q = 0; q < kLaneCols; ++q) acc[i][h][q] = fmaf(av, bv[h][q], acc[i][h][q]);
      }
    }
    __syncthreads();
  }

  short_k_detail::store_rows<HALVES, OUT_BYTES>(args, batch, row0 + warp * kRowsPerThread, col0, lane,
                                                [&](int i, int h, int q) { return acc[i][h][q]; });
}

}  // namespace omnigemm::detail::cuda
