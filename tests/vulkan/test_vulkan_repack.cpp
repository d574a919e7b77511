// vulkan.coopmat_repack (devices with KHR cooperative matrices only, else SKIPPED by name): every
// config forced on operands coopmat would gather (odd leading dimensions, unaligned batch gaps,
// ragged extents along the contiguous dimension, column-major and transposed views, a broadcast
// operand), against float64 with the full epilogue; the copies' zero padding checked by ragged K
// (a nonzero pad would enter the sums); the same bits in the context's workspace and in the
// caller's (split-K's partial sums and the copies sharing it); aligned problems refused by name.
// On every device: the plan (copies, padded lines, workspace layout) on placeholder buffers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "cost_model.hpp"
#include "recorded_devices.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

detail::vulkan::VulkanLaunch plan_of(detail::Backend& be, const detail::Problem& p, const std::string& config) {
  auto* f = dynamic_cast<detail::vulkan::VulkanFamily*>(vulkan_family(be, "coopmat_repack"));
  REQUIRE(f != nullptr);
  detail::vulkan::VulkanLaunch l;
  const Status s = f->plan_launch(p, *detail::Config::parse(config), l);
  REQUIRE_MESSAGE(s.ok(), s.message);
  return l;
}

}  // namespace

TEST_CASE("vulkan repack: the copies' plan: padded lines, orientation, broadcast, workspace after split-K's partial sums") {
  if (!detail::vulkan::BuiltShaders::of_this_build().coopmat) {
    MESSAGE("SKIPPED vulkan repack plan (H100): this build has no cooperative-matrix shaders");
    return;
  }
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("NVIDIA Hopper").props);
  // Tight row-major A (300 x 77) and B (77 x 45): K = 77 and N = 45 are ragged lines.
  detail::Problem p = planning_problem(Dtype::f16, Dtype::f16, 300, 45, 77);
  const std::string cfg = "coopmat_repack:128x128x32-g8-s2-w8";
  detail::vulkan::VulkanLaunch l = plan_of(be, p, cfg);
  REQUIRE(l.copy[0].present);
  REQUIRE(l.copy[1].present);
  CHECK(l.copy[0].push.lines == 300);
  CHECK(l.copy[0].push.line_len == 77);
  CHECK(l.copy[0].push.dst_line == 10);  // 80 elements
  CHECK(l.copy[0].push.src_line == 77);
  CHECK(l.copy[0].push.src_elem == 1);
  CHECK(l.copy[1].push.lines == 77);
  CHECK(l.copy[1].push.line_len == 45);
  CHECK(l.copy[1].push.dst_line == 6);
  CHECK(l.copy[0].offset == 0);
  CHECK(l.copy[1].offset == (300 * 80 * 2 + 255) / 256 * 256);
  CHECK(l.workspace_bytes == l.copy[1].offset + (77 * 48 * 2 + 255) / 256 * 256);
  CHECK(l.problem->a.stride_row == 80);
  CHECK(l.problem->b.stride_row == 48);
  CHECK(l.given == &p);
  // The GEMM reads both copies as whole vectors (PADDED = 3) and gathers nothing (id 18 = 0).
  REQUIRE(l.spec.count == detail::vulkan::kCommonSpecIds + 13);
  CHECK(l.spec.values[detail::vulkan::kCommonSpecIds + 11] == 0);
  CHECK(l.spec.values[detail::vulkan::kCommonSpecIds + 12] == 3);

  // Split-K: the partial sums first, the copy after them at a multiple of 256 bytes; only B
  // (column-major, K = 4096 aligned, N = 45 odd ld) needs a copy, along K.
  detail::Problem q = planning_problem(Dtype::f16, Dtype::f16, 64, 45, 4100, 1, Layout::col_major);
  q.a.stride_row = 4104;  // A's rows 8-aligned; K = 4100 ragged: A still needs a copy
  l = plan_of(be, q, "coopmat_repack:64x64x32-g8-s2-w4-k4");
  REQUIRE(l.reduce_groups > 0);
  CHECK(l.split_bytes == 4ull * 4 * 64 * 64);
  CHECK(l.copy[0].offset == l.split_bytes);
  REQUIRE(l.copy[1].present);
  CHECK(l.copy[1].push.line_len == 4100);  // B's columns are its lines (K contiguous)
  CHECK(l.copy[1].push.lines == 45);
  CHECK(l.copy[1].push.dst_line == 513);
  CHECK(l.problem->b.stride_row == 1);
  CHECK(l.problem->b.stride_col == 4104);

  // A batch of 3 with B broadcast (batch stride 0): B copied once, A per batch.
  detail::Problem r = planning_problem(Dtype::f16, Dtype::f16, 33, 45, 21, 3);
  r.b.batch_stride = 0;
  l = plan_of(be, r, cfg);
  CHECK(l.copy[0].batch == 3);
  CHECK(l.copy[0].push.dst_batch == 33 * 3);
  REQUIRE(l.copy[1].present);
  CHECK(l.copy[1].batch == 1);
  CHECK(l.copy[1].push.src_batch == 0);
  CHECK(l.problem->b.batch_stride == 0);

  // Nothing to copy: aligned 16-bit operands, or fp8 ones (converted on load).
  auto* f = vulkan_family(be, "coopmat_repack");
  const Status aligned = f->can_implement(planning_problem(Dtype::f16, Dtype::f16, 256, 256, 256), *detail::Config::parse(cfg));
  CHECK(aligned.code == StatusCode::unsupported);
  CHECK(aligned.message.find("no f16 operand needs a copy") != std::string::npos);
  const Status fp8 = f->can_implement(planning_problem(Dtype::fp8_e4m3, Dtype::fp8_e4m3, 33, 45, 77), *detail::Config::parse(cfg));
  CHECK(fp8.code == StatusCode::unsupported);
  // The model prices gathers above copies on a large unaligned problem, and copies above nothing
  // on an aligned one (the repack family refuses it).
  const detail::Problem big = planning_problem(Dtype::f16, Dtype::f16, 2047, 2049, 2051);
  detail::KernelFamily* coopmat = vulkan_family(be, "coopmat");
  const detail::Config c0 = *detail::Config::parse("coopmat:128x256x32-g8-s2-w8");
  detail::Config r0 = c0;
  r0.family = "coopmat_repack";
  const auto lim = be.device().limits;
  CHECK(detail::predict(big, r0, f->hints(big, r0), lim).ms < detail::predict(big, c0, coopmat->hints(big, c0), lim).ms);
}

