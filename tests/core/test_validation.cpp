// Validation edges that test_bad_input.cpp does not reach: exact 2^31-1 boundaries, both layouts'
// leading dimensions for every operand, OG_MEMORY_NONE and null pointers for every operand,
// bit-exact poison on no-ops, forced configs that run, and the same errors through omnigemm.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm.h"
#include "omnigemm/omnigemm.hpp"

namespace {

constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;

// A poison pattern that is a NaN with a payload: a backend that writes anything (even a NaN)
// is caught by a bit comparison.
constexpr uint32_t kPoisonBits = 0x7fa5a5a5u;

struct Case {
  og_context* ctx = nullptr;
  std::vector<float> a, b, c, d, bias;
  og_gemm_desc g;
  Case(int64_t m = 7, int64_t n = 5, int64_t k = 4) {
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto fill = [&](std::vector<float>& v, size_t n_) { v.resize(n_); for (auto& x : v) x = u(rng); };
    fill(a, size_t(m * k));
    fill(b, size_t(k * n));
    fill(c, size_t(m * n));
    fill(bias, 64);
    d.resize(size_t(m * n));
    poison();
    og_context_options o;
    og_context_options_init(&o);
    o.backend = OG_BACKEND_CPU;
    o.tune_mode = OG_TUNE_OFF;
    REQUIRE(og_context_create(&o, &ctx) == OG_OK);
    g = omnigemm::test::host_f32_desc(m, n, k, a.data(), b.data(), c.data(), d.data());
  }
  ~Case() { og_context_destroy(ctx); }
  void poison() {
    for (auto& x : d) std::memcpy(&x, &kPoisonBits, 4);
  }
  bool d_still_poisoned() const {
    for (float x : d) {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      if (bits != kPoisonBits) return false;
    }
    return true;
  }
  void expect(og_status code, std::initializer_list<const char*> parts) {
    const og_status s = og_gemm(ctx, &g);
    const std::string msg = og_last_error_message();
    CAPTURE(msg);
    CHECK(og_status_name(s) == std::string(og_status_name(code)));
    if (code != OG_OK) CHECK_FALSE(msg.empty());
    for (const char* p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks \"" << std::string(p) << "\"");
    if (code != OG_OK) CHECK(d_still_poisoned());  // a refused call writes nothing
  }
};

}  // namespace

TEST_CASE("validation: 2^31-1 is the largest accepted dimension, 2^31 is refused by name") {
  // N == 0 makes the call a no-op, so the huge M needs no memory.
  for (int which = 0; which < 3; ++which) {
    Case f;
    f.g.b.cols = 0; f.g.b.ld = 1;
    f.g.d.cols = 0; f.g.d.ld = 1;
    f.g.c.cols = 0; f.g.c.ld = 1;
    int64_t* dim = which == 0 ? &f.g.a.rows : which == 1 ? &f.g.a.cols : &f.g.d.rows;
    *dim = kMaxDim;
    if (which == 0) f.g.d.rows = kMaxDim;
    if (which == 1) { f.g.a.ld = kMaxDim; f.g.b.rows = kMaxDim; }
    if (which == 2) f.g.a.rows = kMaxDim;
    CAPTURE(which);
    f.expect(OG_OK, {});
    CHECK(f.d_still_poisoned());
    *dim = kMaxDim + 1;
    if (which == 0) f.g.d.rows = kMaxDim + 1;
    if (which == 1) { f.g.a.ld = kMaxDim + 1; f.g.b.rows = kMaxDim + 1; }
    if (which == 2) f.g.a.rows = kMaxDim + 1;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"2^31"});
  }
  { Case f; f.g.batch_count = kMaxDim + 1; f.expect(OG_ERROR_INVALID_ARGUMENT, {"batch_count"}); }
}

TEST_CASE("validation: leading dimension too small, each operand, both layouts") {
  for (int op = 0; op < 4; ++op)
    for (og_layout layout : {OG_ROW_MAJOR, OG_COL_MAJOR}) {
      Case f;
      f.g.epilogue.beta = 1.0f;  // C is read, so it is validated
      og_matrix* m[] = {&f.g.a, &f.g.b, &f.g.c, &f.g.d};
      const char* name[] = {"A", "B", "C", "D"};
      m[op]->layout = layout;
      const int64_t contiguous = layout == OG_ROW_MAJOR ? m[op]->cols : m[op]->rows;
      m[op]->ld = contiguous;  // exactly enough is fine (buffers are large enough for it)
      CAPTURE(op);
      CAPTURE(int(layout));
      f.expect(OG_OK, {});
      f.poison();
      m[op]->ld = contiguous - 1;
      f.expect(OG_ERROR_INVALID_ARGUMENT,
               {name[op], "leading dimension", layout == OG_ROW_MAJOR ? "row-major" : "column-major"});
    }
}

