// The index arithmetic of the tensor-core skinny kernel (skinny_mma_kernel.cuh), written once for
// the kernel and for the host model that checks it (tests/skinny_mma/test_skinny_mma_model.cpp):
// which lines a stage copies and from where, which 16-byte chunks go by cp.async and which
// element by element, where an element of a stage lies in shared memory, and which elements of
// D' = S * L a lane's mma.m16n8k16 fragments hold. Compiles as C++ (host) and CUDA; no pointers,
// only integers (addresses as 64-bit integers).
//
// An operand's "lines" are its runs along its unit stride: S (rows x K) has ROWS lines of K (S
// contiguous along K) or one line of ROWS per K; L (K x cols) has one line of K per column (L
// contiguous along K) or one line of 64 columns per K. A stage holds 64 of K; each line sits in
// shared memory at a pitch of its length + 8 elements, starting with the 16-byte aligned chunk
// that holds its first element: the element's place in that chunk is the line's shift.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define OG_SKINNY_FN __host__ __device__ constexpr inline
#else
#define OG_SKINNY_FN constexpr inline
#endif

namespace omnigemm::detail::skinny_mma {

constexpr int kThreads = 256;  // eight warps
constexpr int kCols = 64;      // columns of D' per block
constexpr int kChunk = 64;     // K per stage

// How the eight warps share a stage: warps_k along K (k_steps k16 steps each), warps_n along the
// columns (col_frags n8 fragments each). Up to 32 rows: 4 x 2 warps, one k16 step and 32 columns
// each; 64 rows: 2 x 4 warps, two k16 steps and 16 columns each (half the accumulators per lane,
// half the K-warp sums to add). Stages in the ring: four, three at 64 rows (dynamic shared
// memory: three blocks of 16 or 32 rows, or two of 64, fit an SM's 228 KB).
struct WarpLayout {
  int warps_k, warps_n, k_steps, col_frags;
};
OG_SKINNY_FN WarpLayout warp_layout(int rows) { return rows > 32 ? WarpLayout{2, 4, 2, 2} : WarpLayout{4, 2, 1, 4}; }
OG_SKINNY_FN int stages(int rows) { return rows > 32 ? 3 : 4; }
OG_SKINNY_FN bool covers_block(const WarpLayout& w) {
  return w.warps_k * w.warps_n * 32 == kThreads && w.warps_k * w.k_steps * 16 == kChunk && w.warps_n * w.col_frags * 8 == kCols;
}
static_assert(covers_block(warp_layout(16)) && covers_block(warp_layout(32)) && covers_block(warp_layout(64)));

// A stage's tile of one operand: `lines` lines of up to `len` elements at `pitch` elements.
struct TileShape {
  int lines, len, pitch, chunks_per_line, bytes;
};
OG_SKINNY_FN TileShape tile_shape(int lines, int len) { return {lines, len, len + 8, len / 8 + 1, lines * (len + 8) * 2}; }
OG_SKINNY_FN TileShape s_tile(int rows, bool k_fast) { return k_fast ? tile_shape(rows, kChunk) : tile_shape(kChunk, rows); }
OG_SKINNY_FN TileShape l_tile(bool k_fast) { return k_fast ? tile_shape(kCols, kChunk) : tile_shape(kChunk, kCols); }
OG_SKINNY_FN int stage_bytes(int rows, bool s_k_fast, bool l_k_fast) { return s_tile(rows, s_k_fast).bytes + l_tile(l_k_fast).bytes; }
// The block's shared memory: the stages' ring, which afterwards holds the K-warps' f32 sums.
OG_SKINNY_FN int ring_bytes(int rows, bool s_k_fast, bool l_k_fast) {
  const int ring = stages(rows) * stage_bytes(rows, s_k_fast, l_k_fast), sums = warp_layout(rows).warps_k * rows * kCols * 4;
  return ring > sums ? ring : sums;
}

// One operand of the oriented problem: its address, element strides and the batch's extent.
struct OperandGeometry {
  uint64_t addr;           // byte address of element (0, 0) of batch 0 (2-byte elements)
  int64_t sr, sc, bs;      // strides in elements: rows, columns, batches
};
// The bytes [lo, hi) from the batch's first element to past its last: the only memory a 16-byte
// copy may touch.
OG_SKINNY_FN void extent(const OperandGeometry& o, int64_t batch, int rows, int cols, uint64_t& lo, uint64_t& hi) {
  lo = o.addr + 2u * uint64_t(batch * o.bs);
  hi = lo + 2u * uint64_t(int64_t(rows - 1) * o.sr + int64_t(cols - 1) * o.sc + 1);
}

// Where one stage's lines come from: line i starts at element first + i * line_stride of the
// operand (address addr) and has `count` elements if i < lines, none otherwise.
struct LineSource {
  uint64_t addr;
  int64_t first, line_stride;
  int lines, count;
  uint64_t lo, hi;
};
OG_SKINNY_FN uint64_t line_address(const LineSource& s, int i) { return s.addr + 2u * uint64_t(s.first + int64_t(i) * s.line_stride); }
// The place of line i's first element in its 16-byte chunk, in elements.
OG_SKINNY_FN int line_shift(const LineSource& s, int i) { return int(line_address(s, i) & 15u) >> 1; }

// The lines of stage `chunk` of a block: S (rows x K, k_fast: unit stride along K, else along
// its rows) and L (K x cols, k_fast: along K, else along the columns), the block's columns from
// c0, its K slice [kb, ke). A stage advances K by kChunk elements, a multiple of 8, so a line's
// shift is the same in every stage of the block.
struct StageArgs {
  OperandGeometry s, l;
  int rows, cols, k;
  bool s_k_fast, l_k_fast;
};
OG_SKINNY_FN void stage_sources(const StageArgs& a, int64_t batch, int c0, int kb, int ke, int chunk, LineSource& s, LineSource& l) {
  const int k0 = kb + chunk * kChunk, kn = ke - k0 < kChunk ? ke - k0 : kChunk;
  const int cols_here = a.cols - c0 < kCols ? a.cols - c0 : kCols;
  const int64_t sbase = batch * a.s.bs, lbase = batch * a.l.bs;
  s.addr = a.s.addr;
  extent(a.s, batch, a.rows, a.k, s.lo, s.hi);
  if (a.s_k_fast) s.first = sbase + k0 * a.s.sc, s.line_stride = a.s.sr, s.lines = a.rows, s.count = kn;
  else s.first = sbase + k0 * a.s.sc, s.line_stride = a.s.sc, s.lines = kn, s.count = a.rows;
  l.addr = a.l.addr;
  extent(a.l, batch, a.k, a.cols, l.lo, l.hi);
  if (a.l_k_fast) l.first = lbase + c0 * a.l.sc + k0 * a.l.sr, l.line_stride = a.l.sc, l.lines = cols_here, l.count = kn;
  else l.first = lbase + k0 * a.l.sr + c0 * a.l.sc, l.line_stride = a.l.sr, l.lines = kn, l.count = cols_here;
}

// What copy slot `slot` (line slot / chunks_per_line, its chunk q) of a tile does: nothing (the
// line is absent or the chunk past its end), one 16-byte copy of the aligned chunk at `chunk`
// (inside the operand's extent), or element by element the line's own elements in that chunk
// (an end of the extent). `to` is the chunk's first element in the tile.
enum class CopyKind : int { none = 0, vector = 1, elements = 2 };
struct ChunkCopy {
  CopyKind kind;
  uint64_t chunk, line;  // byte addresses: the chunk, and the line's first element
  int valid;             // the line's elements
  int to;
};
OG_SKINNY_FN ChunkCopy chunk_copy(const TileShape& t, const LineSource& s, int slot) {
  const int i = slot / t.chunks_per_line, q = slot % t.chunks_per_line;
  ChunkCopy c{CopyKind::none, 0, 0, 0, i * t.pitch + q * 8};
  if (i >= s.lines) return c;
  c.line = line_address(s, i);
  c.valid = s.count;
  const int shift = int(c.line & 15u) >> 1;
  if (q * 8 >= shift + c.valid) return c;
  c.chunk = (c.line & ~uint64_t(15)) + 16u * uint64_t(q);
  c.kind = c.chunk >= s.lo && c.chunk + 16 <= s.hi ? CopyKind::vector : CopyKind::elements;
  return c;
}
// Whether byte address `at` of a chunk copied element by element holds one of the line's own elements.
OG_SKINNY_FN bool own_element(const ChunkCopy& c, uint64_t at) { return at >= c.line && at < c.line + 2u * uint64_t(c.valid); }

// The fast path. The full stages (kChunk of K) of a block copy the same slots each, every chunk
// at its address in the block's first full stage plus the stage's advance: kChunk x the
// operand's stride along K, in bytes a multiple of 16. In a full stage whose every chunk lies
// inside the operand's extent, every slot that copies at all is one 16-byte copy. So a thread
// keeps one word per slot, computed once per block (its place in the tile and its chunk's offset
// from the first line's chunk), and the interval of stages that are inside.
constexpr uint32_t kNoSlot = 0x3ffu;
OG_SKINNY_FN int64_t stage_advance(int64_t stride_k) { return 2 * int64_t(kChunk) * stride_k; }
// The 16-byte chunk that holds the first line's first element: slot offsets count from it.
OG_SKINNY_FN uint64_t stage_base(const LineSource& s) { return line_address(s, 0) & ~uint64_t(15); }
// Slot `slot` of a full stage `full` as a word: bits 0-9 the chunk's place in the tile / 8
// (kNoSlot: the slot copies nothing), bits 10-31 its chunk's offset from stage_base, in 16-byte
// units, signed. `fits` turns false where an offset needs more bits (then no stage is fast).
OG_SKINNY_FN uint32_t slot_word(const TileShape& t, const LineSource& full, int slot, bool& fits) {
  const ChunkCopy c = chunk_copy(t, full, slot);
  if (c.kind == CopyKind::none) return kNoSlot;
  const int64_t off = int64_t(c.chunk - stage_base(full)) / 16;
  if (off < -(int64_t(1) << 21) || off >= (int64_t(1) << 21)) {
    fits = false;
    return kNoSlot;
  }
  return uint32_t(off) << 10 | uint32_t(c.to / 8);
}
OG_SKINNY_FN int slot_to(uint32_t w) { return int(w & kNoSlot) * 8; }
OG_SKINNY_FN int64_t slot_offset(uint32_t w) { return int64_t(int32_t(w) >> 10) * 16; }
static_assert(tile_shape(kChunk, 64).lines * tile_shape(kChunk, 64).pitch / 8 < int(kNoSlot), "a tile's chunk places fit in 10 bits");
// Whether every chunk that stage `s`'s lines cover lies in [lo, hi). The lines are evenly
// spaced, so the first and the last bound them.
OG_SKINNY_FN bool stage_inside(const LineSource& s) {
  if (s.lines <= 0 || s.count <= 0) return true;
  const uint64_t a = line_address(s, 0), b = line_address(s, s.lines - 1);
  const uint64_t first = (a < b ? a : b) & ~uint64_t(15), last = ((a < b ? b : a) + 2u * uint64_t(s.count - 1)) | 15u;
  return first >= s.lo && last < s.hi;
}
// The stages c in [from, to) whose chunks all lie inside the extent, for the full stage `full`
// (stage 0) advancing by `advance` bytes a stage: first + c advance >= lo and last + c advance < hi.
OG_SKINNY_FN void inside_stages(const LineSource& full, int64_t advance, int& from, int& to) {
  from = to = 0;
  if (advance <= 0 || full.lines <= 0 || full.count <= 0) return;
  const uint64_t a = line_address(full, 0), b = line_address(full, full.lines - 1);
  const int64_t first = int64_t((a < b ? a : b) & ~uint64_t(15)), last = int64_t(((a < b ? b : a) + 2u * uint64_t(full.count - 1)) | 15u);
  const int64_t lo = int64_t(full.lo), hi = int64_t(full.hi);
  if (hi <= last) return;
  const int64_t c_from = lo > first ? (lo - first + advance - 1) / advance : 0;
  const int64_t c_to = (hi - last - 1) / advance + 1;
  const int64_t cap = int64_t(1) << 30;
  from = int(c_from < cap ? c_from : cap);
  to = int(c_to < cap ? c_to : cap);
}
// Whether a slice [kb, ke) computes slot words at all: two full stages or more (one does not
// repay them).
OG_SKINNY_FN bool words_repay(int kb, int ke) { return (ke - kb) / kChunk >= 2; }
// The slice's fast stages [from, to): full, and inside both extents (sf, lf: the slice's first
// full stage of S and of L, from stage_sources with ke = kb + kChunk); none where a word did not fit.
OG_SKINNY_FN void fast_stages(const StageArgs& a, const LineSource& sf, const LineSource& lf, int kb, int ke, bool fits, int& from, int& to) {
  int s_from, s_to, l_from, l_to;
  inside_stages(sf, stage_advance(a.s.sc), s_from, s_to);
  inside_stages(lf, stage_advance(a.l.sr), l_from, l_to);
  const int full = (ke - kb) / kChunk, end = s_to < l_to ? s_to : l_to;
  from = s_from > l_from ? s_from : l_from;
  to = fits ? (end < full ? end : full) : 0;
}
// Stage `chunk`'s lines of a full stage whose stage 0 is `full`.
OG_SKINNY_FN LineSource advanced(const LineSource& full, int chunk, int64_t stride_k) {
  LineSource s = full;
  s.first += int64_t(chunk) * kChunk * stride_k;
  return s;
}

// A thread's slots of a tile (slot = thread + j x kThreads), and the block's shared memory:
// the ring, then every thread's slot words (kept in shared memory, not registers: the kernels
// have none to spare), words[j][thread].
OG_SKINNY_FN int slots_per_thread(const TileShape& t) { return (t.lines * t.chunks_per_line + kThreads - 1) / kThreads; }
OG_SKINNY_FN int word_bytes(int rows, bool s_k_fast, bool l_k_fast) {
  return 4 * kThreads * (slots_per_thread(s_tile(rows, s_k_fast)) + slots_per_thread(l_tile(l_k_fast)));
}
OG_SKINNY_FN int block_shared_bytes(int rows, bool s_k_fast, bool l_k_fast) { return ring_bytes(rows, s_k_fast, l_k_fast) + word_bytes(rows, s_k_fast, l_k_fast); }
// Within a block's dynamic shared memory on sm_80 and sm_90 (at most 163 KB and 227 KB), and
// small enough that three blocks of up to 32 rows and two of 64 share an SM of sm_90.
static_assert(block_shared_bytes(16, false, true) <= 72 * 1024 && block_shared_bytes(32, false, true) <= 72 * 1024 &&
                  block_shared_bytes(32, true, true) <= 72 * 1024 && block_shared_bytes(32, false, false) <= 72 * 1024 &&
                  block_shared_bytes(64, false, true) <= 110 * 1024 && block_shared_bytes(64, true, true) <= 110 * 1024,
              "a block's shared memory");

// Element (x, k) of a stage's tile (x: S's row or L's column, k: the K offset in the stage) on a
// line with the given shift, as an element index into the tile.
OG_SKINNY_FN int tile_index(const TileShape& t, bool k_fast, int x, int k, int shift) {
  return (k_fast ? x : k) * t.pitch + shift + (k_fast ? k : x);
}

// A lane's mma.m16n8k16 fragments (g = lane / 4, t = lane % 4), for warp (wk, wn) of layout w:
// K offsets within the stage wk * (kChunk / warps_k) + 16 step + 2 t + k_offset(q) for q = 0..3;
// A (S) rows 16 i + g + 8 h; B (L) columns wn * (kCols / warps_n) + 8 j + g; accumulator q of
// fragment (i, j) at row 16 i + g + 8 (q / 2), column wn * (kCols / warps_n) + 8 j + 2 t + q % 2.
OG_SKINNY_FN int k_offset(int q) { return (q & 1) + (q >> 1) * 8; }
OG_SKINNY_FN int frag_k(const WarpLayout& w, int wk, int step, int t, int q) { return wk * (kChunk / w.warps_k) + step * 16 + 2 * t + k_offset(q); }
OG_SKINNY_FN int frag_row(int i, int g, int h) { return i * 16 + g + 8 * h; }
OG_SKINNY_FN int frag_col(const WarpLayout& w, int wn, int j, int g) { return wn * (kCols / w.warps_n) + j * 8 + g; }
OG_SKINNY_FN int acc_row(int i, int g, int q) { return i * 16 + g + 8 * (q / 2); }
OG_SKINNY_FN int acc_col(const WarpLayout& w, int wn, int j, int t, int q) { return wn * (kCols / w.warps_n) + j * 8 + 2 * t + q % 2; }

// Lines 8 apart start 8 x line_stride elements apart: at the same place in their 16-byte chunks.
// So a lane's fragment elements lie on lines of two shifts at most: where lines run along K
// (one line per row of S or column of L), every line it reads is 8 apart from its first
// (frag_row(0, g, 0), frag_col(w, wn, 0, g)); where lines are K offsets, those of its K offsets
// 2t + {0, 8} + 16 step and 2t + {1, 9} + 16 step are 8 apart from frag_k(w, wk, 0, t, 0) and
// frag_k(w, wk, 0, t, 1). The index (0 or 1) of the shift of element q's line:
OG_SKINNY_FN int shift_index(bool lines_along_k, int q) { return lines_along_k ? 0 : (q & 1); }

}  // namespace omnigemm::detail::skinny_mma
