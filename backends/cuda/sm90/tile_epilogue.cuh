// The Hopper kernel's epilogue: one consumer warpgroup writes its 64-row accumulator blocks to D.
// The accumulators go through shared-memory chunks of 64 rows x 128 bytes whose 16-byte units
// are XOR-swizzled by row (the TMA 128-byte swizzle pattern), so that both the writes in
// wgmma's register layout and the row-wise reads are free of bank conflicts; each consumer
// alternates between two chunks, so one named barrier per chunk suffices. Four ways out,
// chosen once per launch (uniform branches):
//   - packed: f16/bf16 D with unit-stride rows whose epilogue fits in registers
//     (RegisterEpilogue: alpha, C of D's type, an f32 bias, any activation; kernels without the
//     register epilogue, kernel_key.hpp: the plain alpha * AB only): the epilogue and the
//     rounding happen in registers, stmatrix writes a chunk of 64 x 64 finished outputs, and
//     each thread stores 16 bytes at a time (in aligned pieces where D's rows are not);
//   - packed columns: the same for a column-major D (the swapped kernels write D^T, the
//     caller's row-major D, this way): stmatrix.trans, then 16-byte stores down D's columns;
//   - vector: D with vector-aligned rows and no C otherwise (a 16-bit bias; f32 D without a
//     TMA map): a chunk holds 64 x 32 (or 16) f32 and each thread finishes four outputs at a
//     time (alpha, bias, activation) into one 8- or 16-byte store;
//   - f32 by TMA: f32 D with vector-aligned rows and a register epilogue (an f32 C only on
//     consumers of up to 192 columns), where the launch has D's map: 64 x 32 chunks finished in
//     registers, staged, stored by the TMA;
//   - generic (C of another type than D's, C where the kernel has no register epilogue, D
//     without a unit stride, unaligned f32 D): 64 x 32 f32 per chunk through the fully general per-element epilogue, in
//     a function of its own (one copy per translation unit).
// An earlier version sent every chunk through the generic function; at 4096^3 its ~420
// instructions per warp and chunk kept the consumers out of the mainloop a third of the time.
#pragma once
#include <cstdint>
#include <type_traits>

#include "../epilogue.cuh"
#include "device_arch.cuh"
#include "launch.hpp"
#include "ptx_access.cuh"

namespace omnigemm::detail::sm90 {

#ifdef OG_SM90A_DEVICE
// Byte offset of byte `byte` of row `row` in a 64 x 128-byte swizzled chunk.
__device__ __forceinline__ int chunk_offset(int row, int byte) {
  return row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
}

// The plain GEMM's epilogue (omnigemm/epilogue.h without C, bias or activation): alpha * acc.
__device__ __forceinline__ float plain_value(float alpha, float acc) {
  return og_epilogue_sum(alpha, acc, false, 0.0f, 0.0f, false, 0.0f);
}

// The epilogues the packed ways finish in registers, as each accumulator leaves: alpha, C (beta;
// D's type), an f32 bias along N or M and any activation. With none of them it is
// plain_value. A chunk's loop is compiled per activation form and C (with_variant below) and has
// no per-element branches: absent bias terms are -0 (x + -0 = x for every x, -0 included, as
// og_epilogue_sum's skipped terms), relu and leaky_relu are selects (slope 1 without
// activation), and the bias and C loads are predicated (off where absent or outside). Values are omnigemm/epilogue.h's (the sum in its order) except for the signs
// of zeros and for gelu-tanh and silu:
//   - 16-bit outputs (FAST): 0.5 x (1 + t) with t = tanh.approx(u), u = sqrt(2/pi)(x + 0.044715
//     x^3) or x / 2 (silu(x) = 0.5 x (1 + tanh(x / 2))): one MUFU instruction per output. The
//     hardware tanh is within 2^-11 relative of tanh, so the result is within 2^-12 |x| of the
//     formula's: under half an f16 ulp of |x|, a sixteenth of a bf16 ulp; the tests' f16 bound is
//     1.5 ulps of the epilogue's magnitude (>= |x|), norm-wise;
//   - f32 outputs: x / (1 + exp(z)), z = -2u or -x, with the hardware exp2 and a fast division
//     (two MUFU instructions), a few f32 ulps from the tanhf / expf forms, which inline some 20
//     instructions with branches into every chunk's code.
struct RegisterEpilogue {
  float alpha;
  float beta;
  float slope;         // below zero: slope * x (leaky_relu; 1 without activation) or 0 (relu)
  bool relu;
  int act;             // og_activation
  const float* bias_n; // this batch's bias where it runs along N, else null
  const float* bias_m; // ... along M
  const void* c;       // this batch's C (null without; D's type): element (gm, gn) at gm * c_sr +
  long long c_sr;      // gn; pairs (gm, gn), (gm, gn + 1), gn even, in one aligned load; N even
  int m, n;            // the problem's rows and columns (bias and C reads stay inside)