TEST_CASE("validation: ld * rows overflowing int64 is refused, not wrapped") {
  Case f;
  f.g.a.ld = std::numeric_limits<int64_t>::max() / 3;  // * 7 rows overflows
  f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "overflow"});
  Case h;
  h.g.d.layout = OG_COL_MAJOR;
  h.g.d.ld = std::numeric_limits<int64_t>::max() / 2;  // * 5 columns overflows
  h.expect(OG_ERROR_INVALID_ARGUMENT, {"D", "overflow"});
}

TEST_CASE("validation: null pointer and OG_MEMORY_NONE for every operand") {
  for (int op = 0; op < 4; ++op) {
    const char* name[] = {"A", "B", "C", "D"};
    CAPTURE(op);
    {
      Case f;
      f.g.epilogue.beta = 1.0f;
      og_matrix* m[] = {&f.g.a, &f.g.b, &f.g.c, &f.g.d};
      m[op]->mem.ptr = nullptr;
      f.expect(OG_ERROR_INVALID_ARGUMENT, {name[op], "null pointer"});
    }
    {
      Case f;
      f.g.epilogue.beta = 1.0f;
      og_matrix* m[] = {&f.g.a, &f.g.b, &f.g.c, &f.g.d};
      m[op]->mem.kind = OG_MEMORY_NONE;
      f.expect(OG_ERROR_INVALID_ARGUMENT, {name[op], "no memory"});
    }
  }
  Case f;
  f.g.epilogue.bias_mode = OG_BIAS_PER_N;
  f.g.epilogue.bias = og_memory_host(nullptr);
  f.expect(OG_ERROR_INVALID_ARGUMENT, {"bias", "null pointer"});
  // beta == 0: C is not read and may be absent.
  Case g;
  g.g.c.mem.kind = OG_MEMORY_NONE;
  g.expect(OG_OK, {});
  CHECK_FALSE(g.d_still_poisoned());
}

TEST_CASE("validation: misaligned element pointers for f32 and f16") {
  for (int op = 0; op < 3; ++op) {
    Case f;
    og_matrix* m[] = {&f.g.a, &f.g.b, &f.g.d};
    const char* name[] = {"A", "B", "D"};
    m[op]->mem.ptr = static_cast<char*>(m[op]->mem.ptr) + 1;  // f32 at an odd address
    CAPTURE(op);
    f.expect(OG_ERROR_INVALID_ARGUMENT, {name[op], "aligned"});
  }
  Case f;
  std::vector<uint16_t> a16(64, 0x3c00);
  f.g.a.dtype = OG_DTYPE_F16;
  f.g.a.mem = og_memory_host(reinterpret_cast<char*>(a16.data()) + 1);
  f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "aligned"});
}

TEST_CASE("validation: zero-size and zero-batch calls leave D bit-exactly poisoned") {
  for (int which = 0; which < 4; ++which) {
    Case f;
    if (which == 0) { f.g.a.rows = 0; f.g.d.rows = 0; f.g.c.rows = 0; }
    if (which == 1) { f.g.b.cols = 0; f.g.d.cols = 0; f.g.c.cols = 0; f.g.b.ld = f.g.d.ld = f.g.c.ld = 1; }
    if (which == 2) f.g.batch_count = 0;
    if (which == 3) { f.g.batch_count = 0; f.g.epilogue.beta = 1.0f; f.g.epilogue.activation = OG_ACT_SILU; }
    CAPTURE(which);
    f.expect(OG_OK, {});
    CHECK(f.d_still_poisoned());
  }
}

