// The index arithmetic of the hip.gfx90a_mfma kernel: which workgroup, wave and lane touches which
// element of A, B, LDS and D. It compiles as host C++ and as HIP, and is the only place the kernel
// (gemm_mfma.hip.h) takes these mappings from; tests/hip/test_hip_model.cpp runs the same
// functions on the host and checks that they compose into a GEMM.
//
// One workgroup computes a BLOCK_M x BLOCK_N tile of D with WAVES wave64s, two along M and
// WAVES / 2 along N. Each wave owns a WAVE_M x WAVE_N sub-tile as FRAGS_M x FRAGS_N MFMA blocks:
//   v_mfma_f32_32x32x8{f16,bf16_1k}   where WAVE_M and WAVE_N are multiples of 32,
//   v_mfma_f32_16x16x16{f16,bf16_1k}  otherwise.
// The operand layouts these instructions use (wave64, one block; CDNA2 ISA, "matrix fused
// multiply-add"), lane l, element e in 0..3 of the lane's 4-element operand, accumulator v:
//   32x32x8:   A[l % 32][4 (l / 32) + e]   B[4 (l / 32) + e][l % 32]
//              D[8 (v / 4) + 4 (l / 32) + v % 4][l % 32],  v in 0..15
//   16x16x16:  A[l % 16][4 (l / 16) + e]   B[4 (l / 16) + e][l % 16]
//              D[4 (l / 16) + v][l % 16],                   v in 0..3
// so a lane of K-group g = l / MFMA supplies 4 consecutive K of one row of A and one column of B.
//
// LDS holds one K tile of each operand "K-contiguous": ROWS (BLOCK_M for A, BLOCK_N for B) rows of
// BLOCK_K 16-bit elements, in 16-byte chunks of 8 elements whose position in the row is XOR-
// swizzled by the row (lds_offset), so that 8 consecutive lanes reading or writing 16 bytes at
// the same logical chunk of 8 consecutive rows hit 8 distinct 16-byte bank groups (all 32 banks)
// without padding: a tile takes exactly (BLOCK_M + BLOCK_N) x BLOCK_K x 2 bytes.
//
// K order inside a tile: a lane reads 8 consecutive K (one ds_read_b128) that feed two MFMA
// steps, 4 each. MFMA step s of K-group g uses LDS K  ((s / 2) * GROUPS + g) * 8 + (s % 2) * 4 + e
// for both A and B, so every K of the tile meets its partner exactly once (operand_k).
#ifndef OMNIGEMM_HIP_TILE_MAP_H
#define OMNIGEMM_HIP_TILE_MAP_H

// OG_HIP_CFN: pure index arithmetic, also usable in constant expressions (the kernel's shapes);
// OG_HIP_FN: host and device code that touches memory.
#if defined(__HIP__) || defined(__HIPCC__)
#define OG_HIP_FN __host__ __device__ inline
#else
#define OG_HIP_FN inline
#endif
#define OG_HIP_CFN OG_HIP_FN constexpr

