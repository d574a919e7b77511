// Mixed inputs on the Hopper tensor cores (cuda.sm90_repack converting on copy): 16-bit x fp8 as
// the 16-bit type, f16 x bf16 as f32 copies on the TF32 rows. Every conversion of the copy is
// checked exhaustively on the host (no GPU needed); on an sm_90 device every mixed pair runs in
// every layout on ragged shapes, batches, misaligned bases, with C, bias and each activation, on
// every table row of the kind it takes, against float64. Without an sm_90 device those tests
// print "SKIPPED cuda: <test>: <reason>".
//
// Tolerance: the conversions are exact (checked below), fp8 x 16-bit products are exact in f32
// (at most 11 x 11 significant bits), and TF32 holds every f16 and bf16 value, so f16 x bf16
// products are exact too (11 x 8 bits); every path accumulates in f32. So the f32-accumulation
// bound of tolerance() applies, as for f16 x f16; an input rounding anywhere (e.g. TF32 rounding
// f16's 11 bits, or fp8 through a lossy type) would show as an error of 2^-11 or more against a
// bound of about 4 sqrt(K) 2^-24 with an f32 D.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "context_internal.hpp"
#include "cuda_device_support.hpp"
#include "repack/convert.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
namespace rp = omnigemm::detail::repack;

namespace {

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

// One mixed GEMM on device memory: A (op(A) M x K) and B in the given layouts with odd (or 16-byte
// aligned) leading dimensions and batch gaps, A's base `a_offset` bytes past an aligned address, B broadcast over
// the batches when b_broadcast; C (beta), bias and activation from `e`; inputs scaled by a_scale
// and b_scale (small scales reach subnormal f16 and fp8). Checks the family explain names (when
// `expect_family` is set), that the explanation says what it converted, and every element of D.
struct MixedCase {
  int64_t m, n, k, batch = 1;
  Dtype a, b, d = Dtype::f32;
  bool ta = false, tb = false;
  uint64_t a_offset = 0;
  bool b_broadcast = false;
  float a_scale = 1.0f, b_scale = 1.0f;
  bool aligned = false;  // 16-byte aligned rows and batches: a 16-bit operand is loaded in place
  EpilogueSpec e;
  std::string config;
  const char* expect_family = "cuda.sm90_repack";
};

void run_mixed(Context& ctx, const MixedCase& c) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.batch);
  CAPTURE(std::string(name(c.a)));
  CAPTURE(std::string(name(c.b)));
  CAPTURE(std::string(name(c.d)));
  CAPTURE(c.ta);
  CAPTURE(c.tb);
  CAPTURE(c.config);
  // Odd pads and gaps, or (aligned) rows and batches on 16-byte boundaries plus 16 bytes.
  auto pad = [&](Dtype t, int64_t inner, int64_t odd) {
    const int64_t per16 = 16 / dtype_size(t);
    return c.aligned ? (inner + per16 - 1) / per16 * per16 - inner + per16 : odd;
  };
  const int64_t a_cols = c.ta ? c.m : c.k, b_cols = c.tb ? c.k : c.n;
  HostMatrix A(c.ta ? c.k : c.m, a_cols, c.a, Layout::row_major, pad(c.a, a_cols, 3), c.batch,
               c.aligned ? 16 / dtype_size(c.a) : 1);
  HostMatrix B(c.tb ? c.n : c.k, b_cols, c.b, Layout::row_major, pad(c.b, b_cols, 5), c.b_broadcast ? 1 : c.batch,
               c.aligned ? 16 / dtype_size(c.b) : 3);
  A.transposed = c.ta;
  B.transposed = c.tb;
  HostMatrix C(c.m, c.n, c.d, Layout::row_major, 1, c.batch, 2), D(c.m, c.n, c.d, Layout::row_major, 1, c.batch, 2);
  HostMatrix bias(1, std::max(c.m, c.n), Dtype::f32);
  A.randomize(c.a_scale);
  B.randomize(c.b_scale);
  C.randomize();
  bias.randomize();
  D.poison();
  const HostMatrix before = D;
  std::vector<float> bias_values(size_t(bias.cols));
  for (int64_t j = 0; j < bias.cols; ++j) bias_values[size_t(j)] = float(bias.get(0, 0, j));
  DeviceCopy da(ctx.c_handle(), A, c.a_offset), db(ctx.c_handle(), B), dc(ctx.c_handle(), C), dd(ctx.c_handle(), D),
      dbias(ctx.c_handle(), bias);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  g.c = C.view(dc.memory());
  g.batch_count = c.batch;
  g.config = c.config;
  set_epilogue(g, c.e, dbias.memory());
  auto ex = ctx.explain(g);
  REQUIRE_MESSAGE(ex.ok(), ex.status().message);
  if (c.expect_family) {
    CHECK_MESSAGE(ex->family() == c.expect_family, ex->report());
    if (std::string(c.expect_family) == "cuda.sm90_repack")
      CHECK_MESSAGE(ex->report().find("converted to") != std::string::npos, ex->report());
  }
  const Status s = ctx.run(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  dd.download(D);
  const ErrorReport r = compare(D, reference_gemm(A, B, &C, &bias_values, c.e, c.batch), &before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(c.d, c.k, c.a, c.b));
}