  __device__ __forceinline__ bool fused() const { return act != OG_ACT_NONE || bias_n || bias_m || c; }
  __device__ __forceinline__ bool exp_form() const { return act == OG_ACT_GELU_TANH || act == OG_ACT_SILU; }
  // The bias term of row gm (per-M bias) and of column gn (per-N bias): -0 where absent.
  __device__ __forceinline__ float bias_row(int gm) const { return ld_f32_if(bias_m + gm, bias_m && gm < m, -0.0f); }
  __device__ __forceinline__ float bias_col(int gn) const { return ld_f32_if(bias_n + gn, bias_n && gn < n, -0.0f); }
  // C's row gm (null without C or beyond M; T: its type) and its elements gn, gn + 1 (gn even;
  // zeros beyond N): 16-bit pairs in one word, f32 pairs as they are.
  template <class T>
  __device__ __forceinline__ const T* c_row(int gm) const {
    return c && gm < m ? static_cast<const T*>(c) + gm * c_sr : nullptr;
  }
  __device__ __forceinline__ uint32_t c_pair(const uint16_t* row, int gn) const { return ld_u32_if(row + gn, row && gn < n); }
  __device__ __forceinline__ float2 c_pair(const float* row, int gn) const { return ld_f32x2_if(row + gn, row && gn < n); }
  template <bool BF16>
  __device__ __forceinline__ float2 c_values(uint32_t w) const {
    if constexpr (BF16) return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
    else return __half22float2(*reinterpret_cast<const __half2*>(&w));
  }
  // The finished output of accumulator `acc` with C element `cv` (where V, with_variant, has C)
  // and bias terms `b_row`, `b_col` (-0 where absent); FAST: a 16-bit output.
  template <class V, bool FAST>
  __device__ __forceinline__ float finish(float acc, float cv, float b_row, float b_col) const {
    constexpr bool EXP = V::kExp;
    float x = alpha * acc;
    if constexpr (V::kC) x = fmaf(beta, cv, x);
    x = (x + b_row) + b_col;
    if constexpr (EXP && FAST) {
      const float h = 0.5f * x;
      const float u = act == OG_ACT_GELU_TANH ? 0.7978845608f * (x + 0.044715f * x * x * x) : h;
      return fmaf(h, tanh_approx(u), h);
    } else if constexpr (EXP) {
      const float z = act == OG_ACT_GELU_TANH ? -2.0f * (0.7978845608f * (x + 0.044715f * x * x * x)) : -x;
      return __fdividef(x, 1.0f + __expf(z));
    } else {
      return x > 0.0f ? x : relu ? 0.0f : slope * x;
    }
  }
};

// The terms a chunk's loop is compiled with: the exp-form activations (else the selects) and C.
// with_variant(re, f) calls f(Variant<...>{}) for re's, chosen once per chunk, so that a chunk
// without C runs none of C's loads and conversions (one loop for every epilogue ran all of them,
// predicated off). A copy per bias mode as well made ptxas spill past cuda_codegen's budget at
// 128x256; the bias loads stay predicated.
template <bool EXP, bool C>
struct Variant {
  static constexpr bool kExp = EXP, kC = C;
};
template <class F>
__device__ __forceinline__ void with_variant(const RegisterEpilogue& re, F&& f) {
  switch ((re.exp_form() ? 2 : 0) + (re.c ? 1 : 0)) {
    case 0: f(Variant<false, false>{}); break;
    case 1: f(Variant<false, true>{}); break;
    case 2: f(Variant<true, false>{}); break;
    default: f(Variant<true, true>{}); break;
  }
}

__device__ __forceinline__ RegisterEpilogue register_epilogue(const cuda::EpilogueArgs& e, int batch, int m, int n) {
  RegisterEpilogue r;
  r.alpha = e.alpha, r.beta = e.beta, r.act = int(e.act);
  r.relu = e.act == OG_ACT_RELU;
  r.slope = e.act == OG_ACT_LEAKY_RELU ? e.slope : 1.0f;
  const float* bias = e.bias_mode != OG_BIAS_NONE ? static_cast<const float*>(e.bias) + (long long)batch * e.bias_bs : nullptr;
  r.bias_n = e.bias_mode == OG_BIAS_PER_N ? bias : nullptr;
  r.bias_m = e.bias_mode == OG_BIAS_PER_M ? bias : nullptr;
  r.c = e.has_c ? static_cast<const char*>(e.c.ptr) + (long long)batch * e.c.bs * (e.c.dtype == OG_DTYPE_F32 ? 4 : 2) : nullptr;
  r.c_sr = e.c.sr;
  r.m = m, r.n = n;
  return r;
}

// Prefetch into L2 of the C elements of one consumer's ROWS x COLS block (rows row0.., columns
// col0.. of a C with unit column stride), issued as its mainloop starts, so that the epilogue's
// C loads find them in L2 (~2-3x less latency than device memory).
template <int ROWS, int COLS>
__device__ __forceinline__ void prefetch_c_block(const cuda::EpilogueArgs& e, int batch, int m, int n, int row0, int col0,
                                                 int thread) {
  if (!e.has_c || e.c.sc != 1) return;
  constexpr int kLines = COLS * 2 / 128 > 0 ? COLS * 2 / 128 : 1;  // 128-byte lines per row of 16-bit C
  const int size = e.c.dtype == OG_DTYPE_F32 ? 4 : 2;
  const char* base = static_cast<const char*>(e.c.ptr) + (long long)batch * e.c.bs * size;
#pragma unroll
  for (int i = thread; i < ROWS * kLines; i += 128) {  // an f32 C's row: every other line
    const int gm = row0 + i / kLines, gn = col0 + (i % kLines) * 64;
    if (gm < m && gn < n) asm volatile("prefetch.global.L2 [%0];" ::"l"(base + ((long long)gm * e.c.sr + gn) * size));
  }
}

// Two outputs rounded to 16 bits by the hardware conversion (epilogue.h's rounding), packed.
template <bool BF16>
__device__ __forceinline__ uint32_t pack_pair(float x0, float x1) {
  if constexpr (BF16) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x0, x1);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __half2 h = __floats2half2_rn(x0, x1);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

// Eight 16-bit outputs (16 bytes, element 0 in v.x's low half) to dst, which is 2-byte aligned:
// one vector store where dst is 16-byte aligned, else the widest aligned pieces its address
// allows (D's lines need not be 16-byte aligned: any leading dimension and base).
__device__ __forceinline__ void store_unit(uint16_t* dst, const uint4& v) {
  const unsigned misalign = unsigned(reinterpret_cast<unsigned long long>(dst)) & 15u;
  if (misalign == 0) {
    *reinterpret_cast<uint4*>(dst) = v;
  } else if (misalign % 8 == 0) {
    reinterpret_cast<uint2*>(dst)[0] = make_uint2(v.x, v.y);
    reinterpret_cast<uint2*>(dst)[1] = make_uint2(v.z, v.w);
  } else if (misalign % 4 == 0) {
    uint32_t* w = reinterpret_cast<uint32_t*>(dst);
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  } else {  // 2 bytes past a 4-byte boundary: one output at each end, three words between
    dst[0] = uint16_t(v.x);
    uint32_t* w = reinterpret_cast<uint32_t*>(dst + 1);
    w[0] = __funnelshift_r(v.x, v.y, 16), w[1] = __funnelshift_r(v.y, v.z, 16), w[2] = __funnelshift_r(v.z, v.w, 16);
    dst[7] = uint16_t(v.w >> 16);
  }
}

// Packed chunk to D: chunk row i (128 bytes, 64 16-bit outputs) goes to memory line line0 + i
// of D (a row of a row-major D, a column of a column-major one; lines line0.. below
// lines_bound), elements elem0.. (below elems_bound). Each thread moves 16-byte unit
// thread % 8 of lines thread / 8 + 16 k, so a warp writes four whole 128-byte lines.
template <int LINES>
__device__ __forceinline__ void copy_packed_lines(uint16_t* d, long long ld, int lines_bound, int elems_bound, int line0,
                                                  int elem0, uint32_t chunk, int thread) {
  static_assert(LINES * 8 % 128 == 0, "whole passes of the consumer's 128 threads");
  const int unit = thread % 8, ge = elem0 + 8 * unit;
#pragma unroll
  for (int k = 0; k < LINES * 8 / 128; ++k) {
    const int line = thread / 8 + 16 * k, gl = line0 + line;
    const uint4 v = ld_shared_u32x4(chunk + chunk_offset(line, 16 * unit));
    uint16_t* dst = d + gl * ld + ge;
    if (gl < lines_bound && ge + 8 <= elems_bound) {
      store_unit(dst, v);
    } else if (gl < lines_bound && ge < elems_bound) {
      const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int q = 0; q < 8; ++q)
        if (ge + q < elems_bound) dst[q] = uint16_t(words[q / 2] >> (16 * (q % 2)));
    }
  }
}
// f32 chunk (64 x COLS accumulators, COLS 16 or 32) through the quad epilogue (D rows
// vector-aligned, no C). Not inlined: one copy serves every chunk (inlined per chunk, an
// epilogue outgrew the instruction cache: H100, 4096^3, a third of its stall samples waited
// for instructions).
template <int COLS>
static __device__ __noinline__ void finish_vector_chunk(const cuda::EpilogueArgs& args, int batch, int m, int n, int row0,
                                                        int col0, uint32_t chunk, int thread) {
  const cuda::EpilogueArgs e = args;  // locals: see finish_generic_chunk
  constexpr int units = COLS / 4;
#pragma unroll 1
  for (int i = thread; i < 64 * units; i += 128) {
    const int row = i / units, unit = i % units;
    const int gm = row0 + row, gn = col0 + 4 * unit;
    if (gm >= m || gn >= n) continue;
    const uint4 bits = ld_shared_u32x4(chunk + chunk_offset(row, 16 * unit));
    const float4 v = make_float4(__uint_as_float(bits.x), __uint_as_float(bits.y), __uint_as_float(bits.z),
                                 __uint_as_float(bits.w));
    if (gn + 4 <= n) cuda::epilogue_store_quad(e, batch, gm, gn, v);
    else cuda::epilogue_store_run<true>(e, batch, gm, gn, n - gn, v);
  }
}

