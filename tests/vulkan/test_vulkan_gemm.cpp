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
#include "vulkan_family_support.hpp"
#include "gemm_portable.spv.h"  // the embedded SPIR-V (after vulkan_debug.hpp: it needs <cstdint>)
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
#include "gemm_coopmat.spv.h"
#endif
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
#include "gemm_coopmat2.spv.h"
#endif

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::optional<Context> vulkan_context(const char* test_name) { return backend_context(Backend::vulkan, test_name); }

void check_no_validation_messages() { CHECK(detail::vulkan_validation_message_count() == 0); }

// In place: C is D itself (beta = 2), an m x k by k x n GEMM of `in` inputs into f32 D, with
// `act`, forced to `config` when given; checked against the float64 reference.
void check_in_place(Context& ctx, int64_t m, int64_t n, int64_t k, Dtype in, Activation act, const std::string& config) {
  CAPTURE(config);
  HostMatrix A(m, k, in), B(k, n, in), D(m, n, Dtype::f32);
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
  g.epilogue.activation = act;
  g.config = config;
  const Status s = ctx.run_host(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  EpilogueSpec e;
  e.beta = 2.0f;
  e.act = act;
  CHECK(compare(D, reference_gemm(A, B, &C0, nullptr, e, 1)).rel_error <= tolerance(Dtype::f32, k, in, in));
}

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
  const detail::KernelFamily* portable = nullptr;
  for (const detail::KernelFamily* f : be.families())
    if (std::string(f->name()) == "portable") portable = f;
  REQUIRE(portable != nullptr);  // every Vulkan device runs the portable family
  int ran = 0;
  for (const detail::Config& cfg : portable->configs()) {
    const std::string text = cfg.to_string();
    CAPTURE(text);
    CHECK(text.rfind("portable:", 0) == 0);
    const Status probe = run_probe(*ctx, Dtype::f16, text);
    if (!probe.ok()) {  // a thread layout this subgroup size cannot form, or too many threads
      CHECK(probe.code == StatusCode::unsupported);
      MESSAGE("refused on " << be.device().name << ": " << probe.message);
      continue;
    }
    run_edge_shapes(*ctx, text, cfg.block_m, cfg.block_n, cfg.block_k, Dtype::f16, Dtype::bf16, Dtype::f16);
    ++ran;
  }
  CHECK(ran > 0);
  // f32 inputs never run on a cooperative-matrix family (and lavapipe has none at all): a forced
  // config naming one is refused with the family's reason; one naming a family that does not
  // exist is refused with the backend's families listed.
  for (const char* config : {"coopmat:128x128x32-g8-s2-w4", "coopmat2:128x128x32-g8-s1-w4"}) {
    CAPTURE(config);
    const Status s = run_probe(*ctx, Dtype::f32, config);
    CHECK(s.code == StatusCode::unsupported);
    // The family's reason: no cooperative matrices on this device, or no f32 inputs on them.
    CHECK_MESSAGE((s.message.find("cooperative matrix") != std::string::npos || s.message.find("inputs must be") != std::string::npos),
                  s.message);
  }
  const Status none = run_probe(*ctx, Dtype::f32, "nosuch:128x128x32-g8-s1-w4");
  CHECK(none.code == StatusCode::unsupported);
  CHECK_MESSAGE(none.message.find("vulkan: coopmat, coopmat_repack, coopmat2, skinny, portable") != std::string::npos, none.message);
  check_no_validation_messages();
}

