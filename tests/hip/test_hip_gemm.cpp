// HIP backend tests. Those that need an AMD GPU print "SKIPPED hip: <test>: no AMD device (...)"
// where there is none (and run on an MI200: gfx90a). The family's choices and refusals are also
// checked without a device, on a modelled MI250X GCD.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "dispatch.hpp"
#include "families.hpp"
#include "gfx90a/plan.hpp"
#include "hip_cases.hpp"
#include "modelled_backend.hpp"
#include "tuner.hpp"
#include "validate.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
using omnigemm::detail::Config;

namespace {

// MI200's f16/bf16 MFMAs flush subnormal inputs and outputs to zero; the device tests allow
// relative error 1e-2 (the matmul tutorial's MI200 tolerance) on top of the per-dtype bounds.
constexpr double kMi200Tolerance = 1e-2;

// A HIP context, or a "SKIPPED hip: <test>: <reason>" line and nothing.
std::optional<Context> hip_context(const char* test_name) {
  auto ctx = Context::create({.backend = Backend::hip});
  if (!ctx) {
    std::string why = ctx.status().message;
    if (why.rfind("hip: ", 0) == 0) why = why.substr(5);
    MESSAGE("SKIPPED hip: " << std::string(test_name) << ": " << why);
    return std::nullopt;
  }
  return std::move(ctx.value());
}

std::function<Status(const Gemm&)> on(Context& ctx) {
  return [&ctx](const Gemm& g) { return ctx.run_host(g); };
}

// A backend over a HipDevice filled with what HipDevice::init reads on an MI250X GCD (no runtime:
// its family plans and ranks but launches nothing).
class ModelledMi250x final : public detail::test::ModelledBackend<detail::HipDevice> {
 public:
  ModelledMi250x() {
    dev_.info.name = "modelled AMD Instinct MI250X (one GCD)";
    dev_.info.driver = "model, gfx90a";
    dev_.arch = "gfx90a";
    dev_.info.limits = mi200_limits();
    owned_.push_back(detail::make_gfx90a_mfma_family(dev_));
    adopt_families();
  }
  og_backend kind() const override { return OG_BACKEND_HIP; }
  uint32_t input_dtypes() const override { return 0x1e; }
  uint32_t memory_kinds() const override { return 1u << OG_MEMORY_HIP; }
};

// A problem of HIP pointers at 256-byte aligned addresses: A (M x K) and D (M x N) row-major,
// B (K x N) row-major or column-major, `ld_pad` elements added to every leading dimension.
detail::Problem problem(int64_t m, int64_t n, int64_t k, og_dtype a, og_dtype b, og_dtype out, bool b_col_major = false,
                        int64_t ld_pad = 0) {
  return detail::test::padded_problem(OG_MEMORY_HIP, m, n, k, a, b, out, b_col_major, ld_pad);
}

}  // namespace

TEST_CASE("hip: without a device, the backend is unavailable and says why") {
  auto ctx = Context::create({.backend = Backend::hip});
  if (ctx) {
    MESSAGE("hip: an AMD device exists here; the no-device status is not checked");
    return;
  }
  CHECK(ctx.status().code == StatusCode::backend_unavailable);
  CHECK(ctx.status().message.rfind("hip: ", 0) == 0);
  CHECK_MESSAGE((ctx.status().message.find("no AMD device (") != std::string::npos ||
                 ctx.status().message.find("gfx90a") != std::string::npos),
                ctx.status().message);
  CHECK(og_backend_available(OG_BACKEND_HIP) == 0);
  // Automatic selection passes over HIP to a backend that exists.
  auto any = Context::create({.backend = Backend::automatic});
  REQUIRE(any.ok());
  CHECK(any->backend() != Backend::hip);
}