// f32 chunk (64 x COLS) through the general epilogue (C, any strides, any alignment). Not
// inlined: one copy serves every chunk of every kernel in the translation unit. The arguments
// are copied into locals first: read through the reference, every output store (a generic
// pointer) could alias them and the compiler would reload them per element.
template <int COLS>
static __device__ __noinline__ void finish_generic_chunk(const cuda::EpilogueArgs& args, int batch, int m, int n, int row0,
                                                         int col0, uint32_t chunk, int thread) {
  const cuda::EpilogueArgs e = args;
  constexpr int cols = COLS, units = COLS / 4;
  if (e.d.sr == 1) {
    // Column-major D (the swapped -x4 kernels write D^T this way): runs of 4 rows of one column,
    // a warp's 32 runs two columns' contiguous stretches of D (and of C).
#pragma unroll 1
    for (int i = thread; i < 16 * cols; i += 128) {
      const int row = 4 * (i % 16), c = i / 16, gm = row0 + row, gn = col0 + c;
      if (gm >= m || gn >= n) continue;
      const float4 v = make_float4(ld_shared_f32(chunk + chunk_offset(row, 4 * c)), ld_shared_f32(chunk + chunk_offset(row + 1, 4 * c)),
                                   ld_shared_f32(chunk + chunk_offset(row + 2, 4 * c)), ld_shared_f32(chunk + chunk_offset(row + 3, 4 * c)));
      cuda::epilogue_store_run<false>(e, batch, gm, gn, min(4, m - gm), v);
    }
    return;
  }
#pragma unroll 1
  for (int i = thread; i < 64 * units; i += 128) {
    const int row = i / units, unit = i % units, gm = row0 + row, gn = col0 + 4 * unit;
    if (gm >= m || gn >= n) continue;
    const uint4 bits = ld_shared_u32x4(chunk + chunk_offset(row, 16 * unit));
    const float4 v = make_float4(__uint_as_float(bits.x), __uint_as_float(bits.y), __uint_as_float(bits.z),
                                 __uint_as_float(bits.w));
    cuda::epilogue_store_run<true>(e, batch, gm, gn, min(4, n - gn), v);
  }
}

