// Vulkan backend on whatever Vulkan device exists (Mesa lavapipe on a machine without a GPU),
// with the Khronos validation layer on when OMNIGEMM_VK_VALIDATION=1 (scripts/test.sh sets it):
// every test also asserts that the layer reported nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <fstream>

#include "context_internal.hpp"
#include "backend_cases.hpp"
#include "vulkan_debug.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::optional<Context> vulkan_context(const char* test_name) { return backend_context(Backend::vulkan, test_name); }

void check_no_validation_messages() { CHECK(detail::vulkan_validation_message_count() == 0); }

}  // namespace

TEST_CASE("vulkan: random shapes, dtypes, layouts, batches and epilogues match float64") {
  auto ctx = vulkan_context("random cases");
  if (!ctx) return;
  for (int t = 0; t < 40; ++t) run_case(*ctx, random_case(80, t % 3 != 0));
  check_no_validation_messages();
}

TEST_CASE("vulkan: every portable config the device can run, forced, on edge shapes") {
  auto ctx = vulkan_context("forced configs");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  int ran = 0;
  for (const auto& cfg : detail::config_table(OG_BACKEND_VULKAN)) {
    std::string why;
    const bool fits = cfg.extra == 0 && detail::config_fits(cfg, be.device().limits, 4, &why);
    if (!fits) continue;
    run_edge_shapes(*ctx, cfg.to_string(), cfg.block_m, cfg.block_n, cfg.block_k, Dtype::f16, Dtype::bf16, Dtype::f16);
    ++ran;
  }
  CHECK(ran > 0);
  // A cooperative-matrix config the device or dtype cannot use (f32 inputs never take -x1;
  // lavapipe has no cooperative matrices) is refused with a message naming what runs.
  HostMatrix A(8, 8, Dtype::f32), B(8, 8, Dtype::f32), D(8, 8, Dtype::f32);
  A.randomize();
  B.randomize();
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  g.config = "128x128x32-g8-s2-w4-x1";
  Status s = ctx->run_host(g);
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("portable") != std::string::npos);
  g.config = "128x128x32-g8-s1-w4-x2";  // NV cooperative matrix 2: not implemented
  s = ctx->run_host(g);
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("-x0") != std::string::npos);
  check_no_validation_messages();
}

TEST_CASE("vulkan: K == 0, in place C == D, broadcast batches, large-ish problem") {
  auto ctx = vulkan_context("special cases");
  if (!ctx) return;
  Case k0{17, 9, 0};
  k0.epi.beta = 0.5f;
  k0.epi.bias_mode = BiasMode::per_m;
  k0.epi.act = Activation::silu;
  run_case(*ctx, k0);

  Case big{300, 257, 190};
  big.a = Dtype::bf16;
  big.b = Dtype::fp8_e4m3;
  big.d = Dtype::bf16;
  run_case(*ctx, big);

  // In place: C is D itself.
  HostMatrix A(33, 20, Dtype::f32), B(20, 41, Dtype::f32), D(33, 41, Dtype::f32);
  A.randomize();
  B.randomize();
  D.randomize();
  const HostMatrix C0 = D;
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  g.c = g.d;
  g.epilogue.beta = 2.0f;
  REQUIRE(ctx->run_host(g).ok());
  EpilogueSpec e;
  e.beta = 2.0f;
  CHECK(compare(D, reference_gemm(A, B, &C0, nullptr, e, 1)).rel_error <= tolerance(Dtype::f32, 20));

  // Broadcast A over 3 batches (batch stride 0).
  HostMatrix A1(12, 10, Dtype::f16), B3(10, 14, Dtype::f16, Layout::row_major, 0, 3), D3(12, 14, Dtype::f32, Layout::row_major, 0, 3);
  A1.randomize();
  B3.randomize();
  D3.poison();
  Gemm gb;
  gb.a = A1.host_view();
  gb.b = B3.host_view();
  gb.d = D3.host_view();
  gb.batch_count = 3;
  REQUIRE(ctx->run_host(gb).ok());
  CHECK(compare(D3, reference_gemm(A1, B3, nullptr, nullptr, EpilogueSpec{}, 3)).rel_error <= tolerance(Dtype::f32, 10));
  check_no_validation_messages();
}

