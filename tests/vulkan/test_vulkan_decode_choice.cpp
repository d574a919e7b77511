// The cost model's choice for decode and few-tile shapes (the LLM set: M = 1..128 against
// N x K = 4096 x 4096, 14336 x 4096, 4096 x 14336) on the recorded H100 property set and on this
// machine's device: the skinny family up to 16 rows (its split-K streaming B), split-K coopmat
// where tiles are few, and today's choices for large squares.
#include <doctest/doctest.h>

#include <string>

#include "backend_cases.hpp"
#include "dispatch.hpp"
#include "recorded_devices.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::string choice(detail::Backend& be, int64_t m, int64_t n, int64_t k, Layout lb = Layout::row_major) {
  const auto ranked = detail::rank_candidates(be, planning_problem(Dtype::f16, Dtype::f16, m, n, k, 1, lb));
  REQUIRE(!ranked.empty());
  return std::string(ranked.front().family->name()) + ":" + ranked.front().config.to_string().substr(ranked.front().config.to_string().find(':') + 1);
}

}  // namespace

TEST_CASE("vulkan decode choice: print") {
  for (const recorded::Recorded& r : recorded::devices()) {
    detail::vulkan::VulkanBackend be;
    be.init_modelled(r.props);
    for (Layout lb : {Layout::row_major, Layout::col_major})
      for (int64_t m : {1, 4, 16, 32, 64, 128, 256, 4096})
        for (auto nk : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}})
          MESSAGE(std::string(r.label) << (lb == Layout::row_major ? " rr " : " rc ") << m << "x" << nk.first << "x" << nk.second << ": "
                          << choice(be, m, nk.first, nk.second, lb));
  }
}
