// TF32 cases (og_gemm_desc.compute_mode = OG_COMPUTE_TF32) for any backend: f32 inputs, either
// pre-rounded to TF32 (then every backend's products are exact and the f32 tolerance applies)
// or not (then the expected result is the float64 GEMM of the inputs rounded to nearest TF32,
// the CPU backend's definition, within a TF32 bound).
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cstring>
#include <string>

#include "gemm_check.hpp"

namespace omnigemm::test {

// f32 rounded to nearest TF32 (10 mantissa bits, ties to even), as the CPU backend rounds.
inline float tf32_nearest(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7f800000u) == 0x7f800000u) return f;
  x = (x + 0xfffu + ((x >> 13) & 1u)) & ~0x1fffu;
  return std::bit_cast<float>(x);
}

// Every stored element of an f32 matrix rounded to TF32.
inline void round_to_tf32(HostMatrix& m) {
  REQUIRE(m.dtype == Dtype::f32);
  for (size_t i = 0; i + 4 <= m.bytes.size(); i += 4) {
    float v;
    std::memcpy(&v, &m.bytes[i], 4);
    v = tf32_nearest(v);
    std::memcpy(&m.bytes[i], &v, 4);
  }
}

// A descriptor's explanation with every operand moved to device memory of the context's backend
// (explain takes memory the backend can use, not host pointers, except on the CPU); nothing is
// uploaded: explain reads no data.
inline Result<Explanation> explain_on_device(Context& ctx, Gemm g) {
  if (ctx.backend() == Backend::cpu) return ctx.explain(g);
  std::vector<og_memory> owned;
  auto device = [&](Matrix& m, size_t bytes) {
    og_memory mem{};
    REQUIRE(og_memory_alloc(ctx.c_handle(), bytes, &mem) == OG_OK);
    owned.push_back(mem);
    m.raw.mem = mem;
  };
  auto bytes_of = [](const Matrix& m, int64_t batches) {
    const int64_t outer = m.raw.layout == OG_ROW_MAJOR ? m.raw.rows : m.raw.cols;
    return size_t((m.raw.batch_stride * (batches - 1) + outer * m.raw.ld) * 4 + 256);  // f32 at most
  };
  device(g.a, bytes_of(g.a, g.batch_count));
  device(g.b, bytes_of(g.b, g.batch_count));
  device(g.c, bytes_of(g.c, g.batch_count));
  device(g.d, bytes_of(g.d, g.batch_count));
  og_memory bias{};
  REQUIRE(og_memory_alloc(ctx.c_handle(), 1 << 20, &bias) == OG_OK);
  owned.push_back(bias);
  g.epilogue.bias = Memory{bias};
  auto e = ctx.explain(g);
  for (const og_memory& m : owned) og_memory_free(ctx.c_handle(), m);
  return e;
}

struct Tf32Case {
  int64_t m, n, k, batch = 1;
  bool ta = false, tb = true;  // default: A row-major, B stored N x K (both K-major)
  bool aligned = true;         // 16-byte leading dimensions (else odd pads)
  Dtype d = Dtype::f32;
  bool pre_rounded = true;
  bool rounds_to_nearest = false;  // the backend rounds inputs as the reference does (the CPU): f32 bound
  std::string config;          // forced config, or empty
  std::string expect_family;   // explain's family must contain this (empty: not checked)
  EpilogueSpec epi;
};

// Relative-error bound of TF32 products of inputs that were not TF32 already: the hardware may
// truncate where the reference rounds to nearest, so each input differs from its reference
// value by less than 2^-10 relative, each product by less than 2^-9; the errors of a sum of K
// such products (random signs) grow like its norm, so 2^-9 relative to it bounds them, plus the
// f32 accumulation and output rounding of tolerance().
inline double tf32_tolerance(Dtype out, int64_t k) { return std::ldexp(1.0, -9) + tolerance(out, k); }

// Runs one case with compute_mode TF32 through og_gemm_host and checks it against the float64
// GEMM of the TF32-rounded inputs.
inline void run_tf32_case(Context& ctx, const Tf32Case& c) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.batch);
  CAPTURE(c.ta);
  CAPTURE(c.tb);
  CAPTURE(c.aligned);
  CAPTURE(c.pre_rounded);
  CAPTURE(c.config);
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k, b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  // Aligned: leading dimensions padded to a multiple of 16 bytes plus 16, batch gaps of 32 bytes.
  auto pad = [&](int64_t cols, int elem_bytes, int64_t odd) {
    const int64_t per16 = 16 / elem_bytes;
    return c.aligned ? (cols + per16 - 1) / per16 * per16 - cols + per16 : odd;
  };
  HostMatrix A(a_rows, a_cols, Dtype::f32, Layout::row_major, pad(a_cols, 4, 3), c.batch, c.aligned ? 8 : 5);
  HostMatrix B(b_rows, b_cols, Dtype::f32, Layout::row_major, pad(b_cols, 4, 1), c.batch, c.aligned ? 8 : 3);
  const int64_t d_pad = pad(c.n, dtype_size(c.d), 1), d_gap = c.aligned ? 32 / dtype_size(c.d) : 2;
  HostMatrix C(c.m, c.n, c.d, Layout::row_major, d_pad, c.batch, d_gap), D(c.m, c.n, c.d, Layout::row_major, d_pad, c.batch, d_gap);
  A.transposed = c.ta;
  B.transposed = c.tb;
  A.randomize();
  B.randomize();
  C.randomize();
  if (c.pre_rounded) {
    round_to_tf32(A);
    round_to_tf32(B);
  }
  std::vector<float> bias(size_t(std::max(c.m, c.n)));
  for (float& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  D.poison();
  const HostMatrix before = D;
  Gemm g = host_gemm(A, B, C, D, c.batch, c.config);
  g.compute_mode = ComputeMode::tf32;
  set_epilogue(g, c.epi, Memory::host(bias.data()));
  if (!c.expect_family.empty()) {
    auto e = explain_on_device(ctx, g);
    REQUIRE_MESSAGE(e.ok(), e.status().message);
    CHECK_MESSAGE(e.value().family().find(c.expect_family) != std::string::npos, e.value().family());
    CHECK(e.value().report().find("compute TF32") != std::string::npos);
  }
  const Status s = ctx.run_host(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  HostMatrix A_ref = A, B_ref = B;  // what TF32 products see (already so when pre-rounded)
  round_to_tf32(A_ref);
  round_to_tf32(B_ref);
  const ErrorReport r = compare(D, reference_gemm(A_ref, B_ref, &C, &bias, c.epi, c.batch), &before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= (c.pre_rounded || c.rounds_to_nearest ? tolerance(c.d, c.k) : tf32_tolerance(c.d, c.k)));
}

}  // namespace omnigemm::test