__device__ __forceinline__ void consumer_barrier(int consumer) {
  asm volatile("bar.sync %0, 128;" ::"r"(1 + consumer) : "memory");
}
// A consumer-wide barrier that also tells every thread whether `pred` held for any of them.
__device__ __forceinline__ bool consumer_any(int consumer, bool pred) {
  uint32_t any;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, 128, p;\nselp.u32 %0, 1, 0, q;\n}"
      : "=r"(any)
      : "r"(uint32_t(pred)), "r"(1 + consumer)
      : "memory");
  return any != 0;
}

// The packed way out, in steps that can be spread out (DeferredTile below): pack_chunk applies
// alpha and rounds one chunk to 16 bits in registers, stage_packed_chunk writes it to shared
// memory with four stmatrix.x4 per thread, and after a barrier copy_packed_chunk sends it to D
// in 16-byte stores. Row-major D: chunks of 64 x 64 outputs.
// Column-major D (TRANSPOSED; the swapped -x4 kernels write D^T, i.e. the caller's row-major D,
// this way): stmatrix.trans stores up to 64 tile columns transposed, so a chunk row is a column
// of the tile, 128 contiguous bytes of D. The generic per-element way took ~3 us from the last
// K-tile's arrival to the end of a 16x4096x4096 decode CTA (H100 trace).

// Chunk `index` of one consumer's accumulators (block index / chunks-per-block, column chunk
// index % chunks-per-block; COLS columns) finished by `re`, rounded to 16 bits: COLS / 4
// registers, register q holding accumulators 2q and 2q + 1 of the chunk. Chunk by chunk, not the
// whole tile at once: fewer registers live together (the 256x128 consumers spilled otherwise).
// row0, col0: the consumer's tile origin in D (the kernel's orientation); accumulator i of the
// chunk is at row 64 (block) + 16 warp + lane / 4 + 8 ((i / 2) % 2), column COLS (column chunk)
// + 8 (i / 4) + 2 (lane % 4) + i % 2 (wgmma's layout).
// FUSED false: the kernel compiles the plain loop only (re must not be fused()).
template <bool BF16, int COLS, int WG_M, int BLOCK_N, bool FUSED = true>
__device__ __forceinline__ void pack_chunk(const float (&acc)[WG_M][BLOCK_N / 2], int index, const RegisterEpilogue& re,
                                           int row0, int col0, int thread, uint32_t (&regs)[COLS / 4]) {
  const float* from = &acc[index / (BLOCK_N / COLS)][index % (BLOCK_N / COLS) * (COLS / 2)];
  if (!FUSED || !re.fused()) {
#pragma unroll
    for (int q = 0; q < COLS / 4; ++q)
      regs[q] = pack_pair<BF16>(plain_value(re.alpha, from[2 * q]), plain_value(re.alpha, from[2 * q + 1]));
    return;
  }
  if constexpr (FUSED) {
    const int warp = thread / 32, lane = thread % 32;
    const int gm0 = row0 + 64 * (index / (BLOCK_N / COLS)) + 16 * warp + lane / 4;
    const int gn0 = col0 + COLS * (index % (BLOCK_N / COLS)) + 2 * (lane % 4);
    // This thread's two rows (0, 8): their C rows and per-M bias terms.
    const uint16_t* c_rows[2] = {re.c_row<uint16_t>(gm0), re.c_row<uint16_t>(gm0 + 8)};
    const float b_rows[2] = {re.bias_row(gm0), re.bias_row(gm0 + 8)};
    with_variant(re, [&](auto variant) {
      using V = decltype(variant);
#pragma unroll
      for (int q = 0; q < COLS / 4; ++q) {  // accumulators 2q, 2q + 1: one row, adjacent columns
        const int gn = gn0 + 8 * (q / 2);
        const float2 cv = V::kC ? re.template c_values<BF16>(re.c_pair(c_rows[q % 2], gn)) : float2{};
        const float b0 = re.bias_col(gn), b1 = re.bias_col(gn + 1);
        regs[q] = pack_pair<BF16>(re.template finish<V, true>(from[2 * q], cv.x, b_rows[q % 2], b0),
                                  re.template finish<V, true>(from[2 * q + 1], cv.y, b_rows[q % 2], b1));
      }
    });
  }
}

