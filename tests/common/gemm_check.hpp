// Test support shared by every backend's tests: host matrices of any dtype filled with fresh
// random values, a float64 reference GEMM with the full epilogue, NaN poisoning of outputs and
// the per-dtype tolerances (see tolerance() for their justification). The reference's epilogue
// is omnigemm/epilogue.h evaluated in float64 (its double overloads): the same formulas every
// backend evaluates in f32, checked against independent float64 formulas in test_epilogue.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "omnigemm/epilogue.h"
#include "omnigemm/numeric.hpp"
#include "omnigemm/omnigemm.hpp"

namespace omnigemm::test {

// One seed per process, fresh each run, printed so a failure can be replayed with
// OMNIGEMM_TEST_SEED=<seed>.
inline uint64_t test_seed() {
  static const uint64_t seed = [] {
    uint64_t s;
    if (const char* e = std::getenv("OMNIGEMM_TEST_SEED"); e && *e) s = std::strtoull(e, nullptr, 10);
    else s = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    std::printf("[omnigemm tests] seed %llu (set OMNIGEMM_TEST_SEED to replay)\n", (unsigned long long)s);
    return s;
  }();
  return seed;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(test_seed());
  return g;
}

inline int dtype_size(Dtype d) { return d == Dtype::f32 ? 4 : (d == Dtype::f16 || d == Dtype::bf16) ? 2 : 1; }

inline double decode(Dtype d, const uint8_t* p) {
  using namespace numeric;
  uint16_t h;
  switch (d) {
    case Dtype::f32: { float f; std::memcpy(&f, p, 4); return f; }
    case Dtype::f16: std::memcpy(&h, p, 2); return f16_to_f32(h);
    case Dtype::bf16: std::memcpy(&h, p, 2); return bf16_to_f32(h);
    case Dtype::fp8_e4m3: return e4m3_to_f32(*p);
    case Dtype::fp8_e5m2: return e5m2_to_f32(*p);
    default: return NAN;
  }
}

inline void encode(Dtype d, uint8_t* p, float v) {
  using namespace numeric;
  uint16_t h;
  switch (d) {
    case Dtype::f32: std::memcpy(p, &v, 4); break;
    case Dtype::f16: h = f32_to_f16(v); std::memcpy(p, &h, 2); break;
    case Dtype::bf16: h = f32_to_bf16(v); std::memcpy(p, &h, 2); break;
    case Dtype::fp8_e4m3: *p = f32_to_e4m3(v); break;
    case Dtype::fp8_e5m2: *p = f32_to_e5m2(v); break;
    default: break;
  }
}

// A host matrix view plus its storage (rows x cols elements with leading dimension ld, in
// `batches` copies batch_stride apart). Storage beyond the view (ld padding, gaps between
// batches) exists and is checked to stay untouched for outputs.
struct HostMatrix {
  Dtype dtype = Dtype::f32;
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0, batches = 1;
  Layout layout = Layout::row_major;
  bool transposed = false;
  std::vector<uint8_t> bytes;

