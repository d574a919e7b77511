#version 450
// NV cooperative matrix 2 GEMM (VK_NV_cooperative_matrix2; 16-bit multiplicands, f32
// accumulation). Bindings, push constants and specialization ids 0..6 come from
// gemm_common.glsl, as in every GEMM shader; this shader's own ids start at 7.
//
// The whole BLOCK_M x BLOCK_N tile is ONE workgroup-scope accumulator, and each K step loads one
// BLOCK_M x BLOCK_K matrix of A and one BLOCK_K x BLOCK_N matrix of B: how they are split over
// warps, staged through shared memory and fed to the tensor cores is the driver's choice (the
// point of this path: NVIDIA's compiler picks the MMA instructions and the staging, which the
// subgroup-scope coopmat family cannot hand it). Per K step:
//  - A and B tiles straight from global memory with coopMatLoadTensorNV: a tensor layout
//    describes the stored matrix (rows of its contiguous dimension, the other stride from the
//    push constants), sliced to the tile; a transposing view reads the other orientation. On the
//    edges (partial M/N tile, the K tail) a clamped layout returns zeros outside M x K / K x N;
//    interior tiles use an unclamped layout, with no bounds checks;
//  - operands a tensor layout cannot describe (fp8, which is converted; strides with no unit
//    stride or overlapping rows; a base not 16-byte aligned) are gathered element by element
//    into shared memory as 16-bit multiplicand patterns and read with coopMatLoad (the host
//    chooses per operand with A_LOAD / B_LOAD);
//  - one coopMatMulAdd.
// Epilogue: coopMatPerElementNV computes alpha * acc + beta * C + bias and the activation per
// element (the same epilogue_value as the other shaders); then D is written per element (any
// strides, rounded to nearest even by omnigemm/epilogue.h), or, for f32 D with contiguous
// aligned rows, with one clamped coopMatStoreTensorNV.
//
// Multiplicand type: as in gemm_coopmat.comp, MUL_T (float16_t) appears ONLY as the A/B
// cooperative-matrix component type, so the host can re-encode the module's one 16-bit float
// type as bfloat16 (spirv_with_bf16_multiplicands) for bf16 inputs and set MUL_BF16.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_control_flow_attributes : require

#include "omnigemm/tile_schedule.h"
#include "gemm_common.glsl"  // spec ids 0..6, bindings, push constants, decoders, epilogue

#define MUL_T float16_t

// How each operand's K tiles are read: 0 gathered into shared memory (any dtype, strides and
// alignment); 1 tensor load, the stored matrix's rows are along K for A (A is M x K, K
// contiguous) and along N for B (B is K x N, N contiguous); 2 tensor load of the other
// orientation (A stored K x M, B stored N x K) through a transposing view.
layout(constant_id = 7) const uint A_LOAD = 1;
layout(constant_id = 8) const uint B_LOAD = 1;
// 1: the tensor-loaded operand's row stride (the one that is not 1) is a multiple of 8 elements;
// masking its low bits tells the compiler, which can then use 16-byte accesses.
layout(constant_id = 9) const uint A_LD8 = 0;
layout(constant_id = 10) const uint B_LD8 = 0;
// 1: D is f32 with contiguous rows and a 16-byte aligned base in every batch: tensor store.
layout(constant_id = 11) const uint D_TENSOR = 0;
layout(constant_id = 12) const uint MUL_BF16 = 0;  // 1 in the host's bf16 module: MUL_T is bfloat16

#define A_MAT coopmat<MUL_T, gl_ScopeWorkgroup, BLOCK_M, BLOCK_K, gl_MatrixUseA>
#define B_MAT coopmat<MUL_T, gl_ScopeWorkgroup, BLOCK_K, BLOCK_N, gl_MatrixUseB>
#define ACC_MAT coopmat<float, gl_ScopeWorkgroup, BLOCK_M, BLOCK_N, gl_MatrixUseAccumulator>

// A 2-D tensor layout over a stored ROWS x COLS matrix, COLS contiguous, rows LD elements apart.
// CLAMP: reads outside ROWS x COLS return 0 and stores there are dropped; EXACT: no checks.
#define TENSOR(MODE, ROWS, COLS, LD) setTensorLayoutStrideNV(setTensorLayoutDimensionNV(createTensorLayoutNV(2, MODE), ROWS, COLS), LD, 1)
#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define EXACT gl_CooperativeMatrixClampModeUndefinedNV
#define TRANSPOSE createTensorViewNV(2, false, 1, 0)

