// The kernel-family contract through the public API on the CPU backend: og_gemm_explain (family,
// config, source, plan, the report), forced configs naming a family or not, the refusal that lists
// the families, and the memory and timing entry points tools use.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm.h"
#include "omnigemm/omnigemm.hpp"

namespace {

struct CpuContext {
  og_context* ctx = nullptr;
  CpuContext(og_tune_mode mode = OG_TUNE_OFF) {
    og_context_options o;
    og_context_options_init(&o);
    o.backend = OG_BACKEND_CPU;
    o.tune_mode = mode;
    REQUIRE(og_context_create(&o, &ctx) == OG_OK);
  }
  ~CpuContext() { og_context_destroy(ctx); }
};

// A host problem M x N x K in f32 with fresh random inputs and a poisoned D.
struct HostGemm {
  omnigemm::test::HostMatrix a, b, d;
  omnigemm::Gemm g;
  HostGemm(int64_t m, int64_t n, int64_t k) : a(m, k, omnigemm::Dtype::f32), b(k, n, omnigemm::Dtype::f32), d(m, n, omnigemm::Dtype::f32) {
    a.randomize();
    b.randomize();
    d.poison();
    g.a = a.host_view();
    g.b = b.host_view();
    g.d = d.host_view();
  }
};

}  // namespace

TEST_CASE("explain: names the family and config og_gemm runs, and the launch plan") {
  CpuContext c;
  HostGemm h(67, 45, 33);
  og_gemm_desc desc = h.g.to_c();
  og_explanation e;
  std::memset(&e, 0x5a, sizeof e);
  REQUIRE(og_gemm_explain(c.ctx, &desc, &e) == OG_OK);
  CHECK(e.backend == OG_BACKEND_CPU);
  CHECK(std::string(e.family) == "cpu.packed");
  CHECK(std::string(e.config).rfind("packed:", 0) == 0);
  CHECK(e.source == OG_CHOICE_COST_MODEL);
  CHECK(e.predicted_ms > 0);
  CHECK(e.threads >= 1);
  const std::string report = e.report;
  CHECK(report.find("runs cpu.packed") != std::string::npos);
  CHECK(report.find("cost model") != std::string::npos);
  CHECK(report.find("M=67 N=45 K=33") != std::string::npos);
  // Nothing ran: D is still poisoned.
  for (int64_t i = 0; i < h.d.rows; ++i)
    for (int64_t j = 0; j < h.d.cols; ++j) REQUIRE(std::isnan(h.d.get(0, i, j)));

  // Forcing the explained config runs the same thing, and explain says it was forced.
  h.g.config = e.config;
  desc = h.g.to_c();
  og_explanation forced;
  REQUIRE(og_gemm_explain(c.ctx, &desc, &forced) == OG_OK);
  CHECK(forced.source == OG_CHOICE_FORCED);
  CHECK(std::string(forced.config) == e.config);
  REQUIRE(og_gemm_host(c.ctx, &desc) == OG_OK);
  const auto ref = omnigemm::test::reference_gemm(h.a, h.b, nullptr, nullptr, {}, 1);
  const auto err = omnigemm::test::compare(h.d, ref);
  CHECK(err.non_finite == 0);
  CHECK(err.rel_error < omnigemm::test::tolerance(omnigemm::Dtype::f32, 33));

  // A config without a family name resolves to the first family that runs it.
  h.g.config = "112x1024x2048-g1-s1-w1";
  desc = h.g.to_c();
  REQUIRE(og_gemm_explain(c.ctx, &desc, &forced) == OG_OK);
  CHECK(std::string(forced.config) == "packed:112x1024x2048-g1-s1-w1");
}

