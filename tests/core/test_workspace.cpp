// The caller's workspace (og_gemm_desc.workspace, og_gemm_workspace_size) on the CPU backend,
// which needs none: the query answers 0 for every problem, explain says none is needed, a valid
// workspace is accepted and left untouched, and every malformed one (too small is the CUDA tests'
// part) is refused by name before anything runs. C and C++ API.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/omnigemm.h"
#include "omnigemm/omnigemm.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

struct Fixture {
  og_context* ctx = nullptr;
  HostMatrix A{37, 29, Dtype::f32}, B{29, 41, Dtype::f32}, D{37, 41, Dtype::f32};
  alignas(256) unsigned char ws[4096];
  og_gemm_desc g;
  Fixture() {
    og_context_options o;
    og_context_options_init(&o);
    o.backend = OG_BACKEND_CPU;
    REQUIRE(og_context_create(&o, &ctx) == OG_OK);
    A.randomize();
    B.randomize();
    D.poison();
    std::memset(ws, 0xa5, sizeof ws);
    og_gemm_desc_init(&g);
    g.a = A.host_view().raw;
    g.b = B.host_view().raw;
    g.d = D.host_view().raw;
  }
  ~Fixture() { og_context_destroy(ctx); }
  void expect_refused(std::initializer_list<const char*> parts) {
    D.poison();
    const HostMatrix before = D;
    uint64_t bytes = 12345;
    CHECK(og_gemm_workspace_size(ctx, &g, &bytes) == OG_ERROR_INVALID_ARGUMENT);
    CHECK(bytes == 0);
    CHECK(og_gemm(ctx, &g) == OG_ERROR_INVALID_ARGUMENT);
    const std::string msg = og_last_error_message();
    CAPTURE(msg);
    for (const char* p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks \"" << std::string(p) << "\"");
    CHECK(D.bytes == before.bytes);  // nothing ran
  }
};

}  // namespace

TEST_CASE("workspace: the CPU backend needs none, the query says 0 and explain says so") {
  Fixture f;
  uint64_t bytes = 99;
  REQUIRE(og_gemm_workspace_size(f.ctx, &f.g, &bytes) == OG_OK);
  CHECK(bytes == 0);
  og_explanation ex;
  REQUIRE(og_gemm_explain(f.ctx, &f.g, &ex) == OG_OK);
  CHECK(ex.workspace_bytes == 0);
  CHECK(ex.workspace_source == OG_WORKSPACE_NONE);
  CHECK(std::string(ex.report).find("workspace: none needed") != std::string::npos);
  // Batches, a forced config, bf16: still none.
  HostMatrix A(64, 300, Dtype::bf16, Layout::col_major, 3, 3, 1), B(300, 70, Dtype::bf16, Layout::row_major, 0, 3, 0),
      D(64, 70, Dtype::bf16, Layout::row_major, 2, 3, 5);
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  g.batch_count = 3;
  g.config = "packed:42x96x64-g1-s1-w1";
  auto ctx = Context::create({.backend = Backend::cpu});
  REQUIRE(ctx.ok());
  auto size = ctx->workspace_size(g);
  REQUIRE(size.ok());
  CHECK(*size == 0);
  // An empty problem needs none either; a null output is refused.
  f.g.batch_count = 0;
  REQUIRE(og_gemm_workspace_size(f.ctx, &f.g, &bytes) == OG_OK);
  CHECK(bytes == 0);
  CHECK(og_gemm_workspace_size(f.ctx, &f.g, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_workspace_size(nullptr, &f.g, &bytes) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_workspace_size(f.ctx, nullptr, &bytes) == OG_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("workspace: a valid caller workspace runs, is reported as the caller's and stays untouched") {
  Fixture f;
  f.g.workspace = og_memory_host(f.ws);
  f.g.workspace_bytes = sizeof f.ws;
  REQUIRE(og_gemm(f.ctx, &f.g) == OG_OK);
  const ErrorReport r = compare(f.D, reference_gemm(f.A, f.B, nullptr, nullptr, EpilogueSpec{}, 1));
  CHECK(r.non_finite == 0);
  CHECK(r.rel_error <= tolerance(Dtype::f32, 29));
  for (unsigned char c : f.ws) REQUIRE(c == 0xa5);
  // 0 bytes of workspace suffice for a call that needs none.
  f.g.workspace_bytes = 0;
  f.D.poison();
  CHECK(og_gemm(f.ctx, &f.g) == OG_OK);
  og_explanation ex;
  REQUIRE(og_gemm_explain(f.ctx, &f.g, &ex) == OG_OK);
  CHECK(ex.workspace_source == OG_WORKSPACE_NONE);
  // Through the C++ API.
  auto ctx = Context::create({.backend = Backend::cpu});
  REQUIRE(ctx.ok());
  Gemm g;
  g.a = f.A.host_view();
  g.b = f.B.host_view();
  g.d = f.D.host_view();
  g.workspace = Memory::host(f.ws);
  g.workspace_bytes = 256;
  f.D.poison();
  const Status s = ctx->run(g);
  CHECK_MESSAGE(s.ok(), s.message);
  auto e = ctx->explain(g);
  REQUIRE(e.ok());
  CHECK(e->workspace_bytes() == 0);
  CHECK_FALSE(e->workspace_from_engine());
}

TEST_CASE("workspace: malformed workspaces are refused by name before anything runs") {
  Fixture f;
  SUBCASE("bytes without memory") {
    f.g.workspace_bytes = 1024;
    f.expect_refused({"workspace", "OG_MEMORY_NONE"});
  }
  SUBCASE("misaligned") {
    f.g.workspace = og_memory_host(f.ws + 16);
    f.g.workspace_bytes = 1024;
    f.expect_refused({"workspace", "multiple of 256"});
    f.g.workspace = og_memory_host(f.ws);
    f.g.workspace.offset = 8;  // the offset counts
    f.expect_refused({"workspace", "multiple of 256"});
  }
  SUBCASE("null pointer, unknown kind") {
    f.g.workspace = og_memory_host(nullptr);
    f.expect_refused({"workspace", "null pointer"});
    f.g.workspace = og_memory_host(f.ws);
    int bad_kind = 9;
    std::memcpy(&f.g.workspace.kind, &bad_kind, sizeof bad_kind);
    f.expect_refused({"workspace", "unknown memory kind"});
  }
  SUBCASE("memory of another backend") {
    f.g.workspace = og_memory{OG_MEMORY_CUDA, f.ws, 0, 0};
    f.g.workspace_bytes = 1024;
    f.expect_refused({"workspace", "memory kind"});
  }
  SUBCASE("overlapping an operand") {
    std::vector<float> both(37 * 41 + 2048);
    float* d = both.data() + (256 - reinterpret_cast<uintptr_t>(both.data()) % 256) / sizeof(float);
    f.g.d.mem = og_memory_host(d);
    f.g.workspace = og_memory_host(d);
    f.g.workspace_bytes = 512;
    og_gemm_desc g = f.g;
    uint64_t bytes = 1;
    CHECK(og_gemm_workspace_size(f.ctx, &g, &bytes) == OG_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(og_last_error_message()).find("workspace overlaps D") != std::string::npos);
    f.g.workspace = og_memory_host(f.A.bytes.data());
    f.g.workspace.offset = (256 - reinterpret_cast<uintptr_t>(f.A.bytes.data()) % 256) % 256;
    f.g.workspace_bytes = 64;
    f.g.d.mem = og_memory_host(f.D.bytes.data());
    f.expect_refused({"workspace overlaps A"});
  }
}