template <int BLOCK_N>
constexpr int packed_chunk_cols() {  // tile columns per packed chunk (96-column consumers: 32)
  return BLOCK_N % 64 == 0 ? 64 : BLOCK_N < 64 ? BLOCK_N : 32;
}

// stmatrix of one chunk of packed outputs (`regs`: its COLS / 4 registers per thread) into the
// staging chunk at `chunk`.
template <bool TRANSPOSED, int COLS>
__device__ __forceinline__ void stage_packed_chunk(const uint32_t* regs, uint32_t chunk, int thread) {
  static_assert(TRANSPOSED || COLS == 64, "row-major chunks are 64 columns wide");
  const int warp = thread / 32, lane = thread % 32, mat = lane / 8;
  // An x4 covers rows 16 warp + 8 h and column groups j + g of the chunk (matrix mat = 2 g + h);
  // lane 8 mat + i addresses row i of its matrix: tile row 16 warp + 8 h + i (16-byte unit
  // j + g), or with .trans chunk column 8 (j + g) + i (bytes from tile row 16 warp + 8 h).
  const int row = 16 * warp + 8 * (mat % 2) + lane % 8;  // this lane's row (row-major chunks)
#pragma unroll
  for (int j = 0; j < COLS / 8; j += 2) {  // column groups j and j + 1: registers 2 j .. 2 j + 3
    if constexpr (TRANSPOSED)
      stmatrix_x4_trans(chunk + chunk_offset(8 * (j + mat / 2) + lane % 8, 2 * (16 * warp + 8 * (mat % 2))), regs[2 * j],
                        regs[2 * j + 1], regs[2 * j + 2], regs[2 * j + 3]);
    else
      stmatrix_x4(chunk + chunk_offset(row, 16 * (j + mat / 2)), regs[2 * j], regs[2 * j + 1], regs[2 * j + 2],
                  regs[2 * j + 3]);
  }
}

// Staged chunk `index` of one consumer's tile (block index / chunks-per-block, column chunk
// index % chunks-per-block) to D.
template <bool TRANSPOSED, int BLOCK_N>
__device__ __forceinline__ void copy_packed_chunk(int index, uint16_t* d, long long ld, int m, int n, int row0, int col0,
                                                  uint32_t chunk, int thread) {
  constexpr int kCols = packed_chunk_cols<BLOCK_N>();
  const int r = index / (BLOCK_N / kCols), c = index % (BLOCK_N / kCols);
  if constexpr (TRANSPOSED)
    copy_packed_lines<kCols>(d, ld, n, m, col0 + kCols * c, row0 + 64 * r, chunk, thread);
  else
    copy_packed_lines<64>(d, ld, m, n, row0 + 64 * r, col0 + 64 * c, chunk, thread);
}

// Bytes of staging one packed chunk takes: 64 rows, or (TRANSPOSED) kCols columns, of 128 B.
template <bool TRANSPOSED, int BLOCK_N>
constexpr int packed_chunk_bytes() {
  return (TRANSPOSED ? packed_chunk_cols<BLOCK_N>() : 64) * 128;
}

// Staged chunks first..last-1, at consecutive places from `chunks`, to D. Not inlined, as the
// per-chunk copy before it: a version that inlined the copies and staged both buffers per
// barrier made ptxas spill (256x128 consumers: 4 / 12 -> 16 / 36 bytes stored / loaded).
template <bool TRANSPOSED, int BLOCK_N>
static __device__ __noinline__ void copy_packed_round(int first, int last, uint16_t* d, long long ld, int m, int n, int row0,
                                                      int col0, uint32_t chunks, int thread) {
#pragma unroll 1
  for (int i = first; i < last; ++i)
    copy_packed_chunk<TRANSPOSED, BLOCK_N>(i, d, ld, m, n, row0, col0,
                                           chunks + (i - first) * packed_chunk_bytes<TRANSPOSED, BLOCK_N>(), thread);
}

