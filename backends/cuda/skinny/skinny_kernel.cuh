// The cuda.skinny kernels: GEMMs with at most ROWS rows of output (or columns, run transposed),
// bound by reading the large operand once. The problem arrives oriented: D' (rows x cols) =
// S (rows x K) * L (K x cols), S the small operand and L the large one (A and B, or B^T and A^T
// with D' = D^T). Two loaders of L, by its unit stride:
//   skinny_lanes_n: lanes along cols (L contiguous along cols, or any strides), warps split K;
//   skinny_lanes_k: lanes along K (L contiguous along K), each warp four columns, reduced by
//                   shuffles; VEC: each lane loads an aligned group of four consecutive K of a
//                   column at once (8 or 16 bytes), S staged at the columns' shift (below).
// S goes through shared memory in f32. Split-K slices of one column block are summed in slice
// order, the same bits on every run: up to eight form a thread-block cluster and meet in
// distributed shared memory (sm_90, no workspace); more (deep splits, for long K and few
// columns) write their partial sums to a workspace and the last slice to finish, found by a
// counter, adds them all in slice order.
#pragma once
#include <cooperative_groups.h>

#include <type_traits>

#include "../dependent_launch.cuh"
#include "../epilogue.cuh"
#include "lanes_k_groups.h"

namespace omnigemm::detail::cuda {

namespace skinny {
constexpr int kThreads = 256, kWarps = 8;
constexpr int kColsN = 64;    // lanes_n: columns per block, two per lane
constexpr int kChunkN = 64;   // lanes_n: K per shared-memory chunk of S, eight per warp
constexpr int kColsK = 32;    // lanes_k: columns per block, four per warp
constexpr int kChunkK = 256;  // lanes_k: K per chunk of S, eight per lane
static_assert(kChunkK == skinny_groups::kChunk, "lanes_k_groups.h's chunk");
// 256-thread blocks per SM the lanes_k kernels are compiled for: the four-element loader's 1-
// and 2-row kernels fit four and three in the registers (64 and 85 per thread) without spilling
// (4 rows at 85 spilled); the others two.
constexpr int lanes_k_min_blocks(int rows, bool vec) { return !vec ? 2 : rows == 1 ? 4 : rows == 2 ? 3 : 2; }
// How the large operand is loaded: as f16, bf16 or f32 (typed loads), or any dtype (load()).
enum LoadType { kF16 = 0, kBf16 = 1, kF32 = 2, kAny = 3 };
// Whether the four-element lanes_k loader takes L whose columns start off four-element
// boundaries (S staged at each shift): 16-bit L, one or two rows (where it beat skinny_mma on the
// H200; the copies' staging leaves no registers for f32 groups at four blocks per SM).
constexpr bool lanes_k_shifts(int rows, int lt) { return rows <= 2 && (lt == kF16 || lt == kBf16); }
}  // namespace skinny

struct SkinnyArgs {
  int rows, cols, k;
  int split, slice_k;  // K slices (cluster size) and the K of each but the last
  OperandArgs s, l;    // oriented views: S (rows x K), L (K x cols)
  EpilogueArgs ep;     // D' and C' views, bias per row/column as oriented
  int batch_base;
  // skinny_lanes_k's four-element loads: some column of L starts off a four-element boundary
  // (its base, column or batch stride), so S is staged at every shift (the host decides).
  int l_shifted;
  // Deep splits (no cluster): [batch][column block][slice][ROWS x COLS] partial sums, and one
  // counter per [batch][column block], zero between launches (the last slice resets it).
  float* partials;
  int* counters;
};

template <int LT>
__device__ __forceinline__ float skinny_load(const void* base, long long i, og_dtype t) {
  if constexpr (LT == skinny::kF16) return __half2float(static_cast<const __half*>(base)[i]);
  else if constexpr (LT == skinny::kBf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
  else if constexpr (LT == skinny::kF32) return static_cast<const float*>(base)[i];
  else return load(t, base, i);
}

// Four consecutive elements of L as loaded: a float4 (f32) or four 16-bit values in a uint2,
// converted where used (16-bit loads in flight take half the registers).
template <int LT>
using Raw4 = std::conditional_t<LT == skinny::kF32, float4, uint2>;

// L's elements i..i+3 (i a multiple of 4, the address aligned), those from `left` on zero: one
// 8- or 16-byte load where all four are in range.
template <int LT>
__device__ __forceinline__ Raw4<LT> skinny_load4(const void* base, long long i, int left) {
  static_assert(LT != skinny::kAny, "typed loads only");
  if constexpr (LT == skinny::kF32) {
    const float* f = static_cast<const float*>(base) + i;
    if (left >= 4) return __ldg(reinterpret_cast<const float4*>(f));
    return make_float4(left > 0 ? f[0] : 0.0f, left > 1 ? f[1] : 0.0f, left > 2 ? f[2] : 0.0f, 0.0f);
  } else {
    const unsigned short* h = static_cast<const unsigned short*>(base) + i;
    if (left >= 4) return __ldg(reinterpret_cast<const uint2*>(h));
    // Zero bits are +0 in both 16-bit formats.
    return make_uint2((left > 0 ? h[0] : 0u) | (left > 1 ? unsigned(h[1]) << 16 : 0u), left > 2 ? h[2] : 0u);
  }
}
// The same where the group may start before the range: element i + e is read only where
// lo <= e < hi (never addressed elsewhere, so a group may begin before a column's first element).
template <int LT>
__device__ __forceinline__ Raw4<LT> skinny_load4(const void* base, long long i, int lo, int hi) {
  if (lo <= 0) return skinny_load4<LT>(base, i, hi);
  auto in = [&](int e) { return e >= lo && e < hi; };
  if constexpr (LT == skinny::kF32) {
    const float* f = static_cast<const float*>(base) + i;
    return make_float4(in(0) ? f[0] : 0.0f, in(1) ? f[1] : 0.0f, in(2) ? f[2] : 0.0f, in(3) ? f[3] : 0.0f);
  } else {
    const unsigned short* h = static_cast<const unsigned short*>(base) + i;
    return make_uint2((in(0) ? h[0] : 0u) | (in(1) ? unsigned(h[1]) << 16 : 0u), (in(2) ? h[2] : 0u) | (in(3) ? unsigned(h[3]) << 16 : 0u));
  }
}

// acc + s.x v.x + s.y v.y + s.z v.z + s.w v.w, one fused multiply-add at a time in that order
// (every four-element group of a column, the tail group included, sums the same way).
__device__ __forceinline__ float skinny_fma4(const float4& s, const float4& v, float acc) {
  return fmaf(s.w, v.w, fmaf(s.z, v.z, fmaf(s.y, v.y, fmaf(s.x, v.x, acc))));
}

template <int LT>
__device__ __forceinline__ float4 skinny_float4(const Raw4<LT>& raw) {
  if constexpr (LT == skinny::kF32) {
    return raw;
  } else {
    float2 lo, hi;
    if constexpr (LT == skinny::kF16) {
      lo = __half22float2(*reinterpret_cast<const __half2*>(&raw.x));
      hi = __half22float2(*reinterpret_cast<const __half2*>(&raw.y));
    } else {
      lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
      hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
    }
    return make_float4(lo.x, lo.y, hi.x, hi.y);
  }
}

// A thread's share of one K chunk of ROWS rows of S from row `row0` on (ROWS x CHUNK; element e
// at row e % ROWS, K e / ROWS where ROW_FASTEST, else row e / CHUNK, K e % CHUNK), zero outside
// S or the slice (below ke, and from kb on where FLOOR: a chunk that starts before the slice):
// every load is issued before the first is used (one memory latency per chunk, not one per
// element).
template <int ROWS, int CHUNK, int LT, bool ROW_FASTEST>
struct SChunk {
  static constexpr int kPer = (CHUNK * ROWS + skinny::kThreads - 1) / skinny::kThreads;
  float v[kPer];
  __device__ __forceinline__ static void at(int j, int& r, int& kk) {
    const int e = int(threadIdx.x) + j * skinny::kThreads;
    r = ROW_FASTEST ? e % ROWS : e / CHUNK;
    kk = ROW_FASTEST ? e / ROWS : e % CHUNK;
  }
  template <bool FLOOR = false>
  __device__ __forceinline__ void load(const SkinnyArgs& p, long long sbase, int k0, int ke, int row0 = 0, int kb = 0) {
    const char* sb = static_cast<const char*>(p.s.ptr);
    if (p.s.dtype == p.l.dtype) {  // the large operand's typed loads
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        int r, kk;
        at(j, r, kk);
        r += row0;
        const bool in = r < p.rows && kk < CHUNK && (!FLOOR || k0 + kk >= kb) && k0 + kk < ke;
        v[j] = in ? skinny_load<LT>(sb, sbase + (long long)r * p.s.sr + (long long)(k0 + kk) * p.s.sc, p.s.dtype) : 0.0f;
      }
    } else {
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        int r, kk;
        at(j, r, kk);
        r += row0;
        const bool in = r < p.rows && kk < CHUNK && (!FLOOR || k0 + kk >= kb) && k0 + kk < ke;
        v[j] = in ? cuda::load(p.s.dtype, sb, sbase + (long long)r * p.s.sr + (long long)(k0 + kk) * p.s.sc) : 0.0f;
      }
    }
  }
  // Into shared memory laid out [K][ROWS] (ROW_FASTEST, row0 0) or [rows][K].
  __device__ __forceinline__ void store(float* shared, int row0 = 0) const {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      int r, kk;
      at(j, r, kk);
      if (r < ROWS && kk < CHUNK) shared[ROW_FASTEST ? kk * ROWS + r : (row0 + r) * CHUNK + kk] = v[j];
    }
  }
  // Loaded from K k0 - BEFORE on ([rows][K]), into BEFORE + 1 shifted copies (the first
  // `copies` of them) laid out [copy][ALL_ROWS][LEN]: copy m's element j is S at K k0 + j - m.
  template <int BEFORE, int ALL_ROWS, int LEN>
  __device__ __forceinline__ void store_shifted(float* shared, int row0, int copies) const {
    static_assert(!ROW_FASTEST && CHUNK == LEN + BEFORE, "a chunk of LEN with BEFORE elements before it");
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      int r, kk;
      at(j, r, kk);
      if (r >= ROWS || kk >= CHUNK) continue;
#pragma unroll
      for (int m = 0; m <= BEFORE; ++m) {
        const int to = kk - BEFORE + m;
        if (m < copies && to >= 0 && to < LEN) shared[(m * ALL_ROWS + row0 + r) * LEN + to] = v[j];
      }
    }
  }
};

