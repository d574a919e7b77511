// Test bench_reference_checks: the tools' float64 reference and their checks, without any switch.
// The reference must give hand-computed values (layouts, transposes, batches, every activation,
// bias per N / per M, beta with C); a result rounded from it must pass; one spoiled element, one
// NaN or one changed padding byte must each be caught, by compare() (conformance) and by
// check_output() (bench).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "bench_check.hpp"
#include "reference.hpp"

using namespace omnigemm;
using namespace omnigemm::bench;

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    ++failures;
    std::printf("FAILED: %s\n", what);
  }
}

bool near(double a, double b, double tol = 1e-12) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

// The epilogue's formulas at points worked out by hand.
void epilogue_values() {
  EpilogueSpec e;
  e.alpha = 2.0f;
  e.beta = 0.5f;
  EpilogueValue v = apply_epilogue(e, 3.0, -4.0, 1.0);  // 6 - 2 + 1
  expect(near(v.value, 5.0) && near(v.magnitude, 9.0), "alpha, beta, bias and their magnitude");
  e = {};
  e.act = Activation::relu;
  expect(apply_epilogue(e, -1.5, 0, 0).value == 0.0 && apply_epilogue(e, 1.5, 0, 0).value == 1.5, "relu");
  e.act = Activation::leaky_relu;
  e.slope = 0.25f;
  expect(near(apply_epilogue(e, -2.0, 0, 0).value, -0.5) && apply_epilogue(e, 2.0, 0, 0).value == 2.0, "leaky_relu");
  e.act = Activation::gelu_tanh;
  const double g = 0.5 * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * 1.044715));
  expect(near(apply_epilogue(e, 1.0, 0, 0).value, g), "gelu_tanh at 1");
  e.act = Activation::silu;
  expect(near(apply_epilogue(e, 1.0, 0, 0).value, 1.0 / (1.0 + std::exp(-1.0))), "silu at 1");
}

// A 2x3 * 3x2 product stored four ways (row/col-major, transposed views), batched with B broadcast.
void reference_by_hand() {
  const double a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const double b[3][2] = {{0.5, -1}, {0.25, 2}, {-0.75, 1}};
  const double d[2][2] = {{1 * 0.5 + 2 * 0.25 - 3 * 0.75, -1 + 4 + 3}, {4 * 0.5 + 5 * 0.25 - 6 * 0.75, -4 + 10 + 6}};
  for (int form = 0; form < 4; ++form) {
    const bool a_t = form & 1, b_col = form & 2;
    HostMatrix A(a_t ? 3 : 2, a_t ? 2 : 3, Dtype::f32, Layout::row_major, 1, 2, 3);
    A.transposed = a_t;
    HostMatrix B(3, 2, Dtype::f32, b_col ? Layout::col_major : Layout::row_major, 2);
    for (int bt = 0; bt < 2; ++bt)
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 3; ++k) {
          const float v = float(a[i][k] * (bt + 1));  // batch 1 is twice batch 0
          if (a_t) A.set(bt, k, i, v);
          else A.set(bt, i, k, v);
        }
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 2; ++j) B.set(0, k, j, float(b[k][j]));
    HostMatrix C(2, 2, Dtype::f32, Layout::row_major, 0, 2);
    for (int bt = 0; bt < 2; ++bt)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) C.set(bt, i, j, float(10 * i + j + 100 * bt));
    EpilogueSpec e;
    e.beta = 0.5f;
    e.bias_mode = BiasMode::per_m;
    const std::vector<float> bias = {1.0f, -2.0f};
    const Reference ref = reference_gemm(A, B, &C, &bias, e, 2);
    bool ok = ref.value.size() == 8;
    for (int bt = 0; bt < 2 && ok; ++bt)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          ok &= near(ref.value[size_t((bt * 2 + i) * 2 + j)], d[i][j] * (bt + 1) + 0.5 * (10 * i + j + 100 * bt) + bias[size_t(i)]);
    expect(ok, form == 0 ? "reference, A row-major, B row-major" : form == 1 ? "reference, A transposed"
               : form == 2 ? "reference, B column-major" : "reference, A transposed, B column-major");
  }
  // Bias per N, relu.
  HostMatrix A(1, 2, Dtype::f32), B(2, 2, Dtype::f32);
  A.set(0, 0, 0, 1), A.set(0, 0, 1, -1);
  B.set(0, 0, 0, 1), B.set(0, 0, 1, 2), B.set(0, 1, 0, 3), B.set(0, 1, 1, -4);  // A B = [-2, 6]
  EpilogueSpec e;
  e.act = Activation::relu;
  e.bias_mode = BiasMode::per_n;
  const std::vector<float> bias = {1.5f, -7.0f};
  const Reference ref = reference_gemm(A, B, nullptr, &bias, e, 1);
  expect(ref.value[0] == 0.0 && ref.value[1] == 0.0, "reference, bias per N then relu");
}