  HostMatrix() = default;
  HostMatrix(int64_t r, int64_t c, Dtype d, Layout l = Layout::row_major, int64_t ld_pad = 0, int64_t nb = 1,
             int64_t batch_gap = 0)
      : dtype(d), rows(r), cols(c), batches(nb), layout(l) {
    const int64_t inner = l == Layout::row_major ? c : r, outer = l == Layout::row_major ? r : c;
    ld = std::max<int64_t>(inner, 1) + ld_pad;
    batch_stride = outer * ld + batch_gap;
    bytes.resize(size_t(std::max<int64_t>(batch_stride * nb, 1)) * dtype_size(d));
  }
  int64_t offset(int64_t b, int64_t r, int64_t c) const {
    return b * batch_stride + (layout == Layout::row_major ? r * ld + c : r + c * ld);
  }
  double get(int64_t b, int64_t r, int64_t c) const { return decode(dtype, &bytes[offset(b, r, c) * dtype_size(dtype)]); }
  void set(int64_t b, int64_t r, int64_t c, float v) { encode(dtype, &bytes[offset(b, r, c) * dtype_size(dtype)], v); }
  // Every stored element (including padding) gets a fresh random value in [-1, 1], never 0.
  void randomize(float scale = 1.0f) {
    std::uniform_real_distribution<float> u(0.05f, 1.0f);
    std::bernoulli_distribution sign(0.5);
    const int es = dtype_size(dtype);
    for (size_t i = 0; i + es <= bytes.size(); i += es) {
      float v = u(rng()) * scale;
      encode(dtype, &bytes[i], sign(rng()) ? -v : v);
    }
  }
  // NaN in every stored element (outputs are poisoned before every run).
  void poison() {
    const int es = dtype_size(dtype);
    for (size_t i = 0; i + es <= bytes.size(); i += es) encode(dtype, &bytes[i], NAN);
  }
  Matrix view(Memory mem) const {
    Matrix m(rows, cols, dtype, mem, layout);
    m.ld(ld).batch_stride(batches > 1 ? batch_stride : 0).transposed(transposed);
    return m;
  }
  Matrix host_view() const { return view(Memory::host(bytes.data())); }
  // Logical element (i, j) of op(X).
  double op_get(int64_t b, int64_t i, int64_t j) const { return transposed ? get(b, j, i) : get(b, i, j); }
};

struct EpilogueSpec {
  float alpha = 1.0f, beta = 0.0f;
  Activation act = Activation::none;
  float slope = 0.01f;
  BiasMode bias_mode = BiasMode::none;
};

// g's epilogue as `e` says, the bias vector at `bias` in `bias_dtype` (read where e.bias_mode asks).
inline void set_epilogue(Gemm& g, const EpilogueSpec& e, Memory bias, Dtype bias_dtype = Dtype::f32) {
  g.epilogue.alpha = e.alpha;
  g.epilogue.beta = e.beta;
  g.epilogue.activation = e.act;
  g.epilogue.leaky_slope = e.slope;
  g.epilogue.bias_mode = e.bias_mode;
  g.epilogue.bias_dtype = bias_dtype;
  g.epilogue.bias = bias;
}

// Activation `a` in float64 (omnigemm/epilogue.h's formulas).
inline double activate_ref(Activation a, double x, double slope) { return og_activate(int(a), x, slope); }

// float64 reference of D for every batch, as a dense [batch][M][N] array, plus the magnitude of
// the epilogue's terms per element, |alpha * acc| + |beta * c| + |bias|: the epilogue and the
// activation run in f32, so their rounding is relative to those terms, not to the (possibly
// cancelled, or activated towards 0) result.
struct Reference : std::vector<double> {
  std::vector<double> magnitude;
};

inline Reference reference_gemm(const HostMatrix& A, const HostMatrix& B, const HostMatrix* C,
                                const std::vector<float>* bias, const EpilogueSpec& e, int64_t batches) {
  const int64_t M = A.transposed ? A.cols : A.rows, K = A.transposed ? A.rows : A.cols;
  const int64_t N = B.transposed ? B.rows : B.cols;
  Reference ref;
  ref.resize(size_t(batches * M * N));
  ref.magnitude.resize(ref.size());
  // op(A) and op(B)^T decoded once per batch into dense rows of K, then rows of D in parallel
  // (the GPU tests' multi-tile cases are ~10^9 multiply-adds); every dot product still sums in
  // k order, so the reference does not depend on the thread count.
  std::vector<double> a_op(size_t(M * K)), bt_op(size_t(N * K));
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(M, std::thread::hardware_concurrency()));
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t ab = A.batches > 1 ? b : 0, bb = B.batches > 1 ? b : 0;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) a_op[size_t(i * K + k)] = A.op_get(ab, i, k);
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) bt_op[size_t(j * K + k)] = B.op_get(bb, k, j);
    auto rows = [&](int64_t first, int64_t step) {
      for (int64_t i = first; i < M; i += step)
        for (int64_t j = 0; j < N; ++j) {
          const double* a_row = a_op.data() + i * K;  // (K = 0: empty vectors, no element to bind)
          const double* b_col = bt_op.data() + j * K;
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += a_row[k] * b_col[k];
          const bool has_c = C && e.beta != 0.0f, has_bias = bias && e.bias_mode != BiasMode::none;
          const double c = has_c ? C->get(C->batches > 1 ? b : 0, i, j) : 0.0;
          const double bias_term = has_bias ? double((*bias)[size_t(e.bias_mode == BiasMode::per_n ? j : i)]) : 0.0;
          const double v = og_epilogue_sum(double(e.alpha), acc, has_c, double(e.beta), c, has_bias, bias_term);
          const size_t o = size_t((b * M + i) * N + j);
          ref[o] = og_activate(int(e.act), v, double(e.slope));
          ref.magnitude[o] = std::fabs(double(e.alpha) * acc) + std::fabs(double(e.beta) * c) + std::fabs(bias_term);
        }
    };
    if (threads == 1 || M * N * K < (int64_t(1) << 22)) {
      rows(0, 1);
    } else {
      std::vector<std::thread> pool;
      for (int64_t t = 0; t < threads; ++t) pool.emplace_back(rows, t, threads);
      for (auto& t : pool) t.join();
    }
  }
  return ref;
}

// Relative Frobenius error ||out - ref|| / ||ref||; any NaN/inf in out gives +inf. Also counts
// elements that are not finite, to report unwritten (still poisoned) outputs by name. With a
// Reference, the denominator is max(||ref||, ||magnitude||) (see Reference), so that a result
// cancelled to near zero is judged against the size of the terms that produced it.
struct ErrorReport {
  double rel_error = 0;
  int64_t non_finite = 0;
  int64_t padding_touched = 0;  // stored elements outside the view that changed
};

