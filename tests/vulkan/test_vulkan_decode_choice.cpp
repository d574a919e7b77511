// The cost model's choice for decode and few-tile shapes (the LLM set: M = 1..128 against
// N x K = 4096 x 4096, 14336 x 4096, 4096 x 14336) on the recorded H100 property set and on this
// machine's device: split-K coopmat on 16-row tiles up to 16 rows where K is long (the skinny
// family for one row of column-major B) and on 16-column tiles for 9..16 columns, 2-D split-K
// tiles above that where tiles are few, and today's choices for large squares; deep K splits
// for narrow B, the 4-row tiles for 2..4 rows; for a K of a few elements the tensor cores where
// D is stored in vectors, else the portable family; 8-subgroup tiles at mid sizes, unsplit where
// the tiles fill the GPU; long slices on most of the GPU unsplit or split less.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "backend_cases.hpp"
#include "dispatch.hpp"
#include "recorded_devices.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::string choice(detail::Backend& be, int64_t m, int64_t n, int64_t k, Layout lb = Layout::row_major, Dtype d = Dtype::f32) {
  const auto ranked = detail::rank_candidates(be, planning_problem(Dtype::f16, Dtype::f16, m, n, k, 1, lb, d));
  REQUIRE(!ranked.empty());
  return std::string(ranked.front().family->name()) + ":" + ranked.front().config.to_string().substr(ranked.front().config.to_string().find(':') + 1);
}

// False, with a SKIPPED line naming `what`, where this build has no cooperative-matrix shaders
// (the recorded devices' choices then differ: portable everywhere).
bool coopmat_built(const char* what) {
  if (detail::vulkan::BuiltShaders::of_this_build().coopmat) return true;
  MESSAGE("SKIPPED vulkan decode choice (" << what << "): this build has no cooperative-matrix shaders");
  return false;
}

}  // namespace

TEST_CASE("vulkan decode choice: the recorded H100 streams decode shapes, splits K over few tiles, keeps large squares") {
  if (!coopmat_built("H100")) return;
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("NVIDIA Hopper").props);
  for (Layout lb : {Layout::row_major, Layout::col_major}) {
    CAPTURE(int(lb));
    for (auto nk : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}}) {
      CAPTURE(nk.first);
      CAPTURE(nk.second);
      // 8 rows of row-major B: coopmat's 16-row tiles; otherwise those or the skinny family, as
      // the model ranks them (1 row of column-major B: the skinny family).
      for (int64_t m : {1, 8}) {
        CAPTURE(m);
        const std::string decode = choice(be, m, nk.first, nk.second, lb);
        if (lb == Layout::row_major && m == 8) CHECK(decode.rfind("coopmat:16x", 0) == 0);
        else if (lb == Layout::col_major && m == 1) CHECK(decode.rfind("skinny:", 0) == 0);
        else CHECK((decode.rfind("skinny:", 0) == 0 || decode.rfind("coopmat:16x", 0) == 0));
      }
      for (int64_t m : {9, 16, 128}) {  // split-K coopmat, 16-row tiles up to 16 rows
        CAPTURE(m);
        const std::string few = choice(be, m, nk.first, nk.second, lb);
        CHECK(few.rfind(m <= 16 ? "coopmat:16x" : "coopmat:", 0) == 0);
        // Except 128 rows of N = 14336: 112 tiles of 128x128 fill most units, unsplit (H200:
        // 116.4 us against 121.7 in 4 slices of 128x256).
        const bool fills = m == 128 && nk.first == 14336;
        CHECK((few.find("-k") != std::string::npos) != fills);
      }
    }
  }
  CHECK(choice(be, 4096, 8, 4096).rfind("skinny:", 0) == 0);  // few columns: D^T = B^T A^T
  // 9..16 columns against a long K: the 16-column tiles, K split (the mirror of 16 rows).
  for (auto mk : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}})
    for (Layout lb : {Layout::row_major, Layout::col_major}) {
      CAPTURE(mk.first);
      CAPTURE(int(lb));
      const std::string few = choice(be, mk.first, 16, mk.second, lb);
      CHECK(few.rfind("coopmat:256x16x", 0) == 0);
      CHECK(few.find("-k") != std::string::npos);
    }
  // Large squares: the tile the H100 measured fastest (README), no split.
  for (int64_t sq : {2048, 4096, 8192}) {
    CAPTURE(sq);
    CHECK(choice(be, sq, sq, sq) == "coopmat:128x256x32-g8-s1-w8");
  }
}