namespace omnigemm::hip {

constexpr int kWave = 64;         // gfx90a wavefront width
constexpr int kWavesM = 2;        // waves along M in every workgroup
constexpr int kChunk = 8;         // 16-bit elements per 16-byte chunk (one dwordx4 / ds_*_b128)
constexpr int kLdsBytes = 65536;  // LDS per workgroup on gfx90a

struct Geometry {
  int block_m, block_n, block_k, waves, threads;
  int waves_n, wave_m, wave_n;
  int mfma;      // 32 (32x32x8) or 16 (16x16x16)
  int mfma_k;    // K per MFMA step: 8 or 16
  int groups;    // K-groups of lanes in an operand: 64 / mfma
  int acc;       // accumulator floats per lane per MFMA block: mfma * mfma / 64
  int frags_m, frags_n;
  int steps;     // MFMA steps per K tile
  int chunks_per_row;  // block_k / 8
  int lds_a, lds_b;    // elements of each operand's LDS tile
  int vec_a, vec_b;    // 16-byte register vectors per thread for one K tile of A, of B
};

OG_HIP_CFN Geometry make_geometry(int block_m, int block_n, int block_k, int waves) {
  Geometry g{};
  g.block_m = block_m;
  g.block_n = block_n;
  g.block_k = block_k;
  g.waves = waves;
  g.threads = waves * kWave;
  g.waves_n = waves / kWavesM;
  g.wave_m = block_m / kWavesM;
  g.wave_n = g.waves_n > 0 ? block_n / g.waves_n : 0;
  g.mfma = g.wave_m % 32 == 0 && g.wave_n % 32 == 0 ? 32 : 16;
  g.mfma_k = g.mfma == 32 ? 8 : 16;
  g.groups = kWave / g.mfma;
  g.acc = g.mfma * g.mfma / kWave;
  g.frags_m = g.wave_m / g.mfma;
  g.frags_n = g.wave_n / g.mfma;
  g.steps = block_k / g.mfma_k;
  g.chunks_per_row = block_k / kChunk;
  g.lds_a = block_m * block_k;
  g.lds_b = block_n * block_k;
  g.vec_a = g.threads > 0 ? g.lds_a / kChunk / g.threads : 0;
  g.vec_b = g.threads > 0 ? g.lds_b / kChunk / g.threads : 0;
  return g;
}

// Why the kernel cannot be built with this geometry ("" when it can).
OG_HIP_CFN const char* geometry_error(const Geometry& g) {
  if (g.waves < kWavesM || g.waves % kWavesM) return "WARPS must be a positive even number of waves";
  if (g.threads > 1024) return "at most 16 waves (1024 threads) per workgroup";
  if (g.block_m % (kWavesM * 16) || g.block_n % (g.waves_n * 16)) return "each wave's tile must be a multiple of 16x16";
  if (g.block_k % (2 * g.mfma_k)) return "BLOCK_K must be a multiple of two MFMA K steps (16 for 32x32x8, 32 for 16x16x16)";
  if (g.lds_a % (kChunk * g.threads) || g.lds_b % (kChunk * g.threads))
    return "BLOCK_M x BLOCK_K and BLOCK_N x BLOCK_K must be multiples of 8 elements per thread";
  if (2 * (g.lds_a + g.lds_b) > kLdsBytes) return "the A and B tiles exceed 64 KiB of LDS";
  return "";
}
OG_HIP_CFN bool geometry_ok(const Geometry& g) { return geometry_error(g)[0] == '\0'; }

// Bytes of LDS one workgroup uses.
OG_HIP_CFN int lds_bytes(const Geometry& g) { return 2 * (g.lds_a + g.lds_b); }

// ---- LDS ---------------------------------------------------------------------------------------

// The XOR applied to the chunk index of row `row`: rows that share a 128-byte bank line get
// different values, so that a column of 8 rows spreads over all 8 16-byte bank groups.
OG_HIP_CFN int lds_swizzle(const Geometry& g, int row) {
  const int cpr = g.chunks_per_row;
  return cpr >= 8 ? row % 8 : (row / (8 / cpr)) % cpr;
}

// Element offset of (row, k) in an operand's LDS tile (row < ROWS, k < BLOCK_K).
OG_HIP_CFN int lds_offset(const Geometry& g, int row, int k) {
  return row * g.block_k + (((k / kChunk) ^ lds_swizzle(g, row)) * kChunk) + k % kChunk;
}

// ---- MFMA operands and accumulators ------------------------------------------------------------

// The wave's sub-tile origin inside the workgroup tile.
OG_HIP_CFN int wave_row0(const Geometry& g, int wave) { return (wave % kWavesM) * g.wave_m; }
OG_HIP_CFN int wave_col0(const Geometry& g, int wave) { return (wave / kWavesM) * g.wave_n; }

// The LDS K of element e of the operand that a lane of K-group `group` supplies to MFMA step
// `step` (see the header comment); the 8 elements of steps 2p and 2p + 1 are one 16-byte chunk.
OG_HIP_CFN int operand_k(const Geometry& g, int step, int group, int e) {
  return ((step / 2) * g.groups + group) * kChunk + (step % 2) * 4 + e;
}

// The operand row (of A: M within the block; of B: N) and K-group of lane `lane` in fragment
// `frag` of a wave whose sub-tile starts at row0.
OG_HIP_CFN int operand_row(const Geometry& g, int row0, int frag, int lane) { return row0 + frag * g.mfma + lane % g.mfma; }
OG_HIP_CFN int operand_group(const Geometry& g, int lane) { return lane / g.mfma; }

// Row and column, inside one MFMA block, of accumulator v of lane `lane`.
OG_HIP_CFN int acc_row(const Geometry& g, int lane, int v) {
  return g.mfma == 32 ? 8 * (v / 4) + 4 * (lane / 32) + v % 4 : 4 * (lane / 16) + v;
}
OG_HIP_CFN int acc_col(const Geometry& g, int lane) { return lane % g.mfma; }

// ---- Global -> registers -> LDS ----------------------------------------------------------------

// How a thread moves its share of one operand's K tile (see tile_io.h):
//   vec_k:  16 bytes along K per vector (the operand is K-contiguous, 16-byte aligned);
//   vec_mn: 16 bytes along M (A) or N (B) per vector (rows contiguous, aligned), transposed into
//           LDS one element at a time;
//   gather: one element at a time with any strides and alignment, fp8 converted on load.
enum LoadMode { kVecK = 0, kVecMn = 1, kGather = 2 };

struct Slot {
  int row;  // 0 .. ROWS - 1 within the tile
  int k;    // 0 .. BLOCK_K - 1 within the tile
};

// The first element of vector `i` of thread `tid` in mode vec_k (the 8 elements follow along K)
// or vec_mn (they follow along the rows). Consecutive threads take consecutive 16 bytes of
// memory in either mode.
OG_HIP_CFN Slot vector_slot(const Geometry& g, int mode, int rows, int tid, int i) {
  const int c = tid + i * g.threads;
  if (mode == kVecK) return Slot{c / g.chunks_per_row, (c % g.chunks_per_row) * kChunk};
  (void)rows;
  return Slot{(c / g.block_k) * kChunk, c % g.block_k};
}

// Element j of vector i of thread `tid` in gather mode: consecutive threads take consecutive
// elements along the operand's smaller stride (k_fastest: along K).
OG_HIP_CFN Slot gather_slot(const Geometry& g, int rows, bool k_fastest, int tid, int i, int j) {
  const int e = tid + (i * kChunk + j) * g.threads;
  return k_fastest ? Slot{e / g.block_k, e % g.block_k} : Slot{e % rows, e / rows};
}

// Element j of vector i of thread `tid` in any mode.
OG_HIP_CFN Slot element_slot(const Geometry& g, int mode, int rows, bool k_fastest, int tid, int i, int j) {
  if (mode == kGather) return gather_slot(g, rows, k_fastest, tid, i, j);
  const Slot s = vector_slot(g, mode, rows, tid, i);
  return mode == kVecK ? Slot{s.row, s.k + j} : Slot{s.row + j, s.k};
}

// How many of the 8 elements from `first` along a dimension that ends at `end` exist: 8 means
// the whole vector is loaded at once, fewer are loaded one by one (the rest read as zero).
OG_HIP_CFN int elements_in_range(long long first, long long end) {
  const long long left = end - first;
  return left >= kChunk ? kChunk : left > 0 ? int(left) : 0;
}

}  // namespace omnigemm::hip

#endif  // OMNIGEMM_HIP_TILE_MAP_H
