#version 450
// Skinny GEMM for few rows of A (LLM decode: M = 1..32), bound by reading B once. Each workgroup
// owns BLOCK_N columns of D and one of SPLIT slices of K (work item = slice * column tiles +
// column tile, batches along z), so that N / BLOCK_N x SPLIT workgroups fill the device however
// few the columns; it streams its columns of B over its slice with 16- or 8-byte loads along B's
// contiguous dimension, the rows of A it needs staged once per BLOCK_K in shared memory as f32
// (read by every thread), the BLOCK_M x VEC accumulators of each thread in registers.
//
// Two orientations of B (B_K_CONTIG, chosen by the host from B's strides):
//  - N contiguous (B row-major K x N): CT = BLOCK_N / VEC column threads of VEC adjacent columns
//    (one VEC-wide load per row of B) times KT = THREADS / CT threads along K, each taking
//    STAGES consecutive rows per set (their A values are whole vectors); lanes of a subgroup
//    share their rows, so those are one shared-memory broadcast;
//  - K contiguous (B stored N x K): CT = BLOCK_N / VEC column groups of VEC columns times
//    KT = THREADS / CT threads along K, each loading 8 consecutive K of each of its columns.
// Each thread keeps two sets of STAGES loads (STAGES rows, or STAGES x 8-deep runs of each
// column) in registers: the next set is issued before the FMAs on the current one (and before
// the staging of A's next chunk), so B's stream never waits on a barrier.
//
// The KT partial sums of an output are added in order of kt through shared memory (fixed order:
// deterministic). With SPLIT == 1 the epilogue runs here; otherwise each slice stores its f32
// partial sums in the workspace (binding 16: batch, slice, row < M, column < the padded N) and
// gemm_splitk_reduce.comp adds the SPLIT slices in order and runs the epilogue.
//
// Specialization ids 0..6 (gemm_common.glsl): BLOCK_M rows of A per pass (more rows: further
// passes re-read B, from cache), BLOCK_N, BLOCK_K the K chunk whose A is staged at once, GROUP_M
// (unused), THREADS, A_TYPE, B_TYPE; then SPLIT, B_K_CONTIG, STAGES.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_control_flow_attributes : require

#include "gemm_common.glsl"  // spec ids 0..6, bindings, push constants, decoders, epilogue

layout(constant_id = 7) const uint SPLIT = 1;
layout(constant_id = 8) const uint B_K_CONTIG = 0;
layout(constant_id = 9) const uint STAGES = 4;
// 1 where the host found B (as run) in f16/bf16 with unit stride along its contiguous dimension
// but rows that are not whole 16-byte vectors (its leading dimension or batch stride not a
// multiple of 8): load_set then reads each 8-element run as the two aligned vectors that hold it,
// prefetched like the aligned loads, instead of leaving the set to element-wise loads at the FMAs.
// 0: aligned problems keep the shader as measured before.
layout(constant_id = 10) const uint UNALIGNED_GATHER = 0;

// Views of B's 16-bit binding: 8 or 4 elements per load.
layout(std430, set = 0, binding = 4) readonly buffer B16x8 { uvec4 b_vec8[]; };
layout(std430, set = 0, binding = 4) readonly buffer B16x4 { uvec2 b_vec4[]; };
layout(std430, set = 0, binding = 16) writeonly buffer Workspace { float ws[]; };

// Columns per thread: more where few rows leave registers free (the host mirrors this).
const uint VEC = BLOCK_M <= 8u ? 8u : 4u;
const uint CT = BLOCK_N / VEC;
const uint KT = THREADS / CT;
// One load: N contiguous, VEC columns of one row (uvec4 for 8, uvec2 for 4, as 16-bit pairs);
// K contiguous, 8 K of one column (uvec4).
const uint LOADS = B_K_CONTIG != 0u ? STAGES * VEC : STAGES;
// K covered by one set of loads of all threads.
const uint SET_K = B_K_CONTIG != 0u ? STAGES * KT * 8u : STAGES * KT;
const uint SETS = BLOCK_K / SET_K;  // per staged chunk (the host keeps BLOCK_K a multiple)