// part[o] = slice 0's o + slice 1's o + ... in slice order (deterministic), for every output o of
// the block. A thread's outputs are held in registers while the slices go by, so each slice's
// reads (global or another block's shared memory) are all in flight together: a slice costs one
// memory latency, not one per output.
template <int ROWS, int COLS, class Slice>
__device__ __forceinline__ void sum_slices(float (*part)[COLS], Slice slice_at, int split) {
  constexpr int kPer = (ROWS * COLS + skinny::kThreads - 1) / skinny::kThreads;
  float v[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int o = int(threadIdx.x) + j * skinny::kThreads;
    v[j] = o < ROWS * COLS ? slice_at(0, o) : 0.0f;
  }
#pragma unroll 2
  for (int r = 1; r < split; ++r)
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int o = int(threadIdx.x) + j * skinny::kThreads;
      if (o < ROWS * COLS) v[j] += slice_at(r, o);
    }
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int o = int(threadIdx.x) + j * skinny::kThreads;
    if (o < ROWS * COLS) part[o / COLS][o % COLS] = v[j];
  }
}

// Sums the slices of a cluster into rank 0's `part` (ROWS x COLS, in rank order), then rank 0
// applies the epilogue to the block's outputs. Every thread of the block calls it.
template <int ROWS, int COLS>
__device__ __forceinline__ void skinny_finish(const SkinnyArgs& p, float (*part)[COLS], int c0, long long batch, int slice) {
  bool writer = true;
  if (p.split > 1 && p.partials) {
    __shared__ int last;
    const long long tile = batch * (gridDim.x / p.split) + blockIdx.x / p.split;
    float* mine = p.partials + (tile * p.split + slice) * (ROWS * COLS);
    for (int o = int(threadIdx.x); o < ROWS * COLS; o += skinny::kThreads) mine[o] = part[o / COLS][o % COLS];
    __threadfence();  // the partial sums are visible before the counter says so
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&p.counters[tile], 1) == p.split - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const float* all = p.partials + tile * p.split * (ROWS * COLS);
    sum_slices<ROWS, COLS>(part, [&](int r, int o) { return __ldcg(all + r * (ROWS * COLS) + o); }, p.split);
    if (threadIdx.x == 0) p.counters[tile] = 0;
    __syncthreads();
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  else if (p.split > 1) {
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();  // every slice's partial sums are in its shared memory
    writer = cluster.block_rank() == 0;
    if (writer) sum_slices<ROWS, COLS>(part, [&](int r, int o) { return r ? cluster.map_shared_rank(&part[0][0], r)[o] : (&part[0][0])[o]; }, p.split);
    cluster.sync();  // the other slices keep their shared memory until rank 0 has read it
    __syncthreads();
  }
#endif
  if (!writer) return;
  // Adjacent threads take adjacent outputs along D's unit stride.
  const bool rows_fastest = p.ep.d.sr == 1 && p.ep.d.sc != 1;
  for (int o = int(threadIdx.x); o < ROWS * COLS; o += skinny::kThreads) {
    const int r = rows_fastest ? o % ROWS : o / COLS, c = rows_fastest ? o / ROWS : o % COLS;
    const int gc = c0 + c;
    if (r < p.rows && gc < p.cols) epilogue_store(p.ep, batch, r, gc, part[r][c]);
  }
}