// The dtype whose bits the multiplicands use as they are (1 f16, 2 bf16); the host passes only
// that dtype and fp8 to this shader.
const uint MUL_DTYPE = MUL_BF16 != 0u ? 2u : 1u;
// 16-bit multiplicand pattern of an fp8 value (exact: fp8 values are f16 and bf16 values).
uint mul_bits(float v) { return MUL_BF16 != 0u ? floatBitsToUint(v) >> 16 : packHalf2x16(vec2(v, 0.0)); }
uint a_bits(uint i) { return A_TYPE == MUL_DTYPE ? uint(a16[i]) : mul_bits(decode(A_TYPE, uint(a8[i]))); }
uint b_bits(uint i) { return B_TYPE == MUL_DTYPE ? uint(b16[i]) : mul_bits(decode(B_TYPE, uint(b8[i]))); }

// Gathered K tiles: 16-bit multiplicand patterns, two per uint along the tile's rows (A: BLOCK_M
// rows of BLOCK_K, B: BLOCK_K rows of BLOCK_N). One word when the operand is tensor-loaded, so a
// tensor-loaded operand costs no shared memory (the driver reserves its own for the staging).
const uint A_WORDS = A_LOAD == 0u ? BLOCK_M * BLOCK_K / 2u : 1u;
const uint B_WORDS = B_LOAD == 0u ? BLOCK_K * BLOCK_N / 2u : 1u;
shared uint a_stage[A_WORDS];
shared uint b_stage[B_WORDS];

// Per-workgroup state (set once at the top of main).
uint m0, n0, a_base, b_base, a_ld, b_ld;

void gather_a(uint k0) {
  for (uint w = gl_LocalInvocationID.x; w < A_WORDS; w += THREADS) {
    const uint m = m0 + w / (BLOCK_K / 2u), k = k0 + (w % (BLOCK_K / 2u)) * 2u;
    const uint at = a_base + m * p.a_sr + k * p.a_sc;
    const uint lo = m < p.M && k < p.K ? a_bits(at) : 0u;
    const uint hi = m < p.M && k + 1u < p.K ? a_bits(at + p.a_sc) : 0u;
    a_stage[w] = lo | (hi << 16);
  }
}
void gather_b(uint k0) {
  for (uint w = gl_LocalInvocationID.x; w < B_WORDS; w += THREADS) {
    const uint k = k0 + w / (BLOCK_N / 2u), n = n0 + (w % (BLOCK_N / 2u)) * 2u;
    const uint at = b_base + k * p.b_sr + n * p.b_sc;
    const uint lo = k < p.K && n < p.N ? b_bits(at) : 0u;
    const uint hi = k < p.K && n + 1u < p.N ? b_bits(at + p.b_sc) : 0u;
    b_stage[w] = lo | (hi << 16);
  }
}

// The K tile at k0 of a tensor-loaded operand; `edge`: the tile reaches past M, N or K.
void load_a(inout A_MAT a, uint k0, bool edge) {
  if (A_LOAD == 1u) {  // stored M x K
    if (edge) coopMatLoadTensorNV(a, a16, a_base, sliceTensorLayoutNV(TENSOR(CLAMP, p.M, p.K, a_ld), m0, BLOCK_M, k0, BLOCK_K));
    else coopMatLoadTensorNV(a, a16, a_base, sliceTensorLayoutNV(TENSOR(EXACT, p.M, p.K, a_ld), m0, BLOCK_M, k0, BLOCK_K));
  } else {  // stored K x M
    if (edge) coopMatLoadTensorNV(a, a16, a_base, sliceTensorLayoutNV(TENSOR(CLAMP, p.K, p.M, a_ld), k0, BLOCK_K, m0, BLOCK_M), TRANSPOSE);
    else coopMatLoadTensorNV(a, a16, a_base, sliceTensorLayoutNV(TENSOR(EXACT, p.K, p.M, a_ld), k0, BLOCK_K, m0, BLOCK_M), TRANSPOSE);
  }
}
void load_b(inout B_MAT b, uint k0, bool edge) {
  if (B_LOAD == 1u) {  // stored K x N
    if (edge) coopMatLoadTensorNV(b, b16, b_base, sliceTensorLayoutNV(TENSOR(CLAMP, p.K, p.N, b_ld), k0, BLOCK_K, n0, BLOCK_N));
    else coopMatLoadTensorNV(b, b16, b_base, sliceTensorLayoutNV(TENSOR(EXACT, p.K, p.N, b_ld), k0, BLOCK_K, n0, BLOCK_N));
  } else {  // stored N x K
    if (edge) coopMatLoadTensorNV(b, b16, b_base, sliceTensorLayoutNV(TENSOR(CLAMP, p.N, p.K, b_ld), n0, BLOCK_N, k0, BLOCK_K), TRANSPOSE);
    else coopMatLoadTensorNV(b, b16, b_base, sliceTensorLayoutNV(TENSOR(EXACT, p.N, p.K, b_ld), n0, BLOCK_N, k0, BLOCK_K), TRANSPOSE);
  }
}

