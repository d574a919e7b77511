/* A C11 program that uses only omnigemm.h: a CPU context, one GEMM with a per-column bias and
 * GELU, checked element by element against its own double loop. Exit status 0 only on success. */
#include <math.h>
#include <omnigemm/omnigemm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static float uniform(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

int main(void) {
  enum { M = 19, N = 23, K = 29 };
  static float a[M * K], b[K * N], bias[N], d[M * N];
  unsigned seed = (unsigned)time(NULL);
  for (int i = 0; i < M * K; ++i) a[i] = uniform(&seed);
  for (int i = 0; i < K * N; ++i) b[i] = uniform(&seed);
  for (int j = 0; j < N; ++j) bias[j] = uniform(&seed);
  for (int i = 0; i < M * N; ++i) d[i] = NAN; /* every element must be written */

  og_context_options options;
  og_context_options_init(&options);
  options.backend = OG_BACKEND_CPU;
  options.tune_mode = OG_TUNE_OFF;
  og_context* ctx = NULL;
  og_status status = og_context_create(&options, &ctx);
  if (status != OG_OK) {
    fprintf(stderr, "c_client: og_context_create: %s: %s\n", og_status_name(status), og_last_error_message());
    return 1;
  }
  og_gemm_desc desc;
  og_gemm_desc_init(&desc);
  desc.a = og_matrix_make(M, K, OG_DTYPE_F32, OG_ROW_MAJOR);
  desc.a.mem = og_memory_host(a);
  desc.b = og_matrix_make(K, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  desc.b.mem = og_memory_host(b);
  desc.d = og_matrix_make(M, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  desc.d.mem = og_memory_host(d);
  desc.epilogue.alpha = 0.75f;
  desc.epilogue.bias_mode = OG_BIAS_PER_N;
  desc.epilogue.bias = og_memory_host(bias);
  desc.epilogue.activation = OG_ACT_GELU_TANH;
  status = og_gemm(ctx, &desc);
  if (status != OG_OK) {
    fprintf(stderr, "c_client: og_gemm: %s: %s\n", og_status_name(status), og_last_error_message());
    og_context_destroy(ctx);
    return 1;
  }
  double num = 0, den = 0, worst = 0;
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += (double)a[i * K + k] * b[k * N + j];
      const double x = 0.75 * acc + bias[j];
      const double ref = 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
      const double out = d[i * N + j];
      if (isnan(out)) ++bad;
      num += (out - ref) * (out - ref);
      den += ref * ref;
      if (fabs(out - ref) > worst) worst = fabs(out - ref);
    }
  const double rel = sqrt(num / den);
  printf("c_client: %dx%dx%d f32 GEMM, bias per N, GELU on %s: relative error %.3g, max abs error %.3g, "
         "%d unwritten; D[0][0] = %.6f\n",
         M, N, K, og_backend_name(og_context_backend(ctx)), rel, worst, bad, d[0]);

  /* A bad input must come back as a status with a message, not a crash. */
  desc.a.ld = K - 1;
  status = og_gemm(ctx, &desc);
  const int refused = status == OG_ERROR_INVALID_ARGUMENT && strstr(og_last_error_message(), "leading dimension");
  printf("c_client: ld too small -> %s: %s\n", og_status_name(status), og_last_error_message());
  og_context_destroy(ctx);
  return (bad == 0 && rel < 1e-5 && refused) ? 0 : 1;
}
