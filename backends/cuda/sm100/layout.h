// The index arithmetic of the Blackwell tcgen05 family (gemm_tcgen05.cuh), written once for the
// kernel and for the host model that checks it (tests/sm100/test_sm100_model.cpp): instruction
// and shared-memory descriptors, where TMA puts a tile's bytes in shared memory, where the
// scale factors go in shared and tensor memory, which scale column each MMA reads, the per-CTA
// K loop, the 2-SM split and the shared-memory map. Compiles as C++ (host) and CUDA; no
// pointers, only integers.
//
// What the kernel does with them, per stage of BLOCK_K = 128 bytes of K:
//   A tile: 128 rows (one CTA's share of BLOCK_M) x 128 bytes, B tile: BLOCK_N / CTA_GROUP rows x
//   128 bytes, both K-major with the 128-byte swizzle, loaded by TMA;
//   four MMAs, each 32 bytes of K (16 f16, 32 fp8, 64 fp4 elements), descriptors advanced by 32
//   bytes; block-scaled kinds also read one to four packed 512-byte scale tiles per 128 rows
//   (bulk copies from the packed layout of omnigemm/block_formats.h), copied to tensor memory
//   with tcgen05.cp 32x128b.warpx4.
#pragma once
#include <stdint.h>

#include "omnigemm/block_formats.h"

#if defined(__CUDACC__)
#define OG_SM100_FN __host__ __device__ constexpr inline
#define OG_SM100_PACKED __host__ __device__ inline
#else
#define OG_SM100_FN constexpr inline
#define OG_SM100_PACKED inline
#endif