// One K step at k0: A and B K tiles (tensor-loaded, or gathered then read from shared memory),
// one multiply-add. `edge`: the tile reaches past M, N or K, so tensor loads are clamped.
void k_step(inout ACC_MAT acc, uint k0, bool edge) {
  const bool gathers = A_LOAD == 0u || B_LOAD == 0u;
  if (gathers) {
    if (A_LOAD == 0u) gather_a(k0);
    if (B_LOAD == 0u) gather_b(k0);
    barrier();
  }
  A_MAT a;
  B_MAT b;
  if (A_LOAD == 0u) coopMatLoad(a, a_stage, 0, BLOCK_K / 2u, gl_CooperativeMatrixLayoutRowMajor);
  else load_a(a, k0, edge);
  if (B_LOAD == 0u) coopMatLoad(b, b_stage, 0, BLOCK_N / 2u, gl_CooperativeMatrixLayoutRowMajor);
  else load_b(b, k0, edge);
  if (gathers) barrier();  // every invocation has read the stage before the next K step refills it
  acc = coopMatMulAdd(a, b, acc);
}

// Per-element epilogue callbacks: (row, column) within the tile, the element, then the tile's
// origin and batch (passed explicitly: these functions see no per-invocation state).
float epilogue_op(const in uint r, const in uint c, const in float acc, const in uint tm, const in uint tn, const in uint batch) {
  const uint gm = tm + r, gn = tn + c;
  return gm < p.M && gn < p.N ? epilogue_value(batch, gm, gn, acc) : 0.0;
}
float store_op(const in uint r, const in uint c, const in float v, const in uint tm, const in uint tn, const in uint batch) {
  const uint gm = tm + r, gn = tn + c;
  if (gm < p.M && gn < p.N) store_d(p.d_off + batch * p.d_bs + gm * p.d_sr + gn * p.d_sc, v);
  return v;
}

void main() {
  // One workgroup per work item of one batch (no split-K: one slice), from the shared scheduler;
  // the batches along z, from batch_base in each dispatch.
  const uint item = work_item_id();
  if (item >= uint(num_pid_m() * num_pid_n())) return;  // uniform in the workgroup: before any barrier
  const OgWork tile = og_work_item(int(item), num_pid_m(), num_pid_n(), GROUP_M, 1);
  const uint batch = gl_WorkGroupID.z + p.batch_base;
  m0 = uint(tile.pid_m) * BLOCK_M;
  n0 = uint(tile.pid_n) * BLOCK_N;
  a_base = p.a_off + batch * p.a_bs;
  b_base = p.b_off + batch * p.b_bs;
  a_ld = A_LOAD == 1u ? p.a_sr : p.a_sc;
  b_ld = B_LOAD == 1u ? p.b_sr : p.b_sc;
  if (A_LD8 != 0u) a_ld &= ~7u;
  if (B_LD8 != 0u) b_ld &= ~7u;

  // Interior tiles run their whole K tiles with unchecked loads (a loop body without branches
  // for the compiler to pipeline); edge tiles, and the K tail of every tile, with clamped ones.
  ACC_MAT acc = ACC_MAT(0.0);
  const bool interior = m0 + BLOCK_M <= p.M && n0 + BLOCK_N <= p.N;
  const uint k_full = interior ? p.K / BLOCK_K * BLOCK_K : 0u;
  uint k0 = 0;
  for (; k0 < k_full; k0 += BLOCK_K) k_step(acc, k0, false);
  for (; k0 < p.K; k0 += BLOCK_K) k_step(acc, k0, true);

  ACC_MAT res;
  coopMatPerElementNV(res, acc, epilogue_op, m0, n0, batch);
  // In place (C == D): every read of C above happens before any write of D below, even where an
  // element is handled by more than one invocation ("at least once" per element).
  if (HAS_C)
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
  if (D_TENSOR != 0u)
    coopMatStoreTensorNV(res, d32, p.d_off + batch * p.d_bs, sliceTensorLayoutNV(TENSOR(CLAMP, p.M, p.N, p.d_sr), m0, BLOCK_M, n0, BLOCK_N));
  else
    coopMatPerElementNV(res, res, store_op, m0, n0, batch);
}
