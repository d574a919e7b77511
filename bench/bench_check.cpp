#include "bench_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "bench_measure.hpp"
#include "bench_util.hpp"

namespace omnigemm::bench {

std::pair<std::vector<uint8_t>, std::vector<uint8_t>>& HostProblem::converted(og_dtype d) {
  auto it = converted_.find(d);
  if (it != converted_.end()) return it->second;
  auto convert = [&](const HostMatrix& m) {
    if (D(d) == m.dtype) return m.bytes;
    const size_t si = size_t(dtype_size(m.dtype)), so = size_t(dtype_size(d));
    const size_t n = m.bytes.size() / si;
    std::vector<uint8_t> out(n * so);
    for (size_t i = 0; i < n; ++i) encode(D(d), &out[i * so], float(decode(m.dtype, &m.bytes[i * si])));
    return out;
  };
  return converted_[d] = {convert(a), convert(b)};
}

Status make_host_problem(HostProblem& hp, uint64_t seed) {
  const Shape& s = hp.shape;
  const Storage& st = hp.st;
  const int64_t batch = st.batch;
  if (!hp.dt.format.empty()) {  // one matrix each, A M x K row-major, B held N x K
    hp.format = find_format(hp.dt.format);
    if (!hp.format) return invalid("unknown format " + hp.dt.format);
    if (batch != 1 || st.a_col_major || !st.b_col_major)
      return invalid("block-scaled formats run one M x K row-major A and one B held N x K");
    Status status = make_block_operand(*hp.format, OG_OPERAND_A, s.m, s.k, seed * 2 + 1, hp.qa, hp.a);
    if (status) status = make_block_operand(*hp.format, OG_OPERAND_B, s.n, s.k, seed * 2 + 2, hp.qb, hp.b);
    if (!status) return status;
  } else {
    hp.a = HostMatrix(s.m, s.k, D(hp.dt.in), st.a_col_major ? Layout::col_major : Layout::row_major, st.a_pad, batch,
                      st.a_gap);
    hp.b = HostMatrix(s.k, s.n, D(hp.dt.in), st.b_col_major ? Layout::col_major : Layout::row_major, st.b_pad,
                      st.b_broadcast ? 1 : batch, st.b_gap);
    fill_fast(hp.a, seed * 2 + 1);
    fill_fast(hp.b, seed * 2 + 2);
  }
  hp.d_ld = std::max<int64_t>(s.n, 1) + st.d_pad;
  hp.d_batch_stride = s.m * hp.d_ld + st.d_gap;
  hp.d_elements = std::max<int64_t>(hp.d_batch_stride * batch, 1);
  hp.full_check = double(s.m) * double(s.n) * double(s.k) * double(batch) <= double(1 << 24);
  hp.check_at.clear();
  if (hp.full_check) {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) hp.check_at.push_back({b, i, j});
  } else {
    std::mt19937_64 g(seed ^ 0x5eed);
    // The corners of the first and the last batch, each once (a one-row D has two).
    for (int64_t b : {int64_t(0), batch - 1})
      for (auto [i, j] : {std::pair<int64_t, int64_t>{0, 0}, {s.m - 1, s.n - 1}, {0, s.n - 1}, {s.m - 1, 0}}) {
        const bool seen = std::any_of(hp.check_at.begin(), hp.check_at.end(),
                                      [&](const HostProblem::At& e) { return e.b == b && e.i == i && e.j == j; });
        if (!seen) hp.check_at.push_back({b, i, j});
      }
    while (hp.check_at.size() < 256)
      hp.check_at.push_back({int64_t(g() % uint64_t(batch)), int64_t(g() % uint64_t(s.m)), int64_t(g() % uint64_t(s.n))});
  }
  hp.acc.assign(hp.check_at.size(), 0);
  hp.ref_abs.assign(hp.check_at.size(), 0);
  std::vector<double> row(size_t(s.k));
  int64_t cached_b = -1, cached_i = -1;
  for (size_t e = 0; e < hp.check_at.size(); ++e) {
    const auto [b, i, j] = hp.check_at[e];
    const int64_t ab = hp.a.batches > 1 ? b : 0, bb = hp.b.batches > 1 ? b : 0;
    if (b != cached_b || i != cached_i) {
      for (int64_t k = 0; k < s.k; ++k) row[size_t(k)] = hp.a.get(ab, i, k);
      cached_b = b, cached_i = i;
    }
    double acc = 0, magnitude = 0;
    for (int64_t k = 0; k < s.k; ++k) {
      const double p = row[size_t(k)] * hp.b.get(bb, k, j);
      acc += p;
      magnitude += std::fabs(p);
    }
    hp.acc[e] = acc;
    hp.ref_abs[e] = magnitude;
  }
  set_epilogue(hp, hp.epi, seed);
  return {};
}

