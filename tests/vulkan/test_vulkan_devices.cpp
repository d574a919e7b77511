// Other vendors' devices without the GPUs: on each recorded property set (recorded_devices.hpp)
// the backend's pure selection (vulkan_properties.cpp) gives the expected cooperative-matrix
// support, fragment shape and subgroup size, and a backend on that modelled device ranks, plans
// and specializes valid pipelines (threads, shared memory, fragment and subgroup constants) for
// every config it offers. On a real device, its live property set is printed in the recorded
// form and checked against the record where one was executed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "context_internal.hpp"
#include "backend_cases.hpp"
#include "dispatch.hpp"
#include "recorded_devices.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
using detail::vulkan::kCommonSpecIds;
using detail::vulkan::VulkanFamily;
using detail::vulkan::VulkanLaunch;

namespace {

bool same(const detail::vulkan::CoopmatShape& a, const detail::vulkan::CoopmatShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}

// Every candidate the modelled backend offers for `p` plans a launch within the device's limits,
// with the fragment and subgroup constants its selection chose. Returns the first family.
std::string check_candidates(detail::vulkan::VulkanBackend& be, const detail::Problem& p) {
  const auto& dev = be.vk_device();
  const auto ranked = detail::rank_candidates(be, p);
  REQUIRE(!ranked.empty());
  for (const detail::Candidate& c : ranked) {
    CAPTURE(c.config.to_string());
    auto* f = dynamic_cast<VulkanFamily*>(c.family);
    REQUIRE(f != nullptr);
    VulkanLaunch l;
    const Status s = f->plan_launch(p, c.config, l);
    REQUIRE_MESSAGE(s.ok(), s.message);
    CHECK(l.threads <= dev.props.max_invocations);
    CHECK(l.shared_bytes <= int64_t(dev.props.max_shared_bytes));
    CHECK(l.spec.count >= kCommonSpecIds);
    CHECK(l.spec.values[4] == l.threads);
    CHECK(l.tiles >= 1);
    const std::string family = f->name();
    if (family == "coopmat") {
      const uint32_t* v = l.spec.values + kCommonSpecIds;
      const int mul = v[6];
      CHECK(same({v[0], v[1], v[2]}, dev.coopmat.shape[mul]));
      CHECK(v[3] == dev.coopmat.subgroup);
      CHECK(l.threads == uint32_t(c.config.warps) * dev.coopmat.subgroup);
      CHECK(c.config.block_m % int(v[0]) == 0);
      CHECK(c.config.block_n % int(v[1]) == 0);
      CHECK(c.config.block_k % int(v[2]) == 0);
    } else if (family == "coopmat2") {
      bool fits = false;
      for (const auto& fs : dev.coopmat2.shapes)
        fits |= fs.invocations == l.threads && c.config.block_m % int(fs.m) == 0 && c.config.block_n % int(fs.n) == 0 &&
                c.config.block_k % int(fs.k) == 0;
      CHECK(fits);
      CHECK(l.shared_bytes + int64_t(dev.coopmat2.reserved_shared) <= int64_t(dev.props.max_shared_bytes));
    } else if (family == "skinny") {
      CHECK(l.threads == uint32_t(c.config.warps) * dev.props.subgroup_size);
      const int64_t cols = l.derived ? p.m : p.n;  // few columns: runs D^T = B^T A^T
      CHECK(l.tiles == uint64_t((cols + c.config.block_n - 1) / c.config.block_n) * uint64_t(c.config.split_k));
      CHECK((l.workspace_bytes > 0) == (c.config.split_k > 1));
      CHECK(std::min(p.m, p.n) <= 32);  // offered for decode shapes only
    } else {
      CHECK(family == "portable");
      CHECK(l.threads == uint32_t(c.config.warps) * dev.props.subgroup_size);
    }
  }
  return ranked.front().family->name();
}

// The live property set in recorded_devices.hpp's terms, for the record.
std::string describe(const detail::vulkan::DeviceProperties& p) {
  std::ostringstream o;
  o << p.name << ": vendor 0x" << std::hex << p.vendor_id << std::dec << ", driver id " << p.driver_id << ", Vulkan "
    << VK_API_VERSION_MAJOR(p.api_version) << "." << VK_API_VERSION_MINOR(p.api_version) << "." << VK_API_VERSION_PATCH(p.api_version)
    << ", subgroup " << p.subgroup_size << " (" << p.min_subgroup_size << ".." << p.max_subgroup_size
    << (p.subgroup_size_control ? ", size control" : ", no size control") << "), shared " << p.max_shared_bytes << ", invocations "
    << p.max_invocations << ", compute units " << p.compute_units << ", f16 float controls: RTE " << p.rounding_rte_float16
    << ", denorm preserve " << p.denorm_preserve_float16 << "\n  coopmat (m n k a b c result scope saturating):";
  for (const auto& c : p.coopmat)
    o << " {" << c.m << "," << c.n << "," << c.k << "," << c.a << "," << c.b << "," << c.c << "," << c.result << "," << c.scope << ","
      << c.saturating << "}";
  o << "\n  coopmat2: max workgroup " << p.cm2_max_workgroup << ", max dimension " << p.cm2_max_dimension << ", reserved shared "
    << p.cm2_reserved_shared << ", flexible (m n k a b c result invocations):";
  for (const auto& f : p.flex)
    o << " {" << f.m_granularity << "," << f.n_granularity << "," << f.k_granularity << "," << f.a << "," << f.b << "," << f.c << ","
      << f.result << "," << f.workgroup_invocations << "}";
  o << "\n  extensions used:";
  for (const char* e : {"VK_KHR_cooperative_matrix", "VK_KHR_shader_bfloat16", "VK_NV_cooperative_matrix2", "VK_EXT_subgroup_size_control"})
    if (p.has_extension(e)) o << " " << e;
  return o.str();
}

}  // namespace

