// A host model of the tensor-core skinny kernel (backends/cuda/skinny/skinny_mma_kernel.cuh),
// built on the kernel's own index arithmetic (skinny/mma_layout.h): it runs the kernel's schedule
// on the CPU (every block, stage, copy slot, warp and lane) with byte arrays standing in for a
// stage's shared memory, and the documented behaviour of the hardware operations standing in for
// them:
//   - cp.async.cg 16 copies 16 bytes from a 16-byte aligned global address;
//   - mma.sync.m16n8k16.row.col (PTX ISA, "Matrix fragments for mma.m16n8k16"): lane l (g = l / 4,
//     t = l % 4) holds A registers a0..a3 with elements (row g + 8 (r % 2), col 2t + h + 8 (r / 2))
//     in half h, B registers b0, b1 with (row 2t + h + 8 r, col g), and accumulators c0..c3 at
//     (row g + 8 (q / 2), col 2t + q % 2).
// Shared memory starts as NaN (what a stale stage may hold), so an element the kernel reads
// without having copied or masked it shows up. Every global read is checked to lie inside the
// operand's own storage. What it cannot show: that the GPU behaves as modelled (the device tests
// in tests/cuda/test_cuda_skinny_mma.cpp do); what it does show: that the kernel's arithmetic,
// applied to that behaviour, computes the GEMM, on any shape, layout and alignment.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "gemm_check.hpp"
#include "skinny/mma_layout.h"

using namespace omnigemm;
using namespace omnigemm::test;
namespace sm = omnigemm::detail::skinny_mma;

