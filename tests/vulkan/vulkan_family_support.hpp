// Helpers for the Vulkan tests that ask the kernel families directly (can_implement, describe):
// validated problems on placeholder buffers (never run), and the family of a name among all the
// backend's families, including those its device cannot run.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "context_internal.hpp"
#include "gemm_check.hpp"
#include "validate.hpp"
#include "vulkan_debug.hpp"

namespace omnigemm::test {

// One operand over a placeholder VkBuffer handle `at`: leading dimension `ld` (0: packed),
// batches packed one after another.
inline Matrix placeholder_matrix(int64_t rows, int64_t cols, Dtype d, uintptr_t at, Layout l, int64_t ld, int64_t batch) {
  Matrix x(rows, cols, d, Memory::vulkan(at), l);
  const int64_t lead = ld > 0 ? ld : std::max<int64_t>(l == Layout::row_major ? cols : rows, 1);
  x.ld(lead);
  if (batch > 1) x.batch_stride(lead * (l == Layout::row_major ? rows : cols));
  return x;
}

// An m x n x k problem over placeholder buffers (A in `la`, B in `lb`, D row-major; leading
// dimensions 0: packed), validated into `out`: for can_implement, describe and the cost model
// only, which never touch the buffers.
inline Status placeholder_problem(Dtype a, Dtype b, Dtype d, int64_t m, int64_t n, int64_t k, int64_t batch, Layout la,
                                  Layout lb, int64_t lda, int64_t ldb, int64_t ldd, detail::Problem& out) {
  Gemm g;
  g.a = placeholder_matrix(m, k, a, 0x1000, la, lda, batch);
  g.b = placeholder_matrix(k, n, b, 0x2000, lb, ldb, batch);
  g.d = placeholder_matrix(m, n, d, 0x3000, Layout::row_major, ldd, batch);
  g.batch_count = batch;
  const og_gemm_desc desc = g.to_c();
  return detail::validate(desc, out);
}

// A validated m x n x k problem (A row-major, B in `lb`, D in `d`, packed) over placeholder
// buffers.
inline detail::Problem planning_problem(Dtype a, Dtype b, int64_t m, int64_t n, int64_t k, int64_t batch = 1,
                                        Layout lb = Layout::row_major, Dtype d = Dtype::f32) {
  detail::Problem p;
  const Status s = placeholder_problem(a, b, d, m, n, k, batch, Layout::row_major, lb, 0, 0, 0, p);
  REQUIRE_MESSAGE(s.ok(), s.message);
  return p;
}

// The family called `name` among every family of the Vulkan backend `be` (nullptr: none).
inline detail::KernelFamily* vulkan_family(detail::Backend& be, const std::string& name) {
  for (detail::KernelFamily* f : be.families())
    if (name == f->name()) return f;
  return nullptr;
}

// Why the family `name` does not run on `be`'s device: its refusal of its first config for an
// f16 problem.
inline std::string missing_family_reason(detail::Backend& be, const std::string& name) {
  detail::KernelFamily* f = vulkan_family(be, name);
  if (!f) return "no such family";
  if (f->configs().empty()) return "no configs";
  const Status s = f->can_implement(planning_problem(Dtype::f16, Dtype::f16, 256, 256, 256), f->configs()[0]);
  return s.ok() ? "it can implement its first config, yet the backend says the device cannot run it" : s.message;
}

// D = A B with `config` on device copies of A, B and D (D poisoned first), in the context's
// workspace or, with caller_workspace, in one of the size og_gemm_workspace_size asks for (stored
// in *asked) that the test allocates at a 256-byte offset. Returns D's bytes.
inline std::vector<uint8_t> run_on_device(Context& ctx, const HostMatrix& A, const HostMatrix& B, HostMatrix& D,
                                          const std::string& config, bool caller_workspace, uint64_t* asked = nullptr) {
  auto& be = detail::context_backend(ctx.c_handle());
  og_memory da{}, db{}, dd{}, dw{};
  auto release = [&] {
    for (og_memory* mem : {&da, &db, &dd, &dw})
      if (mem->vk_buffer) be.release(*mem);
  };
  D.poison();
  Gemm g;
  Status s = be.allocate(A.bytes.size(), da);
  if (s.ok()) s = be.allocate(B.bytes.size(), db);
  if (s.ok()) s = be.allocate(D.bytes.size(), dd);
  if (s.ok()) s = be.upload(da, A.bytes.data(), A.bytes.size());
  if (s.ok()) s = be.upload(db, B.bytes.data(), B.bytes.size());
  if (s.ok()) s = be.upload(dd, D.bytes.data(), D.bytes.size());
  g.a = A.view(Memory::vulkan(da.vk_buffer));
  g.b = B.view(Memory::vulkan(db.vk_buffer));
  g.d = D.view(Memory::vulkan(dd.vk_buffer));
  g.config = config;
  if (s.ok() && caller_workspace) {
    auto bytes = ctx.workspace_size(g);
    s = bytes.status();
    if (s.ok() && asked) *asked = *bytes;
    if (s.ok()) s = be.allocate(*bytes + 256, dw);
    g.workspace = Memory::vulkan(dw.vk_buffer, 256);
    if (s.ok()) g.workspace_bytes = *bytes;
  }
  if (s.ok()) s = ctx.run(g);
  if (s.ok()) s = be.download(D.bytes.data(), dd, D.bytes.size());
  release();
  REQUIRE_MESSAGE(s.ok(), s.message);
  return D.bytes;
}

}  // namespace omnigemm::test
