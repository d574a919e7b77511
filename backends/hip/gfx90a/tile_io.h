// The memory side of the hip.gfx90a_mfma kernel, per thread: one operand's K tile from global
// memory into registers (edge-masked, zero outside M/N/K), registers into the swizzled LDS tile,
// a lane's MFMA operand out of LDS, and an MFMA block's accumulators through the fused epilogue
// into D. Host C++ and HIP compile it alike: the kernel (gemm_mfma.hip.h) calls these functions
// with its global and LDS pointers, the host model (tests/hip/test_hip_model.cpp) with host
// arrays, thread by thread. Nothing outside an operand is ever read: vectors are loaded whole
// only when all 8 elements exist, otherwise element by element from indices clamped into the
// operand (the elements past its end then replaced by zero).
#ifndef OMNIGEMM_HIP_TILE_IO_H
#define OMNIGEMM_HIP_TILE_IO_H

#include "kernel_args.h"
#include "tile_map.h"

namespace omnigemm::hip {

// 8 16-bit elements: one dwordx4 / ds_read_b128 / ds_write_b128. A GNU vector (both the host
// compiler and clang take it), so that copies stay whole 16-byte accesses; the may_alias form
// reads and writes arrays of unsigned short.
typedef unsigned short Vec8 __attribute__((vector_size(16)));
typedef unsigned short Vec8Alias __attribute__((vector_size(16), may_alias));
OG_HIP_FN Vec8 load16(const unsigned short* p) { return *reinterpret_cast<const Vec8Alias*>(p); }
OG_HIP_FN void store16(unsigned short* p, const Vec8& v) { *reinterpret_cast<Vec8Alias*>(p) = v; }

// The value x, which the device compiler must assume changed: index arithmetic derived from it
// is recomputed where it is used instead of being hoisted out of loops.
OG_HIP_FN int opaque_index(int x) {
#if defined(__HIP_DEVICE_COMPILE__)
  asm volatile("" : "+v"(x));
#endif
  return x;
}

// A thread's share of one operand's K tile (Geometry::vec_a or vec_b vectors).
template <int VECS>
struct TileRegs {
  Vec8 v[VECS];
};

// Raw bits of element `i` of an operand (16-bit or fp8 storage).
OG_HIP_FN unsigned raw_element(int dtype, const void* ptr, long long i) {
  if (dtype == OG_DTYPE_FP8_E4M3 || dtype == OG_DTYPE_FP8_E5M2) return static_cast<const unsigned char*>(ptr)[i];
  return static_cast<const unsigned short*>(ptr)[i];
}

// Loads rows [row0, row0 + ROWS) x K [k0, k0 + BLOCK_K) of `op` (batch `batch`) that thread
// `tid` moves, as the multiplicand type (bf16 or f16 bits); elements at rows >= row_end or
// K >= k_end are zero. The vector modes need op stored as the multiplicand type, contiguous along
// K (vec_k) or the rows (vec_mn), with 16-byte aligned base, leading dimension and batch stride.
//
// GATHER selects the kernel variant: false takes the vector modes (op.mode vec_k or vec_mn),
// true the gathering loader (any operand). Addresses are recomputed from `tid` for every tile
// (opaque_index) rather than kept live across the K loop, which would cost a register pair each.
template <bool GATHER, int ROWS, int VECS>
OG_HIP_FN void fetch_tile(const Geometry& g, const OperandView& op, long long batch, int row0, int row_end, int k0,
                          int k_end, int tid, bool bf16, TileRegs<VECS>& regs) {
  const long long base = batch * op.batch_stride;
  tid = opaque_index(tid);
  if constexpr (!GATHER) {
    const unsigned short* p = static_cast<const unsigned short*>(op.ptr) + base;
    const bool along_k = op.mode == kVecK;
#pragma unroll
    for (int i = 0; i < VECS; ++i) {
      const Slot s = vector_slot(g, op.mode, ROWS, tid, i);
      const int r = row0 + s.row, k = k0 + s.k;
      // The vector runs along K (vec_k) or along the rows (vec_mn); the other index is fixed.
      const int n = along_k ? (r < row_end ? elements_in_range(k, k_end) : 0)
                            : (k < k_end ? elements_in_range(r, row_end) : 0);
      if (n == kChunk) {
        regs.v[i] = load16(p + (along_k ? r * (long long)op.stride_row + k : k * (long long)op.stride_k + r));
      } else {
        // A ragged end: element by element from indices clamped into the operand (every load is
        // in range, so none needs a branch), the ones past the end replaced by zero.
        const int rc = r < row_end ? r : row_end - 1, kc = k < k_end ? k : k_end - 1;
        Vec8 v = {};
#pragma unroll
        for (int j = 0; j < kChunk; ++j) {
          const int rj = along_k ? rc : (r + j < row_end ? r + j : row_end - 1);
          const int kj = along_k ? (k + j < k_end ? k + j : k_end - 1) : kc;
          const unsigned short x = p[rj * (long long)op.stride_row + kj * (long long)op.stride_k];
          v[j] = j < n ? x : (unsigned short)0;
        }
        regs.v[i] = v;
      }
    }
  } else {
    // Gather: any strides and alignment, fp8 converted to the multiplicand type.
#pragma unroll
    for (int i = 0; i < VECS; ++i)
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const Slot s = gather_slot(g, ROWS, op.k_fastest != 0, tid, i, j);
        const int r = row0 + s.row, k = k0 + s.k;
        const int rc = r < row_end ? r : row_end - 1, kc = k < k_end ? k : k_end - 1;  // in range: no branch
        const unsigned x = raw_element(op.dtype, op.ptr, base + rc * (long long)op.stride_row + kc * (long long)op.stride_k);
        const unsigned raw = r < row_end && k < k_end ? x : 0u;
        regs.v[i][j] = multiplicand_bits(op.dtype, raw, bf16);
      }
  }
}

