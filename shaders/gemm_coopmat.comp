#version 450
// KHR cooperative-matrix GEMM (16-bit multiplicands, f32 accumulation). Bindings, push constants
// and specialization ids 0..6 come from gemm_common.glsl, as in every GEMM shader, so one
// descriptor/pipeline layout serves them all. The fragment shape (CM_M x CM_N x CM_K) comes from
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR at run time (ids 7..9), never hard-coded.
//
// Multiplicand type: this file is compiled once, with f16 multiplicands (MUL_T). The bf16 module
// is the same SPIR-V with that one 16-bit float type re-encoded as bfloat16 (SPV_KHR_bfloat16),
// done by the host (vulkan_pipelines.cpp, spirv_with_bf16_multiplicands) because glslang 15 has no
// GL_EXT_bfloat16. So MUL_T must appear ONLY as a cooperative-matrix component type: operands
// travel as raw 16-bit patterns in uvec4s, and the host sets MUL_BF16 for the patched module.
// fp8 inputs are converted to the multiplicand type while staging (exact in f16 and in bf16).
//
// Design (an Ampere-style mma.sync GEMM; on NVIDIA coopmat compiles to HMMA):
//  - WARPS_M x WARPS_N subgroups, each owning a WARP_M x WARP_N block of CM_M x CM_N accumulators;
//  - each operand tile is staged in shared memory in the order it lies in global memory (rows of
//    its contiguous dimension), as 16-byte vectors with one vector of padding per row (no bank
//    conflicts for 8-row fragment loads), and coopMatLoad reads it row- or column-major;
//  - global -> registers loads of K tile t+1 are issued before the MMAs of tile t; with STAGES == 2
//    they land in the other shared buffer, so each K step has one barrier;
//  - the epilogue leaves through shared memory one fragment row at a time, 4 columns per lane,
//    with 16/8-byte stores of D where its rows are contiguous and aligned.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

#include "omnigemm/tile_schedule.h"
#include "gemm_common.glsl"  // spec ids 0..6, bindings, push constants, decoders, epilogue

#define MUL_T float16_t

layout(constant_id = 7) const uint CM_M = 16;
layout(constant_id = 8) const uint CM_N = 16;
layout(constant_id = 9) const uint CM_K = 16;
layout(constant_id = 10) const uint SUBGROUP = 32;  // the device's (required) subgroup size
layout(constant_id = 11) const uint WARPS_M = 2;    // subgroups along M; THREADS/SUBGROUP/WARPS_M along N
layout(constant_id = 12) const uint STAGES = 2;     // shared-memory buffers: 1 or 2
layout(constant_id = 13) const uint MUL_BF16 = 0;   // 1 in the host's bf16 module: MUL_T is bfloat16
layout(constant_id = 14) const uint A_M_CONTIG = 0; // 1: A's M index is the contiguous one (staged K x M)
layout(constant_id = 15) const uint B_K_CONTIG = 0; // 1: B's K index is the contiguous one (staged N x K)
// Ceiling measurement only (OMNIGEMM_VK_MAINLOOP_PROBE, results are wrong by design): 1 drops the
// global loads from the K loop (shared -> fragment loads and MMAs remain), 2 also drops the
// shared-memory loads (MMAs on fragments loaded once). Only a developer build (OMNIGEMM_DEVELOPER)
// specializes this id; every other pipeline keeps the default 0 and the probe code folds away.
layout(constant_id = 16) const uint MAINLOOP_PROBE = 0;
// Split-K: K in SPLIT slices, one workgroup per (tile, slice); with SPLIT > 1 each stores its f32
// accumulators in the workspace (binding 16) at [((batch * SPLIT + slice) * M_PAD + m) * N_PAD + n]
// (M, N padded to the tile), and gemm_splitk_reduce.comp adds the slices in order and runs the
// epilogue.
layout(constant_id = 17) const uint SPLIT = 1;
layout(std430, set = 0, binding = 16) writeonly buffer Workspace { float ws[]; };
// 1 where the host found an operand in the multiplicand dtype, unit stride along its contiguous
// dimension, that is not vector-aligned: gather_a/gather_b then read its runs of 8 as the two
// aligned vectors that hold them. 0 (aligned problems): element by element only, less code.
layout(constant_id = 18) const uint UNALIGNED_GATHER = 0;
// Bit 0 A, bit 1 B: the operand is a copy made by operand_copy.comp (vulkan.coopmat_repack), its
// lines zero-padded to whole vectors, so they are read whole even where the extent along the
// contiguous dimension is ragged (the padding's zeros add nothing to the sums; M and N beyond the
// extents only reach outputs that are never stored).
layout(constant_id = 19) const uint PADDED = 0;

