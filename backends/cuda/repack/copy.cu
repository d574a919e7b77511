// The repack copy kernel (copy.hpp). Each block copies 64 x 64 tiles. Where the source already
// has a unit stride along the destination's unit dimension (an unaligned leading dimension or
// base, same orientation), each thread reads 16 bytes' worth of consecutive destination elements
// and writes them with one aligned 16-byte store. Otherwise (a transpose, or no unit stride) the
// tile goes through shared memory in the source's type: read with consecutive threads along the
// source's smaller stride, written as 16-byte vectors along the destination's unit stride;
// the shared tile's rows are padded to an odd number of 4-byte words, so that walking either of
// its dimensions touches 32 banks. Elements are converted (convert.hpp) as they are written; the
// conversion is uniform per tile (a tile belongs to one copy).
#include <algorithm>
#include <type_traits>

#include "../dependent_launch.cuh"
#include "copy.hpp"

namespace omnigemm::detail::repack {

namespace {

constexpr int kTile = 64;
constexpr int kThreads = 256;

template <class T>
struct Tile {
  static constexpr int kStride = kTile + int(4 / sizeof(T));  // 17, 33 or 65 words per row
  T e[kTile][kStride];
};

__device__ long long tiles_of(const Copy& c) {
  return (long long)((c.rows + kTile - 1) / kTile) * ((c.cols + kTile - 1) / kTile);
}

// One element's destination bits; CONVERT false: the same bits (no conversion asked), so the
// tile's loops carry no per-element switch.
template <class D, bool CONVERT>
__device__ __forceinline__ D converted(const Copy& c, og_uint s) {
  if constexpr (CONVERT) return D(convert_bits(c.convert, s));
  else return D(s);
}

// The tile's destination as (outer, inner): its lines and the unit-stride dimension along them.
struct DestinationView {
  int outer0, inner0, outer_n, inner_n;
  __device__ DestinationView(const Copy& c, int r0, int c0)
      : outer0(c.dst_unit_cols ? r0 : c0),
        inner0(c.dst_unit_cols ? c0 : r0),
        outer_n(c.dst_unit_cols ? c.rows : c.cols),
        inner_n(c.dst_unit_cols ? c.cols : c.rows) {}
};

// kVec destination elements (16 bytes) at `to`, a 16-byte aligned address (the workspace is
// 256-byte aligned and dst_ld a multiple of 16 bytes): one vector store where all are inside
// the line (`left` elements remain in it), else element by element.
template <class D, int kVec>
__device__ __forceinline__ void store_vector(D* to, const D (&e)[kVec], int left) {
  if (left >= kVec) {
    union {
      uint4 v;
      D e[kVec];
    } u;
#pragma unroll
    for (int q = 0; q < kVec; ++q) u.e[q] = e[q];
    *reinterpret_cast<uint4*>(to) = u.v;
  } else {
#pragma unroll
    for (int q = 0; q < kVec; ++q)  // static register indices (a dynamic one puts e in local memory)
      if (q < left) to[q] = e[q];
  }
}

// A transposing (or strided) tile through shared memory: every load of the thread is issued
// before the first shared store (a small copy is one memory latency, not one per element);
// then each thread writes whole 16-byte destination vectors gathered from the shared tile.
template <class S, class D, bool CONVERT>
__device__ void copy_tile(const Copy& c, long long tile, int b, Tile<S>& s) {
  const int tiles_c = (c.cols + kTile - 1) / kTile;
  const int r0 = int(tile / tiles_c) * kTile, c0 = int(tile % tiles_c) * kTile;
  const S* src = static_cast<const S*>(c.src) + (long long)b * c.src_batch;
  D* dst = static_cast<D*>(c.dst) + (long long)b * c.dst_batch;
  const bool read_along_cols = c.src_col <= c.src_row;
  constexpr int kPerThread = kTile * kTile / kThreads;
  S v[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = int(threadIdx.x) + k * kThreads, fast = e % kTile, slow = e / kTile;
    const int r = read_along_cols ? slow : fast, col = read_along_cols ? fast : slow;
    v[k] = r0 + r < c.rows && c0 + col < c.cols ? src[(long long)(r0 + r) * c.src_row + (long long)(c0 + col) * c.src_col] : S(0);
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int e = int(threadIdx.x) + k * kThreads, fast = e % kTile, slow = e / kTile;
    const int r = read_along_cols ? slow : fast, col = read_along_cols ? fast : slow;
    s.e[r][col] = v[k];
  }
  __syncthreads();
  constexpr int kVec = int(16 / sizeof(D)), kLineVectors = kTile / kVec;
  const DestinationView view(c, r0, c0);
  for (int u = threadIdx.x; u < kTile * kLineVectors; u += kThreads) {
    const int o = u / kLineVectors, i = u % kLineVectors * kVec;
    if (view.outer0 + o >= view.outer_n || view.inner0 + i >= view.inner_n) continue;
    D e[kVec];
#pragma unroll
    for (int q = 0; q < kVec; ++q) e[q] = converted<D, CONVERT>(c, c.dst_unit_cols ? s.e[o][i + q] : s.e[i + q][o]);
    store_vector<D, kVec>(dst + (long long)(view.outer0 + o) * c.dst_ld + view.inner0 + i, e, view.inner_n - view.inner0 - i);
  }
  __syncthreads();
}

// The same orientation: element loads (the source is not aligned), all of the thread's issued
// before its first store, then 16-byte stores; no shared memory.
template <class S, class D, bool CONVERT>
__device__ void copy_tile_direct(const Copy& c, long long tile, int b) {
  constexpr int kVec = int(16 / sizeof(D)), kLineVectors = kTile / kVec, kPer = kTile * kLineVectors / kThreads;
  static_assert(kTile * kLineVectors % kThreads == 0, "whole vectors per thread");
  const int tiles_c = (c.cols + kTile - 1) / kTile;
  const int r0 = int(tile / tiles_c) * kTile, c0 = int(tile % tiles_c) * kTile;
  const S* src = static_cast<const S*>(c.src) + (long long)b * c.src_batch;
  D* dst = static_cast<D*>(c.dst) + (long long)b * c.dst_batch;
  const DestinationView view(c, r0, c0);
  const long long src_outer = c.dst_unit_cols ? c.src_row : c.src_col;
  S v[kPer][kVec];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = int(threadIdx.x) + k * kThreads, o = view.outer0 + u / kLineVectors, i = view.inner0 + u % kLineVectors * kVec;
    const S* from = src + (long long)o * src_outer + i;
#pragma unroll
    for (int q = 0; q < kVec; ++q) v[k][q] = o < view.outer_n && i + q < view.inner_n ? from[q] : S(0);
  }
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int u = int(threadIdx.x) + k * kThreads, o = view.outer0 + u / kLineVectors, i = view.inner0 + u % kLineVectors * kVec;
    if (o >= view.outer_n || i >= view.inner_n) continue;
    D e[kVec];
#pragma unroll
    for (int q = 0; q < kVec; ++q) e[q] = converted<D, CONVERT>(c, v[k][q]);
    store_vector<D, kVec>(dst + (long long)o * c.dst_ld + i, e, view.inner_n - i);
  }
}