TEST_CASE("vulkan decode choice: narrow B against a long K takes deep splits, 2..4 rows their own tile") {
  if (!coopmat_built("deep splits")) return;
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("NVIDIA Hopper").props);
  // One row against a few hundred columns of row-major B: 16 slices leave most of the 132
  // compute units idle, 64 slices fill them (H200: 1 x 758 x 13281 173 -> 39 us).
  for (int64_t n : {263, 758}) {
    CAPTURE(n);
    const std::string narrow = choice(be, 1, n, 13281);
    CHECK(narrow.rfind("skinny:1x", 0) == 0);
    CHECK(narrow.find("-k64") != std::string::npos);
  }
  // Wide B fills the device at 16 slices: no deeper split (each slice's own work is paid again).
  for (int64_t n : {4096, 14336}) {
    CAPTURE(n);
    CHECK(choice(be, 1, n, 4096).find("-k64") == std::string::npos);
  }
  // 2..4 rows against a short K: the 4-row tile in one pass, not the 1-row tile in several
  // (H200: 3 x 14746 x 378 81 -> 24 us); more rows than it has never take it.
  for (int64_t m : {2, 3, 4}) {
    CAPTURE(m);
    CHECK(choice(be, m, 14746, 378).rfind("skinny:4x", 0) == 0);
  }
  for (int64_t m : {5, 8}) {
    CAPTURE(m);
    CHECK(choice(be, m, 14746, 378).rfind("skinny:4x", 0) != 0);
  }
}

TEST_CASE("vulkan decode choice: a K of a few elements: the tensor cores where D is stored in vectors, else portable") {
  if (!coopmat_built("short K")) return;
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("NVIDIA Hopper").props);
  // The epilogue bounds these (H200, f16 in, K = 8: 2000 x 3000 19.7 us on coopmat's 128x128
  // tiles, 24.8 on portable; 4000 x 6000 41.5 on 128x256 tiles, 79.7 on portable; a 16-bit D of
  // 3001 columns, stored element by element, 35.4 on coopmat's 64x64 tiles, 24.7 on portable).
  for (Dtype d : {Dtype::f16, Dtype::f32}) {
    CAPTURE(int(d));
    for (int64_t k : {8, 16, 64, 256, 2048}) {
      CAPTURE(k);
      CHECK(choice(be, 2000, 3000, k, Layout::row_major, d).rfind("coopmat", 0) == 0);
      CHECK(choice(be, 4000, 6000, k, Layout::row_major, d).rfind("coopmat", 0) == 0);
    }
  }
  for (int64_t k : {1, 8, 16}) {
    CAPTURE(k);
    CHECK(choice(be, 2000, 3001, k, Layout::row_major, Dtype::f16).rfind("portable:", 0) == 0);
    CHECK(choice(be, 296, 5186, k, Layout::row_major, Dtype::f16).rfind("portable:", 0) == 0);
  }
  // A K of one on a few hundred rows: 301 x 8204 x 1 33.4 us on coopmat's 256x128 tiles
  // (subgroups of 8 fragment rows), 13.6 on portable, 10.6-12.0 on 128x256 tiles; the 256x128
  // tile's epilogue is also slow at long K (7770 x 1453 x 886: 238 us, 153 on 128x256 tiles).
  CHECK(choice(be, 301, 8204, 1, Layout::row_major, Dtype::f16).find(":128x256x") != std::string::npos);
  CHECK(choice(be, 7770, 1453, 886, Layout::row_major, Dtype::f16).find(":128x256x") != std::string::npos);
}

TEST_CASE("vulkan decode choice: mid sizes take 8-subgroup tiles, unsplit where the tiles fill the GPU") {
  if (!coopmat_built("mid sizes")) return;
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("NVIDIA Hopper").props);
  // H200, f16, us (4-subgroup tile or split K / the choice now): 2000 x 3000 at K = 8, 256,
  // 1024 19.7 / 14.7, 41.8 / 32.4, 113.7 / 92.6 (128x128 tiles of 4 / of 8 subgroups); 3000^3
  // 418.9 in 4 slices / 356.4 unsplit; 1500 x 1500 x 512 54.6 (64x64 tiles in 2 slices) / 32.1.
  for (int64_t k : {8, 256, 1024}) {
    CAPTURE(k);
    const std::string c = choice(be, 2000, 3000, k, Layout::row_major, Dtype::f16);
    CHECK(c.find("-w8") != std::string::npos);
    CHECK(c.find("-k") == std::string::npos);
  }
  const std::string cube = choice(be, 3000, 3000, 3000, Layout::row_major, Dtype::f16);
  CHECK(cube.find(":128x256x") != std::string::npos);
  CHECK(cube.find("-k") == std::string::npos);
  const std::string mid = choice(be, 1500, 1500, 512, Layout::row_major, Dtype::f16);
  CHECK(mid.find("-w8") != std::string::npos);
  CHECK(mid.find("-k") == std::string::npos);
}

