// The cuda.skinny_mma kernel: GEMMs with at most 64 rows of output (or columns, run transposed)
// on the tensor cores (mma.sync m16n8k16, f16 or bf16, f32 accumulators), reading operands of
// any 2-byte alignment in place: no copy, one launch. The problem arrives oriented as for
// cuda.skinny (skinny_kernel.cuh): D' (rows x cols) = S (rows x K) * L (K x cols).
//
// Loads (the index arithmetic is mma_layout.h's, shared with the host model that checks it).
// Each operand must have a unit stride; its "lines" are the runs along that stride. A stage
// copies each line of the tile with 16-byte cp.async copies of the aligned chunks that cover it,
// into a shared line that starts on a 16-byte boundary; the line's shift (its first element's
// place in its first chunk) is applied when the fragments are read; it is the same in every
// stage, and a lane's elements lie on lines of two shifts at most, computed once. Every 16-byte
// read lies inside the operand's own extent [first element, last element] of the batch; the
// chunks at the two ends of that extent are read element by element instead, so nothing outside
// the caller's matrix is ever addressed.
//
// Tile: 64 columns of D' and K chunks of 64 (the stages and how the eight warps share them:
// mma_layout.h's warp_layout). Fragments are read as 16-bit elements; K beyond the slice reads
// as zero in both operands (the shared bytes there are whatever the copies brought, so masking
// one side alone would let 0 x NaN through). The K-warps' sums are added in warp order, then
// skinny_finish (split-K in a cluster or through a workspace, in slice order; the epilogue) as
// cuda.skinny does: deterministic.
#pragma once
#include <type_traits>

#include "../mma_sync.cuh"
#include "mma_layout.h"
#include "skinny_kernel.cuh"

namespace omnigemm::detail::cuda {

static_assert(skinny_mma::kThreads == skinny::kThreads, "skinny_finish reduces with the skinny kernels' block size");

// Copies the chunks of one tile of a stage (every thread its slots).
__device__ __forceinline__ void copy_lines(unsigned char* tile, const skinny_mma::TileShape& shape, const skinny_mma::LineSource& src) {
  using namespace skinny_mma;
  const int slots = shape.lines * shape.chunks_per_line;
#pragma unroll 1
  for (int s = int(threadIdx.x); s < slots; s += kThreads) {
    const ChunkCopy c = chunk_copy(shape, src, s);
    unsigned short* to = reinterpret_cast<unsigned short*>(tile) + c.to;
    if (c.kind == CopyKind::vector) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(unsigned(__cvta_generic_to_shared(to))),
                   "l"(reinterpret_cast<const void*>(c.chunk)));
    } else if (c.kind == CopyKind::elements) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const uint64_t at = c.chunk + 2u * unsigned(e);
        if (own_element(c, at)) to[e] = *reinterpret_cast<const unsigned short*>(at);
      }
    }
  }
}

// The fast path's copies of one tile of a full stage inside the extent: one 16-byte copy per
// slot word that copies (mma_layout.h's slot_word; this thread's words FIRST.., N of them),
// from `base` (the stage's first-line chunk).
template <int FIRST, int N>
__device__ __forceinline__ void copy_words(unsigned char* tile, const uint32_t (*words)[skinny_mma::kThreads], uint64_t base) {
  using namespace skinny_mma;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint32_t w = words[FIRST + j][threadIdx.x];
    if (w != kNoSlot)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(unsigned(__cvta_generic_to_shared(tile + 2 * slot_to(w)))),
                   "l"(base + uint64_t(slot_offset(w))));
  }
}

