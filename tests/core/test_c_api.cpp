// The C entry points themselves: defaults filled by the *_init functions, helper constructors,
// names of every enum value, the thread-local error message, and og_gemm_host on the CPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "omnigemm/omnigemm.h"

TEST_CASE("c api: init functions fill the documented defaults") {
  og_gemm_desc g;
  std::memset(&g, 0x5a, sizeof g);  // garbage everywhere; init must overwrite every field used
  og_gemm_desc_init(&g);
  CHECK(g.epilogue.alpha == 1.0f);
  CHECK(g.epilogue.beta == 0.0f);
  CHECK(g.epilogue.activation == OG_ACT_NONE);
  CHECK(g.epilogue.leaky_slope == doctest::Approx(0.01f));
  CHECK(g.epilogue.bias_mode == OG_BIAS_NONE);
  CHECK(g.epilogue.bias_dtype == OG_DTYPE_F32);
  CHECK(g.epilogue.bias.kind == OG_MEMORY_NONE);
  CHECK(g.epilogue.bias_batch_stride == 0);
  CHECK(g.batch_count == 1);
  CHECK(g.config == nullptr);
  for (const og_matrix* m : {&g.a, &g.b, &g.c, &g.d}) {
    CHECK(m->mem.kind == OG_MEMORY_NONE);
    CHECK(m->transpose == 0);
    CHECK(m->batch_stride == 0);
  }

  og_context_options o;
  std::memset(&o, 0x5a, sizeof o);
  og_context_options_init(&o);
  CHECK(o.backend == OG_BACKEND_AUTO);
  CHECK(o.device_index == 0);
  CHECK(o.tune_mode == OG_TUNE_CACHE_ONLY);
  CHECK(o.tune_cache_path == nullptr);
  CHECK(o.cpu_threads == 0);
  CHECK(o.vulkan == nullptr);

  const og_matrix rm = og_matrix_make(5, 7, OG_DTYPE_BF16, OG_ROW_MAJOR);
  CHECK(rm.rows == 5);
  CHECK(rm.cols == 7);
  CHECK(rm.ld == 7);
  CHECK(rm.dtype == OG_DTYPE_BF16);
  CHECK(rm.mem.kind == OG_MEMORY_NONE);
  CHECK(rm.scale.mem.kind == OG_MEMORY_NONE);
  CHECK(rm.scale.mode == OG_SCALE_MODE_DEFAULT);
  CHECK(rm.scale.layout == OG_SCALE_ROW_MAJOR);
  CHECK(rm.scale.ld == 0);
  CHECK(rm.scale.batch_stride == 0);
  CHECK(rm.scale.global == 1.0f);
  const og_matrix cm = og_matrix_make(5, 7, OG_DTYPE_F16, OG_COL_MAJOR);
  CHECK(cm.layout == OG_COL_MAJOR);
  CHECK(cm.ld == 5);  // column-major: the contiguous extent is the row count

  int x = 0;
  const og_memory m = og_memory_host(&x);
  CHECK(m.kind == OG_MEMORY_HOST);
  CHECK(m.ptr == &x);
  CHECK(m.offset == 0);
}

TEST_CASE("c api: every enum value has a distinct name; out-of-range values say unknown") {
  std::set<std::string> names;
  for (int s = OG_OK; s <= OG_ERROR_INTERNAL; ++s) names.insert(og_status_name(og_status(s)));
  CHECK(names.size() == 8);
  names.clear();
  for (int d = 0; d < OG_DTYPE_COUNT; ++d) names.insert(og_dtype_name(og_dtype(d)));
  CHECK(names.size() == OG_DTYPE_COUNT);
  CHECK(names.count("mxfp4") == 1);
  names.clear();
  for (int b = 0; b < OG_BACKEND_COUNT; ++b) names.insert(og_backend_name(og_backend(b)));
  CHECK(names.size() == OG_BACKEND_COUNT);
  CHECK(names.count("hip") == 1);
  for (const char* n : {og_status_name(og_status(-1)), og_status_name(og_status(99)), og_dtype_name(og_dtype(-3)),
                        og_backend_name(og_backend(42))}) {
    REQUIRE(n != nullptr);
    CHECK(std::string(n).find("unknown") != std::string::npos);
  }
}

TEST_CASE("c api: the error message is per thread") {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  REQUIRE(og_gemm(nullptr, &g) == OG_ERROR_INVALID_ARGUMENT);
  const std::string here = og_last_error_message();
  CHECK_FALSE(here.empty());
  std::string other = "not run";
  std::thread([&] { other = og_last_error_message(); }).join();
  CHECK(other.empty());  // a fresh thread has had no failure
  std::thread([&] {
    og_context_options o;
    og_context_options_init(&o);
    o.backend = OG_BACKEND_HIP;
    og_context* c = nullptr;
    (void)og_context_create(&o, &c);
  }).join();
  CHECK(std::string(og_last_error_message()) == here);  // another thread's failure does not leak here
}