TEST_CASE("vulkan decode choice: long slices on most of the GPU run unsplit or split less; short slices of few tiles split deep") {
  if (!coopmat_built("busy units")) return;
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("NVIDIA Hopper").props);
  // H200, f16, us (the all-units residency's choice / this one, same call): 300 x 7000 x 2000
  // 100.7 (128x256 in 4 slices) / 81.7 unsplit; 512 x 4096 x 4096 123.7 (128x256, 4 slices) /
  // 112.6 (128x128 of 8 subgroups, unsplit); 768 x 768 x 4096 70.1 (8 slices) / 59.3 (4).
  const std::string wide = choice(be, 300, 7000, 2000, Layout::row_major, Dtype::f16);
  CHECK(wide.find(":128x256x") != std::string::npos);
  CHECK(wide.find("-k") == std::string::npos);
  const std::string llm = choice(be, 512, 4096, 4096, Layout::row_major, Dtype::f16);
  CHECK(llm.find(":128x128x") != std::string::npos);
  CHECK(llm.find("-w8") != std::string::npos);
  CHECK(llm.find("-k") == std::string::npos);
  CHECK(choice(be, 768, 768, 4096, Layout::row_major, Dtype::f16).find("-k4") != std::string::npos);
  // Few tiles, mostly padding, a long K: 64x64 tiles in 16 slices, as before (per busy unit a
  // lone 128x128 tile ranked first and ran 1.4x-2.6x slower: 266 x 9 x 3450 43.5 against 16.5,
  // 733 x 26 x 4244 30.9 against 21.6).
  for (auto mnk : {std::array<int64_t, 3>{266, 9, 3450}, {733, 26, 4244}, {14, 752, 7560}}) {
    CAPTURE(mnk[0]);
    CHECK(choice(be, mnk[0], mnk[1], mnk[2], Layout::row_major, Dtype::f16).find(":64x64x32-g8-s2-w4-k16") != std::string::npos);
  }
  // 32 or 64 rows against 4096 x 4096: 128x256 in 8 slices, as before (H200: 64x64 tiles in 8
  // slices, ranked first with per-busy-unit residency for every tile, ran 41.3 us against 33.2).
  for (int64_t m : {32, 64}) {
    CAPTURE(m);
    CHECK(choice(be, m, 4096, 4096, Layout::row_major, Dtype::f16).find(":128x256x32-g8-s1-w8-k8") != std::string::npos);
  }
}

TEST_CASE("vulkan decode choice: K = 0 (the epilogue alone) and K = 1 have a config on every recorded device") {
  for (const recorded::Recorded& r : recorded::devices()) {
    const std::string label = r.label;
    CAPTURE(label);
    detail::vulkan::VulkanBackend be;
    be.init_modelled(r.props);
    for (int64_t k : {0, 1}) {
      CAPTURE(k);
      for (Dtype d : {Dtype::f16, Dtype::f32})
        CHECK(!detail::rank_candidates(be, planning_problem(Dtype::f16, Dtype::f16, 300, 500, k, 1, Layout::row_major, d)).empty());
    }
  }
}

TEST_CASE("vulkan decode choice: lavapipe streams decode shapes and keeps the portable family elsewhere") {
  detail::vulkan::VulkanBackend be;
  be.init_modelled(recorded::record("Mesa lavapipe").props);
  for (Layout lb : {Layout::row_major, Layout::col_major})
    for (int64_t m : {1, 16, 32}) {
      CAPTURE(m);
      CHECK(choice(be, m, 4096, 4096, lb).rfind("skinny:", 0) == 0);
      CHECK(choice(be, m, 14336, 4096, lb).rfind("skinny:", 0) == 0);
    }
  CHECK(choice(be, 128, 4096, 4096).rfind("portable:", 0) == 0);
  CHECK(choice(be, 1024, 1024, 1024).rfind("portable:", 0) == 0);
  // The live device, where it is lavapipe: the same choices through explain.
  auto ctx = backend_context(Backend::vulkan, "decode choice (live)");
  if (!ctx) return;
  auto& live = detail::context_backend(ctx->c_handle());
  if (live.device().name.find("llvmpipe") == std::string::npos) return;
  CHECK(choice(live, 16, 4096, 4096).rfind("skinny:", 0) == 0);
  CHECK(choice(live, 1024, 1024, 1024).rfind("portable:", 0) == 0);
}
