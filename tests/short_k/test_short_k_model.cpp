// cuda.short_k's stores modelled on the host from the kernel's own arithmetic (short_k/row_units.h):
// the lanes of a warp hold their natural chunks of a row, shift them into aligned windows from
// their left neighbours (lane 0 from lane 31 of the half before), and store the bytes each
// window owns in the pieces unit_pieces gives, as short_k_gemm does. Every row offset, block
// width, output width and ragged end: each byte of the block's columns is written exactly once
// with its column's value, nothing outside them, and every store is aligned to its size.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "short_k/row_units.h"

namespace sk = omnigemm::detail::short_k;

namespace {

// The value byte `byte` of output column `col` holds: distinct per column and byte.
uint8_t value_byte(long long col, int byte) { return uint8_t(col * 7 + byte * 131 + 17); }

// One row of D (n outputs of out_bytes, starting s bytes into a 16-byte unit) stored by the
// blocks of `halves` x 256 columns; returns false on the first fault.
bool model_row(int s, int halves, int out_bytes, int n) {
  const int words = sk::kLaneCols * out_bytes / 4, cols = halves * 32 * sk::kLaneCols;
  const long long row_bytes = n * out_bytes, pad = 64;
  std::vector<int> writes(size_t(row_bytes + 2 * pad + 64), 0);
  std::vector<uint8_t> mem(writes.size(), 0);
  // Address 0 of mem is 16-byte aligned; the row starts at pad + s.
  const long long row = pad + s;
  for (int col0 = 0; col0 < n; col0 += cols) {
    // own[h][lane][w]: the natural chunk's words.
    std::vector<uint32_t> own(static_cast<size_t>(halves * 32 * words));
    auto own_at = [&](int h, int lane, int w) -> uint32_t& { return own[size_t((h * 32 + lane) * words + w)]; };
    for (int h = 0; h < halves; ++h)
      for (int lane = 0; lane < 32; ++lane)
        for (int w = 0; w < words; ++w) {
          uint32_t v = 0;
          for (int b = 0; b < 4; ++b) {
            const int byte = 4 * w + b;
            const int col = col0 + h * 256 + lane * sk::kLaneCols + byte / out_bytes;
            v |= uint32_t(value_byte(col, byte % out_bytes)) << (8 * b);
          }
          own_at(h, lane, w) = v;
        }
    for (int lane = 0; lane < 32; ++lane) {
      for (int h = 0; h <= halves; ++h) {
        if (h == halves && (lane != 31 || s == 0)) break;
        const int hh = h < halves ? h : halves - 1;
        // The left neighbour's words (lane 0: lane 31 of the half before; none before half 0).
        std::vector<uint32_t> x(size_t(2 * words), 0xdeadbeefu);
        for (int w = 0; w < words; ++w) {
          if (h == halves) {
            x[size_t(w)] = own_at(hh, lane, w);
          } else {
            const int ll = lane > 0 ? lane - 1 : 31, lh = lane > 0 ? h : h - 1;
            if (lh >= 0) x[size_t(w)] = own_at(lh, ll, w);
            x[size_t(words + w)] = own_at(h, lane, w);
          }
        }
        std::vector<uint32_t> out(static_cast<size_t>(words));
        for (int i = 0; i < words; ++i) {
          const sk::WindowSource src = sk::window_source(words, s, i);
          const uint64_t pair = (uint64_t(x[size_t(src.hi)]) << 32) | x[size_t(src.lo)];
          out[size_t(i)] = uint32_t(pair >> src.shift);
        }
        const int chunk_col = col0 + hh * 256 + lane * sk::kLaneCols + (h < halves ? 0 : sk::kLaneCols);
        const int window_col0 = chunk_col - s / out_bytes;
        const sk::ByteRange r = sk::window_bytes_owned(window_col0, words * 4, out_bytes, col0, col0 + cols, n);
        if (r.hi <= r.lo) continue;
        const long long p = row + window_col0 * out_bytes;
        if (p % 16 != 0) return false;
        for (int unit = 0; unit < words / 4; ++unit) {
          bool fault = false;
          sk::unit_pieces(r.lo - 16 * unit, r.hi - 16 * unit, [&](int off, int bytes) {
            const long long at = p + 16 * unit + off;
            if (off % bytes != 0 || at % bytes != 0 || at < 0 || at + bytes > (long long)mem.size()) {
              fault = true;
              return;
            }
            for (int b = 0; b < bytes; ++b) {
              const int wb = 16 * unit + off + b;
              mem[size_t(at + b)] = uint8_t(out[size_t(wb / 4)] >> (8 * (wb % 4)));
              ++writes[size_t(at + b)];
            }
          });
          if (fault) return false;
        }
      }
    }
  }
  for (long long a = 0; a < (long long)mem.size(); ++a) {
    const bool inside = a >= row && a < row + row_bytes;
    if (writes[size_t(a)] != (inside ? 1 : 0)) return false;
    if (inside && mem[size_t(a)] != value_byte((a - row) / out_bytes, int((a - row) % out_bytes))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("short_k model: every row byte once, aligned, with its value, at every offset and ragged end") {
  int rows = 0;
  for (int out_bytes : {2, 4})
    for (int s = 0; s < 16; s += out_bytes)
      for (int halves : {1, 2})
        for (int n : {1, 7, 8, 9, 255, 256, 257, 511, 512, 513, 1000, 1031, 6617}) {
          CAPTURE(out_bytes);
          CAPTURE(s);
          CAPTURE(halves);
          CAPTURE(n);
          CHECK(model_row(s, halves, out_bytes, n));
          ++rows;
        }
  CHECK(rows == (8 + 4) * 2 * 13);
}

TEST_CASE("short_k model: unit_pieces gives the widest aligned pieces of a partial unit") {
  for (int lo = 0; lo <= 16; lo += 2)
    for (int hi = lo; hi <= 16; hi += 2) {
      CAPTURE(lo);
      CAPTURE(hi);
      int covered[16] = {};
      int pieces = 0;
      sk::unit_pieces(lo, hi, [&](int off, int bytes) {
        CHECK(off % bytes == 0);
        for (int b = off; b < off + bytes; ++b) ++covered[b];
        ++pieces;
      });
      for (int b = 0; b < 16; ++b) CHECK(covered[b] == (b >= lo && b < hi ? 1 : 0));
      // At most one piece per power of two on each side of the 8-byte midpoint, and 16 bytes whole.
      CHECK(pieces <= (hi - lo == 16 ? 1 : 6));
    }
}
