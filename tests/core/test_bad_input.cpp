// Every class of bad input gets its status code and a message that names the problem; valid
// edge cases (zero sizes, K == 0, in place) work. Through the public C API, on the CPU backend.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm.h"

namespace {

struct Fixture {
  og_context* ctx = nullptr;
  std::vector<float> a, b, c, d, bias;
  og_gemm_desc g;
  Fixture(int64_t m = 8, int64_t n = 6, int64_t k = 5) : a(size_t(m * k), 0.5f), b(size_t(k * n), -0.25f),
                                                         c(size_t(m * n), 1.0f), d(size_t(m * n), NAN), bias(64, 0.125f) {
    og_context_options o;
    og_context_options_init(&o);
    o.backend = OG_BACKEND_CPU;
    REQUIRE(og_context_create(&o, &ctx) == OG_OK);
    g = omnigemm::test::host_f32_desc(m, n, k, a.data(), b.data(), c.data(), d.data());
  }
  ~Fixture() { og_context_destroy(ctx); }
  og_status run() { return og_gemm(ctx, &g); }
};

// The call fails with `code` and a message containing every `parts` substring.
void expect_error(Fixture& f, og_status code, std::initializer_list<const char*> parts) {
  const og_status s = f.run();
  const std::string msg = og_last_error_message();
  CAPTURE(msg);
  CHECK(s == code);
  CHECK_FALSE(msg.empty());
  for (const char* p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks \"" << std::string(p) << "\"");
}

bool all_nan(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isnan(x)) return false;
  return true;
}

}  // namespace

TEST_CASE("bad input: negative and too large sizes") {
  { Fixture f; f.g.a.rows = -1; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "negative"}); }
  { Fixture f; f.g.b.cols = -3; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"B", "negative"}); }
  { Fixture f; f.g.d.rows = -8; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D", "negative"}); }
  { Fixture f; f.g.a.rows = int64_t(1) << 40; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "2^31"}); }
  { Fixture f; f.g.batch_count = -2; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"batch_count", "negative"}); }
}

TEST_CASE("bad input: extents that overflow 64-bit offsets") {
  Fixture f;
  f.g.a.ld = std::numeric_limits<int64_t>::max() / 2;
  expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "overflow"});
  Fixture g;
  g.g.batch_count = 3;
  g.g.b.batch_stride = std::numeric_limits<int64_t>::max() / 2;
  g.g.d.batch_stride = 48;
  expect_error(g, OG_ERROR_INVALID_ARGUMENT, {"B", "overflow"});
}

TEST_CASE("bad input: leading dimensions smaller than the contiguous extent") {
  { Fixture f; f.g.a.ld = 4; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "leading dimension", "row-major"}); }
  {
    Fixture f;
    f.g.b.layout = OG_COL_MAJOR;
    f.g.b.ld = 4;  // a column-major 5 x 6 needs ld >= 5
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"B", "leading dimension", "column-major"});
  }
  { Fixture f; f.g.d.ld = 0; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D", "leading dimension"}); }
}

TEST_CASE("bad input: shape mismatches") {
  { Fixture f; f.g.b.rows = 4; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"shape mismatch", "inner"}); }
  { Fixture f; f.g.d.cols = 5; f.g.d.ld = 5; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"shape mismatch", "D"}); }
  {
    Fixture f;
    f.g.epilogue.beta = 1.0f;
    f.g.c.rows = 7;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"shape mismatch", "C"});
  }
  {
    Fixture f;  // transposing A makes it 5 x 8: the inner dimensions no longer agree
    f.g.a.transpose = 1;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"shape mismatch"});
  }
}

TEST_CASE("bad input: null, missing and misaligned memory") {
  { Fixture f; f.g.a.mem.ptr = nullptr; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "null pointer"}); }
  { Fixture f; f.g.b.mem.ptr = nullptr; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"B", "null pointer"}); }
  { Fixture f; f.g.d.mem.ptr = nullptr; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D", "null pointer"}); }
  {
    Fixture f;
    f.g.epilogue.beta = 0.5f;
    f.g.c.mem.kind = OG_MEMORY_NONE;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"C", "no memory"});
  }
  {
    Fixture f;
    f.g.epilogue.bias_mode = OG_BIAS_PER_N;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"bias", "no memory"});
  }
  { Fixture f; f.g.a.mem.offset = 2; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "aligned"}); }
  {
    Fixture f;
    f.g.d.mem.ptr = reinterpret_cast<char*>(f.d.data()) + 1;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D", "aligned"});
  }
  { Fixture f; f.g.a.mem.kind = og_memory_kind(42); expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "memory kind"}); }
}