TEST_CASE("vulkan: device buffers, asynchronous recording into the backend's own queue, timing") {
  auto ctx = vulkan_context("device buffers");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  HostMatrix A(70, 50, Dtype::f16), B(50, 60, Dtype::f16), D(70, 60, Dtype::f32);
  A.randomize();
  B.randomize();
  D.poison();
  og_memory da, db, dd;
  REQUIRE(be.allocate(A.bytes.size(), da).ok());
  REQUIRE(be.allocate(B.bytes.size(), db).ok());
  REQUIRE(be.allocate(D.bytes.size() + 64, dd).ok());
  REQUIRE(be.upload(da, A.bytes.data(), A.bytes.size()).ok());
  REQUIRE(be.upload(db, B.bytes.data(), B.bytes.size()).ok());
  og_memory d_at = dd;
  d_at.offset = 64;  // a byte offset inside the buffer
  REQUIRE(be.upload(d_at, D.bytes.data(), D.bytes.size()).ok());
  Gemm g;
  g.a = A.view(Memory{da});
  g.b = B.view(Memory{db});
  g.d = D.view(Memory{d_at});
  REQUIRE(ctx->run(g).ok());
  double ms = -1;
  REQUIRE(be.time_ms([&] { return ctx->run(g); }, ms).ok());
  CHECK(ms > 0);
  REQUIRE(be.download(D.bytes.data(), d_at, D.bytes.size()).ok());
  CHECK(compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1)).rel_error <= tolerance(Dtype::f32, 50));
  // Host pointers are refused by the device-memory call, with a hint.
  Gemm h;
  h.a = A.host_view();
  h.b = B.host_view();
  h.d = D.host_view();
  Status s = ctx->run(h);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK(s.message.find("og_gemm_host") != std::string::npos);
  be.release(da);
  be.release(db);
  be.release(dd);
  check_no_validation_messages();
}

TEST_CASE("vulkan: a corrupt pipeline cache file is ignored") {
  const std::string path = "/tmp/omnigemm-test-pipeline-cache.bin";
  { std::ofstream(path, std::ios::binary) << "this is not a pipeline cache, not even close to one at all"; }
  setenv("OMNIGEMM_VK_PIPELINE_CACHE", path.c_str(), 1);
  {
    auto ctx = vulkan_context("pipeline cache");
    if (ctx) run_case(*ctx, Case{5, 6, 7});
  }
  unsetenv("OMNIGEMM_VK_PIPELINE_CACHE");
  std::filesystem::remove(path);
  check_no_validation_messages();
}

TEST_CASE("vulkan: one thread times while another runs GEMMs on the same context") {
  auto ctx = vulkan_context("concurrency");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  HostMatrix A(40, 30, Dtype::f32), B(30, 20, Dtype::f32), D(40, 20, Dtype::f32);
  A.randomize();
  B.randomize();
  og_memory da, db, dd;
  REQUIRE(be.allocate(A.bytes.size(), da).ok());
  REQUIRE(be.allocate(B.bytes.size(), db).ok());
  REQUIRE(be.allocate(D.bytes.size(), dd).ok());
  REQUIRE(be.upload(da, A.bytes.data(), A.bytes.size()).ok());
  REQUIRE(be.upload(db, B.bytes.data(), B.bytes.size()).ok());
  Gemm timed;
  timed.a = A.view(Memory{da});
  timed.b = B.view(Memory{db});
  timed.d = D.view(Memory{dd});
  std::atomic<int> timing_failures{0};
  std::thread timer([&] {
    for (int i = 0; i < 20; ++i) {
      double ms = 0;
      if (!be.time_ms([&] { return ctx->run(timed); }, ms).ok() || !(ms > 0)) ++timing_failures;
    }
  });
  for (int i = 0; i < 10; ++i) run_case(*ctx, Case{23, 19, 17});  // submitted and checked meanwhile
  timer.join();
  CHECK(timing_failures.load() == 0);
  be.release(da);
  be.release(db);
  be.release(dd);
  check_no_validation_messages();
}

