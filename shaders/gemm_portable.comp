#version 450
// Portable GEMM: shared-memory tiles, no cooperative matrices, any subgroup size. One workgroup
// computes one BLOCK_M x BLOCK_N tile of D for one batch; tiles are visited in the grouped order
// of the shared scheduler. Every dtype is read through 8/16/32-bit storage views of the same
// buffer and converted to f32 exactly (fp8 and bf16 decoders match omnigemm/numeric.hpp);
// block-scaled operands are dequantised as they are loaded (block_scales.glsl); the output is
// rounded to nearest even in integer arithmetic, as the CPU reference does.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_control_flow_attributes : require

#include "omnigemm/tile_schedule.h"
#include "gemm_common.glsl"  // spec ids 0..6, bindings, push constants, decoders, epilogue
#include "block_scales.glsl" // spec ids 7..10, bindings 12..15: block-scaled A / B on load

float load_a(uint i) {
  if (A_TYPE == 0u) return a32[i];
  if (A_TYPE <= 2u) return decode(A_TYPE, uint(a16[i]));
  return decode(A_TYPE, uint(a8[i]));
}
float load_b(uint i) {
  if (B_TYPE == 0u) return b32[i];
  if (B_TYPE <= 2u) return decode(B_TYPE, uint(b16[i]));
  return decode(B_TYPE, uint(b8[i]));
}

// Thread layout: THREADS = ROWS x COLS threads, each owning a THREAD_M x THREAD_N sub-tile.
const uint THREAD_N = 4;
const uint COLS = BLOCK_N / THREAD_N;
const uint ROWS = THREADS / COLS;
const uint THREAD_M = BLOCK_M / ROWS;

// The K tiles, k-major so the inner loop reads rows contiguously: A's BLOCK_K x BLOCK_M at 0,
// B's BLOCK_K x BLOCK_N after it. The epilogue reuses the buffer (at least one row of every
// thread's outputs, THREADS x THREAD_N floats).
const uint TILE_FLOATS = BLOCK_K * (BLOCK_M + BLOCK_N);
const uint SMEM_FLOATS = TILE_FLOATS > THREADS * THREAD_N ? TILE_FLOATS : THREADS * THREAD_N;
const uint B_AT = BLOCK_K * BLOCK_M;
shared float smem[SMEM_FLOATS];
#define a_tile(i) smem[i]
#define b_tile(i) smem[B_AT + (i)]

// Epilogue rounds: each round stages ROUND_ROWS of every thread's rows through shared memory,
// then one loop (not unrolled: the epilogue's code, with its run-time options, exists once per
// round instead of once per output of a thread) finishes them, consecutive threads on
// consecutive columns.
const uint ROUND_ROWS_FIT = SMEM_FLOATS / (THREADS * THREAD_N);
const uint ROUND_ROWS = ROUND_ROWS_FIT < THREAD_M ? ROUND_ROWS_FIT : THREAD_M;

void main() {
  // One workgroup per work item of one batch (no split-K: one slice), from the shared scheduler;
  // the batches along z, from batch_base in each dispatch.
  const uint item = work_item_id();
  if (item >= uint(num_pid_m() * num_pid_n())) return;  // uniform in the workgroup: before any barrier
  const OgWork tile = og_work_item(int(item), num_pid_m(), num_pid_n(), GROUP_M, 1);
  const uint batch = gl_WorkGroupID.z + p.batch_base;
  const uint m0 = uint(tile.pid_m) * BLOCK_M, n0 = uint(tile.pid_n) * BLOCK_N;
  const uint tid = gl_LocalInvocationID.x;
  const uint tx = tid % COLS, ty = tid / COLS;
  const uint a_base = p.a_off + batch * p.a_bs, b_base = p.b_off + batch * p.b_bs;

  float acc[THREAD_M][THREAD_N];
  for (uint i = 0; i < THREAD_M; ++i)
    for (uint j = 0; j < THREAD_N; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.K; k0 += BLOCK_K) {
    for (uint e = tid; e < BLOCK_M * BLOCK_K; e += THREADS) {
      const uint m = e % BLOCK_M, k = e / BLOCK_M;
      const uint gm = m0 + m, gk = k0 + k;
      const uint at = a_base + gm * p.a_sr + gk * p.a_sc;
      a_tile(k * BLOCK_M + m) = (gm < p.M && gk < p.K) ? (A_SCALE_MODE != 0u ? load_scaled_a(batch, gm, gk, at) : load_a(at)) : 0.0;
    }
    for (uint e = tid; e < BLOCK_N * BLOCK_K; e += THREADS) {
      const uint n = e % BLOCK_N, k = e / BLOCK_N;
      const uint gn = n0 + n, gk = k0 + k;
      const uint at = b_base + gk * p.b_sr + gn * p.b_sc;
      b_tile(k * BLOCK_N + n) = (gn < p.N && gk < p.K) ? (B_SCALE_MODE != 0u ? load_scaled_b(batch, gn, gk, at) : load_b(at)) : 0.0;
    }
    barrier();
    for (uint k = 0; k < BLOCK_K; ++k) {
      float b_frag[THREAD_N];
      for (uint j = 0; j < THREAD_N; ++j) b_frag[j] = b_tile(k * BLOCK_N + tx * THREAD_N + j);
      for (uint i = 0; i < THREAD_M; ++i) {
        const float a = a_tile(k * BLOCK_M + ty * THREAD_M + i);
        for (uint j = 0; j < THREAD_N; ++j) acc[i][j] = fma(a, b_frag[j], acc[i][j]);
      }
    }
    barrier();
  }

  // Epilogue: alpha, beta * C, bias, activation, rounding to D's dtype; masked at the edges. The
  // K loop ended on a barrier, so the shared buffer is free. Staged row lr of a round holds row
  // r0 + lr / ROWS of thread row lr % ROWS.
  const uint kind = epilogue_kind();
  [[unroll]] for (uint r0 = 0; r0 < THREAD_M; r0 += ROUND_ROWS) {
    [[unroll]] for (uint i = 0; i < ROUND_ROWS; ++i)
      [[unroll]] for (uint j = 0; j < THREAD_N; ++j)
        if (r0 + i < THREAD_M) smem[(i * ROWS + ty) * BLOCK_N + tx * THREAD_N + j] = acc[r0 + i][j];
    barrier();
    const uint staged = (r0 + ROUND_ROWS <= THREAD_M ? ROUND_ROWS : THREAD_M - r0) * ROWS * BLOCK_N;
    [[dont_unroll]] for (uint e = tid; e < staged; e += THREADS) {
      const uint lr = e / BLOCK_N, col = e % BLOCK_N;
      const uint gm = m0 + (lr % ROWS) * THREAD_M + r0 + lr / ROWS, gn = n0 + col;
      if (gm < p.M && gn < p.N)
        finish_d(kind, batch, gm, gn, p.d_off + batch * p.d_bs + gm * p.d_sr + gn * p.d_sc, smem[e]);
    }
    barrier();
  }
}