TEST_CASE("bad input: output aliasing an input") {
  {
    Fixture f(6, 6, 6);
    f.g.d.mem = og_memory_host(f.a.data());
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D overlaps A"});
  }
  {
    Fixture f(6, 6, 6);
    f.g.d.mem = og_memory_host(f.b.data() + 3);
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D overlaps B"});
  }
  {
    Fixture f;
    f.g.epilogue.bias_mode = OG_BIAS_PER_M;
    f.g.epilogue.bias = og_memory_host(f.d.data() + 4);
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D overlaps bias"});
  }
  {
    Fixture f;
    f.g.epilogue.beta = 1.0f;
    f.g.c.mem = og_memory_host(f.d.data() + 1);
    f.g.c.rows = 7;  // shifted by one element: a partial overlap
    f.g.c.rows = 8;
    f.d.resize(f.d.size() + 8, NAN);
    f.g.d.mem = og_memory_host(f.d.data());
    f.g.c.mem = og_memory_host(f.d.data() + 1);
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D partially overlaps C"});
  }
  {
    Fixture f;
    f.g.batch_count = 2;
    f.d.resize(200, NAN);
    f.g.d.mem = og_memory_host(f.d.data());
    f.g.d.batch_stride = 10;  // one batch spans 48 elements
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D", "batch", "overlap"});
  }
}

TEST_CASE("valid: C given as exactly D updates in place") {
  omnigemm::test::HostMatrix A(9, 7, omnigemm::Dtype::f32), B(7, 5, omnigemm::Dtype::f32),
      D(9, 5, omnigemm::Dtype::f32);
  A.randomize();
  B.randomize();
  D.randomize();
  const omnigemm::test::HostMatrix C0 = D;  // the old D is the C term
  Fixture f;
  f.g.a = A.host_view().raw;
  f.g.b = B.host_view().raw;
  f.g.d = D.host_view().raw;
  f.g.c = f.g.d;
  f.g.epilogue.beta = -0.75f;
  REQUIRE(f.run() == OG_OK);
  omnigemm::test::EpilogueSpec e;
  e.beta = -0.75f;
  auto ref = omnigemm::test::reference_gemm(A, B, &C0, nullptr, e, 1);
  CHECK(omnigemm::test::compare(D, ref).rel_error <= omnigemm::test::tolerance(omnigemm::Dtype::f32, 7));
}

TEST_CASE("valid: zero sizes are no-ops that leave D untouched; K == 0 gives act(beta C + bias)") {
  for (int which = 0; which < 3; ++which) {
    Fixture f;
    if (which == 0) { f.g.a.rows = 0; f.g.d.rows = 0; }
    if (which == 1) { f.g.b.cols = 0; f.g.d.cols = 0; f.g.d.ld = 1; f.g.b.ld = 1; }
    if (which == 2) f.g.batch_count = 0;
    f.g.a.mem.ptr = nullptr;  // nothing is read, so even null inputs are fine
    CHECK(f.run() == OG_OK);
    CHECK(all_nan(f.d));
  }
  Fixture f(4, 3, 0);
  f.g.a = og_matrix_make(4, 0, OG_DTYPE_F32, OG_ROW_MAJOR);
  f.g.b = og_matrix_make(0, 3, OG_DTYPE_F32, OG_ROW_MAJOR);
  f.g.epilogue.beta = 2.0f;
  f.g.epilogue.bias_mode = OG_BIAS_PER_N;
  f.g.epilogue.bias = og_memory_host(f.bias.data());
  f.g.epilogue.activation = OG_ACT_RELU;
  REQUIRE(f.run() == OG_OK);
  for (float x : f.d) CHECK(x == doctest::Approx(2.0f * 1.0f + 0.125f));
}

TEST_CASE("bad input: enums, dtypes and epilogue fields") {
  { Fixture f; f.g.a.dtype = og_dtype(99); expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "dtype"}); }
  { Fixture f; f.g.b.layout = og_layout(7); expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"B", "layout"}); }
  { Fixture f; f.g.a.transpose = 2; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "transpose"}); }
  { Fixture f; f.g.d.transpose = 1; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"D", "transposed"}); }
  { Fixture f; f.g.epilogue.activation = og_activation(9); expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"activation"}); }
  { Fixture f; f.g.epilogue.bias_mode = og_bias_mode(5); expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"bias mode"}); }
  { Fixture f; f.g.epilogue.leaky_slope = NAN; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"leaky_slope"}); }
  {
    Fixture f;
    f.g.a.dtype = OG_DTYPE_NVFP4;  // A is 8 x 5 row-major: two fp4 per byte need an even ld
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"A", "fp4", "leading dimension must be even"});
  }
  {
    Fixture f;
    f.g.d.dtype = OG_DTYPE_FP8_E4M3;
    expect_error(f, OG_ERROR_UNSUPPORTED, {"output dtype", "fp8_e4m3", "f32, f16, bf16"});
  }
  {
    Fixture f;
    f.g.epilogue.bias_mode = OG_BIAS_PER_N;
    f.g.epilogue.bias = og_memory_host(f.bias.data());
    f.g.epilogue.bias_dtype = OG_DTYPE_FP8_E5M2;
    expect_error(f, OG_ERROR_UNSUPPORTED, {"bias dtype"});
  }
  { Fixture f; f.g.config = "128x"; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"config", "128x"}); }
  { Fixture f; f.g.config = "128x128x32-g0"; expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"config"}); }
}

