// vulkan.skinny (few rows of A streamed against B, K split over workgroups): every config forced
// in the orientation of B it takes (N or K contiguous; the other refused by name) on ragged shapes
// whose K leaves some slices empty and others several chunks long, with epilogues, output dtypes,
// 16-bit vector loads and the element-wise path (other dtypes, unaligned rows), more row passes
// than one, batches; D poisoned with NaN, every element checked against float64. Few columns
// (D^T = B^T A^T); split-K bitwise deterministic; the caller's workspace.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "backend_cases.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// op(B) = K x N with its K (true) or its N index contiguous, as Case sets it.
void orient(Case& c, bool k_contig, bool transpose) {
  c.tb = transpose;
  c.lb = (k_contig != transpose) ? Layout::col_major : Layout::row_major;
}

}  // namespace

TEST_CASE("vulkan skinny: every config on ragged shapes, both B orientations, epilogues, dtypes and batches") {
  auto ctx = backend_context(Backend::vulkan, "skinny family");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  detail::KernelFamily* skinny = vulkan_family(be, "skinny");
  REQUIRE(skinny != nullptr);
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh, Activation::silu};
  const Dtype slow_ins[] = {Dtype::fp8_e4m3, Dtype::f32, Dtype::fp8_e5m2, Dtype::f16, Dtype::bf16};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  int i = 0, ran = 0;
  for (const detail::Config& cfg : skinny->configs()) {
    CAPTURE(cfg.to_string());
    const bool n_ok = skinny->can_implement(planning_problem(Dtype::f16, Dtype::f16, 4, 256, 256, 1, Layout::row_major), cfg).ok();
    const bool k_ok = skinny->can_implement(planning_problem(Dtype::f16, Dtype::f16, 4, 256, 256, 1, Layout::col_major), cfg).ok();
    if (!n_ok && !k_ok) {
      const Status s = skinny->can_implement(planning_problem(Dtype::f16, Dtype::f16, 4, 256, 256), cfg);
      // Only a device limit may refuse a config in both orientations (lavapipe: 32 KiB of shared
      // memory, subgroups of 8 and so fewer threads than a wide tile's column threads).
      CHECK_MESSAGE((s.message.find("shared memory") != std::string::npos || s.message.find("column threads divide") != std::string::npos),
                    s.message);
      MESSAGE("SKIPPED vulkan skinny: " << cfg.to_string() << " on " << be.device().name << ": " << s.message);
      continue;
    }
    for (bool k_contig : {false, true}) {
      const bool ok = k_contig ? k_ok : n_ok;
      // Fast path: 16-bit A and B, aligned rows (vector loads), N ragged by one vector's part,
      // K past split_k x BLOCK_K (some slices empty, the others two chunks, a ragged tail).
      Case fast{i % 2 ? int64_t(1) : int64_t(2 * cfg.block_m + 3), 3 * cfg.block_n + 5, int64_t(cfg.split_k) * cfg.block_k + 37,
                1 + i % 2};
      fast.config = cfg.to_string();
      fast.a = fast.b = i % 2 ? Dtype::bf16 : Dtype::f16;
      fast.d = outs[i % 3];
      orient(fast, k_contig, i % 4 >= 2);
      fast.tma_aligned = fast.d_aligned = true;
      fast.epi.alpha = i % 2 ? -0.75f : 1.0f;
      fast.epi.beta = i % 3 == 1 ? 0.5f : 0.0f;
      fast.epi.act = acts[i % 5];
      fast.epi.slope = 0.1f;
      fast.epi.bias_mode = BiasMode(i % 3);
      if (!ok) {
        fast.must_refuse = "BLOCK_K a multiple";
        run_case(*ctx, fast);
        continue;
      }
      run_case(*ctx, fast);
      // 16-bit B whose rows are not whole 16-byte vectors (leading dimension = extent + 1, odd:
      // runs start at odd and even elements): its runs of 8 read as the aligned vector pairs
      // that hold them.
      Case pairs = fast;
      pairs.tma_aligned = false;
      pairs.n = fast.n + 1;
      pairs.k = fast.k + 1;
      run_case(*ctx, pairs);
      if (k_contig && n_ok) continue;  // the element-wise path once per config (compile time on lavapipe)
      // Element-wise path: other dtypes, unaligned rows, one row pass, batches.
      Case slow{cfg.block_m > 1 ? int64_t(cfg.block_m - 1) : int64_t(1), cfg.block_n + 7, 2 * int64_t(cfg.block_k) + 11, 2};
      slow.config = cfg.to_string();
      slow.a = slow_ins[i % 5];
      slow.b = slow_ins[(i + 2) % 5];
      slow.d = outs[(i + 1) % 3];
      orient(slow, k_contig, i % 2 == 1);
      slow.la = i % 3 == 2 ? Layout::col_major : Layout::row_major;
      slow.epi.beta = 0.25f;
      slow.epi.bias_mode = BiasMode((i + 1) % 3);
      slow.epi.act = acts[(i + 2) % 5];
      run_case(*ctx, slow);
      ++ran;
    }
    ++i;
  }
  CHECK(ran > 0);
  // Few columns and more rows: D^T = B^T A^T, with both bias modes and C.
  for (int j = 0; j < 2; ++j) {
    const detail::Config& cfg = skinny->configs()[j * (skinny->configs().size() - 1)];
    Case t{2 * cfg.block_n + 7, 1 + j * 4, 300, 1 + j};
    t.config = cfg.to_string();
    t.a = j ? Dtype::bf16 : Dtype::f16;
    t.b = j ? Dtype::bf16 : Dtype::f16;
    t.d = outs[j];
    t.ta = j == 1;
    t.ld = j == 0 ? Layout::col_major : Layout::row_major;
    t.epi.beta = 0.25f;
    t.epi.bias_mode = j ? BiasMode::per_m : BiasMode::per_n;
    t.epi.act = acts[j + 1];
    t.may_refuse = "BLOCK_K a multiple";  // the flipped problem's B orientation may not be this row's
    run_case(*ctx, t);
  }
  // K = 0: D = act(beta C + bias), every slice empty.
  Case k0{5, 64, 0};
  k0.config = skinny->configs()[0].to_string();
  k0.epi.beta = 1.0f;
  k0.epi.bias_mode = BiasMode::per_n;
  run_case(*ctx, k0);
}