TEST_CASE("validation: K == 0 gives act(beta * C + bias) for every activation and bias mode") {
  for (og_activation act : {OG_ACT_NONE, OG_ACT_RELU, OG_ACT_LEAKY_RELU, OG_ACT_GELU_TANH, OG_ACT_SILU})
    for (og_bias_mode mode : {OG_BIAS_NONE, OG_BIAS_PER_N, OG_BIAS_PER_M}) {
      Case f(6, 5, 0);
      f.g.a = og_matrix_make(6, 0, OG_DTYPE_F32, OG_ROW_MAJOR);
      f.g.a.mem = og_memory_host(f.bias.data());  // never read
      f.g.b = og_matrix_make(0, 5, OG_DTYPE_F32, OG_ROW_MAJOR);
      f.g.b.mem = og_memory_host(f.bias.data());
      f.g.epilogue.alpha = 3.0f;
      f.g.epilogue.beta = -1.5f;
      f.g.epilogue.activation = act;
      f.g.epilogue.leaky_slope = 0.2f;
      f.g.epilogue.bias_mode = mode;
      if (mode != OG_BIAS_NONE) f.g.epilogue.bias = og_memory_host(f.bias.data());
      CAPTURE(int(act));
      CAPTURE(int(mode));
      f.expect(OG_OK, {});
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j) {
          double x = -1.5 * f.c[size_t(i * 5 + j)];
          if (mode == OG_BIAS_PER_N) x += f.bias[size_t(j)];
          if (mode == OG_BIAS_PER_M) x += f.bias[size_t(i)];
          double r = x;
          if (act == OG_ACT_RELU) r = x > 0 ? x : 0;
          if (act == OG_ACT_LEAKY_RELU) r = x >= 0 ? x : 0.2 * x;
          if (act == OG_ACT_GELU_TANH) r = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
          if (act == OG_ACT_SILU) r = x / (1 + std::exp(-x));
          CHECK(f.d[size_t(i * 5 + j)] == doctest::Approx(r).epsilon(1e-5).scale(1.0));
        }
    }
}

TEST_CASE("validation: D overlapping inputs in every batch configuration") {
  {
    Case f(6, 6, 6);  // D shares only its last element with A
    std::vector<float> both(36 + 35, 0.25f);
    f.g.a.mem = og_memory_host(both.data());
    f.g.d.mem = og_memory_host(both.data() + 35);
    og_status s = og_gemm(f.ctx, &f.g);
    CHECK(s == OG_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(og_last_error_message()).find("D overlaps A") != std::string::npos);
  }
  {
    Case f(6, 6, 6);  // touching but disjoint is fine
    std::vector<float> both(72, 0.25f);
    f.g.a.mem = og_memory_host(both.data());
    f.g.d.mem = og_memory_host(both.data() + 36);
    CHECK(og_gemm(f.ctx, &f.g) == OG_OK);
  }
  {
    Case f;  // batch stride exactly one matrix: the batches touch but do not overlap
    f.g.batch_count = 3;
    f.d.resize(35 * 3);
    f.poison();
    f.g.d.mem = og_memory_host(f.d.data());
    f.g.d.batch_stride = 35;
    f.expect(OG_OK, {});
    f.poison();
    f.g.d.batch_stride = 34;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"D", "overlap"});
    f.g.d.batch_stride = 0;  // every batch writing one D is an overlap too
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"D", "overlap"});
  }
}

TEST_CASE("validation: C identical to D with batches and an activation runs in place") {
  Case f;
  f.g.batch_count = 2;
  f.a.resize(28 * 2);
  f.b.resize(20 * 2);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& x : f.a) x = u(rng);
  for (auto& x : f.b) x = u(rng);
  std::vector<float> d0(70);
  for (auto& x : d0) x = u(rng);
  f.d = d0;
  f.g.a.mem = og_memory_host(f.a.data());
  f.g.a.batch_stride = 28;
  f.g.b.mem = og_memory_host(f.b.data());
  f.g.b.batch_stride = 20;
  f.g.d.mem = og_memory_host(f.d.data());
  f.g.d.batch_stride = 35;
  f.g.c = f.g.d;
  f.g.epilogue.beta = 0.5f;
  f.g.epilogue.activation = OG_ACT_RELU;
  REQUIRE(og_gemm(f.ctx, &f.g) == OG_OK);
  for (int q = 0; q < 2; ++q)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int k = 0; k < 4; ++k) acc += double(f.a[size_t(q * 28 + i * 4 + k)]) * f.b[size_t(q * 20 + k * 5 + j)];
        double x = acc + 0.5 * d0[size_t(q * 35 + i * 5 + j)];
        CHECK(f.d[size_t(q * 35 + i * 5 + j)] == doctest::Approx(x > 0 ? x : 0).epsilon(1e-5).scale(1.0));
      }
}