// blockIdx.x walks the tiles of copy 0 then copy 1, blockIdx.y the batches (grid-strided both).
// Every copy of `args` has S source and D destination elements.
template <class S, class D>
__global__ void __launch_bounds__(kThreads) repack_kernel(const __grid_constant__ Args args) {
  __shared__ Tile<S> s;
  cuda::dependent_launch_begin();  // the previous GEMM may still read the destination
  const long long t0 = tiles_of(args.copy[0]);
  const long long total = t0 + (args.count > 1 ? tiles_of(args.copy[1]) : 0);
  const int batches = max(args.copy[0].batches, args.count > 1 ? args.copy[1].batches : 0);
  for (int b = blockIdx.y; b < batches; b += gridDim.y)
    for (long long t = blockIdx.x; t < total; t += gridDim.x) {
      const int which = t < t0 ? 0 : 1;
      const Copy& c = args.copy[which];
      if (b >= c.batches) continue;
      const bool direct = c.dst_unit_cols ? c.src_col == 1 : c.src_row == 1;
      const long long ct = which ? t - t0 : t;
      auto run = [&](auto convert) {
        if (direct) copy_tile_direct<S, D, decltype(convert)::value>(c, ct, b);
        else copy_tile<S, D, decltype(convert)::value>(c, ct, b, s);
      };
      // Same element sizes copy the bits unless a conversion is asked (c's is uniform per tile).
      if (sizeof(S) == sizeof(D) && c.convert == Convert::none) run(std::false_type{});
      else run(std::true_type{});
    }
}

