// The hip.gfx90a_mfma kernel without an AMD GPU: a host model of one launch, built from the headers
// the kernel itself compiles (backends/hip/gfx90a/tile_map.h, tile_io.h, kernel_args.h) and the
// family's own plan (plan.cpp), checked against the float64 reference on every table row, both
// multiplicand types, every loader and operand layout, ragged and random shapes.
//
// The model runs the kernel's loop (gemm_mfma.hip.h) thread by thread: fetch_tile and store_tile
// per thread into a host LDS array, read_operand per lane, then the MFMAs of each wave as the ISA
// defines them (mfma_isa below, written from the CDNA2 ISA's operand tables independently of
// tile_map.h), then store_block per lane through the shared epilogue. What it cannot see is
// timing: barriers, LDS bank conflicts as stalls (their addressing is checked below instead),
// and MI200's flushing of f16 denormals (the inputs here have none).
#include <doctest/doctest.h>

#include <array>
#include <set>
#include <vector>

#include "gfx90a/plan.hpp"
#include "gfx90a/tile_io.h"
#include "hip_cases.hpp"
#include "omnigemm/tile_schedule.h"
#include "validate.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
namespace hip = omnigemm::hip;
namespace gfx90a = omnigemm::detail::gfx90a;
using detail::Config;

namespace {

float multiplicand_value(unsigned short bits, bool bf16) {
  return bf16 ? numeric::bf16_to_f32(bits) : numeric::f16_to_f32(bits);
}

// One MFMA of a wave as the CDNA2 ISA defines it (one block, wave64): lane l supplies 4 elements
// of A and of B; with n = mfma (32 or 16) and K = 4 * 64 / n,
//   A(i, k) = a[i + n * (k / 4)][k % 4],   B(k, j) = b[j + n * (k / 4)][k % 4],
// and D(i, j) += sum_k A(i, k) B(k, j) lands in lane / register
//   32x32x8:  lane j + 32 * ((i / 4) % 2), register 4 * (i / 8) + i % 4;
//   16x16x16: lane j + 16 * (i / 4),       register i % 4.
using Lanes4 = std::array<std::array<unsigned short, 4>, hip::kWave>;
using Acc = std::array<float, 16>;
void mfma_isa(int n, bool bf16, const Lanes4& a, const Lanes4& b, Acc* acc /* [64] */) {
  const int kdepth = 4 * hip::kWave / n;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0;
      for (int k = 0; k < kdepth; ++k)
        sum += multiplicand_value(a[size_t(i + n * (k / 4))][size_t(k % 4)], bf16) *
               multiplicand_value(b[size_t(j + n * (k / 4))][size_t(k % 4)], bf16);
      const int lane = n == 32 ? j + 32 * ((i / 4) % 2) : j + 16 * (i / 4);
      const int reg = n == 32 ? 4 * (i / 8) + i % 4 : i % 4;
      acc[lane][size_t(reg)] += sum;
    }
}

struct ModelStats {
  std::set<int> modes_a, modes_b, mfma;
  int gather = 0, vector = 0;
};