struct Pair {
  Dtype a, b;
};
// Every 16-bit x fp8 pair, both ways round.
constexpr Pair kWidenPairs[] = {{Dtype::f16, Dtype::fp8_e4m3},  {Dtype::fp8_e4m3, Dtype::f16},  {Dtype::f16, Dtype::fp8_e5m2},
                                {Dtype::fp8_e5m2, Dtype::f16},  {Dtype::bf16, Dtype::fp8_e4m3}, {Dtype::fp8_e4m3, Dtype::bf16},
                                {Dtype::bf16, Dtype::fp8_e5m2}, {Dtype::fp8_e5m2, Dtype::bf16}};
constexpr Pair kTf32Pairs[] = {{Dtype::f16, Dtype::bf16}, {Dtype::bf16, Dtype::f16}};

}  // namespace

TEST_CASE("cuda mixed: every conversion of the repack copy keeps the value exactly (host, all codes)") {
  // fp8 to f16 and bf16: every one of the 256 codes, NaN to NaN, signed zeros, subnormals.
  for (unsigned code = 0; code < 256; ++code) {
    CAPTURE(code);
    const uint8_t byte = uint8_t(code);
    const uint16_t e4_f16 = uint16_t(rp::convert_bits(rp::Convert::e4m3_to_f16, code));
    const uint16_t e4_bf16 = uint16_t(rp::convert_bits(rp::Convert::e4m3_to_bf16, code));
    const uint16_t e5_f16 = uint16_t(rp::convert_bits(rp::Convert::e5m2_to_f16, code));
    const uint16_t e5_bf16 = uint16_t(rp::convert_bits(rp::Convert::e5m2_to_bf16, code));
    const double e4 = decode(Dtype::fp8_e4m3, &byte), e5 = decode(Dtype::fp8_e5m2, &byte);
    CHECK(same_value(decode(Dtype::f16, reinterpret_cast<const uint8_t*>(&e4_f16)), e4));
    CHECK(same_value(decode(Dtype::bf16, reinterpret_cast<const uint8_t*>(&e4_bf16)), e4));
    CHECK(same_value(decode(Dtype::f16, reinterpret_cast<const uint8_t*>(&e5_f16)), e5));
    CHECK(same_value(decode(Dtype::bf16, reinterpret_cast<const uint8_t*>(&e5_bf16)), e5));
  }
  // f16 and bf16 to f32: every one of the 65536 codes; the f32 bits' low 13 are zero, so TF32
  // (wgmma .tf32 reads the top 19 bits of each f32) holds the value whether it truncates or
  // rounds, f16 subnormals included.
  int failures = 0, subnormal_f16 = 0;
  for (unsigned code = 0; code < 65536; ++code) {
    const uint16_t h = uint16_t(code);
    for (bool bf : {false, true}) {
      const uint32_t f = rp::convert_bits(bf ? rp::Convert::bf16_to_f32 : rp::Convert::f16_to_f32, code);
      float v;
      std::memcpy(&v, &f, 4);
      const double want = decode(bf ? Dtype::bf16 : Dtype::f16, reinterpret_cast<const uint8_t*>(&h));
      const bool nan = std::isnan(want);
      // NaN stays NaN (its payload's low bits may be set by bf16 codes: TF32 keeps it a NaN).
      failures += !same_value(double(v), want) || (!nan && (f & 0x1fffu) != 0);
    }
    subnormal_f16 += (code & 0x7c00u) == 0 && (code & 0x3ffu) != 0;
  }
  CHECK(failures == 0);
  CHECK(subnormal_f16 == 2 * 1023);
}