namespace {

// Deliberate faults, each of which the test expects to break the result (the model can fail).
enum class Fault { none, no_shift, no_mask, b_halves_swapped };

// A matrix's storage placed `offset` bytes past a 16-byte boundary: the kernel's view of global
// memory. Reads outside [begin, end) fail the test.
struct Placed {
  std::vector<uint8_t> buffer;
  uint64_t begin = 0, end = 0;
  Placed(const HostMatrix& m, int offset) : buffer(m.bytes.size() + 32) {
    const uint64_t raw = reinterpret_cast<uint64_t>(buffer.data());
    begin = ((raw + 15) & ~uint64_t(15)) + uint64_t(offset);
    end = begin + m.bytes.size();
    std::memcpy(reinterpret_cast<void*>(begin), m.bytes.data(), m.bytes.size());
  }
  bool holds(uint64_t at, int bytes) const { return at >= begin && at + uint64_t(bytes) <= end; }
};

// Stages the model ran through the kernel's fast path (every case together): the tests below
// require some, so that path is checked too.
int64_t fast_stages_seen = 0;

float half_value(Dtype d, uint16_t bits) { return d == Dtype::f16 ? numeric::f16_to_f32(bits) : numeric::bf16_to_f32(bits); }

struct ModelCase {
  int64_t m, n, k;
  int batch;
  Dtype in;
  bool ta, tb;        // op(A), op(B) transposed storage
  bool transposed;    // the tmma form: D^T = B^T A^T
  int rows_tile;      // 16 or 32
  int split;
  int a_offset, b_offset;
  Fault fault = Fault::none;
};

// Runs the model; returns the relative error against float64 (NaN anywhere: +inf).
double run_model(const ModelCase& mc) {
  CAPTURE(mc.m);
  CAPTURE(mc.n);
  CAPTURE(mc.k);
  CAPTURE(mc.batch);
  CAPTURE(mc.ta);
  CAPTURE(mc.tb);
  CAPTURE(mc.transposed);
  CAPTURE(mc.rows_tile);
  CAPTURE(mc.split);
  CAPTURE(mc.a_offset);
  CAPTURE(mc.b_offset);
  HostMatrix A(mc.ta ? mc.k : mc.m, mc.ta ? mc.m : mc.k, mc.in, Layout::row_major, 3, mc.batch, 1);
  HostMatrix B(mc.tb ? mc.n : mc.k, mc.tb ? mc.k : mc.n, mc.in, Layout::row_major, 5, mc.batch, 3);
  A.transposed = mc.ta;
  B.transposed = mc.tb;
  A.randomize();
  B.randomize();
  const Placed pa(A, mc.a_offset), pb(B, mc.b_offset);
  // op(X)'s strides (row, column) as the engine folds them into a Problem.
  auto strides = [](const HostMatrix& x, int64_t& sr, int64_t& sc) {
    sr = x.transposed ? 1 : x.ld;
    sc = x.transposed ? x.ld : 1;
  };
  int64_t a_sr, a_sc, b_sr, b_sc;
  strides(A, a_sr, a_sc);
  strides(B, b_sr, b_sc);
  const bool t = mc.transposed;
  sm::StageArgs sa{};
  const Placed& ps = t ? pb : pa;
  const Placed& pl = t ? pa : pb;
  // The orientation of launch.hpp's plan_skinny: S = op(A), L = op(B), or S = op(B)^T, L = op(A)^T.
  sa.s = t ? sm::OperandGeometry{pb.begin, b_sc, b_sr, B.batch_stride} : sm::OperandGeometry{pa.begin, a_sr, a_sc, A.batch_stride};
  sa.l = t ? sm::OperandGeometry{pa.begin, a_sc, a_sr, A.batch_stride} : sm::OperandGeometry{pb.begin, b_sr, b_sc, B.batch_stride};
  sa.rows = int(t ? mc.n : mc.m);
  sa.cols = int(t ? mc.m : mc.n);
  sa.k = int(mc.k);
  sa.s_k_fast = sa.s.sc == 1;
  sa.l_k_fast = sa.l.sr == 1;
  REQUIRE(sa.rows <= mc.rows_tile);
  const sm::TileShape ts = sm::s_tile(mc.rows_tile, sa.s_k_fast), tl = sm::l_tile(sa.l_k_fast);
  const int frags_m = mc.rows_tile / 16;
  const sm::WarpLayout wl = sm::warp_layout(mc.rows_tile);
  // The family's split: slices of whole stages.
  const int64_t chunks_all = std::max<int64_t>(1, (mc.k + sm::kChunk - 1) / sm::kChunk);
  REQUIRE(mc.split <= chunks_all);
  const int slice_k = int((chunks_all + mc.split - 1) / mc.split) * sm::kChunk;
  const uint16_t nan_bits = mc.in == Dtype::f16 ? 0x7e00 : 0x7fc0;

  // Out-of-bounds reads (global or shared) and misplaced accumulators, counted (checked once at
  // the end: the loops below run millions of times).
  int64_t bad = 0;
  auto expect = [&](bool ok) { bad += !ok; return ok; };
  std::vector<double> out(size_t(mc.batch) * sa.rows * sa.cols, 0.0);
  const int col_blocks = (sa.cols + sm::kCols - 1) / sm::kCols;
  for (int b = 0; b < mc.batch; ++b)
    for (int cb = 0; cb < col_blocks; ++cb) {
      const int c0 = cb * sm::kCols;
      std::vector<float> block_sum(size_t(mc.rows_tile) * sm::kCols, 0.0f);
      for (int slice = 0; slice < mc.split; ++slice) {
        const int kb = slice * slice_k, ke = std::min(sa.k, kb + slice_k);
        const int chunks = ke > kb ? (ke - kb + sm::kChunk - 1) / sm::kChunk : 0;
        // Per lane of each warp: the line shifts (from stage 0, as the kernel) and accumulators.
        std::vector<float> acc(size_t(sm::kThreads) * frags_m * wl.col_frags * 4, 0.0f);
        auto acc_at = [&](int warp, int lane, int i, int j, int q) -> float& {
          return acc[((size_t(warp * 32 + lane) * frags_m + i) * wl.col_frags + j) * 4 + q];
        };
        sm::LineSource s0, l0;
        sm::stage_sources(sa, b, c0, kb, ke, 0, s0, l0);
        // The kernel's fast path, per thread: its slots' words of a full stage (from the slice's
        // first full stage) and the stages in which every chunk is inside both extents.
        sm::LineSource sf, lf;
        sm::stage_sources(sa, b, c0, kb, kb + sm::kChunk, 0, sf, lf);
        std::vector<uint32_t> s_word(size_t(ts.lines * ts.chunks_per_line)), l_word(size_t(tl.lines * tl.chunks_per_line));
        std::vector<char> fits(sm::kThreads, 1);
        int fast_from = 0, fast_to = 0;  // each thread's interval, less its words' fit (fits[])
        if (sm::words_repay(kb, ke)) {
          for (size_t slot = 0; slot < s_word.size(); ++slot) {
            bool ok = true;
            s_word[slot] = sm::slot_word(ts, sf, int(slot), ok);
            fits[slot % sm::kThreads] &= ok;
          }
          for (size_t slot = 0; slot < l_word.size(); ++slot) {
            bool ok = true;
            l_word[slot] = sm::slot_word(tl, lf, int(slot), ok);
            fits[slot % sm::kThreads] &= ok;
          }
          sm::fast_stages(sa, sf, lf, kb, ke, true, fast_from, fast_to);
        }
        for (int c = 0; c < chunks; ++c) {
          std::vector<uint16_t> st(size_t(ts.bytes / 2), nan_bits), lt(size_t(tl.bytes / 2), nan_bits);
          sm::LineSource s, l;
          sm::stage_sources(sa, b, c0, kb, ke, c, s, l);
          const bool fast_stage = c >= fast_from && c < fast_to;
          if (fast_stage) {
            // Sound: a stage of the interval is full and inside both extents.
            expect(ke - (kb + c * sm::kChunk) >= sm::kChunk);
            expect(sm::stage_inside(sm::advanced(sf, c, sa.s.sc)) && sm::stage_inside(sm::advanced(lf, c, sa.l.sr)));
            ++fast_stages_seen;
          }
          auto copy = [&](const sm::TileShape& shape, const sm::LineSource& src, const Placed& mem, std::vector<uint16_t>& tile,
                          const std::vector<uint32_t>& words, uint64_t base) {
            for (int slot = 0; slot < shape.lines * shape.chunks_per_line; ++slot) {
              sm::ChunkCopy cc = sm::chunk_copy(shape, src, slot);
              if (fast_stage && fits[size_t(slot % sm::kThreads)]) {
                // The kernel copies from the slot's word: the same chunk to the same place, and
                // only as one 16-byte copy.
                const uint32_t w = words[size_t(slot)];
                if (w == sm::kNoSlot) {
                  expect(cc.kind == sm::CopyKind::none);
                  continue;
                }
                if (!expect(cc.kind == sm::CopyKind::vector && cc.chunk == base + uint64_t(sm::slot_offset(w)) && cc.to == sm::slot_to(w)))
                  continue;
                cc.chunk = base + uint64_t(sm::slot_offset(w));
                cc.to = sm::slot_to(w);
              }
              if (cc.kind == sm::CopyKind::none) continue;
              if (!expect(cc.to >= 0 && cc.to + 8 <= int(tile.size()))) continue;
              if (cc.kind == sm::CopyKind::vector) {
                // cp.async 16 also needs a 16-byte aligned shared destination: the tile's place in
                // the stage (S first, then L) and the chunk's place in the tile.
                const int base_bytes = &tile == &st ? 0 : ts.bytes;
                if (!expect((base_bytes + 2 * cc.to) % 16 == 0 && sm::stage_bytes(mc.rows_tile, sa.s_k_fast, sa.l_k_fast) % 16 == 0)) continue;
                if (!expect(cc.chunk % 16 == 0 && mem.holds(cc.chunk, 16))) continue;
                std::memcpy(&tile[size_t(cc.to)], reinterpret_cast<const void*>(cc.chunk), 16);
              } else {
                for (int e = 0; e < 8; ++e) {
                  const uint64_t at = cc.chunk + 2u * unsigned(e);
                  if (!sm::own_element(cc, at) || !expect(mem.holds(at, 2))) continue;
                  std::memcpy(&tile[size_t(cc.to + e)], reinterpret_cast<const void*>(at), 2);
                }
              }
            }
          };
          copy(ts, s, ps, st, s_word, sm::stage_base(sf) + uint64_t(c * sm::stage_advance(sa.s.sc)));
          copy(tl, l, pl, lt, l_word, sm::stage_base(lf) + uint64_t(c * sm::stage_advance(sa.l.sr)));
          const int kvalid = ke - (kb + c * sm::kChunk);
          const bool mask = kvalid < sm::kChunk && mc.fault != Fault::no_mask;
          for (int warp = 0; warp < sm::kThreads / 32; ++warp)
            for (int step = 0; step < wl.k_steps; ++step) {
              const int wk = warp % wl.warps_k, wn = warp / wl.warps_k;
              // The lanes' registers, as the kernel builds them: each lane's two line shifts
              // (sm::shift_index), each checked against its element's own line.
              uint32_t a_reg[32][4][4], b_reg[32][4][2];
              for (int lane = 0; lane < 32; ++lane) {
                const int g = lane / 4, tt = lane % 4;
                int s_shift[2], l_shift[2];
                for (int q = 0; q < 2; ++q) {
                  s_shift[q] = sm::line_shift(s0, sa.s_k_fast ? sm::frag_row(0, g, 0) : sm::frag_k(wl, wk, 0, tt, q));
                  l_shift[q] = sm::line_shift(l0, sa.l_k_fast ? sm::frag_col(wl, wn, 0, g) : sm::frag_k(wl, wk, 0, tt, q));
                }
                auto used = [&](const int (&shifts)[2], bool k_fast, int q, const sm::LineSource& src, int line) {
                  const int sh = shifts[sm::shift_index(k_fast, q)];
                  expect(sh == sm::line_shift(src, line));
                  return mc.fault == Fault::no_shift ? 0 : sh;
                };
                auto s_at = [&](int i, int h, int q) -> uint32_t {
                  const int k = sm::frag_k(wl, wk, step, tt, q), row = sm::frag_row(i, g, h);
                  const int idx = sm::tile_index(ts, sa.s_k_fast, row, k, used(s_shift, sa.s_k_fast, q, s0, sa.s_k_fast ? row : k));
                  if (!expect(idx >= 0 && idx < int(st.size()))) return 0u;
                  return mask && k >= kvalid ? 0u : st[size_t(idx)];
                };
                auto l_at = [&](int j, int q) -> uint32_t {
                  const int k = sm::frag_k(wl, wk, step, tt, q), col = sm::frag_col(wl, wn, j, g);
                  const int idx = sm::tile_index(tl, sa.l_k_fast, col, k, used(l_shift, sa.l_k_fast, q, l0, sa.l_k_fast ? col : k));
                  if (!expect(idx >= 0 && idx < int(lt.size()))) return 0u;
                  return mask && k >= kvalid ? 0u : lt[size_t(idx)];
                };
                for (int i = 0; i < frags_m; ++i) {
                  a_reg[lane][i][0] = s_at(i, 0, 0) | s_at(i, 0, 1) << 16;
                  a_reg[lane][i][1] = s_at(i, 1, 0) | s_at(i, 1, 1) << 16;
                  a_reg[lane][i][2] = s_at(i, 0, 2) | s_at(i, 0, 3) << 16;
                  a_reg[lane][i][3] = s_at(i, 1, 2) | s_at(i, 1, 3) << 16;
                }
                for (int j = 0; j < wl.col_frags; ++j) {
                  b_reg[lane][j][0] = l_at(j, 0) | l_at(j, 1) << 16;
                  b_reg[lane][j][1] = l_at(j, 2) | l_at(j, 3) << 16;
                  if (mc.fault == Fault::b_halves_swapped) b_reg[lane][j][0] = b_reg[lane][j][0] >> 16 | b_reg[lane][j][0] << 16;
                }
              }
              // mma.sync.m16n8k16 per (i, j), with the documented fragment layouts.
              for (int i = 0; i < frags_m; ++i)
                for (int j = 0; j < wl.col_frags; ++j) {
                  float Am[16][16], Bm[16][8];
                  for (int lane = 0; lane < 32; ++lane) {
                    const int g = lane / 4, tt = lane % 4;
                    for (int r = 0; r < 4; ++r)
                      for (int h = 0; h < 2; ++h)
                        Am[g + 8 * (r % 2)][2 * tt + h + 8 * (r / 2)] = half_value(mc.in, uint16_t(a_reg[lane][i][r] >> (16 * h)));
                    for (int r = 0; r < 2; ++r)
                      for (int h = 0; h < 2; ++h) Bm[2 * tt + h + 8 * r][g] = half_value(mc.in, uint16_t(b_reg[lane][j][r] >> (16 * h)));
                  }
                  for (int lane = 0; lane < 32; ++lane) {
                    const int g = lane / 4, tt = lane % 4;
                    for (int q = 0; q < 4; ++q) {
                      const int row = g + 8 * (q / 2), col = 2 * tt + q % 2;
                      float sum = 0.0f;
                      for (int kk = 0; kk < 16; ++kk) sum += Am[row][kk] * Bm[kk][col];
                      acc_at(warp, lane, i, j, q) += sum;
                    }
                  }
                }
            }
        }
        // The K-warps' sums through the kernel's red[wk][row][col], added in warp order.
        std::vector<float> red(size_t(wl.warps_k) * mc.rows_tile * sm::kCols, 0.0f);
        for (int warp = 0; warp < sm::kThreads / 32; ++warp)
          for (int lane = 0; lane < 32; ++lane)
            for (int i = 0; i < frags_m; ++i)
              for (int j = 0; j < wl.col_frags; ++j)
                for (int q = 0; q < 4; ++q) {
                  const int wk = warp % wl.warps_k, wn = warp / wl.warps_k, g = lane / 4, tt = lane % 4;
                  const int row = sm::acc_row(i, g, q), col = sm::acc_col(wl, wn, j, tt, q);
                  if (!expect(row >= 0 && row < mc.rows_tile && col >= 0 && col < sm::kCols)) continue;
                  red[(size_t(wk) * mc.rows_tile + row) * sm::kCols + col] = acc_at(warp, lane, i, j, q);
                }
        for (int o = 0; o < mc.rows_tile * sm::kCols; ++o) {
          float v = red[size_t(o)];
          for (int w = 1; w < wl.warps_k; ++w) v += red[size_t(w * mc.rows_tile * sm::kCols + o)];
          block_sum[size_t(o)] += v;  // slices in slice order
        }
      }
      for (int r = 0; r < sa.rows; ++r)
        for (int c = c0; c < std::min(sa.cols, c0 + sm::kCols); ++c)
          out[(size_t(b) * sa.rows + r) * sa.cols + c] = block_sum[size_t(r) * sm::kCols + (c - c0)];
    }

  CHECK(bad == 0);
  if (bad) return INFINITY;
  // D' against the float64 reference (D' = D^T for the tmma form).
  const Reference ref = reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, mc.batch);
  double err2 = 0, ref2 = 0;
  for (int b = 0; b < mc.batch; ++b)
    for (int64_t i = 0; i < mc.m; ++i)
      for (int64_t j = 0; j < mc.n; ++j) {
        const double want = ref[size_t((b * mc.m + i) * mc.n + j)];
        const double got = t ? out[(size_t(b) * sa.rows + j) * sa.cols + i] : out[(size_t(b) * sa.rows + i) * sa.cols + j];
        if (!std::isfinite(got)) return INFINITY;
        err2 += (got - want) * (got - want);
        ref2 += want * want;
      }
  return std::sqrt(err2 / std::max(ref2, 1e-300));
}

}  // namespace