TEST_CASE("hip: the family on a modelled MI250X ranks its rows, converts fp8 and refuses with reasons") {
  ModelledMi250x be;
  for (og_dtype in : {OG_DTYPE_F16, OG_DTYPE_BF16, OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E5M2}) {
    const detail::Problem p = problem(4096, 4096, 4096, in, in, OG_DTYPE_F16);
    const auto ranked = detail::rank_candidates(be, p);
    CAPTURE(og_dtype_name(in));
    REQUIRE(ranked.size() == detail::gfx90a::configs().size());
    detail::PlanSummary plan;
    REQUIRE(ranked[0].family->describe(p, ranked[0].config, plan).ok());
    CHECK(plan.threads == ranked[0].config.warps * 64);
    CHECK(plan.shared_bytes <= 65536);
    const bool fp8 = in == OG_DTYPE_FP8_E4M3 || in == OG_DTYPE_FP8_E5M2;
    CHECK(plan.notes.find(fp8 ? "gathering loads" : "dwordx4 loads (A vec_k, B vec_mn)") != std::string::npos);
    CHECK(plan.notes.find(in == OG_DTYPE_F16 ? "f16 multiplicands" : "bf16 multiplicands") != std::string::npos);
  }
  detail::KernelFamily& f = *be.families()[0];
  const Config row = detail::gfx90a::configs()[0];
  const detail::Problem ok = problem(300, 200, 100, OG_DTYPE_F16, OG_DTYPE_F16, OG_DTYPE_F32, true, 3);
  CHECK(f.can_implement(ok, row).ok());
  auto refusal = [&](const detail::Problem& p, const Config& c) { return f.can_implement(p, c).message; };
  CHECK(refusal(problem(64, 64, 64, OG_DTYPE_F16, OG_DTYPE_BF16, OG_DTYPE_F32), row).find("not both") != std::string::npos);
  CHECK(refusal(problem(64, 64, 64, OG_DTYPE_F32, OG_DTYPE_F32, OG_DTYPE_F32), row).find("f32") != std::string::npos);
  Config split = row;
  split.split_k = 2;
  CHECK(refusal(ok, split).find("split-K") != std::string::npos);
  Config staged = row;
  staged.stages = 2;
  CHECK(refusal(ok, staged).find("num_stages must be 0") != std::string::npos);
  Config other = row;
  other.waves_per_eu = 1;
  CHECK(refusal(ok, other).find("families/gfx90a_mfma.inc") != std::string::npos);
  // Unaligned leading dimensions take the gathering kernel; aligned ones the dwordx4 kernel.
  detail::PlanSummary s;
  REQUIRE(f.describe(ok, row, s).ok());
  CHECK(s.notes.find("gathering loads") != std::string::npos);
  REQUIRE(f.describe(problem(300, 200, 96, OG_DTYPE_BF16, OG_DTYPE_BF16, OG_DTYPE_F32, true, 8), row, s).ok());
  CHECK(s.notes.find("dwordx4 loads (A vec_k, B vec_k)") != std::string::npos);
  // A modelled device launches nothing.
  CHECK(f.run(ok, row, nullptr).code == StatusCode::backend_unavailable);
}

TEST_CASE("hip: random shapes, dtypes, layouts, batches and epilogues match float64") {
  auto ctx = hip_context("random cases");
  if (!ctx) return;
  for (int t = 0; t < 60; ++t) check_case(random_hip_case(300, ""), on(*ctx), kMi200Tolerance);
}

TEST_CASE("hip: every table config, forced, on edge shapes with both loaders") {
  auto ctx = hip_context("forced configs");
  if (!ctx) return;
  for (const Config& cfg : detail::gfx90a::configs())
    for (const bool aligned : {true, false})
      for (const int64_t m : {int64_t(1), int64_t(cfg.block_m - 1), int64_t(cfg.block_m + 1)}) {
        HipCase c;
        c.m = m;
        c.n = cfg.block_n + 3;
        c.k = 2 * cfg.block_k + 1;
        c.a = c.b = aligned ? Dtype::f16 : Dtype::bf16;
        c.lb = Layout::col_major;
        c.d = Dtype::f16;
        c.aligned = aligned;
        c.batch = 2;
        c.epi.act = Activation::gelu_tanh;
        c.config = cfg.to_string();
        check_case(c, on(*ctx), kMi200Tolerance);
      }
}

TEST_CASE("hip: explain names hip.gfx90a_mfma and its launch") {
  auto ctx = hip_context("explain");
  if (!ctx) return;
  HostMatrix A(512, 512, Dtype::f16), B(512, 512, Dtype::f16), D(512, 512, Dtype::f16);
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  auto e = ctx->explain(g);
  REQUIRE_MESSAGE(e.ok(), e.status().message);
  CHECK(e->family() == "hip.gfx90a_mfma");
}

TEST_CASE("hip: on a modelled MI250X, skinny problems get the small tile and large squares a large one") {
  // Not measured choices (no AMD GPU here): what the cost model's tile terms make of the table.
  ModelledMi250x be;
  auto choice = [&](int64_t m, int64_t n, int64_t k) {
    const auto ranked = detail::rank_candidates(be, problem(m, n, k, OG_DTYPE_F16, OG_DTYPE_F16, OG_DTYPE_F16, true));
    REQUIRE_FALSE(ranked.empty());
    const Config c = detail::Tuner::heuristic(ranked);
    MESSAGE(m << "x" << n << "x" << k << ": " << c.to_string());
    return c;
  };
  CHECK(choice(16, 4096, 4096).block_m == 32);
  for (int64_t s : {4096, 8192}) {
    const Config c = choice(s, s, s);
    CHECK(c.block_m * c.block_n >= 128 * 256);
  }
}
