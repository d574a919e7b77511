// Written from README.md and the public headers only: random shapes, transposes, leading
// dimensions, batches, alpha/beta, bias and every activation on the CPU backend, each checked
// against a float64 loop.
#include <omnigemm/omnigemm.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace omnigemm;

static double act(Activation a, double x, double slope) {
  switch (a) {
    case Activation::relu: return x > 0 ? x : 0;
    case Activation::leaky_relu: return x >= 0 ? x : slope * x;
    case Activation::gelu_tanh: return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1 + std::exp(-x));
    default: return x;
  }
}

int main() {
  auto ctx = Context::create({.backend = Backend::cpu});
  if (!ctx) { std::fprintf(stderr, "create: %s\n", ctx.status().message.c_str()); return 1; }
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> dim(1, 40), coin(0, 1);
  std::uniform_real_distribution<float> val(-1, 1);
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh,
                             Activation::silu};
  int failures = 0;
  for (int t = 0; t < 50; ++t) {
    const int M = dim(rng), N = dim(rng), K = dim(rng), batch = 1 + t % 3;
    const bool ta = coin(rng), tb = coin(rng);
    // A stored row-major as (ta ? K x M : M x K) with padded ld; B likewise.
    const int a_rows = ta ? K : M, a_cols = ta ? M : K, lda = a_cols + 3;
    const int b_rows = tb ? N : K, b_cols = tb ? K : N, ldb = b_cols + 1;
    const int ldd = N + 2;
    std::vector<float> a(size_t(batch * a_rows * lda)), b(size_t(batch * b_rows * ldb)), c(size_t(batch * M * ldd)),
        d(c.size(), NAN), bias(static_cast<size_t>(N));
    for (auto* v : {&a, &b, &c, &bias})
      for (float& x : *v) x = val(rng);
    Gemm g;
    g.a = Matrix::host(a.data(), a_rows, a_cols, Dtype::f32).ld(lda).transposed(ta).batch_stride(a_rows * lda);
    g.b = Matrix::host(b.data(), b_rows, b_cols, Dtype::f32).ld(ldb).transposed(tb).batch_stride(b_rows * ldb);
    g.c = Matrix::host(c.data(), M, N, Dtype::f32).ld(ldd).batch_stride(M * ldd);
    g.d = Matrix::host(d.data(), M, N, Dtype::f32).ld(ldd).batch_stride(M * ldd);
    g.batch_count = batch;
    g.epilogue.alpha = val(rng);
    g.epilogue.beta = val(rng);
    g.epilogue.activation = acts[t % 5];
    g.epilogue.leaky_slope = 0.2f;
    g.epilogue.bias_mode = BiasMode::per_n;
    g.epilogue.bias = Memory::host(bias.data());
    Status s = ctx->run_host(g);
    if (!s) { std::fprintf(stderr, "gemm: %s\n", s.message.c_str()); return 1; }
    double num = 0, den = 0;
    for (int q = 0; q < batch; ++q)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double acc = 0;
          for (int k = 0; k < K; ++k) {
            const double x = ta ? a[size_t(q * a_rows * lda + k * lda + i)] : a[size_t(q * a_rows * lda + i * lda + k)];
            const double y = tb ? b[size_t(q * b_rows * ldb + j * ldb + k)] : b[size_t(q * b_rows * ldb + k * ldb + j)];
            acc += x * y;
          }
          const size_t o = size_t(q * M * ldd + i * ldd + j);
          const double ref = act(g.epilogue.activation,
                                 g.epilogue.alpha * acc + g.epilogue.beta * c[o] + bias[size_t(j)], 0.2);
          num += (d[o] - ref) * (d[o] - ref);
          den += ref * ref;
        }
    const double err = std::sqrt(num / (den > 0 ? den : 1));
    if (!(err < 1e-5)) { std::fprintf(stderr, "case %d: error %g\n", t, err); ++failures; }
  }
  // A bad input gives a status, not a crash.
  Gemm bad;
  bad.a = Matrix::host(nullptr, -1, 4, Dtype::f32);
  Status s = ctx->run_host(bad);
  if (s.ok() || s.code != StatusCode::invalid_argument) { std::fprintf(stderr, "bad input accepted\n"); ++failures; }
  std::printf("client_cpp: 50 GEMMs checked, %d failed; bad input -> \"%s\"\n", failures, s.message.c_str());
  return failures ? 1 : 0;
}
