#include "bench_random.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace omnigemm::bench {

namespace {

int element_bytes(og_dtype d) { return d == OG_DTYPE_F32 ? 4 : d == OG_DTYPE_F16 || d == OG_DTYPE_BF16 ? 2 : 1; }

// An integer log-uniform in [lo, hi].
int64_t log_uniform(std::mt19937_64& g, int64_t lo, int64_t hi) {
  std::uniform_real_distribution<double> u(std::log(double(lo)), std::log(double(hi) + 1.0));
  return std::clamp<int64_t>(int64_t(std::exp(u(g))), lo, hi);
}

bool coin(std::mt19937_64& g, double p) { return std::uniform_real_distribution<double>(0, 1)(g) < p; }

// A pad for a leading dimension of `inner` elements: aligned (the row a multiple of 16 bytes,
// sometimes one 16-byte unit more) or not (a row that is not a multiple of 16 bytes).
int64_t draw_pad(std::mt19937_64& g, int64_t inner, int eb, bool aligned) {
  const int64_t per16 = 16 / eb;
  inner = std::max<int64_t>(inner, 1);
  if (aligned) return (per16 - inner % per16) % per16 + (coin(g, 0.3) ? per16 : 0);
  if (per16 == 1) return 0;  // no element count is unaligned for 16-byte elements (none here)
  int64_t pad = std::uniform_int_distribution<int64_t>(0, per16 - 1)(g);
  if ((inner + pad) % per16 == 0) pad += 1 + std::uniform_int_distribution<int64_t>(0, per16 - 2)(g);
  return pad;
}

int64_t draw_gap(std::mt19937_64& g, int eb, bool aligned) {
  const int64_t per16 = 16 / eb;
  if (aligned) return coin(g, 0.5) ? 0 : per16;
  return per16 == 1 ? 0 : std::uniform_int_distribution<int64_t>(1, per16 - 1)(g);
}

double elements(const Shape& s) {
  const Storage& st = s.storage;
  const double b = double(st.batch);
  return (double(s.m) * s.k + double(s.m) * s.n) * b + double(s.k) * s.n * (st.b_broadcast ? 1.0 : b);
}

}  // namespace