namespace omnigemm::detail::sm100 {

// The tcgen05.mma kinds the family runs.
enum class Kind : int {
  f16 = 0,       // kind::f16: f16 or bf16 inputs
  f8f6f4 = 1,    // kind::f8f6f4: e4m3 / e5m2 inputs
  mxf8f6f4 = 2,  // kind::mxf8f6f4.block_scale (scale_vec::1X): mxfp8, E8M0 per 32
  mxf4 = 3,      // kind::mxf4.block_scale.scale_vec::2X: mxfp4, E8M0 per 32
  mxf4nvf4 = 4,  // kind::mxf4nvf4.block_scale.scale_vec::4X: nvfp4, e4m3 per 16
};
constexpr int kKinds = 5;

OG_SM100_FN bool block_scaled(Kind k) { return k == Kind::mxf8f6f4 || k == Kind::mxf4 || k == Kind::mxf4nvf4; }
OG_SM100_FN int elem_bits(Kind k) { return k == Kind::f16 ? 16 : (k == Kind::mxf4 || k == Kind::mxf4nvf4) ? 4 : 8; }
// Elements along K per stage (128 bytes) and per MMA (32 bytes).
OG_SM100_FN int block_k(Kind k) { return 1024 / elem_bits(k); }
OG_SM100_FN int mma_k(Kind k) { return 256 / elem_bits(k); }
constexpr int kStageBytesK = 128;
constexpr int kMmaBytesK = 32;
constexpr int kMmasPerStage = kStageBytesK / kMmaBytesK;
// Elements per scale (0: no scales) and scales per MMA (the .scale_vec).
OG_SM100_FN int scale_vec(Kind k) { return k == Kind::mxf4nvf4 ? 16 : block_scaled(k) ? 32 : 0; }
OG_SM100_FN int scales_per_mma(Kind k) { return block_scaled(k) ? mma_k(k) / scale_vec(k) : 0; }
// Packed 512-byte scale tiles (128 rows x 4 scale columns) per stage and 128 rows.
OG_SM100_FN int sf_tiles_per_stage(Kind k) { return block_scaled(k) ? block_k(k) / (4 * scale_vec(k)) : 0; }

// ---- Instruction descriptor (32 bits; PTX ISA "Instruction descriptor" of tcgen05.mma) ------
// bits 4-5 D format (1: f32), 7-9 A format, 10-12 B format, 15 / 16 A / B MN-major (0: K-major),
// 17-22 N >> 3, 24-28 M >> 4; block-scaled: 4-5 B scale-factor id, 23 scale format (1: E8M0,
// 0: UE4M3), 29-30 A scale-factor id.
// Formats: kind::f16 0 f16, 1 bf16; kind::f8f6f4 / mxf8f6f4 0 e4m3, 1 e5m2; mxf4 / mxf4nvf4
// 1 e2m1.
constexpr int kFormatF16 = 0, kFormatBF16 = 1, kFormatE4M3 = 0, kFormatE5M2 = 1, kFormatE2M1 = 1;

OG_SM100_FN uint32_t idesc_shape(int m, int n) { return (uint32_t(n >> 3) << 17) | (uint32_t(m >> 4) << 24); }
OG_SM100_FN uint32_t idesc_dense(int a_format, int b_format, int m, int n) {
  return (1u << 4) | (uint32_t(a_format) << 7) | (uint32_t(b_format) << 10) | idesc_shape(m, n);
}
OG_SM100_FN uint32_t idesc_block_scaled(int a_format, int b_format, bool e8m0, int m, int n) {
  return (uint32_t(a_format) << 7) | (uint32_t(b_format) << 10) | (e8m0 ? 1u << 23 : 0u) | idesc_shape(m, n);
}
// The scale-factor ids (which byte of a 32-bit tensor-memory column the first scale is in).
// B MN-major (N contiguous; kind::f16 only).
OG_SM100_FN uint32_t idesc_b_mn_major(uint32_t idesc) { return idesc | (1u << 16); }
OG_SM100_FN bool idesc_b_is_mn_major(uint32_t d) { return ((d >> 16) & 1u) != 0; }
OG_SM100_FN uint32_t idesc_with_sf_ids(uint32_t idesc, int sfa_id, int sfb_id) {
  return (idesc & ~((3u << 29) | (3u << 4))) | (uint32_t(sfa_id) << 29) | (uint32_t(sfb_id) << 4);
}
// Fields back (the host model decodes what the kernel encodes).
OG_SM100_FN int idesc_m(uint32_t d) { return int((d >> 24) & 31u) << 4; }
OG_SM100_FN int idesc_n(uint32_t d) { return int((d >> 17) & 63u) << 3; }
OG_SM100_FN int idesc_a_format(uint32_t d) { return int((d >> 7) & 7u); }
OG_SM100_FN int idesc_b_format(uint32_t d) { return int((d >> 10) & 7u); }
OG_SM100_FN int idesc_sfa_id(uint32_t d) { return int((d >> 29) & 3u); }
OG_SM100_FN int idesc_sfb_id(uint32_t d) { return int((d >> 4) & 3u); }

// ---- Shared-memory matrix descriptors (64 bits) ---------------------------------------------
// bits 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4,
// 46-47 version (1 on sm_100), 61-63 layout (2: 128-byte swizzle, 0: none).
// K-major 128-byte-swizzled operand: rows of 128 bytes, 8-row groups 1024 bytes apart (the
// stride offset); the leading offset is unused for swizzled K-major layouts (1 by convention).
OG_SM100_FN uint64_t smem_desc_sw128(uint32_t addr) {
  return uint64_t((addr & 0x3ffffu) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 46) |
         (uint64_t(2) << 61);
}
// A packed scale tile for tcgen05.cp (no swizzle): 32 rows of 16 bytes, 8-row groups 128 apart.
OG_SM100_FN uint64_t smem_desc_sf(uint32_t addr) {
  return uint64_t((addr & 0x3ffffu) >> 4) | (uint64_t(128 >> 4) << 32) | (uint64_t(1) << 46);
}
// An MN-major 128-byte-swizzled operand (16-bit only: the instruction descriptor's major bit):
// rows of 128 bytes hold 64 elements along M or N, one row per K; 8-row (K) groups 1024 bytes
// apart (stride), 64-element column blocks `leading` bytes apart.
OG_SM100_FN uint64_t smem_desc_sw128_mn(uint32_t addr, uint32_t leading) {
  return uint64_t((addr & 0x3ffffu) >> 4) | (uint64_t(leading >> 4) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 46) | (uint64_t(2) << 61);
}
OG_SM100_FN uint32_t desc_leading(uint64_t d) { return uint32_t((d >> 16) & 0x3fffu) << 4; }
// The descriptor of the MMA `kk` of a stage: 32 bytes of K further along the swizzled rows
// (the swizzle applies to address bits, so a start inside the 128-byte row is an offset).
OG_SM100_FN uint64_t desc_advance(uint64_t desc, int bytes) { return desc + uint64_t(bytes >> 4); }
OG_SM100_FN uint32_t desc_start(uint64_t d) { return uint32_t(d & 0x3fffu) << 4; }
OG_SM100_FN uint32_t desc_stride(uint64_t d) { return uint32_t((d >> 32) & 0x3fffu) << 4; }
OG_SM100_FN int desc_layout(uint64_t d) { return int(d >> 61); }

// Where TMA's 128-byte swizzle puts byte `byte` (< 128) of row `row` of a tile whose base is
// 1024-byte aligned: the 16-byte unit index is XORed with the row within its 8-row group.
OG_SM100_FN uint32_t sw128_offset(int row, int byte) {
  return uint32_t(row) * 128u + ((uint32_t((byte >> 4) ^ (row & 7))) << 4) + uint32_t(byte & 15);
}

// ---- Tensor memory ----------------------------------------------------------------------------
// Addresses: lane << 16 | column. 128 lanes x 512 columns of 32 bits per SM; allocations are
// powers of two of at least 32 columns.
OG_SM100_FN uint32_t tmem_addr(int lane, int column) { return (uint32_t(lane) << 16) | uint32_t(column); }
OG_SM100_FN int tmem_alloc_columns(int used) {
  int c = 32;
  while (c < used) c *= 2;
  return c;
}

// ---- One kernel's geometry --------------------------------------------------------------------
// BLOCK_M = 128 * cta_group (each CTA of a 2-SM pair owns 128 rows); BLOCK_N the MMA's N (each
// CTA loads BLOCK_N / cta_group rows of B, the pair's MMA reads both halves).
struct Geometry {
  Kind kind;
  int block_n;
  int cta_group;
  int stages;
  bool b_mn = false;  // B MN-major (16-bit only): loaded as 64-column boxes of a stage's 64 K rows
};
OG_SM100_FN int block_m(const Geometry& g) { return 128 * g.cta_group; }
OG_SM100_FN int b_rows_per_cta(const Geometry& g) { return g.block_n / g.cta_group; }
// 128-row groups of scale factors for B (every CTA holds the whole tile's: the MMA of each SM
// scales all BLOCK_N columns); a tile narrower than 128 still takes one group.
OG_SM100_FN int sfb_groups(const Geometry& g) { return g.block_n < 128 ? 1 : g.block_n / 128; }

// Tensor-memory columns: accumulator buffers (two where they fit beside the scales, so that the
// epilogue of one tile overlaps the MMAs of the next), then A's and B's scale tiles of a stage.
OG_SM100_FN int sfa_columns(const Geometry& g) { return 4 * sf_tiles_per_stage(g.kind); }
OG_SM100_FN int sfb_columns(const Geometry& g) { return 4 * sf_tiles_per_stage(g.kind) * sfb_groups(g); }
OG_SM100_FN int acc_stages(const Geometry& g) { return 2 * g.block_n + sfa_columns(g) + sfb_columns(g) <= 512 ? 2 : 1; }
OG_SM100_FN int acc_column(const Geometry& g, int acc_stage) { return acc_stage * g.block_n; }
OG_SM100_FN int sfa_column0(const Geometry& g) { return acc_stages(g) * g.block_n; }
OG_SM100_FN int sfb_column0(const Geometry& g) { return sfa_column0(g) + sfa_columns(g); }
OG_SM100_FN int tmem_columns(const Geometry& g) { return tmem_alloc_columns(sfb_column0(g) + sfb_columns(g)); }
// Where tcgen05.cp puts scale tile t (of the stage) of A, and tile t of B's 128-row group gb:
// four columns each (32x128b.warpx4: the tile's 32 rows of 16 bytes in every lane quarter).
OG_SM100_FN int sfa_tile_column(const Geometry& g, int t) { return sfa_column0(g) + 4 * t; }
OG_SM100_FN int sfb_tile_column(const Geometry& g, int t, int gb) { return sfb_column0(g) + 4 * (t * sfb_groups(g) + gb); }

// The scales MMA `kk` of a stage reads: scale column c = kk * scales_per_mma of the stage lies in
// tile c / 4 at byte c % 4 (the scale-factor id); its tensor-memory address is the tile's first
// column (B: of group 0; the MMA finds the other groups 4 columns apart each).
OG_SM100_FN int mma_scale_column(Kind k, int kk) { return kk * scales_per_mma(k); }
OG_SM100_FN int mma_sf_id(Kind k, int kk) { return mma_scale_column(k, kk) % 4; }
OG_SM100_FN int mma_sfa_column(const Geometry& g, int kk) { return sfa_tile_column(g, mma_scale_column(g.kind, kk) / 4); }
OG_SM100_FN int mma_sfb_column(const Geometry& g, int kk) { return sfb_tile_column(g, mma_scale_column(g.kind, kk) / 4, 0); }

// ---- Shared-memory map (byte offsets from a 1024-byte aligned base) --------------------------
// [stages x A tile][stages x B tile][stages x scale tiles: A's, then B's groups][epilogue
// staging: 4 warps x 32 rows x 128 bytes][barriers][tensor-memory address]
OG_SM100_FN uint32_t a_tile_bytes(const Geometry&) { return 128u * kStageBytesK; }
OG_SM100_FN uint32_t b_tile_bytes(const Geometry& g) { return uint32_t(b_rows_per_cta(g)) * kStageBytesK; }
OG_SM100_FN uint32_t sfa_stage_bytes(const Geometry& g) { return 512u * uint32_t(sf_tiles_per_stage(g.kind)); }
OG_SM100_FN uint32_t sfb_stage_bytes(const Geometry& g) { return sfa_stage_bytes(g) * uint32_t(sfb_groups(g)); }
OG_SM100_FN uint32_t a_offset(const Geometry& g, int stage) { return uint32_t(stage) * a_tile_bytes(g); }
OG_SM100_FN uint32_t b_offset(const Geometry& g, int stage) {
  return uint32_t(g.stages) * a_tile_bytes(g) + uint32_t(stage) * b_tile_bytes(g);
}
OG_SM100_FN uint32_t sf_offset(const Geometry& g, int stage) {
  return uint32_t(g.stages) * (a_tile_bytes(g) + b_tile_bytes(g)) +
         uint32_t(stage) * (sfa_stage_bytes(g) + sfb_stage_bytes(g));
}
// Scale tile t of A, and tile t of B's group gb, in a stage: each group's tiles are one bulk copy
// (consecutive in the packed layout), so B's are stored group by group.
OG_SM100_FN uint32_t sfa_tile_offset(const Geometry& g, int stage, int t) {
  return sf_offset(g, stage) + 512u * uint32_t(t);
}
OG_SM100_FN uint32_t sfb_tile_offset(const Geometry& g, int stage, int t, int gb) {
  return sf_offset(g, stage) + sfa_stage_bytes(g) + 512u * uint32_t(gb * sf_tiles_per_stage(g.kind) + t);
}
constexpr int kEpilogueWarps = 4;
// Threads of a CTA: the producer warp, the MMA warp, the epilogue warps.
constexpr int kThreads = 32 * (2 + kEpilogueWarps);
constexpr uint32_t kStagingBytesPerWarp = 32u * 128u;
OG_SM100_FN uint32_t staging_offset(const Geometry& g) {
  const uint32_t end = sf_offset(g, g.stages);
  return (end + 1023u) / 1024u * 1024u;  // the staging boxes use the 128-byte swizzle too
}
OG_SM100_FN uint32_t barrier_offset(const Geometry& g) { return staging_offset(g) + kEpilogueWarps * kStagingBytesPerWarp; }
// Barriers: full and empty per stage, tmem_full and tmem_empty per accumulator buffer; then the
// allocated tensor-memory address (4 bytes, 8 reserved).
OG_SM100_FN uint32_t barrier_count(const Geometry& g) { return 2u * uint32_t(g.stages) + 2u * uint32_t(acc_stages(g)); }
OG_SM100_FN uint32_t shared_bytes(const Geometry& g) { return 1024u + barrier_offset(g) + 8u * barrier_count(g) + 8u; }
// The opt-in shared memory per block of compute capability 10.0 (227 KiB).
constexpr uint32_t kMaxSharedBytes = 232448;

// ---- Work -------------------------------------------------------------------------------------
// K-tiles of a problem, and how many of a stage's four MMAs reach real K (the last stage's others
// would read only zero-filled elements, and their scale columns may lie past the packed tensor).
OG_SM100_FN int k_tiles(Kind k, int K) { return (K + block_k(k) - 1) / block_k(k); }
OG_SM100_FN int mmas_in_stage(Kind k, int K, int kt) {
  const int left = K - kt * block_k(k);
  const int n = (left + mma_k(k) - 1) / mma_k(k);
  return n < kMmasPerStage ? n : kMmasPerStage;
}
// (OG_SM100_PACKED: on block_formats.h's packed-layout functions, which are not constexpr.)
// Packed scale tiles per 128 rows of the whole problem (the packed layout pads scale columns to 4)
// and how many of them stage kt loads: the tiles its MMAs read.
OG_SM100_PACKED int sf_tiles_total(Kind k, int K) { return og_sf_padded_cols((K + scale_vec(k) - 1) / scale_vec(k)) / 4; }
OG_SM100_FN int sf_tiles_in_stage(Kind k, int K, int kt) {
  const int columns = mmas_in_stage(k, K, kt) * scales_per_mma(k);
  return (columns + 3) / 4;
}
// Byte offset in one batch's packed scale tensor of tile t of stage kt for the 128-row group that
// starts at row `row0` (a multiple of 128), block_formats.h's layout.
OG_SM100_PACKED int sf_global_offset(Kind k, int K, int row0, int kt, int t) {
  const int padded_cols = og_sf_padded_cols((K + scale_vec(k) - 1) / scale_vec(k));
  return og_sf_tile(row0, (kt * sf_tiles_per_stage(k) + t) * 4, padded_cols) * 512;
}
// 128-row groups of a scale tensor with `rows` rows (rows padded to 128).
OG_SM100_PACKED int sf_row_groups(int rows) { return og_sf_padded_rows(rows) / 128; }

// Rows of A and of B that CTA `rank` of a tile (m0, n0) loads (the 2-SM split: A by 128 rows, B
// by halves of BLOCK_N), and the first row of D its accumulator holds.
OG_SM100_FN int a_row0(const Geometry&, int m0, int rank) { return m0 + 128 * rank; }
OG_SM100_FN int b_row0(const Geometry& g, int n0, int rank) { return n0 + b_rows_per_cta(g) * rank; }
OG_SM100_FN int d_row0(const Geometry&, int m0, int rank) { return m0 + 128 * rank; }

// What TMA brings per stage: the operand boxes' inner coordinate (16-bit maps count elements,
// the byte maps of fp8 and fp4 count bytes), the scale boxes' coordinates (the packed tensor as
// {128 words of a tile, tile column, 128-row group, batch}) and the bytes one CTA receives.
OG_SM100_FN int k_coordinate(Kind k, int kt) { return kt * (elem_bits(k) == 16 ? kStageBytesK / 2 : kStageBytesK); }
OG_SM100_FN int sf_tile_coordinate(Kind k, int kt) { return kt * sf_tiles_per_stage(k); }
OG_SM100_FN int sf_group_coordinate(int row0) { return row0 / 128; }
OG_SM100_FN uint32_t stage_tx_bytes(const Geometry& g) {
  return a_tile_bytes(g) + b_tile_bytes(g) + sfa_stage_bytes(g) + sfb_stage_bytes(g);
}

// B MN-major: the stage's B tile is (BLOCK_N / cta_group) / 64 boxes of 64 columns x 64 K rows
// (8 KiB each, at `b_box_offset`), its descriptor's leading offset the distance between boxes,
// and an MMA's 16 K rows are 16 rows of 128 bytes further on.
constexpr int kMnBoxColumns = 64;
OG_SM100_FN int b_mn_boxes(const Geometry& g) { return b_rows_per_cta(g) / kMnBoxColumns; }
OG_SM100_FN uint32_t b_mn_box_bytes() { return uint32_t(kMnBoxColumns) * kStageBytesK; }
OG_SM100_FN uint32_t b_box_offset(const Geometry& g, int stage, int box) {
  return b_offset(g, stage) + uint32_t(box) * b_mn_box_bytes();
}
OG_SM100_FN int b_mma_advance_bytes(const Geometry& g) { return g.b_mn ? 16 * kStageBytesK : kMmaBytesK; }
OG_SM100_FN uint64_t b_stage_desc(const Geometry& g, uint32_t addr) {
  return g.b_mn ? smem_desc_sw128_mn(addr, b_mn_box_bytes()) : smem_desc_sw128(addr);
}

// ---- Epilogue ---------------------------------------------------------------------------------
// Epilogue warp `w` (warp index in the CTA) reads tensor-memory lanes 32 (w % 4).. (the lane
// quarter tcgen05.ld lets warp w access); lane l holds accumulator row 32 (w % 4) + l, and
// tcgen05.ld 32x32b register j column c0 + j. A chunk is 128 bytes of D per row: 32 f32 or 64
// 16-bit outputs, staged with the 128-byte swizzle for a TMA store of 32 rows.
OG_SM100_FN int epilogue_lane_quarter(int warp) { return warp % 4; }
OG_SM100_FN int epilogue_row(int warp, int lane) { return 32 * epilogue_lane_quarter(warp) + lane; }
OG_SM100_FN int chunk_columns(int d_bytes) { return 128 / d_bytes; }

}  // namespace omnigemm::detail::sm100