TEST_CASE("vulkan devices: each recorded device selects valid families, fragments, subgroup sizes and specializations") {
  const detail::vulkan::BuiltShaders built = detail::vulkan::BuiltShaders::of_this_build();
  for (const recorded::Recorded& r : recorded::devices()) {
    CAPTURE(std::string(r.label));
    detail::vulkan::VulkanBackend be;
    be.init_modelled(r.props);
    const auto& dev = be.vk_device();
    const recorded::Expect& e = r.expect;
    CHECK(dev.info.name == r.props.name);
    if (!built.coopmat) {  // a build without cooperative-matrix shaders runs the portable family anywhere
      CHECK_FALSE(dev.coopmat.ok);
      CHECK_FALSE(dev.coopmat2.ok);
    } else {
      CHECK_MESSAGE(dev.coopmat.ok == e.coopmat, dev.coopmat.why);
      if (e.coopmat) {
        CHECK(same(dev.coopmat.shape[0], e.f16_shape));
        CHECK(dev.coopmat.subgroup == e.subgroup);
        CHECK(dev.coopmat.require_subgroup == e.require_subgroup);
        CHECK_MESSAGE(dev.coopmat.bf16 == e.bf16, dev.coopmat.bf16_why);
      } else {
        CHECK(!dev.coopmat.why.empty());
      }
      if (built.coopmat2) CHECK_MESSAGE(dev.coopmat2.ok == e.coopmat2, dev.coopmat2.why);
    }
    CHECK(detail::vulkan::f16_rounding_in_hardware(dev.props, dev.coopmat) == (built.coopmat && e.f16_rounding_hw));
    const bool coopmat_here = built.coopmat && e.coopmat;
    const std::string f16_family = check_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 4096, 4096, 4096));
    CHECK(f16_family == (coopmat_here ? e.f16_family : "portable"));
    // Decode, ragged, column-major B, fp8, bf16 and f32 inputs: every candidate plans validly.
    // Decode shapes: the skinny family streams B (or, few columns, A) on every device; 8 rows
    // (columns) also on coopmat's 16-row (16-column) tiles where that runs, 16 only there.
    const char* decode = "skinny";
    const std::string rows8 = check_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 8, 4096, 4096));
    CHECK((rows8 == decode || (dev.coopmat.ok && rows8 == "coopmat")));
    const std::string rows16 = check_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 16, 4096, 4096));
    CHECK(rows16 == (dev.coopmat.ok ? std::string("coopmat") : std::string(decode)));
    CHECK(check_candidates(be, planning_problem(Dtype::fp8_e4m3, Dtype::fp8_e4m3, 1, 14336, 4096)) == std::string(decode));
    const std::string cols8 = check_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 4096, 8, 4096));
    CHECK((cols8 == decode || (dev.coopmat.ok && cols8 == "coopmat")));
    const std::string cols16 = check_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 4096, 16, 4096));
    CHECK(cols16 == (dev.coopmat.ok ? std::string("coopmat") : std::string(decode)));
    check_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 300, 257, 72, 3, Layout::col_major));
    check_candidates(be, planning_problem(Dtype::fp8_e4m3, Dtype::f16, 1000, 1000, 1000));
    const std::string bf16_family = check_candidates(be, planning_problem(Dtype::bf16, Dtype::bf16, 2048, 2048, 2048));
    CHECK(bf16_family == (coopmat_here && e.bf16 ? e.f16_family : "portable"));
    CHECK(check_candidates(be, planning_problem(Dtype::f32, Dtype::f32, 512, 512, 512)) == "portable");
    // A modelled device runs nothing.
    const detail::Problem p = planning_problem(Dtype::f32, Dtype::f32, 8, 8, 8);
    detail::KernelFamily* portable = vulkan_family(be, "portable");
    REQUIRE(portable != nullptr);
    CHECK_FALSE(portable->run(p, portable->configs()[0], nullptr).ok());
    MESSAGE(std::string(r.label) << (r.executed ? " (executed)" : " (modelled)") << ": f16 -> " << f16_family << ", bf16 -> " << bf16_family
                    << (dev.coopmat.ok ? ", fragments " + std::to_string(dev.coopmat.shape[0].m) + "x" + std::to_string(dev.coopmat.shape[0].n) +
                                             "x" + std::to_string(dev.coopmat.shape[0].k) + " at subgroup " +
                                             std::to_string(dev.coopmat.subgroup) + (dev.coopmat.require_subgroup ? " (required)" : "")
                                       : ", no KHR cooperative matrix: " + dev.coopmat.why));
  }
}