// One launch of the kernel of row (BM, BN, BK, W) with plan.args, on the host (see the file
// comment). Every LDS element must be written by some thread before the waves read the tile.
template <int BM, int BN, int BK, int W>
void run_model(const gfx90a::Plan& plan) {
  constexpr hip::Geometry G = hip::make_geometry(BM, BN, BK, W);
  static_assert(hip::geometry_ok(G));
  const hip::KernelArgs& p = plan.args;
  const bool bf16 = p.bf16 != 0;
  std::vector<hip::TileRegs<G.vec_a>> ra(G.threads);
  std::vector<hip::TileRegs<G.vec_b>> rb(G.threads);
  std::vector<unsigned short> lds(size_t(G.lds_a + G.lds_b));
  unsigned short* const lds_a = lds.data();
  unsigned short* const lds_b = lds.data() + G.lds_a;
  constexpr int kBlocks = G.frags_m * G.frags_n;
  std::vector<Acc> acc(size_t(G.waves * kBlocks * hip::kWave));  // [wave][block][lane]
  const int k_tiles = (p.k + BK - 1) / BK;
  for (int batch = 0; batch < plan.batch; ++batch)
    for (long long pid = 0; pid < plan.tiles; ++pid) {
      const OgWork work = og_work_item(int(pid), p.num_pid_m, p.num_pid_n, p.group_m, 1);
      const int m0 = work.pid_m * BM, n0 = work.pid_n * BN;
      for (Acc& x : acc) x.fill(0.0f);
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int k0 = kt * BK;
        for (int tid = 0; tid < G.threads; ++tid) {
          if (plan.gather) {
            hip::fetch_tile<true, BM>(G, p.a, batch, m0, p.m, k0, p.k, tid, bf16, ra[size_t(tid)]);
            hip::fetch_tile<true, BN>(G, p.b, batch, n0, p.n, k0, p.k, tid, bf16, rb[size_t(tid)]);
          } else {
            hip::fetch_tile<false, BM>(G, p.a, batch, m0, p.m, k0, p.k, tid, bf16, ra[size_t(tid)]);
            hip::fetch_tile<false, BN>(G, p.b, batch, n0, p.n, k0, p.k, tid, bf16, rb[size_t(tid)]);
          }
        }
        std::fill(lds.begin(), lds.end(), 0xffff);  // NaN in both types; the inputs have none
        for (int tid = 0; tid < G.threads; ++tid) {
          if (plan.gather) {
            hip::store_tile<true, BM>(G, lds_a, p.a, tid, ra[size_t(tid)]);
            hip::store_tile<true, BN>(G, lds_b, p.b, tid, rb[size_t(tid)]);
          } else {
            hip::store_tile<false, BM>(G, lds_a, p.a, tid, ra[size_t(tid)]);
            hip::store_tile<false, BN>(G, lds_b, p.b, tid, rb[size_t(tid)]);
          }
        }
        // As many writes as elements (the loaders' shares), so full coverage means each
        // element was written exactly once.
        const long long unwritten = std::count(lds.begin(), lds.end(), (unsigned short)0xffff);
        REQUIRE(unwritten == 0);
        for (int wave = 0; wave < G.waves; ++wave)
          for (int pair = 0; pair < G.steps / 2; ++pair) {
            std::array<std::array<hip::Vec8, hip::kWave>, G.frags_m> fa;
            std::array<std::array<hip::Vec8, hip::kWave>, G.frags_n> fb;
            for (int lane = 0; lane < hip::kWave; ++lane) {
              const int group = hip::operand_group(G, lane);
              for (int i = 0; i < G.frags_m; ++i)
                fa[size_t(i)][size_t(lane)] =
                    hip::read_operand(G, lds_a, hip::operand_row(G, hip::wave_row0(G, wave), i, lane), group, pair);
              for (int j = 0; j < G.frags_n; ++j)
                fb[size_t(j)][size_t(lane)] =
                    hip::read_operand(G, lds_b, hip::operand_row(G, hip::wave_col0(G, wave), j, lane), group, pair);
            }
            for (int half = 0; half < 2; ++half)  // the kernel's order: step 2 pair, then 2 pair + 1
              for (int i = 0; i < G.frags_m; ++i)
                for (int j = 0; j < G.frags_n; ++j) {
                  Lanes4 a4, b4;
                  for (int lane = 0; lane < hip::kWave; ++lane)
                    for (int e = 0; e < 4; ++e) {
                      a4[size_t(lane)][size_t(e)] = fa[size_t(i)][size_t(lane)][4 * half + e];
                      b4[size_t(lane)][size_t(e)] = fb[size_t(j)][size_t(lane)][4 * half + e];
                    }
                  mfma_isa(G.mfma, bf16, a4, b4, &acc[size_t((wave * kBlocks + i * G.frags_n + j) * hip::kWave)]);
                }
          }
      }
      for (int wave = 0; wave < G.waves; ++wave)
        for (int lane = 0; lane < hip::kWave; ++lane)
          for (int i = 0; i < G.frags_m; ++i)
            for (int j = 0; j < G.frags_n; ++j)
              hip::store_block(G, p.ep, batch, p.m, p.n, m0 + hip::wave_row0(G, wave) + i * G.mfma,
                               n0 + hip::wave_col0(G, wave) + j * G.mfma, lane,
                               acc[size_t((wave * kBlocks + i * G.frags_n + j) * hip::kWave + lane)]);
    }
}