// A's chunk as f32, 4 consecutive K per vector (BLOCK_K is a multiple of 4): a thread's A values
// are consecutive K (its rows of B are), read 4 at a time.
shared vec4 a_stage[BLOCK_M * BLOCK_K / 4u];
// The per-thread partial sums of ROWS rows at a time (at most 4096 floats; the host mirrors this).
const uint ROWS_FIT = 4096u / (KT * BLOCK_N);
const uint ROWS = ROWS_FIT < 1u ? 1u : ROWS_FIT > BLOCK_M ? BLOCK_M : ROWS_FIT;
shared float partial[KT * BLOCK_N * ROWS];

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
// Two 16-bit elements of B_TYPE (f16 or bf16) packed in a word, as f32.
vec2 unpack2(uint w) {
  if (B_TYPE == 1u) return unpackHalf2x16(w);
  return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u));
}

uint tid, ct, kt, n_first, b_base, batch;
bool b_vec_ok, b_window;

// Elements at..at+7 of B's 16-bit binding, all inside B, from the one or two aligned vectors
// that hold them; `slow` stays set only where the second vector is not whole inside the bound
// range (length()), so no read leaves the binding.
uvec4 window8(uint at, inout bool slow) {
  const uint q = at / 8u, r = at % 8u;
  if (r == 0u) {
    slow = false;
    return b_vec8[q];
  }
  if (q + 1u >= uint(b_vec8.length())) return uvec4(0);
  slow = false;
  return shift_window(b_vec8[q], b_vec8[q + 1u], r);
}

// Load `l` of the set starting at K index `k0`: N contiguous, VEC columns of one row (uvec4
// for 8, .xy for 4, 16-bit pairs); K contiguous, 8 K of one column. Out of range: zero. `slow`
// when the load cannot be one vector or (UNALIGNED_GATHER) an aligned pair (other dtypes or
// strides, a ragged end): the FMAs then load element by element.
uvec4 load_set(uint k0, uint l, out bool slow) {
  slow = false;
  if (B_K_CONTIG == 0u) {
    const uint k = k0 + kt * STAGES + l;  // consecutive rows per thread; lanes share them
    if (k >= p.K || n_first >= p.N) return uvec4(0);
    slow = !b_vec_ok || n_first + VEC > p.N;
    const uint at = b_base + k * p.b_sr + n_first;
    if (slow && b_window && n_first + 8u <= p.N) return window8(at, slow);
    if (slow) return uvec4(0);
    return VEC == 8u ? b_vec8[at / 8u] : uvec4(b_vec4[at / 4u], 0u, 0u);
  }
  const uint n = n_first + l % VEC, kk = k0 + (l / VEC * KT + kt) * 8u;
  if (n >= p.N || kk >= p.K) return uvec4(0);
  slow = !b_vec_ok || kk + 8u > p.K;
  const uint at = b_base + kk + n * p.b_sc;
  if (slow && b_window && kk + 8u <= p.K) return window8(at, slow);
  if (slow) return uvec4(0);
  return b_vec8[at / 8u];
}