TEST_CASE("vulkan devices: this device's property set, checked against its record where one was executed") {
  auto ctx = backend_context(Backend::vulkan, "live property set");
  if (!ctx) return;
  auto* be = dynamic_cast<detail::vulkan::VulkanBackend*>(&detail::context_backend(ctx->c_handle()));
  REQUIRE(be != nullptr);
  const auto& live = be->vk_device().props;
  MESSAGE("live property set: " << describe(live));
  for (const recorded::Recorded& r : recorded::devices()) {
    if (!r.executed) continue;
    const bool match = (live.name.find("llvmpipe") != std::string::npos && r.props.name.find("llvmpipe") != std::string::npos) ||
                       ((live.name.find("H100") != std::string::npos || live.name.find("H200") != std::string::npos) &&
                        r.props.name.find("H100") != std::string::npos);
    if (!match) continue;
    CAPTURE(std::string(r.label));
    CHECK(live.vendor_id == r.props.vendor_id);
    CHECK(live.driver_id == r.props.driver_id);
    CHECK(live.subgroup_size == r.props.subgroup_size);
    CHECK(live.min_subgroup_size == r.props.min_subgroup_size);
    CHECK(live.max_subgroup_size == r.props.max_subgroup_size);
    CHECK(live.max_shared_bytes == r.props.max_shared_bytes);
    CHECK(live.type == r.props.type);
    CHECK(live.has_extension("VK_KHR_cooperative_matrix") == r.props.has_extension("VK_KHR_cooperative_matrix"));
    CHECK(live.rounding_rte_float16 == r.props.rounding_rte_float16);
    CHECK(live.denorm_preserve_float16 == r.props.denorm_preserve_float16);
    const auto& dev = be->vk_device();
    CHECK(dev.coopmat.ok == (detail::vulkan::BuiltShaders::of_this_build().coopmat && r.expect.coopmat));
    if (dev.coopmat.ok) {
      CHECK(same(dev.coopmat.shape[0], r.expect.f16_shape));
      CHECK(dev.coopmat.subgroup == r.expect.subgroup);
    }
  }
}