TEST_CASE("explain: a config naming another backend's family is refused with the families listed") {
  CpuContext c;
  HostGemm h(16, 16, 16);
  h.g.config = "sm90_wgmma:128x256x64-g16-s4-w12-coop";
  og_gemm_desc desc = h.g.to_c();
  og_explanation e;
  CHECK(og_gemm_explain(c.ctx, &desc, &e) == OG_ERROR_UNSUPPORTED);
  std::string msg = og_last_error_message();
  CHECK(msg.find("names no kernel family") != std::string::npos);
  CHECK(msg.find("cpu: packed") != std::string::npos);
  CHECK(og_gemm_host(c.ctx, &desc) == OG_ERROR_UNSUPPORTED);
  // A form the family does not have.
  h.g.config = "packed:112x1024x2048-g1-s1-w1-coop";
  desc = h.g.to_c();
  CHECK(og_gemm_explain(c.ctx, &desc, &e) == OG_ERROR_UNSUPPORTED);
  msg = og_last_error_message();
  CHECK(msg.find("micro-kernel") != std::string::npos);
  // Malformed text is an invalid argument that says what is wrong.
  h.g.config = "128x128x32-x1";
  desc = h.g.to_c();
  CHECK(og_gemm_explain(c.ctx, &desc, &e) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(og_last_error_message()).find("family") != std::string::npos);
  // Null arguments.
  CHECK(og_gemm_explain(c.ctx, &desc, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_explain(nullptr, &desc, &e) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_explain(c.ctx, nullptr, &e) == OG_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("explain: an empty problem runs nothing, and the C++ API gives the same answer") {
  CpuContext c;
  HostGemm h(0, 8, 8);
  og_gemm_desc desc = h.g.to_c();
  og_explanation e;
  REQUIRE(og_gemm_explain(c.ctx, &desc, &e) == OG_OK);
  CHECK(std::string(e.report).find("nothing runs") != std::string::npos);
  CHECK(std::string(e.family).empty());

  auto ctx = omnigemm::Context::create({.backend = omnigemm::Backend::cpu, .tune_mode = omnigemm::TuneMode::off});
  REQUIRE(ctx.ok());
  HostGemm full(40, 50, 60);
  auto x = ctx->explain(full.g);
  REQUIRE(x.ok());
  CHECK(x->family() == "cpu.packed");
  CHECK(x->report().find("runs cpu.packed") != std::string::npos);
}

TEST_CASE("memory api: allocation, copies both ways, timing and refusals") {
  CpuContext c;
  og_memory m{};
  REQUIRE(og_memory_alloc(c.ctx, 1000, &m) == OG_OK);
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = (unsigned char)(omnigemm::test::rng()() & 0xff);
  REQUIRE(og_memory_upload(c.ctx, m, in.data(), in.size()) == OG_OK);
  REQUIRE(og_memory_download(c.ctx, out.data(), m, out.size()) == OG_OK);
  CHECK(in == out);
  CHECK(og_context_synchronize(c.ctx, nullptr) == OG_OK);

  struct Work {
    int calls = 0;
    og_status result = OG_OK;
  } w;
  double ms = -1;
  auto launch = [](void* user) -> og_status {
    auto* work = static_cast<Work*>(user);
    ++work->calls;
    return work->result;
  };
  REQUIRE(og_context_time(c.ctx, launch, &w, &ms) == OG_OK);
  CHECK(w.calls == 1);
  CHECK(ms >= 0);
  w.result = OG_ERROR_BACKEND_FAILURE;
  CHECK(og_context_time(c.ctx, launch, &w, &ms) == OG_ERROR_BACKEND_FAILURE);
  CHECK(og_context_time(c.ctx, nullptr, &w, &ms) == OG_ERROR_INVALID_ARGUMENT);

  og_capabilities caps;
  REQUIRE(og_context_capabilities(c.ctx, &caps) == OG_OK);
  CHECK(caps.compute_units >= 1);

  // Memory not from og_memory_alloc on this context, a double free, zero bytes, null pointers.
  int local = 0;
  CHECK(og_memory_free(c.ctx, og_memory_host(&local)) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_memory_upload(c.ctx, og_memory_host(&local), in.data(), 4) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_memory_upload(c.ctx, m, nullptr, 4) == OG_ERROR_INVALID_ARGUMENT);
  og_memory none{};
  CHECK(og_memory_alloc(c.ctx, 0, &none) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(none.kind == OG_MEMORY_NONE);  // a failed allocation hands out nothing
  og_memory m2{};
  REQUIRE(og_memory_alloc(c.ctx, 64, &m2) == OG_OK);
  REQUIRE(og_memory_free(c.ctx, m) == OG_OK);
  CHECK(og_memory_free(c.ctx, m) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_memory_alloc(c.ctx, size_t(1) << 62, &none) == OG_ERROR_OUT_OF_MEMORY);
  // m2 is left allocated: the context frees it (the sanitizer build checks for the leak).
}