inline ErrorReport compare(const HostMatrix& D, const std::vector<double>& ref, const HostMatrix* d_before = nullptr,
                           const std::vector<double>* magnitude = nullptr) {
  ErrorReport r;
  double num = 0, den = 0, mag = 0;
  const int64_t M = D.rows, N = D.cols;
  for (int64_t b = 0; b < D.batches; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const size_t o = size_t((b * M + i) * N + j);
        const double out = D.get(b, i, j), x = ref[o];
        if (magnitude) mag += (*magnitude)[o] * (*magnitude)[o];
        if (!std::isfinite(out)) { ++r.non_finite; continue; }
        num += (out - x) * (out - x);
        den += x * x;
      }
  den = std::max(den, mag);
  r.rel_error = r.non_finite ? INFINITY : std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
  if (d_before) {  // padding must keep its bytes exactly
    const int es = dtype_size(D.dtype);
    std::vector<uint8_t> inside(D.bytes.size() / es, 0);
    for (int64_t b = 0; b < D.batches; ++b)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) inside[size_t(D.offset(b, i, j))] = 1;
    for (size_t e = 0; e < inside.size(); ++e)
      if (!inside[e] && std::memcmp(&D.bytes[e * es], &d_before->bytes[e * es], size_t(es)) != 0) ++r.padding_touched;
  }
  return r;
}

inline ErrorReport compare(const HostMatrix& D, const Reference& ref, const HostMatrix* d_before = nullptr) {
  return compare(D, static_cast<const std::vector<double>&>(ref), d_before, &ref.magnitude);
}

// Tolerance on ||out - ref|| / ||ref||, by output dtype and K. Inputs are decoded exactly in
// the reference, so only two errors remain:
//  - fp32 accumulation: a K-term dot product in f32 has relative error up to ~K * 2^-24 in the
//    worst case, ~sqrt(K) * 2^-24 typically; we allow 4 * sqrt(K) * 2^-24 + 1e-6.
//  - output rounding: half an ulp relative, f16 2^-11 (4.9e-4), bf16 2^-8 (3.9e-3); the norm of
//    uniformly distributed rounding errors is about ulp/sqrt(3), so 1.5x half an ulp bounds it.
// 16-bit tensor-core paths accumulate in f32 too (HGMMA/coopmat with f32 accumulators), so the
// same bounds hold there. fp8 x fp8 on Hopper's tensor cores (QGMMA) is the exception: each
// 32-deep K step is added to the accumulator with only about 14 significant bits kept (measured
// by DeepSeek-V3's report, sec. 3.3.2, and here: 5e-5 to 8e-5 at K = 257), so when both inputs
// are fp8 we allow 4 * sqrt(ceil(K / 32)) * 2^-14 for those ceil(K / 32) additions instead.
inline double tolerance(Dtype out, int64_t K, Dtype a = Dtype::f32, Dtype b = Dtype::f32) {
  const bool fp8 = (a == Dtype::fp8_e4m3 || a == Dtype::fp8_e5m2) && (b == Dtype::fp8_e4m3 || b == Dtype::fp8_e5m2);
  const double steps = fp8 ? std::ceil(double(std::max<int64_t>(K, 1)) / 32.0) : double(std::max<int64_t>(K, 1));
  const double accumulate = 4.0 * std::sqrt(steps) * std::ldexp(1.0, fp8 ? -14 : -24) + 1e-6;
  const double rounding = out == Dtype::f16 ? 1.5 * std::ldexp(1.0, -11) : out == Dtype::bf16 ? 1.5 * std::ldexp(1.0, -8) : 0.0;
  return accumulate + rounding;
}

// An 8x8x8 GEMM of `in` inputs into f32 D with `config` forced, for what its status says (whether
// and why the backend takes the config); the output is not checked.
inline Status run_probe(Context& ctx, Dtype in, const std::string& config) {
  HostMatrix A(8, 8, in), B(8, 8, in), D(8, 8, Dtype::f32);
  A.randomize();
  B.randomize();
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  g.config = config;
  return ctx.run_host(g);
}

// A GEMM over host matrices: A x B with C (read where the epilogue's beta is not 0) into D,
// `batch` of them, `config` forced (empty: the engine's choice).
inline Gemm host_gemm(const HostMatrix& A, const HostMatrix& B, const HostMatrix& C, const HostMatrix& D, int64_t batch,
                      const std::string& config) {
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.c = C.host_view();
  g.d = D.host_view();
  g.batch_count = batch;
  g.config = config;
  return g;
}

// The C API's descriptor of a row-major f32 GEMM over host arrays (A m x k, B k x n, C and D
// m x n), everything else at og_gemm_desc_init's defaults (C unused while beta is 0).
inline og_gemm_desc host_f32_desc(int64_t m, int64_t n, int64_t k, float* a, float* b, float* c, float* d) {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(m, k, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.a.mem = og_memory_host(a);
  g.b = og_matrix_make(k, n, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.b.mem = og_memory_host(b);
  g.c = og_matrix_make(m, n, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.c.mem = og_memory_host(c);
  g.d = og_matrix_make(m, n, OG_DTYPE_F32, OG_ROW_MAJOR);
  g.d.mem = og_memory_host(d);
  return g;
}

}  // namespace omnigemm::test