// Vector views of the same bindings (descriptor aliasing): 8 16-bit inputs per A/B load, 4
// outputs per D store, used where the contiguous dimension, the strides and the base allow.
layout(std430, set = 0, binding = 1) readonly buffer A16v { uvec4 a_vec[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16v { uvec4 b_vec[]; };
layout(std430, set = 0, binding = 8) buffer D32v { uvec4 d32_vec[]; };
layout(std430, set = 0, binding = 9) buffer D16v { uvec2 d16_vec[]; };

// The dtype whose bits the multiplicands use as they are (1 f16, 2 bf16); the host passes only
// that dtype and fp8 to this shader.
const uint MUL_DTYPE = MUL_BF16 != 0u ? 2u : 1u;
// 16-bit multiplicand pattern of an fp8 value (exact: fp8 values are f16 and bf16 values).
uint mul_bits(float v) { return MUL_BF16 != 0u ? floatBitsToUint(v) >> 16 : packHalf2x16(vec2(v, 0.0)); }
uint a_bits(uint i) { return A_TYPE == MUL_DTYPE ? uint(a16[i]) : mul_bits(decode(A_TYPE, uint(a8[i]))); }
uint b_bits(uint i) { return B_TYPE == MUL_DTYPE ? uint(b16[i]) : mul_bits(decode(B_TYPE, uint(b8[i]))); }

const uint WARPS = THREADS / SUBGROUP;
const uint WARPS_N = WARPS / WARPS_M;
const uint WARP_M = BLOCK_M / WARPS_M, WARP_N = BLOCK_N / WARPS_N;
const uint FRAG_M = WARP_M / CM_M, FRAG_N = WARP_N / CM_N;
// The epilogue's plain kinds (gemm_common.glsl) for subgroups of at most 4 fragment rows: the
// epilogue is unrolled over the rows, and with 8 (256x128 tiles of 8 subgroups) the extra paths
// made the whole shader several times slower on NVIDIA (bench/results/h200, "The epilogue's
// instructions"); there every output takes EPI_ANY, and where f16 rounds in software that path
// keeps the one form found not to slow these tiles (write_outputs).
const bool PLAIN_KINDS = FRAG_M <= 4u;

// Shared memory is one array of 16-byte vectors (8 16-bit elements, or 4 f32 in the epilogue).
// An operand tile is OUTER rows of INNER contiguous elements: INNER/8 vectors + 1 of padding.
const uint A_OUTER = A_M_CONTIG != 0u ? BLOCK_K : BLOCK_M;
const uint A_ROW_VECS = (A_M_CONTIG != 0u ? BLOCK_M : BLOCK_K) / 8u;
const uint A_LD = A_ROW_VECS + 1u;
const uint A_TILE_VECS = A_OUTER * A_LD;
const uint A_LOAD_VECS = A_OUTER * A_ROW_VECS;
const uint A_LOADS = (A_LOAD_VECS + THREADS - 1u) / THREADS;  // vectors per thread per K tile
const uint B_OUTER = B_K_CONTIG != 0u ? BLOCK_N : BLOCK_K;
const uint B_ROW_VECS = (B_K_CONTIG != 0u ? BLOCK_K : BLOCK_N) / 8u;
const uint B_LD = B_ROW_VECS + 1u;
const uint B_TILE_VECS = B_OUTER * B_LD;
const uint B_LOAD_VECS = B_OUTER * B_ROW_VECS;
const uint B_LOADS = (B_LOAD_VECS + THREADS - 1u) / THREADS;
const uint STAGE_VECS = A_TILE_VECS + B_TILE_VECS;
// Epilogue: per subgroup a CM_M x WARP_N f32 strip, rows padded by 4 floats (one vector).
const uint EPI_LD = WARP_N / 4u + 1u;
const uint EPI_STRIP_VECS = CM_M * EPI_LD;
const uint MAINLOOP_VECS = STAGES * STAGE_VECS, EPILOGUE_VECS = WARPS * EPI_STRIP_VECS;
const uint SMEM_VECS = MAINLOOP_VECS > EPILOGUE_VECS ? MAINLOOP_VECS : EPILOGUE_VECS;
shared uvec4 smem[SMEM_VECS];

// Per-workgroup state (set once at the top of main).
uint m0, n0, a_base, b_base;
bool a_vec_ok, b_vec_ok;
// UNALIGNED_GATHER pipelines: the operand is in the native 16-bit dtype with unit stride along
// its contiguous dimension (its runs of 8 may come from aligned vector pairs).
bool a_unit, b_unit;
// The K tile in flight: global -> registers before the MMAs, registers -> shared after them.
uvec4 a_regs[A_LOADS];
uvec4 b_regs[B_LOADS];

// 8 consecutive elements along the contiguous dimension, zero outside M/N/K. Where all 8 lie
// inside the operand and its contiguous dimension has unit stride in the native dtype (an
// unaligned leading dimension or base, a ragged extent), they come from the one or two aligned
// vectors that hold them; the second only where the bound range holds it whole (length()), so no
// read leaves the binding. Otherwise element by element (other strides, fp8 conversion, edges).
uvec4 gather_a(uint m, uint k) {
  if (a_unit && (A_M_CONTIG != 0u ? m + 8u <= p.M && k < p.K : m < p.M && k + 8u <= p.K)) {
    const uint first = a_base + m * p.a_sr + k * p.a_sc, q = first / 8u, r = first % 8u;
    if (r == 0u) return a_vec[q];
    if (q + 1u < uint(a_vec.length())) return shift_window(a_vec[q], a_vec[q + 1u], r);
  }
  uint h[8];
  [[unroll]] for (uint e = 0; e < 8u; ++e) {
    const uint mm = A_M_CONTIG != 0u ? m + e : m, kk = A_M_CONTIG != 0u ? k : k + e;
    h[e] = (mm < p.M && kk < p.K) ? a_bits(a_base + mm * p.a_sr + kk * p.a_sc) : 0u;
  }
  return uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
}
uvec4 gather_b(uint k, uint n) {
  if (b_unit && (B_K_CONTIG != 0u ? k + 8u <= p.K && n < p.N : k < p.K && n + 8u <= p.N)) {
    const uint first = b_base + k * p.b_sr + n * p.b_sc, q = first / 8u, r = first % 8u;
    if (r == 0u) return b_vec[q];
    if (q + 1u < uint(b_vec.length())) return shift_window(b_vec[q], b_vec[q + 1u], r);
  }
  uint h[8];
  [[unroll]] for (uint e = 0; e < 8u; ++e) {
    const uint kk = B_K_CONTIG != 0u ? k + e : k, nn = B_K_CONTIG != 0u ? n : n + e;
    h[e] = (kk < p.K && nn < p.N) ? b_bits(b_base + kk * p.b_sr + nn * p.b_sc) : 0u;
  }
  return uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
}

// Global -> registers for the K tile at k0. Consecutive threads take consecutive vectors of a
// row, so the loads coalesce along the contiguous dimension.
void load_tiles(uint k0) {
  [[unroll]] for (uint r = 0; r < A_LOADS; ++r) {
    const uint v = gl_LocalInvocationID.x + r * THREADS;
    const uint outer = v / A_ROW_VECS, inner = (v % A_ROW_VECS) * 8u;
    const uint m = m0 + (A_M_CONTIG != 0u ? inner : outer), k = k0 + (A_M_CONTIG != 0u ? outer : inner);
    uvec4 x = uvec4(0);
    if (v < A_LOAD_VECS) {
      if (!a_vec_ok) x = gather_a(m, k);
      else if (m < p.M && k < p.K) x = a_vec[(a_base + m * p.a_sr + k * p.a_sc) / 8u];
    }
    a_regs[r] = x;
  }
  [[unroll]] for (uint r = 0; r < B_LOADS; ++r) {
    const uint v = gl_LocalInvocationID.x + r * THREADS;
    const uint outer = v / B_ROW_VECS, inner = (v % B_ROW_VECS) * 8u;
    const uint k = k0 + (B_K_CONTIG != 0u ? inner : outer), n = n0 + (B_K_CONTIG != 0u ? outer : inner);
    uvec4 x = uvec4(0);
    if (v < B_LOAD_VECS) {
      if (!b_vec_ok) x = gather_b(k, n);
      else if (k < p.K && n < p.N) x = b_vec[(b_base + k * p.b_sr + n * p.b_sc) / 8u];
    }
    b_regs[r] = x;
  }
}

// Registers -> shared buffer `stage`.
void store_tiles(uint stage) {
  const uint a_at = stage * STAGE_VECS, b_at = a_at + A_TILE_VECS;
  [[unroll]] for (uint r = 0; r < A_LOADS; ++r) {
    const uint v = gl_LocalInvocationID.x + r * THREADS;
    if (v < A_LOAD_VECS) smem[a_at + (v / A_ROW_VECS) * A_LD + v % A_ROW_VECS] = a_regs[r];
  }
  [[unroll]] for (uint r = 0; r < B_LOADS; ++r) {
    const uint v = gl_LocalInvocationID.x + r * THREADS;
    if (v < B_LOAD_VECS) smem[b_at + (v / B_ROW_VECS) * B_LD + v % B_ROW_VECS] = b_regs[r];
  }
}

// 4 consecutive columns gn.. of row gm < M, for epilogue kind `kind` (epilogue_kind(), or EPI_ANY).
// Stored as one vector, a plain bf16 D takes the general code (the same values).
void write_outputs(uint kind, uint batch, uint gm, uint gn, vec4 acc4, bool d_vec4) {
  const uint di = p.d_off + batch * p.d_bs + gm * p.d_sr + gn * p.d_sc;
  if (!PLAIN_KINDS && !F16_ROUND_HW) {  // every value first, then the stores (see PLAIN_KINDS)
    float o[4];
    [[unroll]] for (uint t = 0; t < 4u; ++t) o[t] = gn + t < p.N ? epilogue_value(batch, gm, gn + t, acc4[t]) : 0.0;
    if (d_vec4 && gn + 3u < p.N) {
      if (D_TYPE == 0u) d32_vec[di / 4u] = floatBitsToUint(vec4(o[0], o[1], o[2], o[3]));
      else d16_vec[di / 4u] = uvec2(encode_out16(o[0]) | (encode_out16(o[1]) << 16), encode_out16(o[2]) | (encode_out16(o[3]) << 16));
      return;
    }
    [[unroll]] for (uint t = 0; t < 4u; ++t) {
      if (gn + t >= p.N) break;
      store_d(di + t * p.d_sc, o[t]);
    }
    return;
  }
  if (d_vec4 && gn + 3u < p.N) {
    if (kind == EPI_PLAIN_F16) {
      const vec4 o = p.alpha * acc4;
      d16_vec[di / 4u] = uvec2(out_f16x2_bits(o.xy), out_f16x2_bits(o.zw));
    } else if (kind == EPI_PLAIN_F32) {
      d32_vec[di / 4u] = floatBitsToUint(p.alpha * acc4);
    } else {
      float o[4];
      [[unroll]] for (uint t = 0; t < 4u; ++t) o[t] = epilogue_value(batch, gm, gn + t, acc4[t]);
      if (D_TYPE == 0u) d32_vec[di / 4u] = floatBitsToUint(vec4(o[0], o[1], o[2], o[3]));
      else d16_vec[di / 4u] = uvec2(encode_out16(o[0]) | (encode_out16(o[1]) << 16), encode_out16(o[2]) | (encode_out16(o[3]) << 16));
    }
    return;
  }
  [[unroll]] for (uint t = 0; t < 4u; ++t) {
    if (gn + t >= p.N) break;
    finish_d(kind, batch, gm, gn + t, di + t * p.d_sc, acc4[t]);
  }
}

void main() {
  // One workgroup per work item of one batch and K slice (slice-major), from the shared
  // scheduler; the batches along z, from batch_base in each dispatch.
  const uint tiles = uint(num_pid_m() * num_pid_n());
  const uint item = work_item_id();
  if (item >= tiles * SPLIT) return;  // uniform in the workgroup: before any barrier
  const uint slice = item / tiles;
  const OgWork tile = og_work_item(int(item % tiles), num_pid_m(), num_pid_n(), GROUP_M, 1);
  const uint batch = gl_WorkGroupID.z + p.batch_base;
  m0 = uint(tile.pid_m) * BLOCK_M;
  n0 = uint(tile.pid_n) * BLOCK_N;
  const uint warp = gl_LocalInvocationID.x / SUBGROUP, lane = gl_LocalInvocationID.x % SUBGROUP;
  const uint wm = warp % WARPS_M, wn = warp / WARPS_M;
  a_base = p.a_off + batch * p.a_bs;
  b_base = p.b_off + batch * p.b_bs;
  // 16-byte loads: the native 16-bit dtype, contiguous inner dimension whose extent, the outer
  // stride and the base are multiples of 8 elements (a vector is then all inside or all outside).
  const bool a_pad = (PADDED & 1u) != 0u, b_pad = (PADDED & 2u) != 0u;
  a_vec_ok = A_TYPE == MUL_DTYPE && a_base % 8u == 0u &&
             (A_M_CONTIG != 0u ? p.a_sr == 1u && p.a_sc % 8u == 0u && (a_pad || p.M % 8u == 0u)
                               : p.a_sc == 1u && p.a_sr % 8u == 0u && (a_pad || p.K % 8u == 0u));
  b_vec_ok = B_TYPE == MUL_DTYPE && b_base % 8u == 0u &&
             (B_K_CONTIG != 0u ? p.b_sr == 1u && p.b_sc % 8u == 0u && (b_pad || p.K % 8u == 0u)
                               : p.b_sc == 1u && p.b_sr % 8u == 0u && (b_pad || p.N % 8u == 0u));
  a_unit = UNALIGNED_GATHER != 0u && A_TYPE == MUL_DTYPE && (A_M_CONTIG != 0u ? p.a_sr == 1u : p.a_sc == 1u);
  b_unit = UNALIGNED_GATHER != 0u && B_TYPE == MUL_DTYPE && (B_K_CONTIG != 0u ? p.b_sr == 1u : p.b_sc == 1u);

  coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator> acc[FRAG_M][FRAG_N];
  [[unroll]] for (uint i = 0; i < FRAG_M; ++i)
    [[unroll]] for (uint j = 0; j < FRAG_N; ++j) acc[i][j] = coopmat<float, gl_ScopeSubgroup, CM_M, CM_N, gl_MatrixUseAccumulator>(0.0);

  // This slice's K tiles: slices are whole K tiles, so a tile's loads stop only at K.
  const uint per_slice = ((p.K + SPLIT - 1u) / SPLIT + BLOCK_K - 1u) / BLOCK_K * BLOCK_K;
  const uint k_begin = min(p.K, slice * per_slice);
  const uint k_tiles = (min(p.K, k_begin + per_slice) - k_begin + BLOCK_K - 1u) / BLOCK_K;
  if (k_tiles > 0u) {
    load_tiles(k_begin);
    store_tiles(0u);
  }
  barrier();
  if (MAINLOOP_PROBE == 2u) {
    // The same MMA count as the real loop on fragments that never change: the MMA-issue ceiling.
    coopmat<MUL_T, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b_frag[FRAG_N];
    coopmat<MUL_T, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a_frag[FRAG_M];
    [[unroll]] for (uint j = 0; j < FRAG_N; ++j) {
      const uint n = wn * WARP_N + j * CM_N;
      if (B_K_CONTIG != 0u) coopMatLoad(b_frag[j], smem, A_TILE_VECS + n * B_LD, B_LD, gl_CooperativeMatrixLayoutColumnMajor);
      else coopMatLoad(b_frag[j], smem, A_TILE_VECS + n / 8u, B_LD, gl_CooperativeMatrixLayoutRowMajor);
    }
    [[unroll]] for (uint i = 0; i < FRAG_M; ++i) {
      const uint m = wm * WARP_M + i * CM_M;
      if (A_M_CONTIG != 0u) coopMatLoad(a_frag[i], smem, m / 8u, A_LD, gl_CooperativeMatrixLayoutColumnMajor);
      else coopMatLoad(a_frag[i], smem, m * A_LD, A_LD, gl_CooperativeMatrixLayoutRowMajor);
    }
    for (uint kt = 0; kt < k_tiles; ++kt)
      [[unroll]] for (uint kk = 0; kk < BLOCK_K; kk += CM_K)
        [[unroll]] for (uint i = 0; i < FRAG_M; ++i)
          [[unroll]] for (uint j = 0; j < FRAG_N; ++j) acc[i][j] = coopMatMulAdd(a_frag[i], b_frag[j], acc[i][j]);
    barrier();
  }
  for (uint kt = 0; MAINLOOP_PROBE != 2u && kt < k_tiles; ++kt) {
    const bool more = kt + 1u < k_tiles && MAINLOOP_PROBE == 0u;
    const uint stage = STAGES > 1u ? (kt & 1u) : 0u;
    if (more) load_tiles(k_begin + (kt + 1u) * BLOCK_K);  // in flight during the MMAs below

    const uint a_at = stage * STAGE_VECS, b_at = a_at + A_TILE_VECS;
    [[unroll]] for (uint kk = 0; kk < BLOCK_K; kk += CM_K) {
      coopmat<MUL_T, gl_ScopeSubgroup, CM_K, CM_N, gl_MatrixUseB> b_frag[FRAG_N];
      [[unroll]] for (uint j = 0; j < FRAG_N; ++j) {
        const uint n = wn * WARP_N + j * CM_N;
        if (B_K_CONTIG != 0u)
          coopMatLoad(b_frag[j], smem, b_at + n * B_LD + kk / 8u, B_LD, gl_CooperativeMatrixLayoutColumnMajor);
        else
          coopMatLoad(b_frag[j], smem, b_at + kk * B_LD + n / 8u, B_LD, gl_CooperativeMatrixLayoutRowMajor);
      }
      [[unroll]] for (uint i = 0; i < FRAG_M; ++i) {
        const uint m = wm * WARP_M + i * CM_M;
        coopmat<MUL_T, gl_ScopeSubgroup, CM_M, CM_K, gl_MatrixUseA> a_frag;
        if (A_M_CONTIG != 0u)
          coopMatLoad(a_frag, smem, a_at + kk * A_LD + m / 8u, A_LD, gl_CooperativeMatrixLayoutColumnMajor);
        else
          coopMatLoad(a_frag, smem, a_at + m * A_LD + kk / 8u, A_LD, gl_CooperativeMatrixLayoutRowMajor);
        [[unroll]] for (uint j = 0; j < FRAG_N; ++j) acc[i][j] = coopMatMulAdd(a_frag, b_frag[j], acc[i][j]);
      }
    }

    if (STAGES > 1u) {
      // The other buffer was last read in step kt - 1, which every subgroup finished before the
      // barrier that ended that step.
      if (more) store_tiles(stage ^ 1u);
    } else {
      barrier();  // every subgroup is done reading the only buffer
      if (more) store_tiles(0u);
    }
    barrier();
  }

  if (SPLIT > 1u) {
    // Partial sums straight from the fragments (the workspace is padded to whole tiles). A
    // fragment row wholly past M is not stored: the reduction reads rows below M only (few-row
    // problems in 64-row tiles would otherwise write mostly padding).
    const uint m_pad = uint(num_pid_m()) * BLOCK_M, n_pad = uint(num_pid_n()) * BLOCK_N;
    const uint at = (batch * SPLIT + slice) * m_pad * n_pad;
    [[unroll]] for (uint i = 0; i < FRAG_M; ++i) {
      const uint fm = m0 + wm * WARP_M + i * CM_M;
      if (fm >= p.M) continue;  // uniform in the subgroup
      [[unroll]] for (uint j = 0; j < FRAG_N; ++j)
        coopMatStore(acc[i][j], ws, at + fm * n_pad + n0 + wn * WARP_N + j * CM_N, n_pad, gl_CooperativeMatrixLayoutRowMajor);
    }
    return;
  }
  // Epilogue, one fragment row at a time: each subgroup stores its CM_M x WARP_N strip to shared
  // memory (reusing the operand buffers: the loop ended on a barrier), then each lane finishes 4
  // consecutive columns of a row.
  const uint strip = warp * EPI_STRIP_VECS;
  const uint d_base = p.d_off + batch * p.d_bs;
  const bool d_vec4 = p.d_sc == 1u && p.d_sr % 4u == 0u && d_base % 4u == 0u;
  const uint row_quads = WARP_N / 4u, kind = PLAIN_KINDS ? epilogue_kind() : EPI_ANY;
  [[unroll]] for (uint i = 0; i < FRAG_M; ++i) {
    [[unroll]] for (uint j = 0; j < FRAG_N; ++j)
      coopMatStore(acc[i][j], smem, strip + j * (CM_N / 4u), EPI_LD, gl_CooperativeMatrixLayoutRowMajor);
    subgroupBarrier();
    for (uint e = lane; e < CM_M * row_quads; e += SUBGROUP) {
      const uint r = e / row_quads, q = e % row_quads;
      const uint gm = m0 + wm * WARP_M + i * CM_M + r, gn = n0 + wn * WARP_N + q * 4u;
      if (gm < p.M && gn < p.N) write_outputs(kind, batch, gm, gn, uintBitsToFloat(smem[strip + r * EPI_LD + q]), d_vec4);
    }
    subgroupBarrier();  // the strip is rewritten by the next fragment row
  }
}