// The packed epilogue, a staging buffer at a time: the chunks one buffer holds (one row-major
// chunk; two transposed 32-column or four 16-column ones) are staged, and after a barrier
// copied to D, while the next ones are staged in the other buffer (the barrier of a buffer
// also tells that every thread has copied what the other one held). The 192x192 tile's
// epilogue (nine 32-column chunks per consumer) took 2.3-2.75 us per tile with a barrier and a
// call per chunk, 2.05-2.6 us this way (H100, 3072^3 and 6144^3; the deferred 128x256
// epilogue's hold takes 0.4). Most of it is the stores: every program writes its 72 KB at the
// same moment, ~4.5 TB/s into L2 together.
template <bool BF16, bool TRANSPOSED, int WG_M, int BLOCK_N, bool FUSED>
__device__ __forceinline__ void store_packed_chunks(float (&acc)[WG_M][BLOCK_N / 2], uint16_t* d, long long ld,
                                                    const RegisterEpilogue& re, int m, int n, int row0, int col0,
                                                    uint32_t chunks, int consumer, int thread, unsigned& sequence) {
  constexpr int kCols = packed_chunk_cols<BLOCK_N>();
  static_assert(BLOCK_N % kCols == 0, "whole chunks");
  constexpr int kChunks = WG_M * BLOCK_N / kCols;
  constexpr int kStagedBytes = packed_chunk_bytes<TRANSPOSED, BLOCK_N>();
  constexpr int kPerBuffer = kChunkBytes / kStagedBytes;
#pragma unroll
  for (int first = 0; first < kChunks; first += kPerBuffer) {
    const int last = first + kPerBuffer < kChunks ? first + kPerBuffer : kChunks;
    const uint32_t buffer = chunks + (sequence++ & 1u) * kChunkBytes;
#pragma unroll
    for (int i = first; i < last; ++i) {
      uint32_t regs[kCols / 4];
      pack_chunk<BF16, kCols, WG_M, BLOCK_N, FUSED>(acc, i, re, row0, col0, thread, regs);
      stage_packed_chunk<TRANSPOSED, kCols>(regs, buffer + (i - first) * kStagedBytes, thread);
    }
    consumer_barrier(consumer);
    copy_packed_round<TRANSPOSED, BLOCK_N>(first, last, d, ld, m, n, row0, col0, buffer, thread);
  }
}

// TMA stores of staged chunks (the async proxy reads them): the threads that wrote a chunk make
// their writes visible to the async proxy before the barrier, after which one thread issues
// the store and commits it as a bulk group; before a buffer is written again, that thread waits
// until the group that read it has finished reading.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void tma_store_chunk(const CUtensorMap* map, uint32_t chunk, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(chunk), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {  // at most N of this thread's groups still reading
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// The deferred epilogue of cooperative tiles (row-major packed way out). Both consumers finish
// a tile together, so an epilogue between two tiles leaves the tensor cores idle. Instead
// (H100: 1-2.5% faster at 6144^3-8192^3, no change at 3072^3-4096^3) `hold` rounds the
// finished tile to 16 bits, stages its first two chunks in the consumer's two staging buffers
// and hands them to the TMA (map_d: D in boxes of 64 x 64, 128-byte swizzle: the chunks'
// layout); the others (at most two, 32 registers: the whole tile's 64 would push the consumers
// past their 232-register budget) wait in registers. `step`, called once per K-tile of the
// next work item while its wgmmas run, stores the next chunk: the second is staged already,
// the others go into the buffer whose store has been read. Before, every consumer thread copied
// the chunks to D with 16-byte stores, and the K-tiles carrying one took 0.25-0.45 us longer
// (H100 trace, 4096^3 bf16); one thread now hands each chunk to the TMA.
// Narrow tiles (BLOCK_N < 64) have no row-major chunks: kChunks = 0, nothing is ever pending.
template <int WG_M, int BLOCK_N>
struct DeferredTile {
  static constexpr int kChunks = WG_M * BLOCK_N / 64;
  static constexpr int kStaged = kChunks < 2 ? kChunks : 2;  // chunks staged by hold
  static constexpr int kHeld = kChunks - kStaged;
  static_assert(BLOCK_N % 64 == 0 || BLOCK_N < 64, "whole chunks of 64 columns");
  static_assert(kHeld <= 2, "at most two chunks held in registers");
  uint32_t held[kHeld > 0 ? kHeld : 1][16];
  int row0 = 0, col0 = 0, batch = 0;
  int next = kChunks;  // the next chunk to store; kChunks: nothing pending

  __device__ __forceinline__ bool pending() const { return next < kChunks; }

  // Chunk i's box: rows row0 + 64 (i / chunks per block row), columns col0 + 64 (i % ...).
  __device__ __forceinline__ void store(const CUtensorMap* map_d, int i, uint32_t buffer) const {
    tma_store_chunk(map_d, buffer, col0 + 64 * (i % (BLOCK_N / 64)), row0 + 64 * (i / (BLOCK_N / 64)), batch);
  }

  // FUSED: the kernel has the register epilogue (kernel_key.hpp); else `re` must be plain.
  template <bool BF16, bool FUSED>
  __device__ __forceinline__ void hold(const float (&acc)[WG_M][BLOCK_N / 2], const RegisterEpilogue& re,
                                       const CUtensorMap* map_d, int row0_, int col0_, int batch_, uint32_t chunks,
                                       int consumer, int thread) {
    if (thread == 0) tma_store_wait_read<0>();  // the previous tile's stores have read both buffers
    consumer_barrier(consumer);
#pragma unroll
    for (int i = 0; i < kStaged; ++i) {
      uint32_t regs[16];
      pack_chunk<BF16, 64, WG_M, BLOCK_N, FUSED>(acc, i, re, row0_, col0_, thread, regs);
      stage_packed_chunk<false, 64>(regs, chunks + i * kChunkBytes, thread);
    }
#pragma unroll
    for (int i = kStaged; i < kChunks; ++i)
      pack_chunk<BF16, 64, WG_M, BLOCK_N, FUSED>(acc, i, re, row0_, col0_, thread, held[i - kStaged]);
    fence_proxy_async_shared();
    consumer_barrier(consumer);
    row0 = row0_, col0 = col0_, batch = batch_;
    if (thread == 0 && kChunks > 0) store(map_d, 0, chunks);
    next = kChunks > 0 ? 1 : 0;
  }

