// The Vulkan GEMM's 16-bit outputs round to nearest even, bit for bit as the CPU reference
// (omnigemm/epilogue.h, itself bit-exact with numeric.hpp), on every family and config the device
// runs, through the plain and the general epilogue, whichever rounding the device's modules use
// (in software, or by the conversion instruction under float controls: gemm_common.glsl).
// K = 1 keeps the accumulator exact (a product of two f16 values fits in f32), so the rounding
// of D is the only rounding; the operands make ties, subnormal results and overflow common.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "context_internal.hpp"
#include "omnigemm/epilogue.h"
#include "vulkan_backend.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// f16 values with random significands over exponents -14..4 (A) and small odd multiples of
// powers of two (B): a product has up to 14 significant bits, so 1 in 8 of them is a tie at f16
// precision; exponents reach f16's subnormals and past its largest finite value.
template <class G>
float a_value(G& g) {
  const int e = std::uniform_int_distribution<int>(-14, 4)(g);
  const int m = std::uniform_int_distribution<int>(0, 1023)(g);
  const float v = std::ldexp(1.0f + float(m) / 1024.0f, e);
  return std::bernoulli_distribution(0.5)(g) ? -v : v;
}
template <class G>
float b_value(G& g) {
  static const float odd[] = {1, 3, 5, 7};
  const float v = odd[std::uniform_int_distribution<int>(0, 3)(g)] * std::ldexp(1.0f, std::uniform_int_distribution<int>(-12, 12)(g));
  return std::bernoulli_distribution(0.5)(g) ? -v : v;
}

uint16_t bits16(const HostMatrix& m, int64_t r, int64_t c) {
  uint16_t v;
  std::memcpy(&v, &m.bytes[size_t(m.offset(0, r, c)) * 2], 2);
  return v;
}

// Runs an m x n x 1 GEMM with `config` into D of dtype `out` (plain epilogue, alpha 0.5, or a
// per-column bias with alpha 1) and counts the outputs whose bits differ from the reference's.
// Returns -1 where the backend refuses the config for this problem.
int64_t mismatches(Context& ctx, const std::string& config, int64_t m, int64_t n, Dtype out, bool with_bias) {
  auto& g = rng();
  HostMatrix A(m, 1, Dtype::f16), B(1, n, Dtype::f16), D(m, n, out);
  for (int64_t i = 0; i < m; ++i) A.set(0, i, 0, a_value(g));
  for (int64_t j = 0; j < n; ++j) B.set(0, 0, j, b_value(g));
  std::vector<float> bias(static_cast<size_t>(n));
  for (float& x : bias) x = float(std::uniform_int_distribution<int>(-2047, 2047)(g)) * std::ldexp(1.0f, -14);
  D.poison();
  Gemm gm;
  gm.a = A.host_view();
  gm.b = B.host_view();
  gm.d = D.host_view();
  gm.config = config;
  gm.epilogue.alpha = with_bias ? 1.0f : 0.5f;
  if (with_bias) {
    gm.epilogue.bias_mode = BiasMode::per_n;
    gm.epilogue.bias_dtype = Dtype::f32;
    gm.epilogue.bias = Memory::host(bias.data());
  }
  const Status s = ctx.run_host(gm);
  if (!s.ok() && s.code == StatusCode::unsupported && !config.empty()) return -1;
  REQUIRE_MESSAGE(s.ok(), s.message);
  const int dt = out == Dtype::f16 ? OG_EPI_DTYPE_F16 : OG_EPI_DTYPE_BF16;
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float acc = float(A.get(0, i, 0)) * float(B.get(0, 0, j));  // exact
      const float v = og_epilogue_apply(gm.epilogue.alpha, acc, false, 0.0f, 0.0f, with_bias, bias[size_t(j)], 0, 0.0f);
      const uint16_t want = uint16_t(og_f32_to_16bit(dt, v)), got = bits16(D, i, j);
      if (got != want) {
        if (bad < 4)
          MESSAGE("D[" << i << "][" << j << "] = 0x" << std::hex << got << ", want 0x" << want << std::dec << " (" << v << ")");
        ++bad;
      }
    }
  return bad;
}

}  // namespace

TEST_CASE("vulkan rounding: 16-bit D rounds to nearest even bit-exactly on every family and config the device runs") {
  auto ctx = backend_context(Backend::vulkan, "16-bit rounding");
  if (!ctx) return;
  auto* be = dynamic_cast<detail::vulkan::VulkanBackend*>(&detail::context_backend(ctx->c_handle()));
  REQUIRE(be != nullptr);
  MESSAGE(be->device().name << ": f16 outputs rounded " << std::string(be->pipelines().f16_rounding_in_hardware() ? "by the conversion instruction" : "in software"));
  int ran = 0;
  // The cost model's choice, then each family's configs forced, one per output-tile geometry
  // (tile, subgroups) and whether K is split (the split ones store D in the reduce pass): the
  // stores differ by those only.
  std::vector<std::string> configs = {""};
  std::set<std::string> geometries;
  for (const detail::KernelFamily* f : be->families())
    for (const detail::Config& c : f->configs()) {
      const std::string key = std::string(f->name()) + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "w" +
                              std::to_string(c.warps) + (c.split_k > 1 ? "split" : "");
      if (geometries.insert(key).second) configs.push_back(c.to_string());
    }
  for (const std::string& config : configs) {
    CAPTURE(config);
    // Ragged tiles; a skinny shape (few rows) for the decode family.
    for (const auto& [m, n] : {std::pair<int64_t, int64_t>{77, 135}, {5, 300}})
      for (Dtype out : {Dtype::f16, Dtype::bf16})
        for (bool with_bias : {false, true}) {
          CAPTURE(m);
          CAPTURE(std::string(name(out)));
          CAPTURE(with_bias);
          const int64_t bad = mismatches(*ctx, config, m, n, out, with_bias);
          if (bad < 0) continue;
          CHECK(bad == 0);
          ++ran;
        }
  }
  CHECK(ran > 0);
  MESSAGE(ran << " runs of " << configs.size() << " configs (default and forced) checked bit for bit");
}