// S_K_FAST: S has a unit stride along K (else along its rows); L_K_FAST likewise for L (else
// along its columns). T: __half or __nv_bfloat16, both operands.
template <int ROWS, bool S_K_FAST, bool L_K_FAST, class T>
__global__ void __launch_bounds__(skinny::kThreads, ROWS > 32 ? 2 : 3) skinny_mma_kernel(SkinnyArgs p) {
  using namespace skinny_mma;
  dependent_launch_begin();
  constexpr TileShape kS = s_tile(ROWS, S_K_FAST), kL = l_tile(L_K_FAST);
  constexpr int kStage = stage_bytes(ROWS, S_K_FAST, L_K_FAST), kStages = stages(ROWS);
  constexpr WarpLayout kW = warp_layout(ROWS);
  constexpr int kFragsM = ROWS / 16, kSteps = kW.k_steps, kColFrags = kW.col_frags;
  extern __shared__ __align__(16) unsigned char ring[];  // block_shared_bytes: the ring, then the slot words

  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int wk = warp % kW.warps_k, wn = warp / kW.warps_k, g = lane >> 2, t = lane & 3;
  const int slice = int(blockIdx.x) % p.split, c0 = (int(blockIdx.x) / p.split) * kCols;
  const long long batch = blockIdx.z + p.batch_base;
  const int kb = slice * p.slice_k, ke = min(p.k, kb + p.slice_k);
  const int chunks = ke > kb ? (ke - kb + kChunk - 1) / kChunk : 0;
  const StageArgs sa{{reinterpret_cast<uint64_t>(p.s.ptr), p.s.sr, p.s.sc, p.s.bs},
                     {reinterpret_cast<uint64_t>(p.l.ptr), p.l.sr, p.l.sc, p.l.bs},
                     p.rows, p.cols, p.k, S_K_FAST, L_K_FAST};
  // The fast path (mma_layout.h): this thread's slot words of a full stage, and the stages
  // [fast_from, fast_to) that are full and inside both extents; the other stages (ragged, or at
  // an end of an extent) go through chunk_copy slot by slot.
  constexpr int kSlotsS = slots_per_thread(kS), kSlotsL = slots_per_thread(kL);
  uint32_t(*words)[kThreads] = reinterpret_cast<uint32_t(*)[kThreads]>(ring + ring_bytes(ROWS, S_K_FAST, L_K_FAST));
  uint64_t s_base = 0, l_base = 0;
  int fast_from = 0, fast_to = 0;
  if (words_repay(kb, ke)) {
    LineSource s, l;
    stage_sources(sa, batch, c0, kb, kb + kChunk, 0, s, l);
    bool fits = true;
#pragma unroll
    for (int j = 0; j < kSlotsS; ++j) {
      const int slot = int(threadIdx.x) + j * kThreads;
      words[j][threadIdx.x] = slot < kS.lines * kS.chunks_per_line ? slot_word(kS, s, slot, fits) : kNoSlot;
    }
#pragma unroll
    for (int j = 0; j < kSlotsL; ++j) {
      const int slot = int(threadIdx.x) + j * kThreads;
      words[kSlotsS + j][threadIdx.x] = slot < kL.lines * kL.chunks_per_line ? slot_word(kL, l, slot, fits) : kNoSlot;
    }
    s_base = stage_base(s);
    l_base = stage_base(l);
    fast_stages(sa, s, l, kb, ke, fits, fast_from, fast_to);
  }
  auto load_stage = [&](int chunk, int slot) {
    unsigned char* stage = ring + slot * kStage;
    if (chunk >= fast_from && chunk < fast_to) {
      copy_words<0, kSlotsS>(stage, words, s_base + uint64_t(chunk * stage_advance(sa.s.sc)));
      copy_words<kSlotsS, kSlotsL>(stage + kS.bytes, words, l_base + uint64_t(chunk * stage_advance(sa.l.sr)));
      return;
    }
    LineSource s, l;
    stage_sources(sa, batch, c0, kb, ke, chunk, s, l);
    copy_lines(stage, kS, s);
    copy_lines(stage + kS.bytes, kL, l);
  };

  // The shifts of the lines this lane's fragment elements lie on (two at most: shift_index).
  int s_shift[2], l_shift[2];
  {
    LineSource s, l;
    stage_sources(sa, batch, c0, kb, ke, 0, s, l);
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      s_shift[q] = line_shift(s, S_K_FAST ? frag_row(0, g, 0) : frag_k(kW, wk, 0, t, q));
      l_shift[q] = line_shift(l, L_K_FAST ? frag_col(kW, wn, 0, g) : frag_k(kW, wk, 0, t, q));
    }
  }

  float acc[kFragsM][kColFrags][4];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kColFrags; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // This warp's k16 steps on a stage: A fragments from S, B fragments from L; K offsets at or
  // past kvalid read as zero (MASK: the stage is the slice's ragged last one).
  auto mma_stage = [&](int slot, auto masked, int kvalid) {
    constexpr bool kMask = decltype(masked)::value;
    const unsigned short* st = reinterpret_cast<const unsigned short*>(ring + slot * kStage);
    const unsigned short* lt = reinterpret_cast<const unsigned short*>(ring + slot * kStage + kS.bytes);
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      auto s_at = [&](int i, int h, int q) {
        const int k = frag_k(kW, wk, step, t, q);
        const unsigned v = st[tile_index(kS, S_K_FAST, frag_row(i, g, h), k, s_shift[shift_index(S_K_FAST, q)])];
        return kMask && k >= kvalid ? 0u : v;
      };
      auto l_at = [&](int j, int q) {
        const int k = frag_k(kW, wk, step, t, q);
        const unsigned v = lt[tile_index(kL, L_K_FAST, frag_col(kW, wn, j, g), k, l_shift[shift_index(L_K_FAST, q)])];
        return kMask && k >= kvalid ? 0u : v;
      };
      unsigned a[kFragsM][4];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
        a[i][0] = s_at(i, 0, 0) | s_at(i, 0, 1) << 16;
        a[i][1] = s_at(i, 1, 0) | s_at(i, 1, 1) << 16;
        a[i][2] = s_at(i, 0, 2) | s_at(i, 0, 3) << 16;
        a[i][3] = s_at(i, 1, 2) | s_at(i, 1, 3) << 16;
      }