  __device__ __forceinline__ void step(const CUtensorMap* map_d, uint32_t chunks, int consumer, int thread) {
    const int s = next++;
    const uint32_t buffer = chunks + (s & 1) * kChunkBytes;
    if (s >= kStaged) {
      if (thread == 0) tma_store_wait_read<1>();  // chunk s - 2's store has read the buffer
      consumer_barrier(consumer);
#pragma unroll
      for (int i = kStaged; i < kChunks; ++i)
        if (i == s) stage_packed_chunk<false, 64>(held[i - kStaged], buffer, thread);  // a constant register index per copy
      fence_proxy_async_shared();
      consumer_barrier(consumer);
    }
    if (thread == 0) store(map_d, s, buffer);
  }
  // What is left, at once (the next work item ended first, or none follows).
  __device__ __forceinline__ void flush(const CUtensorMap* map_d, uint32_t chunks, int consumer, int thread) {
    while (pending()) step(map_d, chunks, consumer, thread);
  }

  // Before the program exits: its shared memory must outlive the stores reading it.
  __device__ __forceinline__ void drain(int thread) const {
    if (thread == 0) tma_store_wait_read<0>();
  }
};

// The consumer loop's stand-in where nothing is deferred.
struct NoDeferredTile {
  __device__ __forceinline__ bool pending() const { return false; }
};

// 16-bit outputs whose epilogue fits RegisterEpilogue to a D with unit stride along its rows
// (or columns), at any alignment (copy_packed_lines): the packed ways out (the deferred way's TMA
// stores also need 16-byte aligned lines: the host encodes D's map only for those).
__device__ __forceinline__ bool packed_16_bit_out(const cuda::EpilogueArgs& e, int n) {
  return e.d.dtype != OG_DTYPE_F32 && register_epilogue_fits(e, n);
}
__device__ __forceinline__ bool packed_rows_out(const cuda::EpilogueArgs& e, int n) {
  return packed_16_bit_out(e, n) && e.d_16_bit_rows;
}
__device__ __forceinline__ bool packed_cols_out(const cuda::EpilogueArgs& e, int n) {
  return packed_16_bit_out(e, n) && e.d_16_bit_cols;
}
__device__ __forceinline__ uint16_t* d_batch_base(const cuda::EpilogueArgs& e, int batch) {
  return static_cast<uint16_t*>(const_cast<void*>(e.d.ptr)) + (long long)batch * e.d.bs;
}

// D's base for the batch and the output type, then store_packed_chunks.
template <bool TRANSPOSED, int WG_M, int BLOCK_N, bool FUSED>
__device__ __forceinline__ void store_tile_packed(float (&acc)[WG_M][BLOCK_N / 2], const cuda::EpilogueArgs& e, int batch,
                                                  int m, int n, int row0, int col0, uint32_t chunks, int consumer,
                                                  int thread, unsigned& sequence) {
  uint16_t* d = d_batch_base(e, batch);
  const long long ld = TRANSPOSED ? e.d.sc : e.d.sr;
  const RegisterEpilogue re = register_epilogue(e, batch, m, n);
  if (e.d.dtype == OG_DTYPE_BF16)
    store_packed_chunks<true, TRANSPOSED, WG_M, BLOCK_N, FUSED>(acc, d, ld, re, m, n, row0, col0, chunks, consumer, thread,
                                                               sequence);
  else
    store_packed_chunks<false, TRANSPOSED, WG_M, BLOCK_N, FUSED>(acc, d, ld, re, m, n, row0, col0, chunks, consumer, thread,
                                                                sequence);
}