TEST_CASE("skinny_mma model: every row size, orientation, operand layout, alignment and split computes the GEMM") {
  std::uniform_int_distribution<int> offset(0, 7);
  int ran = 0;
  for (int rows_tile : {16, 32, 64})
    for (bool t : {false, true})
      for (int layout = 0; layout < 4; ++layout)
        for (int variant = 0; variant < 2; ++variant) {
          ModelCase mc{};
          const int64_t small = variant ? rows_tile : (rows_tile == 16 ? 1 + layout : rows_tile / 2 + 1 + layout);
          const int64_t wide = 2 * sm::kCols + 5 + 11 * layout + variant;
          mc.m = t ? wide : small;
          mc.n = t ? small : wide;
          mc.k = variant ? 3 * sm::kChunk + 17 + layout : 2 * sm::kChunk + 64 * (layout % 2);  // ragged, or whole stages
          mc.batch = 1 + variant;
          mc.in = (layout + variant) % 2 ? Dtype::bf16 : Dtype::f16;
          mc.ta = layout & 1;
          mc.tb = layout & 2;
          mc.transposed = t;
          mc.rows_tile = rows_tile;
          mc.split = 1 + variant * 2;
          mc.a_offset = 2 * offset(rng());
          mc.b_offset = 2 * offset(rng());
          CHECK(run_model(mc) <= tolerance(Dtype::f32, mc.k, mc.in, mc.in));
          ++ran;
        }
  CHECK(ran == 3 * 2 * 4 * 2);
  CHECK(fast_stages_seen > 0);
}

