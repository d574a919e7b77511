// cuda.short_k's tensor-core kernel: the FMA kernel's block (kRows rows x HALVES * 256 columns of
// D') and row stores (store_rows), its sums from mma.sync m16n8k16 with f32 accumulators, so K
// costs the staging of its rows and not a lane's FMAs. Inputs f16 x f16 or bf16 x bf16 (loaded as
// they are) or fp8 x fp8 (decoded to f16, which holds every e4m3 and e5m2 value exactly), any
// strides and alignment. Warp w sums all kRows rows x 32 * HALVES columns; the sums meet in a
// shared f32 tile that the warps then read back by rows for the stores.
#pragma once
#include "../mma_sync.cuh"
#include "short_k_kernel.cuh"

namespace omnigemm::detail::cuda {

namespace short_k {
// 16-bit elements per staged row of A' and B'^T: a chunk's 16 K, then 8 more so that the eight
// rows a fragment load touches start on different banks.
constexpr int kMmaPitchK = kChunkK + 8;
// Floats per row of the result tile: the columns, then 4 more so that a fragment's eight rows
// spread their 8-byte stores over every bank.
constexpr int mma_tile_pitch(int halves) { return halves * kHalfCols + 4; }
// Dynamic shared bytes: the result tile, which the staged chunk shares (it is smaller).
constexpr int mma_shared_bytes(int halves) { return kRows * mma_tile_pitch(halves) * 4; }
static_assert((kRows + 2 * kHalfCols) * kMmaPitchK * 2 <= mma_shared_bytes(1), "staging fits in the result tile");
static_assert(kRows * kChunkK % kThreads == 0, "A's chunk stages in whole passes of the block");
}  // namespace short_k

namespace short_k_detail {

// Element i of an operand as the 16 bits of MMA type T: as stored where the dtype is T's, decoded
// and rounded to f16 otherwise (fp8, exact). DT: the operand's og_dtype or kAnyDtype.
template <class T, int DT>
__device__ __forceinline__ unsigned short load_bits(const OperandArgs& o, long long i) {
  if constexpr (DT == OG_DTYPE_F16 || DT == OG_DTYPE_BF16) return static_cast<const unsigned short*>(o.ptr)[i];
  else return __half_as_ushort(__float2half_rn(load(o.dtype, o.ptr, i)));
}

}  // namespace short_k_detail

template <int HALVES, int OUT_BYTES, class T>
__global__ void __launch_bounds__(short_k::kThreads, short_k::blocks_per_sm(HALVES)) short_k_mma_gemm(const ShortKArgs args) {
  using namespace short_k;
  dependent_launch_begin();
  constexpr int kCols = HALVES * kHalfCols;
  constexpr int P = kMmaPitchK;
  constexpr int kTilePitch = mma_tile_pitch(HALVES);
  constexpr int kFragsN = 4 * HALVES;  // n8 tiles per warp: 32 * HALVES columns
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned short* sa = reinterpret_cast<unsigned short*>(smem);  // A' chunk: [kRows][P], K fastest
  unsigned short* sb = sa + kRows * P;                           // B' chunk transposed: [kCols][P]
  float* tile = reinterpret_cast<float*>(smem);                  // after the K loop: [kRows][kTilePitch]

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane / 4, t = lane % 4;  // the fragment's row group and K pair
  const long long batch = (long long)args.batch_base + blockIdx.z;
  const int row0 = int(blockIdx.y) * kRows;
  const int col0 = int(blockIdx.x) * kCols;  // the family keeps col0 + kCols below 2^31
  const int warp_col = warp * 8 * kFragsN;
  const OperandArgs& a = args.a;
  const OperandArgs& b = args.b;

  float acc[2][kFragsN][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  for (int k0 = 0; k0 < args.k; k0 += kChunkK) {
    // Staging: every row of the chunk is written, zeros past K and past the problem's edges (the
    // MMA reads all 16; zeros on both sides keep a product with padding finite and zero).
    const int steps = min(kChunkK, args.k - k0);
    short_k_detail::with_dtype(b.dtype, [&](auto dt) {
      constexpr int DT = decltype(dt)::value;
      // Thread: one column per half, its 16 K as two 16-byte stores of 8, whichever way B' is
      // stored (along N a warp's loads are one line; along K its columns' lines serve the chunk).
#pragma unroll
      for (int h = 0; h < HALVES; ++h) {
        const int j = h * kHalfCols + tid;
        const bool in = col0 + j < args.n;
        const long long base = batch * b.bs + (long long)(col0 + j) * b.sc + (long long)k0 * b.sr;
        uint4* dst = reinterpret_cast<uint4*>(sb + j * P);
#pragma unroll
        for (int part = 0; part < 2; ++part) {  // 8 K at a time: fewer live registers beside the sums
          uint32_t w[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int kk = part * 8 + 2 * q;
            const uint32_t lo = in && kk < steps ? short_k_detail::load_bits<T, DT>(b, base + kk * b.sr) : 0u;
            const uint32_t hi = in && kk + 1 < steps ? short_k_detail::load_bits<T, DT>(b, base + (kk + 1) * b.sr) : 0u;
            w[q] = lo | hi << 16;
          }
          dst[part] = make_uint4(w[0], w[1], w[2], w[3]);
        }
      }
    });
    short_k_detail::with_dtype(a.dtype, [&](auto dt) {
      constexpr int DT = decltype(dt)::value;
#pragma unroll
      for (int s = 0; s < kRows * kChunkK / kThreads; ++s) {
        const int e = tid + s * kThreads, r = e / kChunkK, kk = e % kChunkK;
        sa[r * P + kk] = kk < steps && row0 + r < args.m
                             ? short_k_detail::load_bits<T, DT>(a, batch * a.bs + (long long)(row0 + r) * a.sr + (long long)(k0 + kk) * a.sc)
                             : 0;
      }
    });
    __syncthreads();
    // m16n8k16 fragments (PTX ISA): A rows g and g + 8, K 2t, 2t + 1 and 2t + 8, 2t + 9; B column g,
    // the same K. Both tiles hold K fastest, so each register is one 32-bit load.
    auto word = [&](const unsigned short* base, int row, int k) { return *reinterpret_cast<const uint32_t*>(base + row * P + k); };
    unsigned af[2][4];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = i * 16 + g;
      af[i][0] = word(sa, r, 2 * t);
      af[i][1] = word(sa, r + 8, 2 * t);
      af[i][2] = word(sa, r, 2 * t + 8);
      af[i][3] = word(sa, r + 8, 2 * t + 8);
    }
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      const int n = warp_col + j * 8 + g;
      const uint32_t b0 = word(sb, n, 2 * t), b1 = word(sb, n, 2 * t + 8);
#pragma unroll
      for (int i = 0; i < 2; ++i) mma_16816<T>(acc[i][j], af[i], b0, b1);
    }
    __syncthreads();
  }

  // Accumulators (rows g and g + 8, columns 2t, 2t + 1 of each n8 tile) to the tile, columns at
  // their b_slot so that the row reads below are contiguous float4s.
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      const int slot = short_k_detail::b_slot(warp_col + j * 8 + 2 * t), r = i * 16 + g;
      *reinterpret_cast<float2*>(tile + r * kTilePitch + slot) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(tile + (r + 8) * kTilePitch + slot) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
  __syncthreads();
  const int row = warp * kRowsPerThread;
  short_k_detail::store_rows<HALVES, OUT_BYTES>(args, batch, row0 + row, col0, lane, [&](int i, int h, int q) {
    return tile[(row + i) * kTilePitch + h * kHalfCols + (q / 4) * (kHalfCols / 2) + lane * 4 + q % 4];
  });
}

}  // namespace omnigemm::detail::cuda
