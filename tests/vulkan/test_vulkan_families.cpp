// The Vulkan kernel families on the contract: which families the device lists, their tables,
// that each refusal says why (by the family's rule, naming what is missing), and that describe()
// and the public explain call plan what the config says (threads, workgroups covering every
// output tile of every batch). Families the device lacks are reported as SKIPPED by name where
// a test needs them to run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::optional<Context> vulkan_context(const char* test_name) { return backend_context(Backend::vulkan, test_name); }

bool lists(detail::Backend& be, const detail::KernelFamily* f) { return detail::vulkan_family_usable(be, f); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("vulkan: the device's families, fastest first, and their tables") {
  auto ctx = vulkan_context("family list");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  const auto all = be.families();
  REQUIRE(all.size() == 5);
  CHECK(std::string(all[0]->name()) == "coopmat");
  CHECK(std::string(all[1]->name()) == "coopmat_repack");
  CHECK(std::string(all[2]->name()) == "coopmat2");
  CHECK(std::string(all[3]->name()) == "skinny");
  CHECK(std::string(all[4]->name()) == "portable");
  // Every device runs portable; the others refuse every config where the device cannot run them.
  std::vector<const detail::KernelFamily*> listed;
  for (const detail::KernelFamily* f : all)
    if (lists(be, f)) listed.push_back(f);
  REQUIRE(!listed.empty());
  CHECK(std::string(listed.back()->name()) == "portable");
  const detail::Problem any = planning_problem(Dtype::f16, Dtype::f16, 256, 256, 256);
  for (const detail::KernelFamily* f : all)
    if (!lists(be, f))
      for (const detail::Config& c : f->configs()) CHECK_FALSE(f->can_implement(any, c).ok());
  // coopmat2 and coopmat_repack build on coopmat: never listed without it.
  for (const char* on_coopmat : {"coopmat2", "coopmat_repack"})
    if (lists(be, vulkan_family(be, on_coopmat))) CHECK(lists(be, vulkan_family(be, "coopmat")));
  if (contains(be.device().name, "llvmpipe")) CHECK(listed.size() == 2);  // lavapipe: no cooperative matrices (skinny, portable)
  // Every row names its family, round-trips through its text form, and has no form.
  for (const detail::KernelFamily* f : all) {
    CAPTURE(std::string(f->name()));
    CHECK(!f->configs().empty());
    for (const detail::Config& c : f->configs()) {
      CHECK(c.family == f->name());
      CHECK(c.form.empty());
      const std::string text = c.to_string();
      CHECK(text.rfind(std::string(f->name()) + ":", 0) == 0);
      const auto back = detail::Config::parse(text);
      REQUIRE(back.has_value());
      CHECK(*back == c);
    }
  }
  // The cost hints rank coopmat over coopmat2 over portable for 16-bit inputs (each family's
  // fastest row: coopmat's rows differ in rate).
  const detail::Problem p = planning_problem(Dtype::f16, Dtype::f16, 512, 512, 512);
  auto best = [&](const detail::KernelFamily* f) {
    double e = 0;
    for (const detail::Config& c : f->configs()) e = std::max(e, f->hints(p, c).efficiency);
    return e;
  };
  const double e_coopmat = best(all[0]), e_coopmat2 = best(all[2]), e_portable = best(all[4]);
  CHECK(e_coopmat > e_coopmat2);
  CHECK(e_coopmat2 > e_portable);
  CHECK(e_portable > 0);
}

TEST_CASE("vulkan: each family's refusal names the rule that refuses") {
  auto ctx = vulkan_context("family refusals");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  const std::string device = be.device().name;
  const detail::Problem f16 = planning_problem(Dtype::f16, Dtype::f16, 256, 256, 256);
  const detail::Problem f32 = planning_problem(Dtype::f32, Dtype::f32, 256, 256, 256);
  auto refusal = [&](const detail::KernelFamily* f, const detail::Problem& p, const std::string& config) {
    auto c = detail::Config::parse(config);
    REQUIRE_MESSAGE(c.has_value(), config);
    const Status s = f->can_implement(p, *c);
    CHECK_MESSAGE(s.code == StatusCode::unsupported, config);
    // describe() refuses with the same message (plan() checks what can_implement checks).
    detail::PlanSummary summary;
    const Status d = f->describe(p, *c, summary);
    CHECK(d.code == s.code);
    CHECK(d.message == s.message);
    return s.message;
  };

  // The cooperative-matrix families on a device without them: the device is named with what it lacks.
  struct Missing {
    const char* family;
    const char* what;
  };
  for (const Missing m : {Missing{"coopmat", "KHR cooperative matrix"}, Missing{"coopmat2", "NV cooperative matrix 2"}}) {
    detail::KernelFamily* f = vulkan_family(be, m.family);
    REQUIRE(f != nullptr);
    CAPTURE(std::string(m.family));
    if (lists(be, f)) {
      // It runs here: refusals are about the problem and the tile.
      CHECK(contains(refusal(f, f32, f->configs()[0].to_string()), "portable family"));
      CHECK(contains(refusal(f, f16, f->configs()[0].to_string() + "-pingpong"), "no named forms"));
      const std::string tile = refusal(f, f16, std::string(m.family) + ":100x100x30-g8-s1-w4");
      CHECK((contains(tile, "does not divide") || contains(tile, "granularity")));
      continue;
    }
    const std::string why = refusal(f, f16, f->configs()[0].to_string());
    MESSAGE("vulkan " << std::string(m.family) << " refuses on " << device << ": " << why);
    CHECK(contains(why, device));
    CHECK(contains(why, m.what));
    if (contains(device, "llvmpipe")) {  // Mesa's lavapipe has no cooperative matrices at all
#ifdef OMNIGEMM_HAVE_COOPMAT_SPIRV
      CHECK(contains(why, "VK_KHR_cooperative_matrix"));
#else
      CHECK(contains(why, "built without"));
#endif
    }
  }

  // The portable family runs everywhere; its refusals name the rule.
  detail::KernelFamily* portable = vulkan_family(be, "portable");
  REQUIRE(portable != nullptr);
  CHECK(lists(be, portable));
  CHECK(contains(refusal(portable, f32, "portable:64x64x16-g8-s1-w4-k2"), "split_k must be 1"));
  CHECK(contains(refusal(portable, f32, "portable:64x30x16-g8-s1-w4"), "thread layout"));
  CHECK(contains(refusal(portable, f32, "portable:64x64x16-g8-s1-w4-scalar"), "no named forms"));
  CHECK(contains(refusal(portable, f32, "portable:64x64x1024-g8-s1-w4"), "shared memory"));
  const int too_many = be.device().limits.max_threads_per_group / be.device().limits.warp_size + 1;
  if (too_many <= 32)
    CHECK(contains(refusal(portable, f32, "portable:64x64x16-g8-s1-w" + std::to_string(too_many)), "threads exceed"));

  // Through the public API: a forced config of a family this device lacks is refused with the
  // family's reason; one it has runs.
  const Status s = run_probe(*ctx, Dtype::f16, "coopmat:128x128x32-g8-s2-w4");
  if (lists(be, vulkan_family(be, "coopmat"))) {
    CHECK_MESSAGE(s.ok(), s.message);
  } else {
    CHECK(s.code == StatusCode::unsupported);
    CHECK_MESSAGE(contains(s.message, "cooperative matrix"), s.message);
  }
}

TEST_CASE("vulkan: describe() and explain plan what the config says") {
  auto ctx = vulkan_context("family plans");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  const int warp = be.device().limits.warp_size;
  const int64_t m = 300, n = 257, k = 72, batch = 3;
  const detail::Problem p = planning_problem(Dtype::f16, Dtype::f16, m, n, k, batch, Layout::col_major);
  for (const detail::KernelFamily* f : be.families()) {
    CAPTURE(std::string(f->name()));
    int described = 0;
    for (const detail::Config& c : f->configs()) {
      CAPTURE(c.to_string());
      detail::PlanSummary s;
      const Status st = f->describe(p, c, s);
      if (!st.ok()) {  // describe refuses exactly what can_implement refuses
        CHECK(f->can_implement(p, c).message == st.message);
        continue;
      }
      CHECK(f->can_implement(p, c).ok());
      CHECK(s.threads == c.warps * warp);
      // One workgroup per output tile and K slice along x (skinny: per BLOCK_N columns, its rows
      // looping inside), one per batch along z; split-K's workspace holds every slice's f32
      // partial sums (skinny: rows as they are, columns to a multiple of 4; coopmat: whole tiles).
      const bool skinny = std::string(f->name()) == "skinny";
      CHECK(s.grid[0] == (skinny ? 1 : ceil_div(m, c.block_m)) * ceil_div(n, c.block_n) * c.split_k);
      CHECK(s.grid[1] == 1);
      CHECK(s.grid[2] == batch);
      CHECK(s.cluster == 1);
      const int64_t rows = skinny ? m : ceil_div(m, c.block_m) * c.block_m, cols = skinny ? ceil_div(n, 4) * 4 : ceil_div(n, c.block_n) * c.block_n;
      CHECK(s.workspace_bytes == (c.split_k > 1 ? 4 * batch * c.split_k * rows * cols : 0));
      CHECK(s.shared_bytes > 0);
      CHECK(s.shared_bytes <= be.device().limits.max_shared_bytes);
      CHECK_MESSAGE(contains(s.notes, skinny ? std::to_string(c.block_n) + " columns" : std::to_string(c.block_m) + "x" + std::to_string(c.block_n)),
                    s.notes);
      ++described;
    }
    if (lists(be, f)) CHECK(described > 0);  // a family the device cannot run describes nothing
    else CHECK(described == 0);
  }

  // The public explain call: a forced portable config, then the engine's own choice.
  HostMatrix A(m, k, Dtype::f16, Layout::row_major, 0, batch), B(k, n, Dtype::f16, Layout::row_major, 0, batch),
      D(m, n, Dtype::f32, Layout::row_major, 0, batch);
  Gemm g;
  g.a = A.view(Memory::vulkan(0x1000));
  g.b = B.view(Memory::vulkan(0x2000));
  g.d = D.view(Memory::vulkan(0x3000));
  g.batch_count = batch;
  std::string forced;
  for (const detail::Config& c : vulkan_family(be, "portable")->configs())
    if (forced.empty() && vulkan_family(be, "portable")->can_implement(p, c).ok()) forced = c.to_string();
  REQUIRE(!forced.empty());
  for (const std::string& config : {forced, std::string()}) {
    CAPTURE(config);
    g.config = config;
    auto e = ctx->explain(g);
    REQUIRE_MESSAGE(e.ok(), e.status().message);
    const auto chosen = detail::Config::parse(e.value().config());
    REQUIRE(chosen.has_value());
    if (!config.empty()) {
      CHECK(e.value().family() == "vulkan.portable");
      CHECK(e.value().config() == config);
    }
    CHECK(e.value().family() == "vulkan." + std::string(chosen->family.view()));
    CHECK(e.value().raw.threads == chosen->warps * warp);
    const bool skinny = chosen->family.view() == "skinny";
    CHECK(e.value().raw.grid[0] == (skinny ? 1 : ceil_div(m, chosen->block_m)) * ceil_div(n, chosen->block_n) * chosen->split_k);
    CHECK(e.value().raw.grid[2] == batch);
    MESSAGE(e.value().report());
  }
}

#ifndef OMNIGEMM_DEVELOPER
// The measurement-only probe exists only in developer builds: here the variable changes nothing.
TEST_CASE("vulkan: a default build ignores OMNIGEMM_VK_MAINLOOP_PROBE") {
  setenv("OMNIGEMM_VK_MAINLOOP_PROBE", "2", 1);
  auto ctx = vulkan_context("mainloop probe");
  unsetenv("OMNIGEMM_VK_MAINLOOP_PROBE");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  detail::KernelFamily* coopmat = vulkan_family(be, "coopmat");
  if (!lists(be, coopmat)) {
    MESSAGE("SKIPPED vulkan coopmat: mainloop probe: " << missing_family_reason(be, "coopmat"));
    return;
  }
  int ran = 0;
  for (const detail::Config& c : coopmat->configs()) {
    if (ran || !coopmat->can_implement(planning_problem(Dtype::f16, Dtype::f16, 256, 256, 256), c).ok()) continue;
    Case k{2 * int64_t(c.block_m), int64_t(c.block_n) + 8, 4 * int64_t(c.block_k)};
    k.a = k.b = Dtype::f16;
    k.config = c.to_string();
    run_case(*ctx, k);  // a probe pipeline would give wrong results here
    ++ran;
  }
  CHECK(ran == 1);
}
#endif