TEST_CASE("bad input: memory kinds the backend cannot use, streams it does not have") {
  {
    Fixture f;
    for (og_matrix* m : {&f.g.a, &f.g.b, &f.g.d}) m->mem.kind = OG_MEMORY_CUDA;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"cpu", "memory kind"});
  }
  {
    Fixture f;
    f.g.b.mem.kind = OG_MEMORY_CUDA;
    expect_error(f, OG_ERROR_INVALID_ARGUMENT, {"different kinds of memory"});
  }
  {
    Fixture f;
    int dummy = 0;
    CHECK(og_gemm_async(f.ctx, &f.g, &dummy) == OG_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(og_last_error_message()).find("stream") != std::string::npos);
    CHECK(og_gemm_async(f.ctx, &f.g, nullptr) == OG_OK);  // no stream: runs synchronously
    CHECK_FALSE(std::isnan(f.d[0]));
  }
}

TEST_CASE("bad input: null handles at every C entry point") {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  CHECK(og_gemm(nullptr, &g) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(og_last_error_message()).find("null context") != std::string::npos);
  CHECK(og_gemm_async(nullptr, &g, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_host(nullptr, &g) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_context_create(nullptr, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  og_capabilities caps;
  CHECK(og_context_capabilities(nullptr, &caps) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_context_check_dtypes(nullptr, OG_DTYPE_F32, OG_DTYPE_F32, OG_DTYPE_F32) == OG_ERROR_INVALID_ARGUMENT);
  og_context_destroy(nullptr);  // a no-op
  og_gemm_desc_init(nullptr);
  og_context_options_init(nullptr);
  Fixture f;
  CHECK(og_gemm(f.ctx, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(og_last_error_message()).find("descriptor") != std::string::npos);
  CHECK(og_context_capabilities(f.ctx, nullptr) == OG_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("contexts: unavailable backends, bad options, capabilities and dtype queries") {
  og_context_options o;
  og_context_options_init(&o);
  og_context* ctx = nullptr;
  o.backend = OG_BACKEND_HIP;  // not built here, or built without an AMD device to run on
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_BACKEND_UNAVAILABLE);
  CHECK(std::string(og_last_error_message()).find("hip") != std::string::npos);
  CHECK(ctx == nullptr);
  CHECK(og_backend_available(OG_BACKEND_HIP) == 0);
  CHECK(og_backend_available(OG_BACKEND_CPU) == 1);
  o.backend = og_backend(17);
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_INVALID_ARGUMENT);
  o.backend = OG_BACKEND_CPU;
  o.device_index = -1;
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_INVALID_ARGUMENT);
  o.device_index = 0;
  o.tune_mode = og_tune_mode(9);
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_INVALID_ARGUMENT);
  o.tune_mode = OG_TUNE_OFF;
  o.cpu_threads = -4;
  CHECK(og_context_create(&o, &ctx) == OG_ERROR_INVALID_ARGUMENT);

  Fixture f;
  CHECK(og_context_backend(f.ctx) == OG_BACKEND_CPU);
  og_capabilities caps;
  REQUIRE(og_context_capabilities(f.ctx, &caps) == OG_OK);
  CHECK(caps.backend == OG_BACKEND_CPU);
  CHECK(std::strlen(caps.device_name) > 0);
  CHECK((caps.input_dtypes & (1u << OG_DTYPE_FP8_E4M3)) != 0);
  CHECK((caps.output_dtypes & (1u << OG_DTYPE_BF16)) != 0);
  CHECK((caps.output_dtypes & (1u << OG_DTYPE_FP8_E4M3)) == 0);
  CHECK((caps.memory_kinds & (1u << OG_MEMORY_HOST)) != 0);
  CHECK(og_context_check_dtypes(f.ctx, OG_DTYPE_F16, OG_DTYPE_FP8_E5M2, OG_DTYPE_BF16) == OG_OK);
  CHECK(og_context_check_dtypes(f.ctx, OG_DTYPE_MXFP4, OG_DTYPE_F16, OG_DTYPE_F32) == OG_OK);
  CHECK(caps.scale_modes == (1u << OG_SCALE_MODE_COUNT) - 1);
  CHECK(og_context_check_dtypes(f.ctx, OG_DTYPE_F16, OG_DTYPE_F16, OG_DTYPE_FP8_E4M3) == OG_ERROR_UNSUPPORTED);
  CHECK(std::string(og_last_error_message()).find("writes outputs: f32, f16, bf16") != std::string::npos);
}

TEST_CASE("names of statuses, dtypes and backends") {
  CHECK(std::string(og_status_name(OG_ERROR_DEVICE_LOST)) == "device_lost");
  CHECK(std::string(og_dtype_name(OG_DTYPE_FP8_E4M3)) == "fp8_e4m3");
  CHECK(std::string(og_backend_name(OG_BACKEND_VULKAN)) == "vulkan");
  CHECK(std::string(og_dtype_name(og_dtype(77))) == "unknown_dtype");
}