// Writes what fetch_tile loaded into the operand's LDS tile (ROWS x BLOCK_K, lds_offset).
template <bool GATHER, int ROWS, int VECS>
OG_HIP_FN void store_tile(const Geometry& g, unsigned short* lds, const OperandView& op, int tid, const TileRegs<VECS>& regs) {
  tid = opaque_index(tid);
#pragma unroll
  for (int i = 0; i < VECS; ++i) {
    if constexpr (GATHER) {
#pragma unroll
      for (int j = 0; j < kChunk; ++j) {
        const Slot s = gather_slot(g, ROWS, op.k_fastest != 0, tid, i, j);
        lds[lds_offset(g, s.row, s.k)] = regs.v[i][j];
      }
    } else if (op.mode == kVecK) {
      const Slot s = vector_slot(g, kVecK, ROWS, tid, i);
      store16(lds + lds_offset(g, s.row, s.k), regs.v[i]);  // a whole chunk: 8-aligned k
    } else {
      const Slot s = vector_slot(g, kVecMn, ROWS, tid, i);  // 8 rows at one k: transposed
#pragma unroll
      for (int j = 0; j < kChunk; ++j) lds[lds_offset(g, s.row + j, s.k)] = regs.v[i][j];
    }
  }
}

// The 8 operand elements a lane feeds to MFMA steps 2 * pair and 2 * pair + 1 (4 each, in this
// order) from an operand's LDS tile: row `row` of the tile, K-group `group` (operand_k).
OG_HIP_FN Vec8 read_operand(const Geometry& g, const unsigned short* lds, int row, int group, int pair) {
  return load16(lds + lds_offset(g, row, operand_k(g, 2 * pair, group, 0)));
}

// One MFMA block's accumulators acc[0 .. g.acc) of lane `lane` through the epilogue into D;
// the block's origin in D is (row0, col0); outputs at rows >= m or columns >= n are not stored.
// The loop over accumulators is not unrolled (one copy of the epilogue per block): on the device
// `acc` is the block's register vector and acc[v] with the wave-uniform v is a register-indexed
// move, not a trip through memory.
template <class Acc>
OG_HIP_FN void store_block(const Geometry& g, const EpilogueView& e, long long batch, int m, int n, int row0, int col0,
                           int lane, const Acc& acc) {
  const int j = col0 + acc_col(g, lane);
  if (j >= n) return;
#pragma unroll 1
  for (int v = 0; v < g.acc; ++v) {
    const int i = row0 + acc_row(g, lane, v);
    if (i < m) epilogue_store(e, batch, i, j, acc[v]);
  }
}

}  // namespace omnigemm::hip

#endif  // OMNIGEMM_HIP_TILE_IO_H