template <int ROWS, int LT>
__global__ void __launch_bounds__(skinny::kThreads, 2) skinny_lanes_n(SkinnyArgs p) {
  using namespace skinny;
  dependent_launch_begin();
  __shared__ __align__(16) float s_sm[kChunkN][ROWS];  // aligned: a K row's S values read as float4
  __shared__ float red[kWarps][ROWS][kColsN];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int slice = int(blockIdx.x) % p.split, c0 = (int(blockIdx.x) / p.split) * kColsN;
  const long long batch = blockIdx.z + p.batch_base;
  const int kb = slice * p.slice_k, ke = min(p.k, kb + p.slice_k);
  const void* lb = p.l.ptr;
  const int col0 = c0 + lane, col1 = col0 + 32;
  const bool in0 = col0 < p.cols, in1 = col1 < p.cols;
  const long long lbase = batch * p.l.bs, sbase = batch * p.s.bs;

  float acc[ROWS][2];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) acc[r][0] = acc[r][1] = 0.0f;

  // The sixteen loads of L and the thread's share of S for one K chunk, zeros past the slice
  // (no memory access there), all issued before the first is used. At 16 rows (two blocks per
  // SM either way) the next chunk's are issued before this chunk's FMAs, so their latency
  // overlaps the FMAs; fewer rows keep the registers that let three or more blocks share an SM.
  constexpr int kPerWarp = kChunkN / kWarps;
  constexpr bool kPrefetch = ROWS >= 16;
  auto load_l = [&](int k0, float (&v)[kPerWarp][2]) {
#pragma unroll
    for (int i = 0; i < kPerWarp; ++i) {
      const int gk = k0 + warp + kWarps * i;
      const long long row = lbase + (long long)gk * p.l.sr;
      v[i][0] = (gk < ke && in0) ? skinny_load<LT>(lb, row + col0 * p.l.sc, p.l.dtype) : 0.0f;
      v[i][1] = (gk < ke && in1) ? skinny_load<LT>(lb, row + col1 * p.l.sc, p.l.dtype) : 0.0f;
    }
  };
  float v[kPerWarp][2];
  SChunk<ROWS, kChunkN, LT, true> sc;
  if constexpr (kPrefetch) {
    load_l(kb, v);
    sc.load(p, sbase, kb, ke);
  }
  for (int k0 = kb; k0 < ke; k0 += kChunkN) {
    if constexpr (!kPrefetch) {
      load_l(k0, v);
      sc.load(p, sbase, k0, ke);
    }
    __syncthreads();  // the previous chunk's FMAs have read s_sm
    sc.store(&s_sm[0][0]);
    __syncthreads();
    float next[kPerWarp][2];
    if constexpr (kPrefetch) {
      load_l(k0 + kChunkN, next);
      sc.load(p, sbase, k0 + kChunkN, ke);
    }
#pragma unroll
    for (int i = 0; i < kPerWarp; ++i) {
      const int kk = warp + kWarps * i;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float s = s_sm[kk][r];
        acc[r][0] = fmaf(s, v[i][0], acc[r][0]);
        acc[r][1] = fmaf(s, v[i][1], acc[r][1]);
      }
    }
    if constexpr (kPrefetch) {
#pragma unroll
      for (int i = 0; i < kPerWarp; ++i) v[i][0] = next[i][0], v[i][1] = next[i][1];
    }
  }

  // The warps' K-interleaved partial sums, added in warp order.
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    red[warp][r][lane] = acc[r][0];
    red[warp][r][lane + 32] = acc[r][1];
  }
  __syncthreads();
  for (int o = int(threadIdx.x); o < ROWS * kColsN; o += kThreads) {
    const int r = o / kColsN, c = o % kColsN;
    float v = red[0][r][c];
    for (int w = 1; w < kWarps; ++w) v += red[w][r][c];
    red[0][r][c] = v;  // only this thread reads (r, c)
  }
  __syncthreads();
  skinny_finish<ROWS, kColsN>(p, red[0], c0, batch, slice);
}

