/* OmniGEMM block-scaled formats: scale-tensor geometry, quantisation, dequantisation and
 * scale-layout conversion (C API; omnigemm/blockscaled.hpp is the C++ layer).
 *
 * A block-scaled GEMM operand is an og_matrix whose elements are narrow floats and whose
 * `scale` field (og_scales) points at one scale per block of elements along K:
 *
 *   format        A/B dtype                 element  block along K  scale       scale mode
 *   mxfp8         OG_DTYPE_MXFP8            e4m3     32             E8M0        VEC32_UE8M0
 *   mxfp8 (e5m2)  OG_DTYPE_MXFP8_E5M2       e5m2     32             E8M0        VEC32_UE8M0
 *   mxfp4         OG_DTYPE_MXFP4            e2m1     32             E8M0        VEC32_UE8M0
 *   nvfp4         OG_DTYPE_NVFP4            e2m1     16             e4m3 * global  VEC16_UE4M3
 *   fp8_block128  OG_DTYPE_FP8_E4M3 / E5M2  fp8      128            f32         VEC128_F32 (1 x 128)
 *                                                                                or BLK128x128_F32
 * (mx and nvfp4 dtypes may leave the mode at OG_SCALE_MODE_DEFAULT; fp8 with the default mode is
 * plain fp8.) DeepSeek-V3-style checkpoints and cuBLASLt on Hopper use A: VEC128_F32 and
 * B: BLK128x128_F32; OmniGEMM accepts either mode on either operand.
 *
 * GEMM semantics: D = act(alpha * deq(A) @ deq(B) + beta * C + bias), deq() being the
 * dequantisation below in f32, accumulated in f32 (order unspecified). The CPU backend's
 * `blockscaled` family computes exactly that and defines the semantics other backends are
 * checked against.
 *
 * Scale tensors. Scale (r, c) belongs to rows [r * block_rows, +block_rows) of M (for A) or N
 * (for B) and K elements [c * block_k, +block_k): R = ceil(M or N / block_rows) rows and
 * C = ceil(K / block_k) columns of scales (a partial last block covers the K tail). Stored as
 * og_scale_layout says: row-major or column-major with a leading dimension, or the packed
 * 512-byte tiles of 128 rows x 4 columns (1-byte scales only; R padded to a multiple of 128 and
 * C to a multiple of 4, the padding zero: omnigemm/block_formats.h has the index arithmetic and
 * compiles in CUDA, HIP and GLSL too). The packed layout is what cuBLASLt's VEC32_UE8M0 /
 * VEC16_UE4M3 modes read; cuBLASLt's VEC128_32F is column-major with ld = M (for A), and its
 * BLK128x128_32F row-major with ld = C rounded up to a multiple of 4 (for B).
 *
 * Elements. fp8 and mxfp8 elements take any strides; fp4 (mxfp4, nvfp4) holds two elements per
 * byte along K, the lower K index in the low nibble: K must be the contiguous dimension (A
 * row-major or transposed column-major, B column-major or transposed row-major), and ld,
 * batch_stride and the element offset even. Addresses of fp4 matrices are in bytes as usual.
 *
 * Quantisation (og_quantize, og_quantize_host), bit-exact on every backend
 * (omnigemm/block_formats.h, tested on value tables in tests/core/test_block_formats.cpp):
 *   - mx: E8M0 scale 2^(floor(log2(amax)) - emax_elem) (OCP MX v1.0; emax_elem 8 for e4m3, 15
 *     for e5m2, 2 for e2m1), clamped to [2^-127, 2^127]; an all-zero block gets 2^-127;
 *   - nvfp4: e4m3 scale amax / (6 * global), rounded to nearest even, saturated to 448 (0 when
 *     below 2^-10: that block stores zeros); global is dst->scale.global when positive, else
 *     chosen as amax(tensor) / 2688 (= 448 * 6) and written back (1 for an all-zero tensor);
 *   - fp8_block128: f32 scale amax / 448 (e4m3) or amax / 57344 (e5m2), rounded to nearest
 *     even; 1 for an all-zero block;
 *   - elements: the exact quotient x / scale (x / (scale * global) for nvfp4) rounded to nearest
 *     even in the element format and saturated to its largest finite value (e5m2 included);
 *   - NaN or Inf: a block holding one gets a NaN scale (E8M0 0xff, e4m3 0x7f, f32 NaN) and zero
 *     elements, so it dequantises to NaN; the nvfp4 global factor ignores non-finite values.
 * Dequantisation: f32(f32(element * scale) * global) (og_dequantize), rounded to nearest even
 * when the destination is f16 or bf16.
 */