template <class S, class D>
cudaError_t launch_typed(const Args& args, const dim3 grid, bool dependent, cudaStream_t stream) {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attrs[1]{};
  config.gridDim = grid;
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  cuda::add_dependent_launch(config, attrs, dependent);
  return cudaLaunchKernelEx(&config, repack_kernel<S, D>, args);
}

// One launch of copies sharing their element sizes.
cudaError_t launch_group(const Args& args, bool dependent, cudaStream_t stream) {
  long long tiles = 0;
  int batches = 0;
  for (int i = 0; i < args.count; ++i) {
    const Copy& c = args.copy[i];
    tiles += (long long)((c.rows + kTile - 1) / kTile) * ((c.cols + kTile - 1) / kTile);
    batches = std::max(batches, c.batches);
  }
  const dim3 grid(unsigned(std::min<long long>(tiles, 1 << 20)), unsigned(std::min(batches, 65535)));
  const int sb = args.copy[0].src_bytes, db = args.copy[0].dst_bytes;
  if (sb == 4 && db == 4) return launch_typed<unsigned, unsigned>(args, grid, dependent, stream);
  if (sb == 2 && db == 2) return launch_typed<unsigned short, unsigned short>(args, grid, dependent, stream);
  if (sb == 1 && db == 1) return launch_typed<unsigned char, unsigned char>(args, grid, dependent, stream);
  if (sb == 1 && db == 2) return launch_typed<unsigned char, unsigned short>(args, grid, dependent, stream);
  if (sb == 2 && db == 4) return launch_typed<unsigned short, unsigned>(args, grid, dependent, stream);
  return cudaErrorInvalidValue;
}

bool same_sizes(const Copy& a, const Copy& b) { return a.src_bytes == b.src_bytes && a.dst_bytes == b.dst_bytes; }

}  // namespace

bool set_conversion(og_dtype from, og_dtype to, Copy& c) {
  auto bytes = [](og_dtype t) { return t == OG_DTYPE_F32 ? 4 : (t == OG_DTYPE_F16 || t == OG_DTYPE_BF16) ? 2 : 1; };
  const bool fp8 = from == OG_DTYPE_FP8_E4M3 || from == OG_DTYPE_FP8_E5M2;
  const bool e4m3 = from == OG_DTYPE_FP8_E4M3;
  if (from == to && from <= OG_DTYPE_FP8_E5M2) c.convert = Convert::none;
  else if (fp8 && to == OG_DTYPE_F16) c.convert = e4m3 ? Convert::e4m3_to_f16 : Convert::e5m2_to_f16;
  else if (fp8 && to == OG_DTYPE_BF16) c.convert = e4m3 ? Convert::e4m3_to_bf16 : Convert::e5m2_to_bf16;
  else if (from == OG_DTYPE_F16 && to == OG_DTYPE_F32) c.convert = Convert::f16_to_f32;
  else if (from == OG_DTYPE_BF16 && to == OG_DTYPE_F32) c.convert = Convert::bf16_to_f32;
  else return false;
  c.src_bytes = bytes(from);
  c.dst_bytes = bytes(to);
  return true;
}

int launches(const Args& args) { return args.count > 1 && !same_sizes(args.copy[0], args.copy[1]) ? 2 : 1; }

cudaError_t launch(const Args& args, bool dependent, cudaStream_t stream) {
  if (args.count < 1 || args.count > 2) return cudaErrorInvalidValue;
  for (int i = 0; i < args.count; ++i) {
    const Copy& c = args.copy[i];
    if (c.rows <= 0 || c.cols <= 0 || c.batches <= 0) return cudaErrorInvalidValue;
  }
  if (launches(args) == 1) return launch_group(args, dependent, stream);
  for (int i = 0; i < args.count; ++i) {
    Args one;
    one.copy[0] = args.copy[i];
    one.count = 1;
    if (const cudaError_t e = launch_group(one, dependent, stream); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace omnigemm::detail::repack