#pragma unroll
      for (int j = 0; j < kColFrags; ++j) {
        const unsigned b0 = l_at(j, 0) | l_at(j, 1) << 16, b1 = l_at(j, 2) | l_at(j, 3) << 16;
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) mma_16816<T>(acc[i][j], a[i], b0, b1);
      }
    }
  };

  // The first kStages - 1 iterations only load (the ring's prologue): one place issues the
  // loads, so the two copy paths are compiled once.
  for (int c = 1 - kStages; c < chunks; ++c) {
    if (c >= 0) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2));
      __syncthreads();  // stage c landed for every thread; stage c - 1's slot is free
    }
    const int next = c + kStages - 1;
    if (next < chunks) load_stage(next, next % kStages);
    asm volatile("cp.async.commit_group;\n" ::);
    if (c < 0) continue;
    const int kvalid = ke - (kb + c * kChunk);
    if (kvalid >= kChunk) mma_stage(c % kStages, std::false_type{}, kvalid);
    else mma_stage(c % kStages, std::true_type{}, kvalid);
  }
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();  // the ring becomes the K-warps' partial sums

  float(*red)[ROWS][kCols] = reinterpret_cast<float(*)[ROWS][kCols]>(ring);
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kColFrags; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) red[wk][acc_row(i, g, q)][acc_col(kW, wn, j, t, q)] = acc[i][j][q];
  __syncthreads();
  for (int o = int(threadIdx.x); o < ROWS * kCols; o += kThreads) {
    const int r = o / kCols, c = o % kCols;
    float v = red[0][r][c];
#pragma unroll
    for (int w = 1; w < kW.warps_k; ++w) v += red[w][r][c];
    red[0][r][c] = v;  // only this thread reads (r, c)
  }
  __syncthreads();
  skinny_finish<ROWS, kCols>(p, red[0], c0, batch, slice);
}

}  // namespace omnigemm::detail::cuda