// compare() on random f16 data: the rounded reference passes; a spoiled element, a NaN and a
// changed padding element are each reported.
void compare_catches() {
  std::mt19937_64 g(12345);
  HostMatrix A(37, 53, Dtype::f16), B(53, 29, Dtype::f16);
  fill_uniform(A, g);
  fill_uniform(B, g);
  EpilogueSpec e;
  const Reference ref = reference_gemm(A, B, nullptr, nullptr, e, 1);
  HostMatrix Dm(37, 29, Dtype::f16, Layout::row_major, 3);
  fill_uniform(Dm, g);  // padding holds values that must stay
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t j = 0; j < 29; ++j) Dm.set(0, i, j, float(ref.value[size_t(i * 29 + j)]));
  const HostMatrix before = Dm;
  const double tol = tolerance(Dtype::f16, 53, Dtype::f16, Dtype::f16);
  ErrorReport r = compare(Dm, ref, &before);
  expect(r.rel_error <= tol && r.non_finite == 0 && r.padding_touched == 0, "a correctly rounded f16 result passes");
  HostMatrix bad = Dm;
  bad.set(0, 5, 7, float(ref.value[5 * 29 + 7] * 2.0 + 1.0));
  r = compare(bad, ref, &before);
  expect(r.rel_error > tol, "one spoiled element fails the tolerance");
  bad = Dm;
  bad.set(0, 36, 28, NAN);
  r = compare(bad, ref, &before);
  expect(r.non_finite == 1 && std::isinf(r.rel_error), "one NaN is counted and fails");
  bad = Dm;
  bad.bytes[size_t(bad.offset(0, 3, 29)) * 2] ^= 1;  // the first padding element of row 3
  r = compare(bad, ref, &before);
  expect(r.padding_touched == 1 && r.rel_error <= tol, "one changed padding element is counted");
}

// The bench's check: sampled and full, with and without epilogues (bias, C, activations), packed and with the
// random sweep's storage (layouts, padded leading dimensions, batches, a broadcast B).
void bench_check_catches() {
  Storage strided;
  strided.a_col_major = true;
  strided.a_pad = 3, strided.b_pad = 1, strided.d_pad = 5;
  strided.batch = 3;
  strided.a_gap = 2, strided.d_gap = 7;
  strided.b_broadcast = true;
  for (const Storage& st : {Storage{}, strided})
  for (const Shape s : {Shape{40, 30, 20}, Shape{300, 260, 256}}) {
    for (const char* epi_name : {"none", "leaky_relu", "beta_bias_gelu", "bias_silu"}) {
      HostProblem hp;
      hp.shape = s;
      hp.st = st;
      hp.dt = {OG_DTYPE_BF16, OG_DTYPE_BF16};
      EpilogueChoice epi;
      expect(parse_epilogue(epi_name, epi) && epi.name() == epi_name, "epilogue names parse and print back");
      hp.epi = epi;
      make_host_problem(hp, 7);
      expect(hp.alpha == (epi.plain() || s.k == 20 ? 1.0f : 0.25f), "alpha: 1 for the plain GEMM, else near 4 / sqrt(K)");
      const int64_t batch = st.batch;
      expect(hp.full_check == (s.m == 40), "full check exactly for small problems");
      expect(hp.check_at.size() == (hp.full_check ? size_t(s.m * s.n * batch) : 256u), "checked element count");
      // An output from an independent float64 product over the whole matrix, rounded to bf16.
      std::vector<uint8_t> out = poison_bytes(OG_DTYPE_BF16, size_t(hp.d_elements));
      auto at = [&](int64_t b, int64_t i, int64_t j) { return size_t(b * hp.d_batch_stride + i * hp.d_ld + j) * 2; };
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < s.n; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < s.k; ++k) acc += hp.a.get(b, i, k) * hp.b.get(st.b_broadcast ? 0 : b, k, j);
            double x = hp.alpha * acc + (epi.beta ? 0.5 * hp.c.get(b, i, j) : 0.0) + (epi.bias ? hp.bias[size_t(j)] : 0.0);
            if (epi.act == OG_ACT_LEAKY_RELU && x < 0) x *= hp.slope;
            if (epi.act == OG_ACT_GELU_TANH) x = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
            if (epi.act == OG_ACT_SILU) x = x / (1 + std::exp(-x));
            encode(Dtype::bf16, &out[at(b, i, j)], float(x));
          }
      expect(check_output(hp, out, OG_DTYPE_BF16).ok, "the bench check passes a correct bf16 result");
      std::vector<uint8_t> bad = out;
      const auto [cb, ci, cj] = hp.check_at[1];
      encode(Dtype::bf16, &bad[at(cb, ci, cj)], float(hp.ref[1] * 2.0 + 1.0) * 8.0f);
      expect(!check_output(hp, bad, OG_DTYPE_BF16).ok, "the bench check fails one spoiled element");
      bad = out;
      encode(Dtype::bf16, &bad[at(cb, ci, cj)], NAN);
      const Check c = check_output(hp, bad, OG_DTYPE_BF16);
      expect(!c.ok && c.non_finite == 1, "the bench check fails one NaN");
      expect(!check_output(hp, poison_bytes(OG_DTYPE_BF16, size_t(hp.d_elements)), OG_DTYPE_BF16).ok,
             "the bench check fails an unwritten (poisoned) output");
      if (batch > 1) {  // the last batch is checked too
        bool last = false;
        for (const auto& e : hp.check_at) last |= e.b == batch - 1;
        expect(last, "the last batch has checked elements");
      }
    }
  }
}

}  // namespace

int main() {
  epilogue_values();
  reference_by_hand();
  compare_catches();
  bench_check_catches();
  if (failures) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("reference and checks: all passed\n");
  return 0;
}