TEST_CASE("c api: og_gemm_host with transposes, batches and bias on the CPU backend") {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1, 1);
  const int M = 11, N = 13, K = 17, B = 3;
  std::vector<float> a(size_t(B) * K * M), b(size_t(B) * N * K), bias(size_t(B) * M), d(size_t(B) * M * N, NAN);
  for (auto* v : {&a, &b, &bias})
    for (auto& x : *v) x = u(rng);
  og_context_options o;
  og_context_options_init(&o);
  o.backend = OG_BACKEND_CPU;
  og_context* ctx = nullptr;
  REQUIRE(og_context_create(&o, &ctx) == OG_OK);
  REQUIRE(og_context_backend(ctx) == OG_BACKEND_CPU);
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(K, M, OG_DTYPE_F32, OG_ROW_MAJOR);  // stored K x M, used transposed
  g.a.transpose = 1;
  g.a.batch_stride = K * M;
  g.a.mem = og_memory_host(a.data());
  g.b = og_matrix_make(N, K, OG_DTYPE_F32, OG_COL_MAJOR);  // col-major N x K, transposed: K x N
  g.b.transpose = 1;
  g.b.batch_stride = N * K;
  g.b.mem = og_memory_host(b.data());
  g.d = og_matrix_make(M, N, OG_DTYPE_F32, OG_COL_MAJOR);
  g.d.batch_stride = M * N;
  g.d.mem = og_memory_host(d.data());
  g.batch_count = B;
  g.epilogue.alpha = -0.5f;
  g.epilogue.bias_mode = OG_BIAS_PER_M;
  g.epilogue.bias = og_memory_host(bias.data());
  g.epilogue.bias_batch_stride = M;
  g.epilogue.activation = OG_ACT_LEAKY_RELU;
  g.epilogue.leaky_slope = 0.1f;
  REQUIRE(og_gemm_host(ctx, &g) == OG_OK);
  double num = 0, den = 0;
  for (int q = 0; q < B; ++q)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0;
        // A stored row-major K x M: A^T(i, k) = a[k * M + i]; B stored col-major N x K with ld N:
        // element (j, k) at j + k * N, so B^T(k, j) = b[j + k * N].
        for (int k = 0; k < K; ++k) acc += double(a[size_t(q * K * M + k * M + i)]) * b[size_t(q * N * K + j + k * N)];
        double x = -0.5 * acc + bias[size_t(q * M + i)];
        const double ref = x >= 0 ? x : 0.1 * x;
        const double out = d[size_t(q * M * N + i + j * M)];
        REQUIRE_FALSE(std::isnan(out));
        num += (out - ref) * (out - ref);
        den += ref * ref;
      }
  CHECK(std::sqrt(num / den) < 1e-5);
  og_context_destroy(ctx);
}

TEST_CASE("c api: null context, descriptor and output pointers at every entry point") {
  og_context_options o;
  og_context_options_init(&o);
  o.backend = OG_BACKEND_CPU;
  og_context* ctx = nullptr;
  REQUIRE(og_context_create(&o, &ctx) == OG_OK);
  auto refused = [](og_status s, const char* word) {
    CHECK(s == OG_ERROR_INVALID_ARGUMENT);
    const std::string msg = og_last_error_message();
    CAPTURE(msg);
    CHECK(msg.find(word) != std::string::npos);
  };
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  refused(og_gemm(ctx, nullptr), "descriptor");
  refused(og_gemm_async(ctx, nullptr, nullptr), "descriptor");
  refused(og_gemm_host(ctx, nullptr), "descriptor");
  refused(og_gemm(nullptr, &g), "null context");
  refused(og_gemm_async(nullptr, &g, nullptr), "null context");
  refused(og_gemm_host(nullptr, &g), "null context");
  refused(og_gemm(nullptr, nullptr), "null");
  refused(og_context_create(&o, nullptr), "null");
  og_capabilities caps;
  refused(og_context_capabilities(nullptr, &caps), "null");
  refused(og_context_capabilities(ctx, nullptr), "null");
  refused(og_context_check_dtypes(nullptr, OG_DTYPE_F32, OG_DTYPE_F32, OG_DTYPE_F32), "null");
  CHECK(og_context_backend(nullptr) == OG_BACKEND_AUTO);
  // Out-of-range dtypes in the query are refused, not indexed into a table.
  const og_status s = og_context_check_dtypes(ctx, og_dtype(40), OG_DTYPE_F32, OG_DTYPE_F32);
  CHECK(s != OG_OK);
  CHECK_FALSE(std::string(og_last_error_message()).empty());
  // An all-default descriptor (no memory anywhere, 0 x 0 x 0) is a valid no-op.
  CHECK(og_gemm(ctx, &g) == OG_OK);
  og_context_destroy(ctx);
}
