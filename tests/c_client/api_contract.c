/* ctest "api_contract": what omnigemm.h promises, tried through the C API alone (C11, linked to
 * the shared library like any client). Each check names the header's sentence it tests:
 * og_matrix_make's layouts, one status per fault for dtypes, the zero-filled descriptor, the
 * documented limits (sizes and batch_count up to 2^31-1, alignment = element size, batch strides
 * >= 0, K = 0 and M = 0, C's dtype apart from D's, transpose 0 or 1), NULL options, and
 * blockscaled.h from C (quantisation, packed scales, a block-scaled GEMM).
 * Inputs are random (the seed is printed; OMNIGEMM_TEST_SEED replays it), outputs are poisoned
 * with NaN first and every element is compared with a double-precision loop. */
#include <math.h>
#include <omnigemm/blockscaled.h>
#include <omnigemm/omnigemm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;
#define EXPECT(cond, ...)                                            \
  do {                                                               \
    if (!(cond)) {                                                   \
      ++failures;                                                    \
      fprintf(stderr, "api_contract:%d: FAILED: %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fprintf(stderr, "\n");                                         \
    }                                                                \
  } while (0)

static unsigned rng_state;
/* A multiple of 1/64 in [-2, 2): exact in f32 and in bf16 (8 significant bits suffice). */
static float draw(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((int)((rng_state >> 12) % 256u) - 128) / 64.0f;
}
static uint16_t to_bf16(float x) { /* exact for the values draw() makes */
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return (uint16_t)(u >> 16);
}
static int message_has(const char* text) { return strstr(og_last_error_message(), text) != NULL; }

/* Every element of d (rows x cols, row-major, ld) against ref; returns ||d - ref|| / ||ref||. */
static double rel_error(const float* d, const double* ref, int rows, int cols, int ld, int* unwritten) {
  double num = 0, den = 0;
  *unwritten = 0;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const double out = d[i * ld + j], r = ref[i * cols + j];
      if (isnan(out)) ++*unwritten;
      num += (out - r) * (out - r);
      den += r * r;
    }
  return sqrt(num / (den > 0 ? den : 1));
}

/* f32 accumulation of K <= 64 products of values below 4 in magnitude: the rounding error stays
 * below about K * 2^-24 relative to the sum of magnitudes; 1e-5 leaves room for the epilogue. */
static const double kTolF32 = 1e-5;

/* og_matrix_make honours its layout: ld = cols row-major, ld = rows column-major; and a
 * column-major A made by it computes the right product. */
static void matrix_make(og_context* ctx) {
  og_matrix r = og_matrix_make(5, 3, OG_DTYPE_F16, OG_ROW_MAJOR);
  og_matrix c = og_matrix_make(5, 3, OG_DTYPE_F16, OG_COL_MAJOR);
  og_matrix z = og_matrix_make(0, 0, OG_DTYPE_F32, OG_COL_MAJOR);
  EXPECT(r.ld == 3 && c.ld == 5 && z.ld == 1, "ld row-major %lld, column-major %lld, empty %lld", (long long)r.ld,
         (long long)c.ld, (long long)z.ld);
  EXPECT(r.rows == 5 && r.cols == 3 && c.layout == OG_COL_MAJOR && c.dtype == OG_DTYPE_F16, "shape/layout/dtype kept");
  EXPECT(c.transpose == 0 && c.batch_stride == 0 && c.mem.kind == OG_MEMORY_NONE && c.scale.mem.kind == OG_MEMORY_NONE &&
             c.scale.global == 1.0f,
         "not transposed, no batch stride, no memory");

  enum { M = 17, N = 11, K = 23 };
  static float a[M * K], b[K * N], d[M * N];
  static double ref[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = draw(); /* column-major: a[i + k * M] */
  for (int i = 0; i < K * N; ++i) b[i] = draw();
  for (int i = 0; i < M * N; ++i) d[i] = NAN;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += (double)a[i + k * M] * b[k * N + j];
      ref[i * N + j] = acc;
    }
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(M, K, OG_DTYPE_F32, OG_COL_MAJOR);
  g.a.mem = og_memory_host(a);
  g.b = og_matrix_make(K, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.d = og_matrix_make(M, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  const og_status s = og_gemm(ctx, &g);
  int unwritten = 0;
  const double err = rel_error(d, ref, M, N, N, &unwritten);
  EXPECT(s == OG_OK && unwritten == 0 && err < kTolF32, "column-major A via og_matrix_make: %s, error %.3g, %d NaN",
         og_status_name(s), err, unwritten);
}

/* One status for one fault: an unknown dtype value is invalid_argument in og_context_check_dtypes
 * and in og_gemm; a known dtype the backend cannot run is unsupported in both. */
static void dtype_statuses(og_context* ctx) {
  static float a[4], b[4], d[4];
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(2, 2, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a);
  g.b = og_matrix_make(2, 2, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.d = og_matrix_make(2, 2, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);

  og_status q = og_context_check_dtypes(ctx, (og_dtype)99, OG_DTYPE_F32, OG_DTYPE_F32);
  EXPECT(q == OG_ERROR_INVALID_ARGUMENT && message_has("unknown dtype 99"), "check_dtypes(99, f32, f32): %s: %s",
         og_status_name(q), og_last_error_message());
  q = og_context_check_dtypes(ctx, OG_DTYPE_F32, OG_DTYPE_F32, (og_dtype)-3);
  EXPECT(q == OG_ERROR_INVALID_ARGUMENT, "check_dtypes(f32, f32, -3): %s", og_status_name(q));
  og_gemm_desc bad = g;
  bad.a.dtype = (og_dtype)99;
  og_status r = og_gemm(ctx, &bad);
  EXPECT(r == OG_ERROR_INVALID_ARGUMENT && message_has("unknown dtype 99"), "og_gemm with A dtype 99: %s: %s",
         og_status_name(r), og_last_error_message());

  /* Block-scaled inputs run on the CPU backend, but need their scale tensors; an fp8 output is
   * known but not runnable. */
  q = og_context_check_dtypes(ctx, OG_DTYPE_MXFP8, OG_DTYPE_MXFP8, OG_DTYPE_F32);
  bad = g;
  bad.a.dtype = bad.b.dtype = OG_DTYPE_MXFP8;
  r = og_gemm(ctx, &bad);
  EXPECT(q == OG_OK && r == OG_ERROR_INVALID_ARGUMENT && message_has("scales"),
         "mxfp8 inputs without scales: check_dtypes %s, og_gemm %s: %s", og_status_name(q), og_status_name(r),
         og_last_error_message());
  q = og_context_check_dtypes(ctx, OG_DTYPE_F16, OG_DTYPE_F16, OG_DTYPE_FP8_E4M3);
  bad = g;
  bad.d.dtype = OG_DTYPE_FP8_E4M3;
  r = og_gemm(ctx, &bad);
  EXPECT(q == OG_ERROR_UNSUPPORTED && r == OG_ERROR_UNSUPPORTED, "fp8 output: check_dtypes %s, og_gemm %s",
         og_status_name(q), og_status_name(r));
  q = og_context_check_dtypes(ctx, OG_DTYPE_F16, OG_DTYPE_BF16, OG_DTYPE_F32);
  EXPECT(q == OG_OK, "f16 x bf16 -> f32 on the CPU backend: %s", og_status_name(q));
}

/* A zero-filled descriptor (no og_gemm_desc_init) has batch_count 0: a valid empty call that
 * touches nothing; with batch_count 1 it still has alpha 0, so D = 0. */
static void zero_filled_descriptor(og_context* ctx) {
  enum { M = 6, N = 5, K = 7 };
  static float a[M * K], b[K * N], d[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = draw();
  for (int i = 0; i < K * N; ++i) b[i] = draw();
  for (int i = 0; i < M * N; ++i) d[i] = NAN;
  og_gemm_desc g;
  memset(&g, 0, sizeof g); /* f32, row-major, not transposed: all value 0 */
  g.a.rows = M; g.a.cols = K; g.a.ld = K; g.a.mem = og_memory_host(a);
  g.b.rows = K; g.b.cols = N; g.b.ld = N; g.b.mem = og_memory_host(b);
  g.d.rows = M; g.d.cols = N; g.d.ld = N; g.d.mem = og_memory_host(d);
  og_status s = og_gemm(ctx, &g);
  int untouched = 1;
  for (int i = 0; i < M * N; ++i) untouched &= isnan(d[i]) != 0;
  EXPECT(s == OG_OK && untouched, "zero-filled descriptor: %s, D %s", og_status_name(s),
         untouched ? "untouched" : "written");
  g.batch_count = 1;
  s = og_gemm(ctx, &g);
  int zeros = 1;
  for (int i = 0; i < M * N; ++i) zeros &= d[i] == 0.0f;
  EXPECT(s == OG_OK && zeros, "zero-filled descriptor with batch_count 1 (alpha 0): %s, D %s", og_status_name(s),
         zeros ? "all 0" : "not all 0");
}

/* Sizes and batch_count up to 2^31-1 (og_gemm_explain validates without running), alignment =
 * element size, batch strides >= 0, transpose 0 or 1. */
static void limits(og_context* ctx) {
  /* D on the stack, A and B in static storage: their 8 GiB extents at 2^31-1 rows (never touched:
   * explain runs nothing) stay apart, so the overlap rule does not answer first. */
  static float a[64], b[64];
  float d[64];
  const int64_t max = 2147483647;
  og_explanation* ex = malloc(sizeof *ex);
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(max, 1, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a);
  g.b = og_matrix_make(1, 1, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.d = og_matrix_make(max, 1, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  og_status s = og_gemm_explain(ctx, &g, ex);
  EXPECT(s == OG_OK, "M = 2^31-1 explained: %s: %s", og_status_name(s), og_last_error_message());
  g.a.rows = g.d.rows = max + 1;
  s = og_gemm_explain(ctx, &g, ex);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT && message_has("2^31-1"), "M = 2^31: %s: %s", og_status_name(s),
         og_last_error_message());

  og_gemm_desc_init(&g);
  g.a = og_matrix_make(2, 3, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a);
  g.b = og_matrix_make(3, 2, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.d = og_matrix_make(2, 2, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  g.d.batch_stride = 4;
  g.batch_count = max; /* A and B broadcast (batch stride 0) */
  s = og_gemm_explain(ctx, &g, ex);
  EXPECT(s == OG_OK, "batch_count 2^31-1 explained: %s: %s", og_status_name(s), og_last_error_message());
  g.batch_count = max + 1;
  s = og_gemm_explain(ctx, &g, ex);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT && message_has("2^31-1"), "batch_count 2^31: %s: %s", og_status_name(s),
         og_last_error_message());
  g.batch_count = 1;
  g.d.batch_stride = 0;

  og_gemm_desc bad = g;
  bad.a.mem = og_memory_host((const char*)a + 2); /* f32 at a 2-byte offset */
  s = og_gemm(ctx, &bad);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT && message_has("aligned"), "f32 at +2 bytes: %s: %s", og_status_name(s),
         og_last_error_message());
  bad = g;
  bad.b.mem.offset = 6;
  s = og_gemm(ctx, &bad);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT, "f32 with byte offset 6: %s", og_status_name(s));
  bad = g; /* f16 needs 2-byte alignment only */
  bad.a.dtype = bad.b.dtype = OG_DTYPE_F16;
  bad.a.mem = og_memory_host((const char*)a + 2);
  bad.b.mem = og_memory_host((const char*)b + 6);
  s = og_gemm_explain(ctx, &bad, ex);
  EXPECT(s == OG_OK, "f16 at +2 / +6 bytes: %s: %s", og_status_name(s), og_last_error_message());
  bad = g;
  bad.b.batch_stride = -1;
  s = og_gemm(ctx, &bad);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT && message_has("negative batch stride"), "B batch stride -1: %s: %s",
         og_status_name(s), og_last_error_message());
  bad = g;
  bad.a.transpose = 2;
  s = og_gemm(ctx, &bad);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT && message_has("transpose must be 0 or 1"), "transpose 2: %s: %s",
         og_status_name(s), og_last_error_message());
  free(ex);
}

/* K = 0 gives D = act(beta * C + bias); M = 0 touches nothing; C's dtype (bf16) may differ from
 * D's (f32). */
static void k_zero_m_zero_mixed_c(og_context* ctx) {
  enum { M = 9, N = 13, K = 31 };
  static float a[M * K], b[K * N], c[M * N], bias[M], d[M * N];
  static uint16_t c16[M * N];
  static double ref[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = draw();
  for (int i = 0; i < K * N; ++i) b[i] = draw();
  for (int i = 0; i < M * N; ++i) { c[i] = draw(); c16[i] = to_bf16(c[i]); d[i] = NAN; }
  for (int i = 0; i < M; ++i) bias[i] = draw();

  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(M, 0, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a); /* never read */
  g.b = og_matrix_make(0, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.c = og_matrix_make(M, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.c.mem = og_memory_host(c);
  g.d = og_matrix_make(M, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  g.epilogue.beta = 0.75f;
  g.epilogue.bias_mode = OG_BIAS_PER_M;
  g.epilogue.bias = og_memory_host(bias);
  g.epilogue.activation = OG_ACT_RELU;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const double x = 0.75 * c[i * N + j] + bias[i];
      ref[i * N + j] = x > 0 ? x : 0;
    }
  og_status s = og_gemm(ctx, &g);
  int unwritten = 0;
  double err = rel_error(d, ref, M, N, N, &unwritten);
  EXPECT(s == OG_OK && unwritten == 0 && err < kTolF32, "K = 0: %s, error %.3g, %d NaN", og_status_name(s), err,
         unwritten);

  /* M = 0: valid, nothing written (D's buffer stays NaN). */
  for (int i = 0; i < M * N; ++i) d[i] = NAN;
  og_gemm_desc empty = g;
  empty.a = og_matrix_make(0, K, OG_DTYPE_F32, OG_ROW_MAJOR);
  empty.a.mem = og_memory_host(a);
  empty.b = og_matrix_make(K, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  empty.b.mem = og_memory_host(b);
  empty.c = og_matrix_make(0, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  empty.c.mem = og_memory_host(c);
  empty.d = og_matrix_make(0, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  empty.d.mem = og_memory_host(d);
  s = og_gemm(ctx, &empty);
  int untouched = 1;
  for (int i = 0; i < M * N; ++i) untouched &= isnan(d[i]) != 0;
  EXPECT(s == OG_OK && untouched, "M = 0: %s, D %s", og_status_name(s), untouched ? "untouched" : "written");

  /* C in bf16, D in f32, the full GEMM. */
  g.a = og_matrix_make(M, K, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a);
  g.b = og_matrix_make(K, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.c = og_matrix_make(M, N, OG_DTYPE_BF16, OG_ROW_MAJOR);
  g.c.mem = og_memory_host(c16);
  g.epilogue.alpha = -1.25f;
  g.epilogue.activation = OG_ACT_NONE;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += (double)a[i * K + k] * b[k * N + j];
      ref[i * N + j] = -1.25 * acc + 0.75 * c[i * N + j] + bias[i];
    }
  s = og_gemm(ctx, &g);
  err = rel_error(d, ref, M, N, N, &unwritten);
  EXPECT(s == OG_OK && unwritten == 0 && err < kTolF32, "C bf16, D f32: %s: %s, error %.3g, %d NaN",
         og_status_name(s), og_last_error_message(), err, unwritten);
}

/* blockscaled.h from C: an mxfp8 A (2 x 64) quantised on the host with OCP's scale choice
 * (2^(floor(log2 amax) - 8)) and its packed scales' geometry; then an mxfp8 x mxfp8 GEMM on the
 * CPU equals the product of the dequantised operands. */
static void block_scaled(og_context* ctx) {
  float src[2 * 64], deq[2 * 64], bsrc[64 * 3], bdeq[64 * 3], d[2 * 3], out;
  uint8_t q[2 * 64], qb[64 * 3], scales[512], bscales[512];
  int i, j, k, unwritten = 0;
  for (i = 0; i < 2 * 64; ++i) src[i] = draw() + 0.5f;
  src[5] = 3.0f; /* row 0, block 0: amax 3 -> 2^(1 - 8) */
  for (i = 0; i < 32; ++i) src[64 + i] = 0.25f * (i % 2 ? 1.0f : -1.0f); /* row 1, block 0: amax 0.25 -> 2^(-2 - 8) */
  for (i = 0; i < 64 * 3; ++i) bsrc[i] = draw();
  og_matrix s = og_matrix_make(2, 64, OG_DTYPE_F32, OG_ROW_MAJOR);
  s.mem = og_memory_host(src);
  og_matrix a = og_matrix_make(2, 64, OG_DTYPE_MXFP8, OG_ROW_MAJOR);
  a.mem = og_memory_host(q);
  a.scale.layout = OG_SCALE_PACKED;
  og_scale_info info;
  og_status st = og_scale_info_get(&a, OG_OPERAND_A, &info);
  EXPECT(st == OG_OK && info.bytes == 512 && info.stored_rows == 128 && info.stored_cols == 4 && info.block_k == 32,
         "mxfp8 2 x 64 packed scale info: %s, %lld bytes", og_status_name(st), (long long)info.bytes);
  a.scale.mem = og_memory_host(scales);
  memset(scales, 0xab, sizeof scales);
  st = og_quantize_host(&s, &a, OG_OPERAND_A);
  EXPECT(st == OG_OK && scales[0] == 127 + 1 - 8 && scales[16] == 127 - 2 - 8 && scales[2] == 0 && scales[511] == 0,
         "mxfp8 quantisation: %s: %s; scales %d %d, padding %d %d", og_status_name(st), og_last_error_message(), scales[0],
         scales[16], scales[2], scales[511]);
  og_matrix dq = og_matrix_make(2, 64, OG_DTYPE_F32, OG_ROW_MAJOR);
  dq.mem = og_memory_host(deq);
  st = og_dequantize_host(&a, &dq, OG_OPERAND_A);
  EXPECT(st == OG_OK && deq[5] == 3.0f && deq[64] == -0.25f, "mxfp8 dequantisation: %s, %g %g", og_status_name(st), deq[5], deq[64]);
  /* B: op(B) = 64 x 3, held 3 x 64 row-major and transposed, row-major scales. */
  og_matrix bs = og_matrix_make(3, 64, OG_DTYPE_F32, OG_ROW_MAJOR);
  bs.mem = og_memory_host(bsrc);
  bs.transpose = 1;
  og_matrix b = og_matrix_make(3, 64, OG_DTYPE_MXFP8, OG_ROW_MAJOR);
  b.transpose = 1;
  b.mem = og_memory_host(qb);
  b.scale.mem = og_memory_host(bscales);
  og_matrix bd = og_matrix_make(64, 3, OG_DTYPE_F32, OG_COL_MAJOR);
  bd.mem = og_memory_host(bdeq);
  st = og_quantize_host(&bs, &b, OG_OPERAND_B);
  if (st == OG_OK) st = og_dequantize_host(&b, &bd, OG_OPERAND_B);
  EXPECT(st == OG_OK, "mxfp8 B: %s: %s", og_status_name(st), og_last_error_message());
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = a;
  g.b = b;
  g.d = og_matrix_make(2, 3, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  for (i = 0; i < 6; ++i) d[i] = NAN;
  st = og_gemm(ctx, &g);
  double worst = 0;
  for (i = 0; i < 2; ++i)
    for (j = 0; j < 3; ++j) {
      double acc = 0, mag = 0;
      for (k = 0; k < 64; ++k) {
        acc += (double)deq[i * 64 + k] * bdeq[j * 64 + k];
        mag += fabs((double)deq[i * 64 + k] * bdeq[j * 64 + k]);
      }
      out = d[i * 3 + j];
      if (isnan(out)) ++unwritten;
      else if (fabs(out - acc) / mag > worst) worst = fabs(out - acc) / mag;
    }
  EXPECT(st == OG_OK && unwritten == 0 && worst < 1e-6, "mxfp8 GEMM: %s: %s, error %.3g, %d NaN", og_status_name(st),
         og_last_error_message(), worst, unwritten);
}

int main(void) {
  const char* replay = getenv("OMNIGEMM_TEST_SEED");
  rng_state = replay ? (unsigned)strtoul(replay, NULL, 10) : (unsigned)time(NULL);
  printf("api_contract: seed %u (OMNIGEMM_TEST_SEED replays it)\n", rng_state);

  /* NULL options mean the defaults of og_context_options_init. */
  og_context* ctx = NULL;
  og_status s = og_context_create(NULL, &ctx);
  EXPECT(s == OG_OK && ctx != NULL, "og_context_create(NULL options): %s: %s", og_status_name(s),
         og_last_error_message());
  if (ctx) printf("api_contract: NULL options -> backend %s\n", og_backend_name(og_context_backend(ctx)));
  og_context_destroy(ctx);
  /* A refused creation leaves *out NULL. */
  og_context_options o;
  og_context_options_init(&o);
  o.backend = (og_backend)99;
  ctx = (og_context*)&o; /* anything non-NULL */
  s = og_context_create(&o, &ctx);
  EXPECT(s == OG_ERROR_INVALID_ARGUMENT && ctx == NULL, "backend 99: %s, ctx %s", og_status_name(s),
         ctx ? "set" : "NULL");

  og_context_options_init(&o);
  o.backend = OG_BACKEND_CPU;
  o.tune_mode = OG_TUNE_OFF;
  if ((s = og_context_create(&o, &ctx)) != OG_OK) {
    fprintf(stderr, "api_contract: CPU context: %s: %s\n", og_status_name(s), og_last_error_message());
    return 1;
  }
  matrix_make(ctx);
  dtype_statuses(ctx);
  block_scaled(ctx);
  zero_filled_descriptor(ctx);
  limits(ctx);
  k_zero_m_zero_mixed_c(ctx);
  og_context_destroy(ctx);
  printf("api_contract: %s (%d failed)\n", failures ? "FAILED" : "all checks passed", failures);
  return failures ? 1 : 0;
}