TEST_CASE("skinny_mma model: a K shorter than one stage, one row, one column, every base offset") {
  for (int off = 0; off < 16; off += 2) {
    ModelCase mc{1, 70, 9, 1, Dtype::f16, false, true, false, 16, 1, off, 14 - off};
    CHECK(run_model(mc) <= tolerance(Dtype::f32, mc.k, mc.in, mc.in));
    ModelCase tc{65, 1, 130, 1, Dtype::bf16, true, false, true, 16, 2, 14 - off, off};
    CHECK(run_model(tc) <= tolerance(Dtype::f32, tc.k, tc.in, tc.in));
  }
}

TEST_CASE("skinny_mma model: the model fails where the kernel's arithmetic is broken on purpose") {
  // Odd leading dimensions (so lines have shifts) and a ragged K (a masked last stage).
  ModelCase mc{20, 150, 3 * sm::kChunk + 5, 1, Dtype::f16, false, false, false, 32, 1, 2, 6};
  CHECK(run_model(mc) <= tolerance(Dtype::f32, mc.k, mc.in, mc.in));
  for (Fault f : {Fault::no_shift, Fault::no_mask, Fault::b_halves_swapped}) {
    CAPTURE(int(f));
    mc.fault = f;
    CHECK(run_model(mc) > 1e-2);
  }
}