std::vector<Shape> random_shapes(const Options& o) {
  std::mt19937_64 g(o.seed ^ 0x72616e646f6dull);  // "random": the shapes' stream, apart from the inputs'
  const int64_t top = o.random_max_dim;
  std::vector<Shape> out;
  for (int i = 0; i < o.random_count; ++i) {
    Shape s;
    s.drawn = true;
    s.draw = int64_t(out.size());
    s.dtype = int(std::uniform_int_distribution<size_t>(0, o.dtypes.size() - 1)(g));
    const DtypeSpec& dt = o.dtypes[size_t(s.dtype)];
    const double kind = std::uniform_real_distribution<double>(0, 1)(g);
    if (kind < 0.25) {  // skinny: M or N small, the others large
      const int64_t small = log_uniform(g, 1, std::min<int64_t>(64, top)), lo = std::min<int64_t>(256, top);
      s.m = coin(g, 0.5) ? small : log_uniform(g, lo, top);
      s.n = s.m == small ? log_uniform(g, lo, top) : small;
      s.k = log_uniform(g, lo, top);
    } else if (kind < 0.25 + 1.0 / 6) {  // small
      const int64_t hi = std::min<int64_t>(256, top);
      s.m = log_uniform(g, 1, hi), s.n = log_uniform(g, 1, hi), s.k = log_uniform(g, 1, hi);
    } else {
      s.m = log_uniform(g, 1, top), s.n = log_uniform(g, 1, top), s.k = log_uniform(g, 1, top);
    }
    Storage& st = s.storage;
    const bool fp8 = dt.in == OG_DTYPE_FP8_E4M3 || dt.in == OG_DTYPE_FP8_E5M2;
    const int ei = element_bytes(dt.in), eo = element_bytes(dt.out);
    const bool aligned = fp8 || coin(g, 0.5);
    st.a_col_major = !fp8 && coin(g, 0.5);
    st.b_col_major = fp8 || coin(g, 0.5);
    // Unaligned problems: A or B or both not 16-byte aligned (at least one), D on a coin.
    const int which = aligned ? 0 : 1 + int(std::uniform_int_distribution<int>(0, 2)(g));  // 1 A, 2 B, 3 both
    st.a_pad = draw_pad(g, st.a_col_major ? s.m : s.k, ei, !(which & 1));
    st.b_pad = draw_pad(g, st.b_col_major ? s.k : s.n, ei, !(which & 2));
    st.d_pad = draw_pad(g, s.n, eo, aligned || coin(g, 0.5));
    if (!fp8 && coin(g, 0.2)) {
      st.batch = log_uniform(g, 2, 16);
      st.b_broadcast = coin(g, 0.25);
      st.a_gap = draw_gap(g, ei, !(which & 1));
      st.b_gap = draw_gap(g, ei, !(which & 2));
      st.d_gap = draw_gap(g, eo, aligned);
    }
    // The bounds: batches first, then the largest dimension.
    while (2.0 * double(s.m) * s.n * s.k * st.batch > o.random_max_flops || elements(s) > kRandomMaxElements) {
      if (st.batch > 1) {
        st.batch = (st.batch + 1) / 2;
        continue;
      }
      int64_t* largest = &s.m;
      if (s.n > *largest) largest = &s.n;
      if (s.k > *largest) largest = &s.k;
      if (*largest == 1) break;
      *largest = (*largest + 1) / 2;
      // Halving can make an aligned leading dimension unaligned: draw the pads again.
      st.a_pad = draw_pad(g, st.a_col_major ? s.m : s.k, ei, !(which & 1));
      st.b_pad = draw_pad(g, st.b_col_major ? s.k : s.n, ei, !(which & 2));
      st.d_pad = draw_pad(g, s.n, eo, aligned);
    }
    if (fp8) {  // cuBLASLt's fp8 GEMM has no algorithm for K or N off a multiple of 16
      s.k = (s.k + 15) / 16 * 16;
      s.n = (s.n + 15) / 16 * 16;
      st.a_pad = draw_pad(g, s.k, ei, true);
      st.b_pad = draw_pad(g, s.k, ei, true);
      st.d_pad = draw_pad(g, s.n, eo, true);
    }
    if (st.batch == 1) st.a_gap = st.b_gap = st.d_gap = 0, st.b_broadcast = false;
    out.push_back(s);
  }
  return out;
}

bool storage_aligned(const Shape& s, og_dtype in, og_dtype out) {
  const Storage& st = s.storage;
  const int ei = element_bytes(in), eo = element_bytes(out);
  const int64_t lda = (st.a_col_major ? s.m : s.k) + st.a_pad, ldb = (st.b_col_major ? s.k : s.n) + st.b_pad,
                ldd = s.n + st.d_pad;
  auto ok = [](int64_t elements, int eb) { return elements * eb % 16 == 0; };
  bool r = ok(std::max<int64_t>(lda, 1), ei) && ok(std::max<int64_t>(ldb, 1), ei) && ok(std::max<int64_t>(ldd, 1), eo);
  if (st.batch > 1)
    r = r && ok(st.a_gap, ei) && ok(st.b_gap, ei) && ok(st.d_gap, eo);
  return r;
}

std::string storage_text(const Shape& s) {
  const Storage& st = s.storage;
  const int64_t lda = std::max<int64_t>(st.a_col_major ? s.m : s.k, 1) + st.a_pad,
                ldb = std::max<int64_t>(st.b_col_major ? s.k : s.n, 1) + st.b_pad, ldd = std::max<int64_t>(s.n, 1) + st.d_pad;
  std::string t = std::string("A ") + (st.a_col_major ? "c" : "r") + " ld " + std::to_string(lda) + ", B " +
                  (st.b_col_major ? "c" : "r") + " ld " + std::to_string(ldb) + ", D ld " + std::to_string(ldd);
  if (st.batch > 1) t += ", batch " + std::to_string(st.batch) + (st.b_broadcast ? " (B broadcast)" : "");
  return t;
}

}  // namespace omnigemm::bench