TEST_CASE("vulkan skinny: split-K is bitwise deterministic and takes the caller's workspace") {
  auto ctx = backend_context(Backend::vulkan, "skinny determinism");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  detail::KernelFamily* skinny = vulkan_family(be, "skinny");
  REQUIRE(skinny != nullptr);
  const detail::Config& cfg = skinny->configs()[0];
  REQUIRE(cfg.split_k > 1);
  const int64_t m = 3, n = 2 * cfg.block_n + 4, k = 4 * int64_t(cfg.split_k) * cfg.block_k / 3;
  HostMatrix A(m, k, Dtype::f16), B(k, n, Dtype::f16), D(m, n, Dtype::f32);
  A.randomize();
  B.randomize();
  // The context's workspace, then the caller's (at an offset): the same bits every time.
  const std::vector<uint8_t> first = run_on_device(*ctx, A, B, D, cfg.to_string(), false);
  const ErrorReport r = compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1), nullptr);
  CHECK(r.non_finite == 0);
  CHECK(r.rel_error <= tolerance(Dtype::f32, k, Dtype::f16, Dtype::f16));
  uint64_t asked = 0;
  CHECK(run_on_device(*ctx, A, B, D, cfg.to_string(), true, &asked) == first);
  CHECK(asked >= uint64_t(4 * m * n * cfg.split_k));  // every slice's f32 partial sums
  CHECK(run_on_device(*ctx, A, B, D, cfg.to_string(), false) == first);
}