#ifndef OMNIGEMM_BLOCKSCALED_H
#define OMNIGEMM_BLOCKSCALED_H

#include "omnigemm/omnigemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which GEMM operand a view is: the scale blocks run along op(A)'s columns (M x K) or op(B)'s
 * rows (K x N), and the scale tensor's rows are M or N. */
typedef enum og_operand { OG_OPERAND_A = 0, OG_OPERAND_B = 1 } og_operand;

/* The scale tensor a block-scaled operand view needs. */
typedef struct og_scale_info {
  og_scale_mode mode;      /* resolved (never DEFAULT) */
  og_dtype element;        /* element encoding: fp8_e4m3, fp8_e5m2, or mxfp4 for e2m1 */
  int block_k;             /* elements along K per scale: 16, 32 or 128 */
  int block_rows;          /* rows of M / N per scale: 1 or 128 */
  int scale_bytes;         /* 1 (E8M0, e4m3) or 4 (f32) */
  int64_t rows, cols;      /* R x C scales */
  int64_t stored_rows;     /* packed: R rounded up to 128; else R */
  int64_t stored_cols;     /* packed: C rounded up to 4; else C */
  int64_t ld;              /* the layout's leading dimension in scales (0 given: the smallest); 0 if packed */
  int64_t bytes;           /* bytes one matrix's scale tensor spans */
} og_scale_info;

/* The geometry of m's scale tensor when m is GEMM operand `which` (memory is not looked at; an
 * nvfp4 global factor of 0, as og_quantize takes it, is accepted). invalid_argument if m is not
 * a block-scaled operand or its scale fields are inconsistent (the message names the rule). */
OG_API og_status og_scale_info_get(const og_matrix* m, og_operand which, og_scale_info* out);

/* Quantises src (f32, f16 or bf16, any layout) into dst (a block-scaled operand of the same
 * op() shape; dst->scale says where the scales go) as GEMM operand `which`. One matrix: batch
 * strides are ignored. nvfp4 with dst->scale.global == 0 chooses the global factor and stores
 * it in dst->scale.global. Host memory only (no context needed). */
OG_API og_status og_quantize_host(const og_matrix* src, og_matrix* dst, og_operand which);
/* Dequantises src (block-scaled) into dst (f32, f16 or bf16, same op() shape). Host memory. */
OG_API og_status og_dequantize_host(const og_matrix* src, const og_matrix* dst, og_operand which);
/* The same on the context's device, operands in its memory (host memory on the CPU backend),
 * enqueued on `stream` as og_gemm_async enqueues (CPU: NULL, runs at once), with results
 * bit-exact with the host functions. nvfp4 with dst->scale.global == 0 reads the global factor
 * back from the device (Vulkan: stream must then be NULL). The CPU, Vulkan and CUDA backends have
 * device quantisation; a backend without it answers OG_ERROR_UNSUPPORTED. */
OG_API og_status og_quantize(og_context* ctx, const og_matrix* src, og_matrix* dst, og_operand which, void* stream);
OG_API og_status og_dequantize(og_context* ctx, const og_matrix* src, const og_matrix* dst, og_operand which,
                               void* stream);

/* Copies the scales of `from` into the scale tensor of `to`: the same operand (dtype, scale
 * mode, op() shape) with another scale layout or ld (e.g. linear <-> packed). Packed padding is
 * written as zero. Elements are not touched. Host memory; the two tensors must not overlap. */
OG_API og_status og_convert_scales_host(const og_matrix* from, const og_matrix* to, og_operand which);

OG_API const char* og_scale_mode_name(og_scale_mode mode);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OMNIGEMM_BLOCKSCALED_H */
