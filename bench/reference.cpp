#include "reference.hpp"

#include <algorithm>
#include <thread>

namespace omnigemm::bench {

HostMatrix::HostMatrix(int64_t r, int64_t c, Dtype d, Layout l, int64_t ld_pad, int64_t nb, int64_t batch_gap)
    : dtype(d), rows(r), cols(c), batches(nb), layout(l) {
  const int64_t inner = l == Layout::row_major ? c : r;
  const int64_t outer = l == Layout::row_major ? r : c;
  ld = std::max<int64_t>(inner, 1) + ld_pad;
  batch_stride = outer * ld + batch_gap;
  bytes.resize(size_t(std::max<int64_t>(batch_stride * nb, 1)) * size_t(dtype_size(d)));
}

Matrix HostMatrix::view(Memory mem) const {
  Matrix m(rows, cols, dtype, mem, layout);
  m.ld(ld).batch_stride(batches > 1 ? batch_stride : 0).transposed(transposed);
  return m;
}

void fill_uniform(HostMatrix& m, std::mt19937_64& g) {
  std::uniform_real_distribution<float> magnitude(0.05f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  const size_t es = size_t(dtype_size(m.dtype));
  for (size_t i = 0; i + es <= m.bytes.size(); i += es) {
    const float v = magnitude(g);
    encode(m.dtype, &m.bytes[i], negative(g) ? -v : v);
  }
}

void fill_fast(HostMatrix& m, uint64_t seed) {
  uint64_t state = seed;
  const size_t es = size_t(dtype_size(m.dtype));
  const size_t count = m.bytes.size() / es;
  if (m.dtype == Dtype::fp8_e4m3 || m.dtype == Dtype::fp8_e5m2) {
    std::vector<uint8_t> codes;  // the positive codes with values in [0.05, 1]
    for (int c = 0; c < 128; ++c) {
      const uint8_t code = uint8_t(c);
      const double v = decode(m.dtype, &code);
      if (std::isfinite(v) && v >= 0.05 && v <= 1.0) codes.push_back(code);
    }
    for (size_t i = 0; i < count; ++i) {
      const uint64_t r = splitmix64(state);
      m.bytes[i] = uint8_t(codes[(r >> 1) % codes.size()] | ((r & 1) ? 0x80 : 0));
    }
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = splitmix64(state);
    const float mag = 0.05f + 0.95f * float(double(r >> 11) * 0x1.0p-53);
    encode(m.dtype, &m.bytes[i * es], (r & 1) ? -mag : mag);
  }
}

EpilogueValue apply_epilogue(const EpilogueSpec& e, double acc, double c, double bias) {
  EpilogueValue r;
  double x = double(e.alpha) * acc;
  r.magnitude = std::fabs(x);
  const double c_term = double(e.beta) * c;
  x += c_term + bias;
  r.magnitude += std::fabs(c_term) + std::fabs(bias);
  switch (e.act) {
    case Activation::relu: r.value = x > 0 ? x : 0.0; break;
    case Activation::leaky_relu: r.value = x >= 0 ? x : double(e.slope) * x; break;
    case Activation::gelu_tanh: {
      const double k = std::sqrt(2.0 / M_PI);
      r.value = 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
      break;
    }
    case Activation::silu: r.value = x / (1.0 + std::exp(-x)); break;
    default: r.value = x; break;
  }
  return r;
}

Reference reference_gemm(const HostMatrix& a, const HostMatrix& b, const HostMatrix* c, const std::vector<float>* bias,
                         const EpilogueSpec& e, int64_t batches) {
  const int64_t M = a.transposed ? a.cols : a.rows;
  const int64_t K = a.transposed ? a.rows : a.cols;
  const int64_t N = b.transposed ? b.rows : b.cols;
  Reference ref;
  ref.value.resize(size_t(batches * M * N));
  ref.magnitude.resize(ref.value.size());
  // op(A) rows and op(B) columns decoded once per batch into dense K-long vectors; rows of D are
  // shared out to threads, and every dot product sums in k order, so the result does not depend
  // on the thread count.
  std::vector<double> a_rows(size_t(M * K)), b_cols(size_t(N * K));
  const bool use_c = c != nullptr && e.beta != 0.0f;
  for (int64_t bt = 0; bt < batches; ++bt) {
    const int64_t ab = a.batches > 1 ? bt : 0, bb = b.batches > 1 ? bt : 0;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) a_rows[size_t(i * K + k)] = a.op_get(ab, i, k);
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) b_cols[size_t(j * K + k)] = b.op_get(bb, k, j);
    auto rows = [&](int64_t first, int64_t step) {
      for (int64_t i = first; i < M; i += step) {
        const double* ar = &a_rows[size_t(i * K)];
        for (int64_t j = 0; j < N; ++j) {
          const double* bc = &b_cols[size_t(j * K)];
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += ar[k] * bc[k];
          const double cv = use_c ? c->get(c->batches > 1 ? bt : 0, i, j) : 0.0;
          double bv = 0;
          if (bias && e.bias_mode == BiasMode::per_n) bv = (*bias)[size_t(j)];
          if (bias && e.bias_mode == BiasMode::per_m) bv = (*bias)[size_t(i)];
          const EpilogueValue v = apply_epilogue(e, acc, cv, bv);
          const size_t o = size_t((bt * M + i) * N + j);
          ref.value[o] = v.value;
          ref.magnitude[o] = v.magnitude;
        }
      }
    };
    const int64_t threads = std::clamp<int64_t>(int64_t(std::thread::hardware_concurrency()), 1, std::max<int64_t>(M, 1));
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

ErrorReport compare(const HostMatrix& d, const Reference& ref, const HostMatrix* before) {
  ErrorReport r;
  double num = 0, den = 0, mag = 0;
  const int64_t M = d.rows, N = d.cols;
  for (int64_t b = 0; b < d.batches; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const size_t o = size_t((b * M + i) * N + j);
        const double out = d.get(b, i, j), x = ref.value[o];
        mag += ref.magnitude[o] * ref.magnitude[o];
        if (!std::isfinite(out)) {
          ++r.non_finite;
          continue;
        }
        num += (out - x) * (out - x);
        den += x * x;
      }
  den = std::max(den, mag);
  r.rel_error = r.non_finite ? INFINITY : std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
  if (before) {
    const size_t es = size_t(dtype_size(d.dtype));
    std::vector<bool> in_view(d.bytes.size() / es, false);
    for (int64_t b = 0; b < d.batches; ++b)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) in_view[size_t(d.offset(b, i, j))] = true;
    for (size_t e = 0; e < in_view.size(); ++e)
      if (!in_view[e] && std::memcmp(&d.bytes[e * es], &before->bytes[e * es], es) != 0) ++r.padding_touched;
  }
  return r;
}

// The reference decodes the inputs exactly, so two errors remain in a correct result:
//  - f32 accumulation of K products: worst case ~K * 2^-24 relative, a random walk of about
//    sqrt(K) * 2^-24 in practice; 4 * sqrt(K) * 2^-24 + 1e-6 bounds it with margin. Tensor-core
//    paths for 16-bit inputs accumulate in f32 as well.
//  - rounding of the output: half an ulp relative (f16 2^-11, bf16 2^-8); the norm of uniformly
//    spread rounding errors is about ulp / sqrt(3), so 1.5 half-ulps bounds it.
// When both inputs are fp8, Hopper's tensor cores add each 32-deep K step into the accumulator
// keeping only about 14 significant bits, so the accumulation term becomes
// 4 * sqrt(ceil(K / 32)) * 2^-14 for those ceil(K / 32) additions.
double tolerance(Dtype out, int64_t k, Dtype a, Dtype b) {
  // fp8 and the block-scaled formats run on fp8 tensor-core paths (QGMMA, or its block-scaled
  // forms with promotions per scale block): the same accumulation bound.
  auto is_fp8 = [](Dtype d) {
    return d == Dtype::fp8_e4m3 || d == Dtype::fp8_e5m2 || d == Dtype::mxfp8 || d == Dtype::mxfp8_e5m2 ||
           d == Dtype::mxfp4 || d == Dtype::nvfp4;
  };
  const bool fp8 = is_fp8(a) && is_fp8(b);
  const double depth = double(std::max<int64_t>(k, 1));
  const double steps = fp8 ? std::ceil(depth / 32.0) : depth;
  const double accumulate = 4.0 * std::sqrt(steps) * std::ldexp(1.0, fp8 ? -14 : -24) + 1e-6;
  const double rounding = out == Dtype::f16    ? 1.5 * std::ldexp(1.0, -11)
                          : out == Dtype::bf16 ? 1.5 * std::ldexp(1.0, -8)
                                               : 0.0;
  return accumulate + rounding;
}

}  // namespace omnigemm::bench