void main() {
  const uint tiles_n = (p.N + BLOCK_N - 1u) / BLOCK_N;
  const uint item = work_item_id();
  if (item >= tiles_n * SPLIT) return;  // uniform in the workgroup: before any barrier
  const uint slice = item / tiles_n, n0 = (item % tiles_n) * BLOCK_N;
  batch = gl_WorkGroupID.z + p.batch_base;
  tid = gl_LocalInvocationID.x;
  if (B_K_CONTIG != 0u) {
    kt = tid % KT;
    ct = tid / KT;
  } else {
    ct = tid % CT;
    kt = tid / CT;
  }
  n_first = n0 + ct * VEC;
  const uint a_base = p.a_off + batch * p.a_bs;
  b_base = p.b_off + batch * p.b_bs;
  // Vector loads: 16-bit B, unit stride along the loaded dimension, the other stride and the
  // base multiples of the vector (ragged ends fall back per vector).
  const uint vec_elems = B_K_CONTIG != 0u ? 8u : VEC;
  b_vec_ok = (B_TYPE == 1u || B_TYPE == 2u) && b_base % vec_elems == 0u &&
             (B_K_CONTIG != 0u ? p.b_sr == 1u && p.b_sc % 8u == 0u : p.b_sc == 1u && p.b_sr % vec_elems == 0u);
  // Unaligned 8-element runs from aligned vector pairs: 16-bit B, unit stride along the loaded
  // dimension, 8 elements per load (VEC 8 where N is contiguous).
  b_window = UNALIGNED_GATHER != 0u && (B_TYPE == 1u || B_TYPE == 2u) && (B_K_CONTIG != 0u ? p.b_sr == 1u : p.b_sc == 1u && VEC == 8u);
  // This slice's K: a multiple of BLOCK_K, so chunks never straddle two slices.
  const uint per_slice = ((p.K + SPLIT - 1u) / SPLIT + BLOCK_K - 1u) / BLOCK_K * BLOCK_K;
  const uint k_begin = min(p.K, slice * per_slice), k_end = min(p.K, k_begin + per_slice);
  const uint n_pad = (p.N + 3u) / 4u * 4u;

  for (uint m0 = 0; m0 < p.M; m0 += BLOCK_M) {
    float acc[BLOCK_M][VEC];
    [[unroll]] for (uint r = 0; r < BLOCK_M; ++r)
      [[unroll]] for (uint j = 0; j < VEC; ++j) acc[r][j] = 0.0;
    // The slice as a stream of load sets; A's chunk is staged when a set starts one. The next
    // set's loads are in flight during the FMAs on this one and during A's staging.
    const uint sets = (k_end - k_begin + SET_K - 1u) / SET_K;
    uvec4 cur[LOADS];
    bool cur_slow = false;
    if (sets > 0u) {
      [[unroll]] for (uint l = 0; l < LOADS; ++l) {
        bool f;
        cur[l] = load_set(k_begin, l, f);
        cur_slow = cur_slow || f;
      }
    }
    uint kc = k_begin;  // the staged chunk
    for (uint g = 0; g < sets; ++g) {
      const uint k0 = k_begin + g * SET_K;
      if (g % SETS == 0u) {
        kc = k0;
        barrier();  // the previous chunk's reads of a_stage are done
        for (uint q = tid; q < BLOCK_M * BLOCK_K / 4u; q += THREADS) {
          const uint m = m0 + q * 4u / BLOCK_K, k = kc + q * 4u % BLOCK_K;
          vec4 v = vec4(0.0);
          if (m < p.M)
            [[unroll]] for (uint e = 0; e < 4u; ++e)
              if (k + e < k_end) v[e] = load_a(a_base + m * p.a_sr + (k + e) * p.a_sc);
          a_stage[q] = v;
        }
        barrier();
      }
      uvec4 nxt[LOADS];
      bool nxt_slow = false;
      if (g + 1u < sets) {
        [[unroll]] for (uint l = 0; l < LOADS; ++l) {
          bool f;
          nxt[l] = load_set(k0 + SET_K, l, f);
          nxt_slow = nxt_slow || f;
        }
      }
      if (B_K_CONTIG == 0u) {
        // This thread's STAGES consecutive rows of the chunk, from kk0; A's values for them are
        // whole vectors where STAGES is a multiple of 4.
        const uint kk0 = k0 - kc + kt * STAGES;
        // Rows in groups of 4 (STAGES a multiple of 4: kk0 is then too): one vector of A per
        // row of D and group; otherwise one element per row of D and row of B.
        const uint GROUP = STAGES % 4u == 0u ? 4u : 1u;
        [[unroll]] for (uint l0 = 0; l0 < LOADS; l0 += GROUP) {
          float b[4][VEC];
          [[unroll]] for (uint i = 0; i < GROUP; ++i) {
            const uint l = l0 + i;
            if (cur_slow) {
              const uint k = kc + kk0 + l;
              [[unroll]] for (uint j = 0; j < VEC; ++j)
                b[i][j] = k < p.K && n_first + j < p.N ? load_b(b_base + k * p.b_sr + (n_first + j) * p.b_sc) : 0.0;
            } else {
              [[unroll]] for (uint j = 0; j < VEC; j += 2u) {
                const vec2 h = unpack2(cur[l][j / 2u]);
                b[i][j] = h.x;
                b[i][j + 1u] = h.y;
              }
            }
          }
          [[unroll]] for (uint r = 0; r < BLOCK_M; ++r) {
            const uint at = r * BLOCK_K + kk0 + l0;
            const vec4 a = GROUP == 4u ? a_stage[at / 4u] : vec4(a_stage[at / 4u][at % 4u], 0.0, 0.0, 0.0);
            [[unroll]] for (uint i = 0; i < GROUP; ++i)
              [[unroll]] for (uint j = 0; j < VEC; ++j) acc[r][j] = fma(a[i], b[i][j], acc[r][j]);
          }
        }
      } else {
        [[unroll]] for (uint t = 0; t < STAGES; ++t) {
          const uint kk = k0 - kc + (t * KT + kt) * 8u;  // first of 8 K within the chunk
          float av[BLOCK_M][8];
          [[unroll]] for (uint r = 0; r < BLOCK_M; ++r) {
            const vec4 lo = a_stage[(r * BLOCK_K + kk) / 4u], hi = a_stage[(r * BLOCK_K + kk) / 4u + 1u];
            [[unroll]] for (uint e = 0; e < 4u; ++e) {
              av[r][e] = lo[e];
              av[r][e + 4u] = hi[e];
            }
          }
          [[unroll]] for (uint j = 0; j < VEC; ++j) {
            float b[8];
            if (cur_slow) {
              const uint n = n_first + j, k = kc + kk;
              [[unroll]] for (uint e = 0; e < 8u; ++e)
                b[e] = n < p.N && k + e < p.K ? load_b(b_base + (k + e) * p.b_sr + n * p.b_sc) : 0.0;
            } else {
              const uvec4 w = cur[t * VEC + j];
              [[unroll]] for (uint e = 0; e < 8u; e += 2u) {
                const vec2 h = unpack2(w[e / 2u]);
                b[e] = h.x;
                b[e + 1u] = h.y;
              }
            }
            [[unroll]] for (uint r = 0; r < BLOCK_M; ++r)
              [[unroll]] for (uint e = 0; e < 8u; ++e) acc[r][j] = fma(av[r][e], b[e], acc[r][j]);
          }
        }
      }
      if (g + 1u < sets) {
        [[unroll]] for (uint l = 0; l < LOADS; ++l) cur[l] = nxt[l];
        cur_slow = nxt_slow;
      }
    }
    // ROWS rows at a time: the KT partials of each output added in order of kt, then the
    // epilogue (one slice) or the workspace (several). The outputs' loop is not unrolled, so the
    // epilogue's code exists once (lavapipe compiles it in seconds, not minutes).
    for (uint r0 = 0; r0 < BLOCK_M; r0 += ROWS) {
      [[unroll]] for (uint r = 0; r < BLOCK_M; ++r)
        if (r >= r0 && r < r0 + ROWS)
          [[unroll]] for (uint j = 0; j < VEC; ++j) partial[((r - r0) * KT + kt) * BLOCK_N + ct * VEC + j] = acc[r][j];
      barrier();
      [[dont_unroll]] for (uint o = tid; o < ROWS * BLOCK_N; o += THREADS) {
        const uint row = o / BLOCK_N, col = o % BLOCK_N;
        float s = 0.0;
        for (uint t = 0; t < KT; ++t) s += partial[(row * KT + t) * BLOCK_N + col];
        const uint gm = m0 + r0 + row, gn = n0 + col;
        if (gm < p.M && gn < p.N) {
          if (SPLIT == 1u) store_d(p.d_off + batch * p.d_bs + gm * p.d_sr + gn * p.d_sc, epilogue_value(batch, gm, gn, s));
          else ws[((batch * SPLIT + slice) * p.M + gm) * n_pad + gn] = s;
        }
      }
      barrier();
    }
  }
}