TEST_CASE("validation: block-scaled inputs need their layout and scales; fp8 outputs are unsupported") {
  // B is row-major (K strided): fp4 needs K contiguous; mxfp8 takes any strides but needs scales.
  for (og_dtype bs : {OG_DTYPE_MXFP4, OG_DTYPE_NVFP4}) {
    Case f;
    f.g.b.dtype = bs;
    CAPTURE(og_dtype_name(bs));
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"B", "fp4", "K must be the contiguous dimension"});
  }
  for (og_dtype bs : {OG_DTYPE_MXFP8, OG_DTYPE_MXFP8_E5M2}) {
    Case f;
    f.g.b.dtype = bs;
    CAPTURE(og_dtype_name(bs));
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "no memory"});
  }
  for (og_dtype out : {OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E5M2}) {
    Case f;
    f.g.d.dtype = out;
    f.expect(OG_ERROR_UNSUPPORTED, {"output dtype", og_dtype_name(out), "f32, f16, bf16"});
  }
  { Case f; f.g.d.dtype = og_dtype(-1); f.expect(OG_ERROR_INVALID_ARGUMENT, {"D", "dtype"}); }
  { Case f; f.g.epilogue.activation = og_activation(-1); f.expect(OG_ERROR_INVALID_ARGUMENT, {"activation"}); }
  { Case f; f.g.a.layout = og_layout(-1); f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "layout"}); }
}

TEST_CASE("validation: wrong memory kinds name the backend") {
  for (og_memory_kind k : {OG_MEMORY_CUDA, OG_MEMORY_HIP, OG_MEMORY_VULKAN}) {
    Case f;
    uint64_t fake_buffer = 0x1000;  // distinct (fake) VkBuffer handles, never used
    for (og_matrix* m : {&f.g.a, &f.g.b, &f.g.c, &f.g.d}) {
      m->mem.kind = k;
      if (k == OG_MEMORY_VULKAN) m->mem.vk_buffer = fake_buffer++;
    }
    CAPTURE(int(k));
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"cpu", "memory kind"});
  }
  {
    Case f;  // a Vulkan operand without a buffer is refused before anything else
    f.g.a.mem.kind = OG_MEMORY_VULKAN;
    f.g.a.mem.vk_buffer = 0;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "null VkBuffer"});
  }
  { Case f; f.g.epilogue.bias_mode = OG_BIAS_PER_N; f.g.epilogue.bias = og_memory_host(f.bias.data());
    f.g.epilogue.bias_dtype = og_dtype(1000); f.expect(OG_ERROR_INVALID_ARGUMENT, {"bias", "unknown dtype"}); }
  Case f;
  f.g.epilogue.bias_mode = OG_BIAS_PER_N;
  f.g.epilogue.bias = og_memory_host(f.bias.data());
  f.g.epilogue.bias.kind = OG_MEMORY_CUDA;
  f.expect(OG_ERROR_INVALID_ARGUMENT, {"different kinds of memory"});
}

TEST_CASE("validation: forced configs: malformed text refused, a well-formed CPU config runs") {
  for (const char* bad : {"", "x", "64x64", "64x64x", "-64x64x16", "64x64x16-", "64x64x16-q3", "64x64x16-g",
                          "99999999999999999999x64x16", "64 x64x16", "64x64x16-g8-g8"}) {
    Case f;
    f.g.config = bad;
    CAPTURE(bad);
    const og_status s = og_gemm(f.ctx, &f.g);
    // "" is treated as no config by some front ends; everything else is a refusal naming "config".
    if (std::string(bad).empty() && s == OG_OK) continue;
    CHECK(s == OG_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(og_last_error_message()).find("config") != std::string::npos);
    CHECK(f.d_still_poisoned());
  }
  // The first row of the CPU table (cpu.inc) is a config this backend offers: forcing it must
  // run and give the right answer.
  auto check_product = [](Case& f) {
    for (int i = 0; i < 33; ++i)
      for (int j = 0; j < 17; ++j) {
        double acc = 0;
        for (int k = 0; k < 9; ++k) acc += double(f.a[size_t(i * 9 + k)]) * f.b[size_t(k * 17 + j)];
        CHECK(f.d[size_t(i * 17 + j)] == doctest::Approx(acc).epsilon(1e-5).scale(1.0));
      }
  };
  {
    Case f(33, 17, 9);
    f.g.config = "224x2048x2048-g1-s1-w1";
    f.expect(OG_OK, {});
    check_product(f);
  }
  // A well-formed config outside the table either runs correctly or is refused as unsupported
  // with its text in the message; never a crash or a wrong answer.
  {
    Case f(33, 17, 9);
    f.g.config = "32x32x8-g2-s1-w1";
    const og_status s = og_gemm(f.ctx, &f.g);
    const std::string msg = og_last_error_message();
    CAPTURE(msg);
    if (s == OG_OK) {
      check_product(f);
    } else {
      CHECK(s == OG_ERROR_UNSUPPORTED);
      CHECK(msg.find("32x32x8") != std::string::npos);
      CHECK(f.d_still_poisoned());
    }
  }
}