// The model of each table row, generated from the table like the kernels.
using ModelRunner = void (*)(const gfx90a::Plan&);
constexpr ModelRunner kModels[] = {
#define OG_HIP_GFX90A_MFMA(bm, bn, bk, gm, st, wa, e) &run_model<bm, bn, bk, wa>,
#include "../../backends/hip/families/gfx90a_mfma.inc"
#undef OG_HIP_GFX90A_MFMA
};

// Runs a C++ API call on the model: the engine's validation, the family's plan on MI200 limits,
// then the model of the planned row.
Status run_on_model(const Gemm& g, ModelStats& stats) {
  const og_gemm_desc desc = g.to_c();
  detail::Problem p;
  if (Status s = detail::validate(desc, p); !s) return s;
  if (p.empty()) return {};
  const auto cfg = Config::parse(g.config);
  REQUIRE(cfg.has_value());
  gfx90a::Plan plan;
  if (Status s = gfx90a::plan(p, *cfg, mi200_limits(), &plan); !s) return s;
  stats.modes_a.insert(plan.args.a.mode);
  stats.modes_b.insert(plan.args.b.mode);
  stats.mfma.insert(plan.mfma);
  ++(plan.gather ? stats.gather : stats.vector);
  kModels[plan.row](plan);
  return {};
}

std::function<Status(const Gemm&)> model(ModelStats& stats) {
  return [&stats](const Gemm& g) { return run_on_model(g, stats); };
}

}  // namespace

TEST_CASE("hip model: element codecs are exact (fp8, f16, bf16 decoding; f16/bf16 rounding as epilogue.h)") {
  for (unsigned b = 0; b < 256; ++b) {
    const float e4 = numeric::e4m3_to_f32(uint8_t(b)), e5 = numeric::e5m2_to_f32(uint8_t(b));
    CAPTURE(b);
    if (std::isnan(e4)) CHECK(std::isnan(hip::e4m3_value(b)));
    else CHECK(hip::e4m3_value(b) == e4);
    if (std::isnan(e5)) CHECK(std::isnan(hip::e5m2_value(b)));
    else CHECK(hip::e5m2_value(b) == e5);
    for (int bf16 = 0; bf16 < 2; ++bf16) {  // fp8 -> multiplicand bits loses nothing
      for (int fmt : {OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E5M2}) {
        const float x = fmt == OG_DTYPE_FP8_E4M3 ? e4 : e5;
        const float y = multiplicand_value(hip::multiplicand_bits(fmt, b, bf16 != 0), bf16 != 0);
        if (std::isnan(x)) CHECK(std::isnan(y));
        else CHECK(y == x);
      }
    }
  }
  for (unsigned h = 0; h < 65536; ++h) {
    const float f = numeric::f16_to_f32(uint16_t(h)), g = numeric::bf16_to_f32(uint16_t(h));
    if (std::isnan(f)) CHECK(std::isnan(hip::f16_value(h)));
    else if (hip::f16_value(h) != f) CHECK(hip::f16_value(h) == f);
    if (std::isnan(g)) CHECK(std::isnan(hip::bf16_value(h)));
    else if (hip::bf16_value(h) != g) CHECK(hip::bf16_value(h) == g);
  }
  std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
  std::uniform_int_distribution<int> exponent(-30, 10);
  for (int i = 0; i < 20000; ++i) {
    const float v = i % 2 ? u(rng()) : std::ldexp(u(rng()) / 70000.0f, exponent(rng()));
    uint16_t out = 0;
    hip::store_value(OG_DTYPE_F16, &out, 0, v);
    CHECK(out == numeric::f32_to_f16(v));
    hip::store_value(OG_DTYPE_BF16, &out, 0, v);
    CHECK(out == numeric::f32_to_bf16(v));
  }
}