TEST_CASE("vulkan repack: every coopmat_repack config on unaligned operands matches float64, in either workspace") {
  auto ctx = backend_context(Backend::vulkan, "coopmat_repack configs");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  detail::KernelFamily* fam = vulkan_family(be, "coopmat_repack");
  REQUIRE(fam != nullptr);
  if (!detail::vulkan_family_usable(be, fam)) {
    MESSAGE("SKIPPED vulkan repack (coopmat_repack): " << be.device().name << " cannot run the family ("
                                                       << missing_family_reason(be, "coopmat_repack") << ")");
    return;
  }
  const bool bf16 = run_probe(*ctx, Dtype::bf16, "coopmat:64x64x32-g8-s2-w4").ok();
  int i = 0;
  for (const detail::Config& cfg : fam->configs()) {
    CAPTURE(cfg.to_string());
    MESSAGE("vulkan coopmat_repack config " << cfg.to_string());
    // Ragged tight operands (odd lds, A's batch gaps off alignment), both copied; full epilogue.
    Case c{cfg.block_m + 3, cfg.block_n + 5, int64_t(std::max(1, cfg.split_k)) * cfg.block_k * 2 + 3, 1 + i % 3};
    c.config = cfg.to_string();
    c.a = c.b = bf16 && i % 2 ? Dtype::bf16 : Dtype::f16;
    c.d = i % 2 ? Dtype::f16 : Dtype::f32;
    c.la = i % 4 < 2 ? Layout::row_major : Layout::col_major;
    c.lb = i % 3 == 0 ? Layout::col_major : Layout::row_major;
    c.tb = i % 5 == 4;
    c.epi.alpha = 0.75f;
    c.epi.beta = 0.5f;
    c.epi.act = Activation::gelu_tanh;
    c.epi.bias_mode = BiasMode::per_n;
    run_case(*ctx, c);
    // fp8 A (converted on load, not copied) against an unaligned f16 B: B's copy only.
    Case one{cfg.block_m - 1, cfg.block_n + 1, int64_t(std::max(1, cfg.split_k)) * cfg.block_k + 7};
    one.config = cfg.to_string();
    one.a = Dtype::fp8_e4m3;
    one.b = one.d = Dtype::f16;
    run_case(*ctx, one);
    // Aligned operands: nothing to copy, refused by name.
    Case aligned{cfg.block_m, cfg.block_n, 4 * int64_t(std::max(1, cfg.split_k)) * cfg.block_k};
    aligned.config = cfg.to_string();
    aligned.a = aligned.b = Dtype::f16;
    aligned.tma_aligned = true;
    aligned.must_refuse = "needs a copy";
    run_case(*ctx, aligned);
    ++i;
  }
  CHECK(i > 0);
  // The same bits on every run, in the context's workspace and in a caller's at an offset, with
  // split-K's partial sums before the copies.
  for (const char* cfg : {"coopmat_repack:128x128x32-g8-s2-w8", "coopmat_repack:64x64x32-g8-s2-w4-k4"}) {
    CAPTURE(cfg);
    HostMatrix A(131, 1003, Dtype::f16), B(1003, 77, Dtype::f16), D(131, 77, Dtype::f32);
    A.randomize();
    B.randomize();
    uint64_t asked = 0;
    const std::vector<uint8_t> first = run_on_device(*ctx, A, B, D, cfg, false);
    const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1), nullptr);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 1003, Dtype::f16, Dtype::f16));
    CHECK(run_on_device(*ctx, A, B, D, cfg, false) == first);
    CHECK(run_on_device(*ctx, A, B, D, cfg, true, &asked) == first);
    CHECK(asked >= (131 * 1008 + 1003 * 80) * 2);
  }
}
