/* C11 consumer of the installed package: one batched GEMM with bias and GELU, checked against a
 * double loop, and one bad input. */
#include <math.h>
#include <omnigemm/omnigemm.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { M = 13, N = 9, K = 21, BATCH = 2 };
  static float a[BATCH][M][K], b[BATCH][K][N], bias[N], d[BATCH][M][N];
  srand(12345u ^ (unsigned)(size_t)&a);
  for (int q = 0; q < BATCH; ++q)
    for (int i = 0; i < M * K; ++i) (&a[q][0][0])[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int q = 0; q < BATCH; ++q)
    for (int i = 0; i < K * N; ++i) (&b[q][0][0])[i] = (float)rand() / RAND_MAX - 0.5f;
  for (int j = 0; j < N; ++j) bias[j] = (float)rand() / RAND_MAX;
  for (int i = 0; i < BATCH * M * N; ++i) (&d[0][0][0])[i] = NAN;

  og_context_options opt;
  og_context_options_init(&opt);
  opt.backend = OG_BACKEND_CPU;
  og_context* ctx = NULL;
  if (og_context_create(&opt, &ctx) != OG_OK) {
    fprintf(stderr, "create: %s\n", og_last_error_message());
    return 1;
  }
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(M, K, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a);
  g.a.batch_stride = M * K;
  g.b = og_matrix_make(K, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.b.batch_stride = K * N;
  g.d = og_matrix_make(M, N, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  g.d.batch_stride = M * N;
  g.batch_count = BATCH;
  g.epilogue.alpha = 1.5f;
  g.epilogue.activation = OG_ACT_GELU_TANH;
  g.epilogue.bias_mode = OG_BIAS_PER_N;
  g.epilogue.bias = og_memory_host(bias);
  if (og_gemm_host(ctx, &g) != OG_OK) {
    fprintf(stderr, "gemm: %s\n", og_last_error_message());
    return 1;
  }
  double num = 0, den = 0;
  for (int q = 0; q < BATCH; ++q)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        for (int k = 0; k < K; ++k) acc += (double)a[q][i][k] * b[q][k][j];
        double x = 1.5 * acc + bias[j];
        double ref = 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
        num += (d[q][i][j] - ref) * (d[q][i][j] - ref);
        den += ref * ref;
      }
  const double err = sqrt(num / den);
  g.d.ld = 2; /* smaller than N: must be refused with a message */
  og_status bad = og_gemm_host(ctx, &g);
  printf("client_c: relative error %.3g; bad ld -> %s: %s\n", err, og_status_name(bad), og_last_error_message());
  og_context_destroy(ctx);
  return (err < 1e-5 && bad == OG_ERROR_INVALID_ARGUMENT) ? 0 : 1;
}