// f32 D by TMA stores (map: D in boxes of 32 columns x 64 rows, the chunks' 128-byte swizzle;
// D's rows vector-aligned, N a multiple of 4, a register epilogue, an f32 C or none): each
// 64 x 32 chunk is finished in registers, staged in the wgmma layout (as the vector way stages
// it) and handed to the TMA by one thread, alternating between the consumer's two chunks. Before
// a chunk is written again, the store that read it two chunks ago must have read it.
template <int WG_M, int BLOCK_N>
__device__ __forceinline__ void store_tile_f32_tma(const float (&acc)[WG_M][BLOCK_N / 2], const RegisterEpilogue& re,
                                                   const CUtensorMap* map, int batch, int row0, int col0, uint32_t chunks,
                                                   int consumer, int thread, unsigned& sequence) {
  constexpr int kCols = 32;  // 128 bytes of f32
  static_assert(BLOCK_N % kCols == 0, "whole 32-column chunks");
  const int warp = thread / 32, lane = thread % 32;
#pragma unroll
  for (int r = 0; r < WG_M; ++r)
#pragma unroll
    for (int c = 0; c < BLOCK_N / kCols; ++c) {
      const uint32_t chunk = chunks + (sequence++ & 1u) * kChunkBytes;
      if (thread == 0) tma_store_wait_read<1>();
      consumer_barrier(consumer);
      with_variant(re, [&](auto variant) {
        using V = decltype(variant);
#pragma unroll
        for (int j = 0; j < kCols / 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int q = 4 * (kCols / 8 * c + j) + 2 * h, row = 16 * warp + lane / 4 + 8 * h, col = 8 * j + 2 * (lane % 4);
            const int gm = row0 + 64 * r + row, gn = col0 + kCols * c + col;
            const float b_row = re.bias_row(gm);
            // Kernels without the f32 C here never see one (gemm_tma_wgmma's f32_map).
            const float2 cv = V::kC && register_f32_c_kernel(BLOCK_N) ? re.c_pair(re.template c_row<float>(gm), gn) : float2{};
            const float b0 = re.bias_col(gn), b1 = re.bias_col(gn + 1);
            st_shared_f32x2(chunk + chunk_offset(row, 4 * col), re.template finish<V, false>(acc[r][q], cv.x, b_row, b0),
                            re.template finish<V, false>(acc[r][q + 1], cv.y, b_row, b1));
          }
      });
      fence_proxy_async_shared();
      consumer_barrier(consumer);
      if (thread == 0) tma_store_chunk(map, chunk, col0 + kCols * c, row0 + 64 * r, batch);
    }
}

// Writes one consumer's WG_M x (64 x BLOCK_N) accumulator blocks: block r covers rows
// row0 + 64 r .. and columns col0 .. col0 + BLOCK_N - 1. Accumulator register 4j + 2h + e of
// thread (warp, lane) is row 16 warp + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + e of its
// block (wgmma's layout). `chunks` is the shared address of this consumer's two staging
// chunks; `sequence` counts the chunks it has used, so the double buffering carries across tiles.
// `f32_map`: D's f32 TMA map where the launch has one (store_tile_f32_tma), else null.
// REGISTER_EPILOGUE: the kernel compiles the register epilogue's fused loops and the f32 TMA
// way; without it (kernel_key.hpp register_epilogue_kernel, where those loops made ptxas spill,
// and the block-scaled kernel), only the plain GEMM's 16-bit outputs take the packed ways.
template <int WG_M, int BLOCK_N, bool REGISTER_EPILOGUE = false>
__device__ __forceinline__ void store_tile(float (&acc)[WG_M][BLOCK_N / 2], const cuda::EpilogueArgs& e, int batch, int m,
                                           int n, int row0, int col0, uint32_t chunks, int consumer, int thread,
                                           unsigned& sequence, const CUtensorMap* f32_map = nullptr) {
  const int warp = thread / 32, lane = thread % 32;
  // Kernels without the register epilogue finish alpha * AB alone on the packed ways.
  const bool packable = REGISTER_EPILOGUE || cuda::epilogue_plain(e);
  if constexpr (BLOCK_N % 32 == 0 && REGISTER_EPILOGUE) {
    if (f32_map) {
      store_tile_f32_tma<WG_M, BLOCK_N>(acc, register_epilogue(e, batch, m, n), f32_map, batch, row0, col0, chunks, consumer,
                                        thread, sequence);
      return;
    }
  }
  if constexpr (BLOCK_N % 64 == 0) {  // row-major packed chunks are 64 columns wide
    if (packable && packed_rows_out(e, n)) {
      store_tile_packed<false, WG_M, BLOCK_N, REGISTER_EPILOGUE>(acc, e, batch, m, n, row0, col0, chunks, consumer, thread,
                                                                 sequence);
      return;
    }
  }
  if (packable && packed_cols_out(e, n)) {
    store_tile_packed<true, WG_M, BLOCK_N, REGISTER_EPILOGUE>(acc, e, batch, m, n, row0, col0, chunks, consumer, thread,
                                                              sequence);
    return;
  }
  constexpr int kCols = BLOCK_N < 32 ? BLOCK_N : 32;  // f32 columns per chunk
#pragma unroll
  for (int r = 0; r < WG_M; ++r) {
    const int block_row0 = row0 + 64 * r;
#pragma unroll
    for (int c = 0; c < BLOCK_N / kCols; ++c) {
      const uint32_t chunk = chunks + (sequence++ & 1u) * kChunkBytes;
#pragma unroll
      for (int j = 0; j < kCols / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int q = 4 * (kCols / 8 * c + j) + 2 * h;
          st_shared_f32x2(chunk + chunk_offset(16 * warp + lane / 4 + 8 * h, 32 * j + 8 * (lane % 4)), acc[r][q],
                          acc[r][q + 1]);
        }
      consumer_barrier(consumer);
      if (e.d_vector_rows) finish_vector_chunk<kCols>(e, batch, m, n, block_row0, col0 + kCols * c, chunk, thread);
      else finish_generic_chunk<kCols>(e, batch, m, n, block_row0, col0 + kCols * c, chunk, thread);
    }
  }
}
#endif

}  // namespace omnigemm::detail::sm90