// The bf16 cooperative-matrix modules are made on the host from the f16 ones at context creation
// (glslang 15 has no GL_EXT_bfloat16); checked here, without a device, for every such module built.
TEST_CASE("vulkan: each cooperative-matrix module can take bf16 multiplicands") {
  std::string why;
  // The portable module has no 16-bit float type at all: refused, with a reason.
  CHECK(detail::spirv_with_bf16_multiplicands(og_spv_gemm_portable, sizeof(og_spv_gemm_portable) / 4, &why).empty());
  CHECK(why.find("16-bit float") != std::string::npos);
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
  struct Module {
    const char* name;
    const uint32_t* words;
    size_t count;
  };
  std::vector<Module> modules{{"gemm_coopmat", og_spv_gemm_coopmat, sizeof(og_spv_gemm_coopmat) / 4}};
#ifdef OMNIGEMM_HAVE_COOPMAT2_SPIRV
  modules.push_back({"gemm_coopmat2", og_spv_gemm_coopmat2, sizeof(og_spv_gemm_coopmat2) / 4});
#else
  MESSAGE("SKIPPED vulkan coopmat2 bf16 module: built without the NV cooperative matrix 2 shader");
#endif
  for (const Module& m : modules) {
    CAPTURE(m.name);
    why.clear();
    const std::vector<uint32_t> bf16 = detail::spirv_with_bf16_multiplicands(m.words, m.count, &why);
    CHECK_MESSAGE(!bf16.empty(), why);
    // Two capabilities (2 words each), the extension (6) and the type's encoding operand (1).
    CHECK(bf16.size() == m.count + 11);
  }
#else
  MESSAGE("SKIPPED vulkan coopmat bf16 modules: built without cooperative-matrix shaders");
#endif
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
  check_in_place(*ctx, 33, 41, 20, Dtype::f32, Activation::none, "");

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
  // A timing of more launches than one descriptor pool holds (64): every launch recorded and run.
  D.poison();
  REQUIRE(be.upload(d_at, D.bytes.data(), D.bytes.size()).ok());
  double many_ms = -1;
  REQUIRE(be.time_ms(
                [&]() -> Status {
                  for (int i = 0; i < 150; ++i)
                    if (Status s = ctx->run(g); !s) return s;
                  return {};
                },
                many_ms)
              .ok());
  CHECK(many_ms > 0);
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

namespace {

// Every config of a cooperative-matrix family (vulkan.coopmat: KHR cooperative matrix;
// vulkan.coopmat2: NV cooperative matrix 2), forced on edge shapes. Which configs run is the
// family's decision (device shapes or granularities, workgroup sizes, shared memory). The configs
// of index part, part + parts, ... (in the family's table order): each compiles about a dozen
// pipelines per config (coopmat2 on the NVIDIA driver: about 100 s per config), so the test cases
// are split to fit a run of a few minutes each.
void every_config_forced(const std::string& family, int part = 0, int parts = 1) {
  auto ctx = vulkan_context("coopmat configs");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  CAPTURE(family);
  const detail::KernelFamily* fam = nullptr;
  for (const detail::KernelFamily* f : be.families())
    if (f->name() == family && detail::vulkan_family_usable(be, f)) fam = f;
  if (!fam) {
    MESSAGE("SKIPPED vulkan " << family << ": " << be.device().name << " cannot run the family ("
                              << missing_family_reason(be, family) << ")");
    check_no_validation_messages();
    return;
  }
  const bool coopmat2 = family == "coopmat2";
  int ran = 0, index = -1;
  std::string refused;
  for (const detail::Config& cfg : fam->configs()) {
    if (++index % parts != part) continue;
    CAPTURE(cfg.to_string());
    MESSAGE("vulkan " << family << " config " << cfg.to_string());  // progress (with -s): a hang names its config
    const Status s = run_probe(*ctx, Dtype::f16, cfg.to_string());
    if (!s.ok()) {
      CHECK(s.code == StatusCode::unsupported);  // refused with a reason, never a wrong answer
      CHECK(!s.message.empty());
      refused = s.message;
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
    // Batches with odd gaps (bases off 16-byte alignment: coopmat2 gathers them), fp8 e5m2 A,
    // column-major f16 D, bias per M, leaky ReLU.
    Case batched{cfg.block_m + 7, cfg.block_n + 2, cfg.block_k + 6, 3};
    batched.a = Dtype::fp8_e5m2;
    batched.b = Dtype::f16;
    batched.d = Dtype::f16;
    batched.ld = Layout::col_major;
    batched.epi.beta = -1.0f;
    batched.epi.act = Activation::leaky_relu;
    batched.epi.slope = 0.1f;
    batched.epi.bias_mode = BiasMode::per_m;
    batched.config = cfg.to_string();
    // coopmat2 stages both gathered operands in shared memory: the largest tiles cannot.
    if (coopmat2) batched.may_refuse = "shared memory";
    run_case(*ctx, batched);
    // In place: C is D (f32, rows contiguous: coopmat2 stores it as a tensor), silu.
    check_in_place(*ctx, cfg.block_m + 5, cfg.block_n + 3, 40, Dtype::f16, Activation::silu, cfg.to_string());
    // The 16-byte load path (contiguous, 8-aligned 16-bit inputs) in every storage orientation,
    // with bf16 multiplicands too where the device has them.
    const Status bf16 = run_probe(*ctx, Dtype::bf16, cfg.to_string());
    if (!bf16.ok()) {
      CHECK(bf16.code == StatusCode::unsupported);
      CHECK(bf16.message.find("bf16") != std::string::npos);
      MESSAGE("SKIPPED vulkan " << family << " bf16 (" << cfg.to_string() << "): " << bf16.message);
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
  if (ran == 0)
    MESSAGE("SKIPPED vulkan " << family << " (part " << part + 1 << " of " << parts << "): " << be.device().name
                              << " runs none of its configs (" << refused << ")");
  check_no_validation_messages();
}

}  // namespace

TEST_CASE("vulkan: every cooperative-matrix config the device can run, forced, on edge shapes (coopmat)") {
  every_config_forced("coopmat");
}
TEST_CASE("vulkan: every cooperative-matrix config the device can run, forced, on edge shapes (coopmat2 part 1)") {
  every_config_forced("coopmat2", 0, 4);
}
TEST_CASE("vulkan: every cooperative-matrix config the device can run, forced, on edge shapes (coopmat2 part 2)") {
  every_config_forced("coopmat2", 1, 4);
}
TEST_CASE("vulkan: every cooperative-matrix config the device can run, forced, on edge shapes (coopmat2 part 3)") {
  every_config_forced("coopmat2", 2, 4);
}
TEST_CASE("vulkan: every cooperative-matrix config the device can run, forced, on edge shapes (coopmat2 part 4)") {
  every_config_forced("coopmat2", 3, 4);
}