template <int ROWS, int LT, bool VEC>
__global__ void __launch_bounds__(skinny::kThreads, skinny::lanes_k_min_blocks(ROWS, VEC)) skinny_lanes_k(SkinnyArgs p) {
  using namespace skinny;
  dependent_launch_begin();
  // VEC: a lane loads aligned groups of four K of a column, S staged at each column's shift
  // (lanes_k_groups.h) where lanes_k_shifts; elsewhere the host keeps L aligned.
  namespace sg = skinny_groups;
  constexpr int kCopies = VEC && lanes_k_shifts(ROWS, LT) ? sg::kCopies : 1;
  constexpr int kLen = kCopies > 1 ? sg::kCopyLen : kChunkK;
  __shared__ __align__(16) float s_sm[kCopies][ROWS][kLen];
  __shared__ float part[ROWS][kColsK];
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int slice = int(blockIdx.x) % p.split, c0 = (int(blockIdx.x) / p.split) * kColsK;
  const long long batch = blockIdx.z + p.batch_base;
  const int kb = slice * p.slice_k, ke = min(p.k, kb + p.slice_k);
  const void* lb = p.l.ptr;
  const long long lbase = batch * p.l.bs, sbase = batch * p.s.bs;
  // Warp w takes four adjacent columns of the block; with shifted copies its columns w, w + 8,
  // w + 16 and w + 24: eight column strides apart, their first elements lie equally far past a
  // four-element boundary (the warp's shift).
  constexpr int kCols = kColsK / kWarps;
  auto block_col = [&](int c) { return kCopies > 1 ? warp + kWarps * c : warp * kCols + c; };
  long long col_off[kCols];
  bool col_in[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) {
    const int gc = c0 + block_col(c);
    col_in[c] = gc < p.cols;
    col_off[c] = lbase + (long long)gc * p.l.sc;
  }
  constexpr int kElemBytes = LT == kF32 ? 4 : 2;
  const int shift = kCopies > 1 && p.l_shifted ? sg::column_shift(reinterpret_cast<uintptr_t>(lb) / kElemBytes + col_off[0]) : 0;
  const int copies = kCopies > 1 && p.l_shifted ? kCopies : 1;

  float acc[ROWS][kCols];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < kCols; ++c) acc[r][c] = 0.0f;

  // VEC: lane l takes the group of K 4l - shift..4l - shift + 3 of each 128-K step (L's unit
  // stride is along K, sr == 1), elements outside the slice zero and never read; below 16 rows
  // both steps of a chunk are loaded at once, and before S is staged (they do not depend on it,
  // so the chunk waits on memory for both together); at 16 rows the registers allow neither
  // (ptxas spilled).
  constexpr int kSteps = kChunkK / 128, kAtOnce = ROWS >= 16 ? 1 : kSteps;
  constexpr bool kEarly = ROWS < 16;
  auto load_steps = [&](int k0, int h, Raw4<LT> (&raw)[kAtOnce][kCols]) {
    if constexpr (VEC) {
#pragma unroll
      for (int i = 0; i < kAtOnce; ++i) {
        const int a = sg::group_k(k0, h + i, lane, shift);
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          const int hi = col_in[c] ? ke - a : 0;
          // Unshifted groups start inside the slice.
          if constexpr (kCopies > 1) raw[i][c] = skinny_load4<LT>(lb, col_off[c] + a, kb - a, hi);
          else raw[i][c] = skinny_load4<LT>(lb, col_off[c] + a, hi);
        }
      }
    }
  };
  for (int k0 = kb; k0 < ke; k0 += kChunkK) {
    Raw4<LT> first[kAtOnce][kCols];
    if constexpr (kEarly) load_steps(k0, 0, first);
    // Rows of S a few at a time where the accumulators are many: more loads in flight made
    // ptxas spill the sixteen-row kernels.
    constexpr int kRowsAtOnce = ROWS < 8 ? ROWS : ROWS == 8 ? 8 : 4;
    __syncthreads();
#pragma unroll
    for (int h = 0; h < ROWS; h += kRowsAtOnce) {
      if constexpr (kCopies > 1) {
        SChunk<kRowsAtOnce, kLen + kCopies - 1, LT, false> sc;
        sc.template load<true>(p, sbase, k0 - (kCopies - 1), ke, h, kb);
        sc.template store_shifted<kCopies - 1, ROWS, kLen>(&s_sm[0][0][0], h, copies);
      } else {
        SChunk<kRowsAtOnce, kChunkK, LT, false> sc;
        sc.load(p, sbase, k0, ke, h);
        sc.store(&s_sm[0][0][0], h);
      }
    }
    __syncthreads();
    if constexpr (VEC) {
#pragma unroll
      for (int h = 0; h < kSteps; h += kAtOnce) {
        Raw4<LT> raw[kAtOnce][kCols];
        if (kEarly && h == 0) {
#pragma unroll
          for (int i = 0; i < kAtOnce; ++i)
#pragma unroll
            for (int c = 0; c < kCols; ++c) raw[i][c] = first[i][c];
        } else {
          load_steps(k0, h, raw);
        }
#pragma unroll
        for (int i = 0; i < kAtOnce; ++i) {
          float4 v[kCols];
#pragma unroll
          for (int c = 0; c < kCols; ++c) v[c] = skinny_float4<LT>(raw[i][c]);
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            const float4 s = *reinterpret_cast<const float4*>(&s_sm[shift][r][sg::copy_index(h + i, lane, 0)]);
#pragma unroll
            for (int c = 0; c < kCols; ++c) acc[r][c] = skinny_fma4(s, v[c], acc[r][c]);
          }
        }
      }
      // A shifted column's groups end `shift` elements before the chunk's: in the slice's last
      // chunk, lane 0 takes the group after them (at most `shift` elements left in the slice).
      if (kCopies > 1 && shift > 0 && lane == 0 && k0 + kChunkK >= ke) {
        const int a = sg::tail_group_k(k0, shift);
#pragma unroll
        for (int c = 0; c < kCols; ++c) {  // a column at a time: few registers beside the chunk's
          const float4 v = skinny_float4<LT>(skinny_load4<LT>(lb, col_off[c] + a, col_in[c] ? ke - a : 0));
#pragma unroll
          for (int r = 0; r < ROWS; ++r) {
            const float4 s = *reinterpret_cast<const float4*>(&s_sm[shift][r][sg::tail_copy_index(0)]);
            acc[r][c] = skinny_fma4(s, v, acc[r][c]);
          }
        }
      }
      continue;
    }
    constexpr int kGroup = ROWS >= 16 ? 2 : 4;  // K steps loaded before use (registers allowing)
#pragma unroll
    for (int h = 0; h < kChunkK / 32; h += kGroup) {
      float v[kGroup][kCols];
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        const int gk = k0 + lane + 32 * (h + i);
#pragma unroll
        for (int c = 0; c < kCols; ++c)
          v[i][c] = (gk < ke && col_in[c]) ? skinny_load<LT>(lb, col_off[c] + (long long)gk * p.l.sr, p.l.dtype) : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          const float s = s_sm[0][r][lane + 32 * (h + i)];
#pragma unroll
          for (int c = 0; c < kCols; ++c) acc[r][c] = fmaf(s, v[i][c], acc[r][c]);
        }
      }
    }
  }

  // Lane sums by a fixed butterfly (the same order every run).
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      float v = acc[r][c];
#pragma unroll
      for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
      if (lane == 0) part[r][block_col(c)] = v;
    }
  __syncthreads();
  skinny_finish<ROWS, kColsK>(p, part, c0, batch, slice);
}

}  // namespace omnigemm::detail::cuda