TEST_CASE("validation: context creation errors carry messages") {
  og_context_options o;
  og_context_options_init(&o);
  og_context* ctx = reinterpret_cast<og_context*>(uintptr_t(0x1));  // must be reset to null
  o.backend = OG_BACKEND_HIP;
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_BACKEND_UNAVAILABLE);
  CHECK(ctx == nullptr);
  CHECK(std::string(og_last_error_message()).find("hip") != std::string::npos);
  o.backend = OG_BACKEND_CPU;
  o.device_index = -1;
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(og_last_error_message()).find("device") != std::string::npos);
  o.device_index = 0;
  CHECK(og_context_create(&o, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  CHECK_FALSE(std::string(og_last_error_message()).empty());
  // A success clears nothing it should not: creating a context still works afterwards.
  REQUIRE(og_context_create(&o, &ctx) == OG_OK);
  og_context_destroy(ctx);
}

TEST_CASE("validation: the C++ API reports the same errors with messages") {
  using namespace omnigemm;
  auto bad = Context::create({.backend = Backend::hip});
  CHECK_FALSE(bad.ok());
  CHECK(bad.status().code == StatusCode::backend_unavailable);
  CHECK(bad.status().message.find("hip") != std::string::npos);

  auto ctx = Context::create({.backend = Backend::cpu, .tune_mode = TuneMode::off});
  REQUIRE(ctx.ok());
  std::vector<float> a(12, 1.0f), b(12, 2.0f), d(9, NAN);
  Gemm g;
  g.a = Matrix::host(a.data(), 3, 4, Dtype::f32);
  g.b = Matrix::host(b.data(), 4, 3, Dtype::f32);
  g.d = Matrix::host(d.data(), 3, 3, Dtype::f32);
  REQUIRE(ctx->run(g).ok());
  for (float x : d) CHECK(x == 8.0f);
  g.a.ld(2);
  Status s = ctx->run(g);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK(s.message.find("leading dimension") != std::string::npos);
  g.a.ld(4);
  g.d.raw.dtype = OG_DTYPE_FP8_E4M3;
  s = ctx->run(g);
  CHECK(s.code == StatusCode::unsupported);
  Status ds = ctx->check_dtypes(Dtype::f16, Dtype::f16, Dtype::nvfp4);
  CHECK(ds.code == StatusCode::unsupported);
  CHECK(ds.message.find("f16") != std::string::npos);
  int dummy = 0;
  g.d.raw.dtype = OG_DTYPE_F32;
  s = ctx->run_async(g, &dummy);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK(s.message.find("stream") != std::string::npos);
  // A moved-from context is empty: calls on it fail cleanly instead of crashing.
  Context moved = std::move(ctx.value());
  CHECK(moved.run(g).ok());
  Status on_empty = ctx->run(g);
  CHECK(on_empty.code == StatusCode::invalid_argument);
  CHECK(on_empty.message.find("null context") != std::string::npos);
  CHECK(moved.backend() == Backend::cpu);
  auto caps = moved.capabilities();
  REQUIRE(caps.ok());
  CHECK(caps->accepts_input(Dtype::fp8_e5m2));
  CHECK_FALSE(caps->accepts_output(Dtype::fp8_e5m2));
  CHECK(caps->accepts_input(Dtype::mxfp4));  // block-scaled inputs: the cpu.blockscaled family
  CHECK_FALSE(caps->accepts_output(Dtype::mxfp4));
}