TEST_CASE("cuda mixed: every mixed pair on every sm90_repack row of its kind, every layout, ragged shapes, epilogues") {
  auto ctx = sm90_context("mixed pairs on sm90_repack rows");
  if (!ctx) return;
  int ran = 0, widen_i = 0, tf32_i = 0;
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh, Activation::silu};
  for (const detail::Config& cfg : family_configs(*ctx, "sm90_repack")) {
    if (cfg.block_k == 128) continue;  // fp8 rows: mixed pairs run on the 16-bit (64) or TF32 (32) rows
    const bool tf32 = cfg.block_k == 32;
    for (int i = 0; i < 2; ++i) {
      const int at = tf32 ? tf32_i++ : widen_i++;
      const Pair pr = tf32 ? kTf32Pairs[at % 2] : kWidenPairs[at % 8];
      MixedCase c{i ? cfg.block_m + 1 : 1, cfg.block_n + 3, 2 * int64_t(cfg.block_k) + 1 + 8 * i, 1 + i, pr.a, pr.b};
      c.config = cfg.to_string();
      c.d = outs[at % 3];
      c.ta = (at >> 1) & 1;  // the layouts rotate against the pairs and rows
      c.tb = (at >> 2) & 1;
      c.e.alpha = i ? -0.75f : 1.0f;
      c.e.beta = at % 4 == 1 ? 0.5f : 0.0f;
      c.e.bias_mode = BiasMode(at % 3);
      c.e.act = acts[at % 5];
      c.e.slope = 0.1f;
      run_mixed(*ctx, c);
      ++ran;
    }
  }
  CHECK(ran >= 40);
  CHECK(widen_i >= 8 * 4);  // every 16-bit x fp8 pair in several layouts
}

TEST_CASE("cuda mixed: layouts, batches, misaligned bases, a broadcast B and subnormal inputs") {
  auto ctx = sm90_context("mixed layouts and batches");
  if (!ctx) return;
  const std::string sixteen = "sm90_repack:128x128x64-g8-s6-w12-coop", tf32 = "sm90_repack:128x128x32-g8-s6-w12-coop";
  for (int layout = 0; layout < 4; ++layout) {
    const bool ta = layout & 1, tb = layout & 2;
    for (const Pair& pr : {Pair{Dtype::f16, Dtype::fp8_e4m3}, Pair{Dtype::fp8_e5m2, Dtype::bf16}, Pair{Dtype::f16, Dtype::bf16}}) {
      const bool is_tf32 = pr.a == Dtype::f16 && pr.b == Dtype::bf16;
      MixedCase c{300, 260, 203, 3, pr.a, pr.b};
      c.ta = ta;
      c.tb = tb;
      c.a_offset = layout % 2 ? 2 : 6;
      c.b_broadcast = layout >= 2;
      c.config = is_tf32 ? tf32 : sixteen;
      c.d = layout == 3 ? Dtype::bf16 : Dtype::f32;
      c.e.bias_mode = BiasMode::per_n;
      c.e.act = Activation::gelu_tanh;
      run_mixed(*ctx, c);
    }
  }
  // Subnormal f16 (below 2^-14) times bf16, and subnormal e4m3 (below 2^-6) times f16: the copies
  // keep them exactly (a flush to zero would miss the bound with an f32 D).
  MixedCase sub{257, 190, 1000, 1, Dtype::f16, Dtype::bf16};
  sub.a_scale = 1e-4f;
  run_mixed(*ctx, sub);
  MixedCase sub8{257, 190, 1000, 1, Dtype::fp8_e4m3, Dtype::f16};
  sub8.a_scale = 0.02f;
  run_mixed(*ctx, sub8);
  // Aligned 16-bit operands stay in place (only the fp8 one is copied), K-major or MN-major, as
  // the engine chooses and forced.
  for (int layout = 0; layout < 4; ++layout) {
    MixedCase al{520, 390, 300, 2, layout % 2 ? Dtype::fp8_e4m3 : Dtype::bf16, layout % 2 ? Dtype::f16 : Dtype::fp8_e5m2};
    al.ta = layout & 1;
    al.tb = layout & 2;
    al.aligned = true;
    al.d = Dtype::f16;
    al.e.beta = 0.25f;
    run_mixed(*ctx, al);
    al.config = layout < 2 ? sixteen : "sm90_repack:128x256x64-g16-s4-w12-coop";
    run_mixed(*ctx, al);
  }
  // Split-K on the copies: the inner call's partials and the copies share the workspace.
  MixedCase split{100, 90, 3000, 1, Dtype::bf16, Dtype::f16};
  split.config = "sm90_repack:128x64x32-g8-s8-w12-k4-coop";
  run_mixed(*ctx, split);
}

TEST_CASE("cuda mixed: the engine's choice runs mixed pairs of 1024 and more on sm90_repack, tiny ones where the model ranks them") {
  auto ctx = sm90_context("mixed default choice");
  if (!ctx) return;
  run_mixed(*ctx, MixedCase{1024, 1024, 1024, 1, Dtype::f16, Dtype::bf16});
  run_mixed(*ctx, MixedCase{1030, 2048, 1027, 1, Dtype::bf16, Dtype::f16, Dtype::bf16, false, true});
  run_mixed(*ctx, MixedCase{1024, 1024, 1024, 2, Dtype::f16, Dtype::fp8_e4m3, Dtype::f16});
  run_mixed(*ctx, MixedCase{2048, 1024, 1024, 1, Dtype::fp8_e5m2, Dtype::bf16, Dtype::f32, true, false});
  MixedCase tiny{24, 24, 24, 1, Dtype::f16, Dtype::fp8_e4m3};
  tiny.expect_family = "cuda.sm80_mma";
  run_mixed(*ctx, tiny);
  MixedCase tiny_tf32{24, 24, 24, 1, Dtype::f16, Dtype::bf16};
  tiny_tf32.expect_family = nullptr;  // sm90_repack or skinny: whichever the model ranks first; checked for values only
  run_mixed(*ctx, tiny_tf32);
}