TEST_CASE("hip model: every table row builds, fits 64 KiB of LDS, and maps K, LDS and lanes one to one") {
  for (const gfx90a::Row& r : gfx90a::rows()) {
    const hip::Geometry g = hip::make_geometry(r.block_m, r.block_n, r.block_k, r.waves);
    CAPTURE(r.symbols[0][0]);
    REQUIRE_MESSAGE(hip::geometry_ok(g), hip::geometry_error(g));
    CHECK(hip::lds_bytes(g) <= hip::kLdsBytes);
    CHECK(r.stages == 0);
    // K: every (step, group, element) of an operand names a distinct K of the tile.
    std::set<int> ks;
    for (int s = 0; s < g.steps; ++s)
      for (int grp = 0; grp < g.groups; ++grp)
        for (int e = 0; e < 4; ++e) ks.insert(hip::operand_k(g, s, grp, e));
    CHECK(int(ks.size()) == g.block_k);
    CHECK(*ks.rbegin() == g.block_k - 1);
    // LDS: the swizzle is a permutation of each tile, chunks stay whole.
    for (int rows : {r.block_m, r.block_n}) {
      std::vector<int> seen(size_t(rows * g.block_k), 0);
      for (int row = 0; row < rows; ++row)
        for (int k = 0; k < g.block_k; ++k) {
          const int o = hip::lds_offset(g, row, k);
          REQUIRE((o >= 0 && o < rows * g.block_k));
          ++seen[size_t(o)];
          if (k % hip::kChunk) CHECK(o == hip::lds_offset(g, row, k - k % hip::kChunk) + k % hip::kChunk);
        }
      CHECK(std::count(seen.begin(), seen.end(), 1) == rows * g.block_k);
    }
    // Lanes: the accumulators of a wave cover its MFMA block once.
    std::set<int> cells;
    for (int lane = 0; lane < hip::kWave; ++lane)
      for (int v = 0; v < g.acc; ++v) cells.insert(hip::acc_row(g, lane, v) * g.mfma + hip::acc_col(g, lane));
    CHECK(int(cells.size()) == g.mfma * g.mfma);
  }
}

