// The caller's workspace on a GPU (og_gemm_desc.workspace, og_gemm_workspace_size): a split-K
// config's partials and counters carved from memory the caller allocated (filled with garbage, so
// the counters must be cleared by the call), run twice; explain names where the workspace comes
// from; too small, misaligned and host memory are refused before anything runs; a call that needs
// none reports 0. Without an sm_90 device every test prints "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "cuda_device_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda: split-K partials and counters in the caller's workspace") {
  auto ctx = sm90_context("caller workspace");
  if (!ctx) return;
  // Few tiles and a long K: a 128x64 tile in 4 K slices meeting in global memory.
  HostMatrix A(200, 3000, Dtype::f16, Layout::row_major, 8), B(3000, 190, Dtype::f16, Layout::col_major, 8),
      D(200, 190, Dtype::f16, Layout::row_major, 10);
  A.randomize();
  B.randomize();
  DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  g.config = "sm90_wgmma:128x64x64-g8-s8-w12-k4-coop";
  auto need = ctx->workspace_size(g);
  REQUIRE_MESSAGE(need.ok(), need.status().message);
  CHECK(*need > 0);
  auto ex = ctx->explain(g);
  REQUIRE(ex.ok());
  CHECK(uint64_t(ex->workspace_bytes()) == *need);
  CHECK(ex->workspace_from_engine());
  CHECK(ex->report().find("allocated by the engine") != std::string::npos);

  HostMatrix garbage(1, int64_t(*need) + 512, Dtype::fp8_e4m3);
  garbage.randomize();
  DeviceCopy ws(ctx->c_handle(), garbage);
  g.workspace = ws.memory();
  SUBCASE("too small, misaligned, host memory: refused, D untouched") {
    D.poison();
    DeviceCopy poisoned(ctx->c_handle(), D);
    g.d = D.view(poisoned.memory());
    g.workspace_bytes = *need - 4;
    Status s = ctx->run(g);
    CHECK(s.code == StatusCode::invalid_argument);
    CHECK(s.message.find("needs " + std::to_string(*need)) != std::string::npos);
    g.workspace_bytes = *need;
    og_memory shifted = ws.at;
    shifted.offset += 128;
    g.workspace = Memory{shifted};
    s = ctx->run(g);
    CHECK(s.code == StatusCode::invalid_argument);
    CHECK(s.message.find("multiple of 256") != std::string::npos);
    std::vector<unsigned char> host(size_t(*need) + 256);
    g.workspace = Memory::host(host.data() + (256 - reinterpret_cast<uintptr_t>(host.data()) % 256) % 256);
    s = ctx->run(g);
    CHECK(s.code == StatusCode::invalid_argument);
    CHECK(s.message.find("memory kind") != std::string::npos);
    HostMatrix out = D;
    poisoned.download(out);
    CHECK(out.bytes == D.bytes);
  }
  SUBCASE("exactly the size asked for, twice (the counters are left as the next call needs them)") {
    g.workspace_bytes = *need;
    ex = ctx->explain(g);
    REQUIRE(ex.ok());
    CHECK(ex->raw.workspace_source == OG_WORKSPACE_CALLER);
    CHECK(ex->report().find("from the caller's workspace") != std::string::npos);
    for (int run = 0; run < 2; ++run) {
      const HostMatrix before = run_poisoned(*ctx, g, D, dd);
      const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1), &before);
      CHECK(r.non_finite == 0);
      CHECK(r.padding_touched == 0);
      CHECK(r.rel_error <= tolerance(Dtype::f16, 3000, Dtype::f16, Dtype::f16));
    }
  }
}

TEST_CASE("cuda: a call that needs no workspace reports 0 and takes a zero-byte one") {
  auto ctx = backend_context(Backend::cuda, "no workspace needed");
  if (!ctx) return;
  HostMatrix A(64, 64, Dtype::f32), B(64, 64, Dtype::f32), D(64, 64, Dtype::f32);
  A.randomize();
  B.randomize();
  DeviceCopy da(ctx->c_handle(), A), db(ctx->c_handle(), B), dd(ctx->c_handle(), D), ws(ctx->c_handle(), D);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  auto need = ctx->workspace_size(g);
  REQUIRE(need.ok());
  CHECK(*need == 0);
  g.workspace = ws.memory();
  g.workspace_bytes = 0;
  REQUIRE(ctx->run(g).ok());
  dd.download(D);
  CHECK(compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1)).rel_error <= tolerance(Dtype::f32, 64));
}