void set_epilogue(HostProblem& hp, const EpilogueChoice& e, uint64_t seed) {
  const Shape& s = hp.shape;
  hp.epi = e;
  hp.alpha = e.plain() ? 1.0f : std::ldexp(1.0f, int(std::lround(std::log2(4.0 / std::sqrt(double(std::max<int64_t>(s.k, 1)))))));
  if (e.beta && hp.c.bytes.empty()) {
    hp.c = HostMatrix(s.m, s.n, D(hp.dt.out), Layout::row_major, hp.st.d_pad, hp.st.batch, hp.st.d_gap);
    fill_fast(hp.c, seed * 2 + 3);
  }
  if (e.bias && hp.bias.empty()) {
    HostMatrix v(1, s.n, Dtype::bf16);
    fill_fast(v, seed * 2 + 4);
    for (int64_t j = 0; j < s.n; ++j) hp.bias.push_back(float(v.get(0, 0, j)));
  }
  EpilogueSpec spec;
  spec.alpha = hp.alpha;
  spec.beta = e.beta ? hp.beta : 0.0f;
  spec.act = Activation(e.act);
  spec.slope = hp.slope;
  spec.bias_mode = e.bias ? BiasMode::per_n : BiasMode::none;
  hp.ref.assign(hp.check_at.size(), 0);
  for (size_t i = 0; i < hp.check_at.size(); ++i) {
    const auto [b, r, j] = hp.check_at[i];
    const double c = e.beta ? hp.c.get(b, r, j) : 0.0, bias = e.bias ? double(hp.bias[size_t(j)]) : 0.0;
    hp.ref[i] = apply_epilogue(spec, hp.acc[i], c, bias).value;
  }
}

std::string Check::text() const {
  if (ok && strict_outside)
    return "ok (" + std::to_string(strict_outside) + " of " + std::to_string(checked) + " outside atol = rtol = 1e-3 alone)";
  if (ok) return "ok";
  if (non_finite) return "FAIL (" + std::to_string(non_finite) + " not finite)";
  if (not_close) return "FAIL (" + std::to_string(not_close) + " outside atol = rtol = 1e-3 + 2^-14 sum|ab|)";
  return "FAIL (err " + fmt("%.2e", rel_error) + " > " + fmt("%.1e", tol) + ")";
}

Check check_output(const HostProblem& hp, const std::vector<uint8_t>& d_bytes, og_dtype d) {
  Check c;
  const size_t es = size_t(dtype_size(d));
  double num = 0, den = 0;
  for (size_t e = 0; e < hp.check_at.size(); ++e) {
    const auto [b, i, j] = hp.check_at[e];
    const double o = decode(D(d), &d_bytes[size_t(b * hp.d_batch_stride + i * hp.d_ld + j) * es]);
    if (!std::isfinite(o)) {
      ++c.non_finite;
      continue;
    }
    num += (o - hp.ref[e]) * (o - hp.ref[e]);
    den += hp.ref[e] * hp.ref[e];
    const double strict = 1e-3 + 1e-3 * std::fabs(hp.ref[e]), error = std::fabs(o - hp.ref[e]);
    if (hp.format && d != OG_DTYPE_BF16) {
      ++c.checked;
      c.strict_outside += error > strict;
      c.not_close += error > strict + std::ldexp(hp.ref_abs[e], -14);
    }
  }
  c.rel_error = c.non_finite ? INFINITY : std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
  c.tol = tolerance(D(d), hp.shape.k, D(hp.dt.in), D(hp.dt.in));
  // TF32 products: each input within 2^-10 relative of its f32 value (rounded or truncated), each
  // product within 2^-9; random signs keep the sum's error within 2^-9 of its norm.
  if (hp.dt.tf32) c.tol += std::ldexp(1.0, -9);
  c.ok = c.non_finite == 0 && c.rel_error <= c.tol && c.not_close == 0;
  return c;
}

std::vector<uint8_t> poison_bytes(og_dtype d, size_t elements) {
  const size_t es = size_t(dtype_size(d));
  std::vector<uint8_t> v(elements * es);
  for (size_t i = 0; i < elements; ++i) encode(D(d), &v[i * es], NAN);
  return v;
}

#ifdef OMNIGEMM_DEVELOPER
void corrupt_for_self_test(const HostProblem& hp, std::vector<uint8_t>& out, og_dtype d) {
  const char* e = std::getenv("OMNIGEMM_BENCH_CORRUPT");
  if (!e || *e != '1') return;
  const auto [b, i, j] = hp.check_at[0];
  encode(D(d), &out[size_t(b * hp.d_batch_stride + i * hp.d_ld + j) * size_t(dtype_size(d))], float(hp.ref[0] * 2.0 + 1.0));
}
#endif

}  // namespace omnigemm::bench