TEST_CASE("hip model: LDS reads and dwordx4 writes of 8 consecutive lanes hit all 32 banks") {
  // ds_read_b128 / ds_write_b128 serve 8 lanes per cycle; 8 lanes whose 16-byte slots fall in 8
  // different groups of 4 banks ((byte address / 16) % 8) are served without conflict.
  auto conflict_free = [](const std::vector<int>& element_offsets) {
    for (size_t l0 = 0; l0 + 8 <= element_offsets.size(); l0 += 8) {
      std::set<int> groups;
      for (size_t l = l0; l < l0 + 8; ++l) groups.insert(element_offsets[l] * 2 / 16 % 8);
      if (groups.size() != 8) return false;
    }
    return true;
  };
  for (const gfx90a::Row& r : gfx90a::rows()) {
    const hip::Geometry g = hip::make_geometry(r.block_m, r.block_n, r.block_k, r.waves);
    CAPTURE(r.symbols[0][0]);
    for (int wave = 0; wave < g.waves; ++wave)
      for (int pair = 0; pair < g.steps / 2; ++pair) {
        for (int i = 0; i < g.frags_m; ++i) {
          std::vector<int> offsets;
          for (int lane = 0; lane < hip::kWave; ++lane)
            offsets.push_back(hip::lds_offset(g, hip::operand_row(g, hip::wave_row0(g, wave), i, lane),
                                              hip::operand_k(g, 2 * pair, hip::operand_group(g, lane), 0)));
          CHECK(conflict_free(offsets));
        }
        for (int j = 0; j < g.frags_n; ++j) {
          std::vector<int> offsets;
          for (int lane = 0; lane < hip::kWave; ++lane)
            offsets.push_back(hip::lds_offset(g, hip::operand_row(g, hip::wave_col0(g, wave), j, lane),
                                              hip::operand_k(g, 2 * pair, hip::operand_group(g, lane), 0)));
          CHECK(conflict_free(offsets));
        }
      }
    for (int rows : {r.block_m, r.block_n})
      for (int i = 0; i < (rows == r.block_m ? g.vec_a : g.vec_b); ++i) {
        std::vector<int> offsets;
        for (int tid = 0; tid < g.threads; ++tid) {
          const hip::Slot s = hip::vector_slot(g, hip::kVecK, rows, tid, i);
          offsets.push_back(hip::lds_offset(g, s.row, s.k));
        }
        CHECK(conflict_free(offsets));
      }
  }
}

TEST_CASE("hip model: every row, both multiplicand types, every loader and layout on its edge shapes") {
  ModelStats stats;
  int cases = 0;
  for (const Config& cfg : gfx90a::configs()) {
    const std::string text = cfg.to_string();
    for (const Dtype in : {Dtype::f16, Dtype::bf16})
      for (int layout = 0; layout < 4; ++layout)
        for (const bool aligned : {true, false})
          for (const int64_t m : {int64_t(1), int64_t(cfg.block_m - 1), int64_t(cfg.block_m + 1)}) {
            HipCase c;
            c.m = m;
            c.n = cfg.block_n + 3;
            c.k = m == 1 ? 7 : 2 * cfg.block_k + 1 + 8 * (layout % 2);
            c.a = c.b = in;
            c.la = layout & 1 ? Layout::col_major : Layout::row_major;
            c.lb = layout & 2 ? Layout::col_major : Layout::row_major;
            c.d = m == 1 ? Dtype::f16 : in == Dtype::f16 ? Dtype::f32 : Dtype::bf16;
            c.aligned = aligned;
            c.batch = aligned ? 2 : 1;
            c.epi.act = Activation(cases % 5);
            c.epi.alpha = 0.75f;
            c.config = text;
            check_case(c, model(stats));
            ++cases;
          }
  }
  CHECK(stats.modes_a == std::set<int>{hip::kVecK, hip::kVecMn, hip::kGather});
  CHECK(stats.modes_b == std::set<int>{hip::kVecK, hip::kVecMn, hip::kGather});
  CHECK(stats.mfma == std::set<int>{16, 32});  // both instruction shapes of the table
  CHECK(stats.gather > 0);
  CHECK(stats.vector > 0);
  MESSAGE("hip model: " << cases << " edge cases over " << gfx90a::configs().size() << " rows, MFMA shapes "
                        << *stats.mfma.begin() << ".." << *stats.mfma.rbegin());
}

TEST_CASE("hip model: random shapes, dtypes (fp8 converted on load), transposes, batches and epilogues") {
  ModelStats stats;
  const auto configs = gfx90a::configs();
  for (int t = 0; t < 48; ++t) {
    const Config& cfg = configs[size_t(t) % configs.size()];
    HipCase c = random_hip_case(t % 4 == 0 ? 300 : 150, cfg.to_string());
    if (t % 6 == 0) c.k = 0;  // D = act(beta C + bias) only
    check_case(c, model(stats));
  }
  CHECK(stats.gather > 0);
  CHECK(stats.vector > 0);
}
