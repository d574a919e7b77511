// Where the Hopper kernel's TMA loads of an operand crawl. Each K step of a tile loads its rows of
// A and columns of B as 128-byte lines (a K-major operand: one line per row, BLOCK_K elements; an
// MN-major one: boxes of 64 M or N elements by BLOCK_K lines), and an SM fetches such lines at a
// rate set by their pitch, the bytes between consecutive lines: a multiple of 128 bytes is the
// fast case, a multiple of 32 slower, and 16 bytes past a 32-byte boundary (every other line
// straddles a sector) slowest (tma_line_ns). Where the lines take longer than the step's MMAs the
// main loop runs at their rate. Narrow MN-major lines (16 to 48 bytes of the matrix's M or N
// elements in each line) wait longer still: TMA fetches such a box line by line (runs p44 and p45;
// lines under 16 bytes, which need a padded leading dimension to be loaded in place at all,
// waited on some problems and not on others); so do MN-major lines of 256-511 bytes on a
// straddling pitch. The cost model prices all three (Sm90WgmmaFamily::hints); sm90_repack offers
// such operands copied onto 128-byte pitches (narrow ones K-major). Host code only.
#pragma once
#include <cstdint>

#include "problem.hpp"

namespace omnigemm::detail::sm90 {

// Narrow MN-major lines: 16 to 48 bytes of M or N elements.
constexpr bool narrow_mn_lines(int64_t mn, int element_bytes) { return mn * element_bytes >= 16 && mn * element_bytes < 64; }

// Whether p's A (is_a) or B is MN-major: its unit stride is M's (A) or N's (B), not also K's.
inline bool mn_major(const Problem& p, bool is_a) {
  return is_a ? p.a.stride_row == 1 && p.a.stride_col != 1 : p.b.stride_col == 1 && p.b.stride_row != 1;
}

// The bytes of that operand's lines (M or N elements) where it is MN-major and they are narrow,
// else 0. The same test serves both orientations: the swap form's A is B^T, its B is A^T.
inline int64_t narrow_mn_line_bytes(const Problem& p, bool is_a, int element_bytes) {
  const int64_t mn = is_a ? p.m : p.n;
  return mn_major(p, is_a) && narrow_mn_lines(mn, element_bytes) ? mn * element_bytes : 0;
}

// The bytes between an operand's consecutive lines: its stride other than the unit one (0 where
// neither is 1).
inline int64_t line_pitch_bytes(const Operand& o, int element_bytes) {
  return (o.stride_col == 1 ? o.stride_row : o.stride_row == 1 ? o.stride_col : 0) * element_bytes;
}

// Pitches at which the lines straddle 32-byte sectors: what sm90_repack copies away where the
// cost model finds the copy cheaper than the slow lines.
constexpr bool sector_straddling_pitch(int64_t pitch_bytes) { return pitch_bytes % 32 != 0; }

// Whether that operand is MN-major with lines of 256 to 511 bytes of M or N elements on a pitch
// that straddles sectors: three or four boxes of such lines, every program loading the same ones,
// wait beyond the line rate (runs p47, p51: 65536 x N x 256 f16, B N-major, N = 136 and 200 waited
// 8.4 and 9.5 us more than on 128-byte pitches; N = 40 and 56, one box, 2.1 and 2.0).
inline bool short_straddling_mn_lines(const Problem& p, bool is_a, int element_bytes) {
  const int64_t bytes = (is_a ? p.m : p.n) * element_bytes;
  return mn_major(p, is_a) && bytes >= 256 && bytes < 512 &&
         sector_straddling_pitch(line_pitch_bytes(is_a ? p.a : p.b, element_bytes));
}

// One SM's time per 128-byte TMA line by the lines' pitch, fitted on the H200 (runs p51 and p52,
// f16 4096 x 4096 x 1000 with A and B pitches of 2000, 2016 and 2048 bytes on 128x128 and 128x256
// tiles, in both layouts): 3.05 ns where the pitch is 16 bytes past a 32-byte boundary,
// 2.1 where it is a multiple of 32 bytes but not of 128, 1.42 on a multiple of 128.
constexpr double tma_line_ns(int64_t pitch_bytes) {
  return pitch_bytes % 128 == 0 ? 1.42 : pitch_bytes % 32 == 0 ? 2.1 : 3.05;
}

}  // namespace omnigemm::detail::sm90
