// Support for the CUDA tests: the Hopper context (or a SKIPPED line), a family's config table,
// host matrices uploaded into og_memory_alloc'ed memory at a chosen byte offset (to misalign a
// base on purpose), a run into a freshly poisoned D, one such case run and checked, and the
// run-to-run bit identity of forced configs.
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "context_internal.hpp"

namespace omnigemm::test {

// A CUDA context on an sm_90 device; otherwise none, after printing why the test is skipped.
inline std::optional<Context> sm90_context(const char* test_name) {
  auto ctx = backend_context(Backend::cuda, test_name);
  if (!ctx) return ctx;
  og_capabilities caps{};
  REQUIRE(og_context_capabilities(ctx->c_handle(), &caps) == OG_OK);
  if (std::string(caps.driver_version).find("sm_90") == std::string::npos) {
    MESSAGE("SKIPPED cuda: " << test_name << ": " << caps.device_name << " (" << caps.driver_version
                             << ") is not an sm_90 device");
    return std::nullopt;
  }
  return ctx;
}

// The config table of the context's family `name` (the test fails if there is none).
inline std::vector<detail::Config> family_configs(Context& ctx, const char* name) {
  for (detail::KernelFamily* f : detail::context_backend(ctx.c_handle()).families())
    if (std::string(f->name()) == name) return {f->configs().begin(), f->configs().end()};
  FAIL("no CUDA family " << name);
  return {};
}

// D = A B (host memory) with each config forced, three runs each: the first matches float64,
// the others give the same bits.
inline void check_same_bits(Context& ctx, const HostMatrix& A, const HostMatrix& B, HostMatrix& D,
                            std::initializer_list<const char*> configs) {
  const int64_t k = A.transposed ? A.rows : A.cols;
  for (const char* config : configs) {
    CAPTURE(config);
    Gemm g;
    g.a = A.host_view();
    g.b = B.host_view();
    g.config = config;
    std::vector<unsigned char> first;
    for (int run = 0; run < 3; ++run) {
      D.poison();
      g.d = D.host_view();
      const Status s = ctx.run_host(g);
      REQUIRE_MESSAGE(s.ok(), s.message);
      if (run == 0) {
        const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1));
        CHECK(r.non_finite == 0);
        CHECK(r.rel_error <= tolerance(D.dtype, k, A.dtype, B.dtype));
        first = D.bytes;
      } else {
        CHECK(D.bytes == first);
      }
    }
  }
}

// Device memory from og_memory_alloc holding a host matrix's storage `offset` bytes past a
// 256-byte aligned address; freed with the object.
struct DeviceCopy {
  og_context* ctx = nullptr;
  og_memory base{};
  og_memory at{};
  size_t bytes = 0;
  DeviceCopy(og_context* c, const HostMatrix& m, uint64_t offset = 0) : ctx(c), bytes(m.bytes.size()) {
    REQUIRE(og_memory_alloc(ctx, bytes + offset + 256, &base) == OG_OK);
    at = base;
    at.offset += offset;
    REQUIRE(og_memory_upload(ctx, at, m.bytes.data(), bytes) == OG_OK);
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { og_memory_free(ctx, base); }
  void download(HostMatrix& m) const { REQUIRE(og_memory_download(ctx, m.bytes.data(), at, bytes) == OG_OK); }
  Memory memory() const { return Memory{at}; }
};

// A GEMM whose A, B and D are views of their device copies da, db and dd.
inline Gemm device_gemm(const HostMatrix& A, const DeviceCopy& da, const HostMatrix& B, const DeviceCopy& db, const HostMatrix& D,
                        const DeviceCopy& dd) {
  Gemm g;
  g.a = A.view(da.memory());
  g.b = B.view(db.memory());
  g.d = D.view(dd.memory());
  return g;
}

// Poisons D, uploads it into dd, runs g (whose D lives in dd) and downloads the result into D;
// returns the poisoned copy, to check that padding between D's rows was left untouched.
inline HostMatrix run_poisoned(Context& ctx, const Gemm& g, HostMatrix& D, const DeviceCopy& dd) {
  D.poison();
  REQUIRE(og_memory_upload(ctx.c_handle(), dd.at, D.bytes.data(), D.bytes.size()) == OG_OK);
  HostMatrix before = D;
  const Status s = ctx.run(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  dd.download(D);
  return before;
}

// D = act(0.5 A B) (relu) on device memory: A and B at byte offsets a_offset and b_offset past a
// 256-byte boundary (misaligned bases), B broadcast over the batches when b_broadcast, odd
// leading dimensions and batch gaps, `config` forced (empty: the default choice); explain must
// name `expect_family`, and D must match float64 with its padding untouched.
inline void run_device_case(Context& ctx, int64_t m, int64_t n, int64_t k, int64_t batch, Dtype in, Dtype out, bool ta,
                            bool tb, uint64_t a_offset, uint64_t b_offset, bool b_broadcast, const std::string& config,
                            const char* expect_family) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(batch);
  CAPTURE(config);
  CAPTURE(a_offset);
  CAPTURE(b_offset);
  HostMatrix A(ta ? k : m, ta ? m : k, in, Layout::row_major, 3, batch, 1);
  HostMatrix B(tb ? n : k, tb ? k : n, in, Layout::row_major, 5, b_broadcast ? 1 : batch, 3);
  A.transposed = ta;
  B.transposed = tb;
  HostMatrix D(m, n, out, Layout::row_major, 1, batch, 2);
  A.randomize();
  B.randomize();
  D.poison();
  const HostMatrix before = D;
  DeviceCopy da(ctx.c_handle(), A, a_offset), db(ctx.c_handle(), B, b_offset), dd(ctx.c_handle(), D);
  Gemm g = device_gemm(A, da, B, db, D, dd);
  g.batch_count = batch;
  g.config = config;
  g.epilogue.alpha = 0.5f;
  g.epilogue.activation = Activation::relu;
  auto ex = ctx.explain(g);
  REQUIRE_MESSAGE(ex.ok(), ex.status().message);
  CHECK_MESSAGE(ex->family() == expect_family, ex->report());
  const Status s = ctx.run(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  dd.download(D);
  EpilogueSpec e;
  e.alpha = 0.5f;
  e.act = Activation::relu;
  const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, e, batch), &before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(out, k, in, in));
}

}  // namespace omnigemm::test