TEST_CASE("vulkan: every cooperative-matrix config the device can run, forced, on edge shapes") {
  auto ctx = vulkan_context("coopmat configs");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  // Which -x1 configs run is the backend's decision (device coopmat shapes, shared memory).
  int ran = 0;
  for (const auto& cfg : detail::config_table(OG_BACKEND_VULKAN)) {
    if (cfg.extra != 1) continue;
    HostMatrix A(8, 8, Dtype::f16), B(8, 8, Dtype::f16), D(8, 8, Dtype::f32);
    A.randomize();
    B.randomize();
    Gemm g;
    g.a = A.host_view();
    g.b = B.host_view();
    g.d = D.host_view();
    g.config = cfg.to_string();
    const Status s = ctx->run_host(g);
    if (!s.ok()) {
      CHECK(s.code == StatusCode::unsupported);  // refused with a reason, never a wrong answer
      continue;
    }
    // Edge shapes, fp8 and f16 inputs, strided (transposed) B, the full epilogue.
    for (int64_t edge : {int64_t(1), int64_t(cfg.block_m - 1), int64_t(cfg.block_m + 3)}) {
      Case c{edge, cfg.block_n + 5, 2 * cfg.block_k + 3};
      c.config = cfg.to_string();
      c.a = Dtype::f16;
      c.b = edge == 1 ? Dtype::fp8_e4m3 : Dtype::f16;
      c.d = edge == 1 ? Dtype::bf16 : Dtype::f32;
      c.tb = edge != 1;
      c.epi.alpha = 0.75f;
      c.epi.beta = 0.5f;
      c.epi.act = Activation::gelu_tanh;
      c.epi.bias_mode = BiasMode::per_n;
      run_case(*ctx, c);
    }
    // A stored column-major (staged K x M) through the element-wise path, ragged edges.
    Case a_cols{cfg.block_m + 3, cfg.block_n - 1, cfg.block_k + 5};
    a_cols.a = a_cols.b = Dtype::f16;
    a_cols.la = Layout::col_major;
    a_cols.config = cfg.to_string();
    run_case(*ctx, a_cols);
    // The 16-byte load path (contiguous, 8-aligned 16-bit inputs) in every storage orientation,
    // with bf16 multiplicands too where the device has them.
    HostMatrix A16(8, 8, Dtype::bf16), B16(8, 8, Dtype::bf16);
    A16.randomize();
    B16.randomize();
    g.a = A16.host_view();
    g.b = B16.host_view();
    const Status bf16 = ctx->run_host(g);
    if (!bf16.ok()) {
      CHECK(bf16.code == StatusCode::unsupported);
      CHECK(bf16.message.find("bf16") != std::string::npos);
      MESSAGE("SKIPPED vulkan coopmat bf16 (" << cfg.to_string() << "): " << bf16.message);
    }
    for (Dtype t : {Dtype::f16, Dtype::bf16}) {
      if (t == Dtype::bf16 && !bf16.ok()) continue;
      for (Layout la : {Layout::row_major, Layout::col_major})
        for (Layout lb : {Layout::row_major, Layout::col_major}) {
          Case aligned{2 * cfg.block_m, cfg.block_n + 8, 3 * cfg.block_k + 8};
          aligned.a = aligned.b = t;
          aligned.d = Dtype::f16;
          aligned.la = la;
          aligned.lb = lb;
          aligned.tma_aligned = aligned.d_aligned = true;
          aligned.config = cfg.to_string();
          run_case(*ctx, aligned);
        }
    }
    ++ran;
  }
  if (ran == 0) {
    MESSAGE("SKIPPED vulkan coopmat: " << be.device().name << " runs no -x1 config (no KHR cooperative matrix here)");
    return;
  }
  check_no_validation_messages();
}
