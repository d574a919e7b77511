// The index arithmetic of cuda.short_k's stores (short_k_kernel.cuh), written once for the kernel
// and for the host model that checks it (tests/short_k/test_short_k_model.cpp). Compiles as C++
// (host) and CUDA; integers only.
//
// A lane holds kLaneCols consecutive outputs of a row of D' (its natural chunk, starting at a
// column that is a multiple of kLaneCols) packed as little-endian 32-bit words. D's row may start
// at any even byte offset s of a 16-byte unit, so the lane stores instead the aligned window that
// ends s bytes before its chunk's end: the last s bytes of its left neighbour's chunk, then the
// first bytes of its own (window_source). Whole windows leave in 16-byte stores; only a block's
// first and last window of a row and the windows past D's last column are partial, stored in the
// widest aligned pieces (unit_pieces). So every byte of the row is written once, by aligned
// stores, with two partial units per row and block.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define OG_SHORT_K_FN __host__ __device__ __forceinline__
#else
#define OG_SHORT_K_FN inline
#endif

namespace omnigemm::detail::short_k {

constexpr int kLaneCols = 8;  // outputs per lane and half: 16 bytes of a 16-bit D, 32 of an f32 D

// The source of word i of a window shifted by s bytes (s even, 0 <= s < 16) when a lane's words
// are X[0..2W): its left neighbour's W words, then its own: the window's word i is bits
// [shift, shift + 32) of X[hi] : X[lo] (hi above lo), shift 16 or 32 (32: X[hi] alone).
struct WindowSource {
  int lo, hi, shift;
};
OG_SHORT_K_FN WindowSource window_source(int words, int s, int i) {
  const int a = s / 4;
  return {words + i - a - 1, words + i - a, s % 4 ? 16 : 32};
}

// The bytes [lo, hi) of a lane's window (window_bytes long, its byte 0 at column
// window_col0 of the row, out_bytes per output) that belong to the block's columns
// [block_col0, block_col_end) and to the row's [0, n); hi <= lo when none do. Columns are below
// 2^31 (the family keeps a block's end there).
struct ByteRange {
  int lo, hi;
};
OG_SHORT_K_FN ByteRange window_bytes_owned(int window_col0, int window_bytes, int out_bytes, int block_col0, int block_col_end,
                                          int n) {
  const int first = window_col0 > block_col0 ? window_col0 : block_col0;
  int last = window_col0 + window_bytes / out_bytes;
  if (last > block_col_end) last = block_col_end;
  if (last > n) last = n;
  return {(first - window_col0) * out_bytes, (last - window_col0) * out_bytes};
}

// The widest aligned pieces covering bytes [lo, hi) of a 16-byte unit (lo, hi even): put(offset,
// bytes) for each, bytes 16, 8, 4 or 2 with offset % bytes == 0; nothing where hi <= lo. The
// offsets are compile-time after unrolling, so the kernel picks its words statically.
template <class Put>
OG_SHORT_K_FN void unit_pieces(int lo, int hi, Put&& put) {
  if (lo <= 0 && hi >= 16) {
    put(0, 16);
    return;
  }
  for (int o8 = 0; o8 < 16; o8 += 8) {
    if (lo <= o8 && o8 + 8 <= hi) {
      put(o8, 8);
      continue;
    }
    for (int o4 = o8; o4 < o8 + 8; o4 += 4) {
      if (lo <= o4 && o4 + 4 <= hi) {
        put(o4, 4);
        continue;
      }
      if (lo <= o4 && o4 + 2 <= hi) put(o4, 2);
      if (lo <= o4 + 2 && o4 + 4 <= hi) put(o4 + 2, 2);
    }
  }
}

}  // namespace omnigemm::detail::short_k