TEST_CASE("vulkan devices: coopmat and skinny read unaligned 16-bit operands as aligned vector pairs only where a problem has one") {
  const std::vector<recorded::Recorded> all = recorded::devices();
  const auto hopper = std::find_if(all.begin(), all.end(), [](const recorded::Recorded& r) { return std::string(r.label).rfind("NVIDIA Hopper", 0) == 0; });
  REQUIRE(hopper != all.end());
  detail::vulkan::VulkanBackend be;
  be.init_modelled(hopper->props);
  // The specialization constant `id` of `config` (family:tile) planned for p; `absent` (the
  // shader's default) where the plan leaves it out.
  auto spec = [&](const detail::Problem& p, const char* config, uint32_t id, uint32_t absent) {
    const auto c = detail::Config::parse(config);
    REQUIRE(c.has_value());
    auto* f = dynamic_cast<VulkanFamily*>(vulkan_family(be, std::string(c->family.view())));
    REQUIRE(f != nullptr);
    VulkanLaunch l;
    const Status s = f->plan_launch(p, *c, l);
    REQUIRE_MESSAGE(s.ok(), s.message);
    return l.spec.count > id ? l.spec.values[id] : absent;
  };
  // coopmat: spec ids 17 (SPLIT, default 1) and 18 (UNALIGNED_GATHER, default 0).
  auto ids = [&](const detail::Problem& p, const char* config) {
    return std::pair<uint32_t, uint32_t>{spec(p, config, 17, 1), spec(p, config, 18, 0)};
  };
  const char* tile = "coopmat:128x256x32-g8-s1-w8";
  const char* split = "coopmat:16x256x64-g8-s1-w8-k8";
  using P = std::pair<uint32_t, uint32_t>;
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 4096, 4096, 4096), tile) == P{1, 0});
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 4096, 4096, 4097), tile) == P{1, 1});  // A's rows of 4097
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 4096, 4095, 4096), tile) == P{1, 1});  // B's rows of 4095
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 4096, 4096, 4097, 1, Layout::col_major), tile) == P{1, 1});
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 16, 4096, 4096), split) == P{8, 0});
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 16, 4096, 4099), split) == P{8, 1});
  // fp8 is converted element by element whatever its alignment: only the 16-bit operand counts.
  CHECK(ids(planning_problem(Dtype::fp8_e4m3, Dtype::f16, 4096, 4096, 4097), tile) == P{1, 0});
  CHECK(ids(planning_problem(Dtype::fp8_e4m3, Dtype::f16, 4096, 4095, 4097), tile) == P{1, 1});
  // Batches 8-aligned in every other way but a batch stride of 4097 x 4096 elements: aligned.
  CHECK(ids(planning_problem(Dtype::f16, Dtype::f16, 4097, 4096, 4096, 3), tile) == P{1, 0});

  // skinny: spec id 10 (UNALIGNED_GATHER, default 0), from B as run.
  auto pairs = [&](const detail::Problem& p, const char* config) { return spec(p, config, 10, 0); };
  const char* n_rows = "skinny:8x256x256-g1-s4-w8-k8";  // B's N contiguous
  const char* k_runs = "skinny:8x64x512-g1-s1-w8-k8";   // B's K contiguous
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 8, 4096, 4096), n_rows) == 0u);
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 8, 4095, 4096), n_rows) == 1u);
  CHECK(pairs(planning_problem(Dtype::bf16, Dtype::bf16, 8, 4093, 4096), n_rows) == 1u);
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 8, 4096, 4096, 1, Layout::col_major), k_runs) == 0u);
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 8, 4096, 4097, 1, Layout::col_major), k_runs) == 1u);
  CHECK(pairs(planning_problem(Dtype::f32, Dtype::f32, 8, 4095, 4096), n_rows) == 0u);  // element-wise f32
  // 16 rows per pass load 4 columns at a time where N is contiguous: no 8-element runs to pair.
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 16, 4095, 4096), "skinny:16x128x256-g1-s8-w8-k8") == 0u);
  // Few columns, run as D^T = B^T A^T: A's rows of 4097 are the K-contiguous B of the run.
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 4096, 8, 4097), k_runs) == 1u);
  CHECK(pairs(planning_problem(Dtype::f16, Dtype::f16, 4096, 8, 4096), k_runs) == 0u);
}