namespace {

// The time of one og_gemm on device memory with `config` ("": the engine's choice), in ms: one
// warm-up call, then as many timed calls as fit about 0.2 s (1 to 20), their mean.
struct Timed {
  og_context* ctx;
  og_gemm_desc desc;
  int reps;
};

og_status launch_reps(void* user) {
  Timed* t = static_cast<Timed*>(user);
  for (int i = 0; i < t->reps; ++i)
    if (og_status s = og_gemm(t->ctx, &t->desc); s != OG_OK) return s;
  return OG_OK;
}

double time_gemm(Context& ctx, Gemm g, std::string& family) {
  auto ex = ctx.explain(g);
  if (!ex.ok()) {
    family = "refused: " + ex.status().message;
    return 0;
  }
  family = ex->family() + " " + ex->config();
  const og_gemm_desc desc = g.to_c();  // its config points into g, which outlives it
  Timed t{ctx.c_handle(), desc, 1};
  double ms = 0;
  if (og_context_time(ctx.c_handle(), launch_reps, &t, &ms) != OG_OK) return 0;  // warm-up (plans, tensor maps)
  t.reps = std::max(1, std::min(20, int(200.0 / std::max(ms, 1e-3))));
  if (og_context_time(ctx.c_handle(), launch_reps, &t, &ms) != OG_OK) return 0;
  return ms / t.reps;
}

// The cost model's first choice among `family`'s configs for g (each forced through explain).
std::string best_config_of(Context& ctx, Gemm g, const char* family) {
  std::string best;
  double best_ms = 0;
  for (detail::KernelFamily* f : detail::context_backend(ctx.c_handle()).families()) {
    if (std::string(f->name()) != family) continue;
    for (const detail::Config& c : f->configs()) {
      g.config = c.to_string();
      auto ex = ctx.explain(g);
      if (ex.ok() && (best.empty() || ex->raw.predicted_ms < best_ms)) best = g.config, best_ms = ex->raw.predicted_ms;
    }
  }
  return best;
}

}  // namespace

// Measurement only (skipped unless run with --no-skip, e.g. by the H100 script): TFLOP/s of
// f16 x bf16 and f16 x e4m3 at 64, 256, 1024, 4096 and 8192 (A row-major, B column-major, D f16) on the
// engine's choice, on the path they took before (simt, sm80_mma's gathering loader, by config) and
// f16 x f16 for reference. The values are not checked here (run_mixed does that).
TEST_CASE("cuda mixed timing: f16 x bf16 and f16 x e4m3 against f16 x f16 and the generic paths" * doctest::skip()) {
  auto ctx = sm90_context("mixed timing");
  if (!ctx) return;
  for (int64_t s : {64, 256, 1024, 4096, 8192}) {  // 64 and 256: the model's crossover (test_cuda_model)
    struct Row {
      Dtype a, b;
      const char* old_family;
    };
    for (const Row& r : {Row{Dtype::f16, Dtype::bf16, "simt"}, Row{Dtype::f16, Dtype::fp8_e4m3, "sm80_mma"},
                         Row{Dtype::f16, Dtype::f16, nullptr}}) {
      HostMatrix A(s, s, r.a), B(s, s, r.b, Layout::col_major), D(s, s, Dtype::f16);
      A.randomize();
      B.randomize();
      DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D);
      Gemm g = device_gemm(A, da, B, db, D, dd);
      const double flops = 2.0 * double(s) * double(s) * double(s);
      std::string fam;
      const double ms = time_gemm(*ctx, g, fam);
      const std::string pair = std::string(name(r.a)) + " x " + name(r.b);
      MESSAGE("timing " << pair << " " << s << "^3: " << (ms > 0 ? flops / ms * 1e-9 : 0)
                        << " TFLOP/s (" << ms << " ms) on " << fam);
      if (!r.old_family) continue;
      g.config = best_config_of(*ctx, g, r.old_family);
      const double old_ms = g.config.empty() ? 0 : time_gemm(*ctx, g, fam);
      MESSAGE("timing " << pair << " " << s << "^3 on the old path: "
                        << (old_ms > 0 ? flops / old_ms * 1e-9 : 0) << " TFLOP/s (" << old_ms << " ms) on " << fam
                        << "; new/old " << (ms > 0 && old_ms > 0 ? old_ms / ms : 0));
    }
  }
}
