// The CUDA families' choices on a modelled device, without a GPU: the families' can_implement and
// hints and the engine's cost model, fed the limits an H100 SXM reports, must make the choices
// that measured best on the H100 for the benchmark's shapes (squares, fp8, the LLM set), keep
// narrow, tall and 192x192 tiles to the problems they pay on, and fall back to sm80_mma and simt
// where TMA or wgmma cannot take the operands.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda_model_device.hpp"
#include "dispatch.hpp"
#include "families.hpp"
#include "sm90/kernel_key.hpp"
#include "tuner.hpp"

using namespace omnigemm::detail;
using namespace omnigemm::detail::test;
using omnigemm::Status;
using omnigemm::StatusCode;

namespace {

// A problem of CUDA pointers at 256-byte aligned addresses: A (M x K) row-major, B (K x N)
// row-major or column-major, D (M x N) row-major; `ld_pad` elements added to every leading
// dimension; B of A's dtype unless in_b names one.
Problem problem(int64_t m, int64_t n, int64_t k, og_dtype in, og_dtype out, bool b_col_major = false, int64_t ld_pad = 0,
                int in_b = -1) {
  return padded_problem(OG_MEMORY_CUDA, m, n, k, in, in_b < 0 ? in : og_dtype(in_b), out, b_col_major, ld_pad);
}

std::string choice(const Backend& be, const Problem& p) {
  const auto ranked = rank_candidates(be, p);
  return ranked.empty() ? "none" : Tuner::heuristic(ranked).to_string();
}

bool offered(const Backend& be, const Problem& p, const char* config) {
  for (const auto& c : rank_candidates(be, p))
    if (c.config.to_string() == config) return true;
  return false;
}

}  // namespace

TEST_CASE("cuda model: the benchmark's shapes get the configs that measured best on the H100") {
  ModelledHopper be;
  struct Row {
    int64_t m, n, k;
    og_dtype in;
    bool b_col_major;
    const char* expected;
  };
  const char* square_small = "sm90_wgmma:128x64x64-g8-s8-w12-coop";
  const char* big = "sm90_wgmma:128x256x64-g16-s4-w12-coop";
  const char* tri = "sm90_wgmma:192x192x64-g8-s4-w12-swap";
  const std::vector<Row> rows = {
      {512, 512, 512, OG_DTYPE_F16, false, square_small},  {1024, 1024, 1024, OG_DTYPE_F16, false, square_small},
      {2048, 2048, 2048, OG_DTYPE_F16, false, big},        {3072, 3072, 3072, OG_DTYPE_F16, false, tri},
      {4096, 4096, 4096, OG_DTYPE_BF16, false, big},       {6144, 6144, 6144, OG_DTYPE_BF16, false, big},
      {8192, 8192, 8192, OG_DTYPE_BF16, false, big},
      {4096, 4096, 4096, OG_DTYPE_FP8_E4M3, true, "sm90_wgmma:128x256x128-g8-s4-w12-coop"},
      {8192, 8192, 8192, OG_DTYPE_FP8_E4M3, true, "sm90_wgmma:128x256x128-g8-s4-w12-coop"},
      {16, 4096, 4096, OG_DTYPE_F16, false, "sm90_wgmma:16x128x64-g8-s10-w12-k4-swap"},
      {16, 14336, 4096, OG_DTYPE_F16, false, "sm90_wgmma:16x128x64-g8-s10-w12-swap"},
      {16, 4096, 14336, OG_DTYPE_BF16, false, "sm90_wgmma:16x128x64-g8-s10-w12-k4-swap"},
      {48, 4096, 4096, OG_DTYPE_F16, false, "sm90_wgmma:64x128x64-g8-s8-w12-k2-swap"},
      {64, 4096, 4096, OG_DTYPE_F16, false, "sm90_wgmma:64x128x64-g8-s8-w12-k2-swap"},
      {128, 4096, 4096, OG_DTYPE_F16, false, "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"},
      {128, 14336, 4096, OG_DTYPE_BF16, false, "sm90_wgmma:128x128x64-g8-s6-w12-coop"},
      {128, 4096, 14336, OG_DTYPE_F16, false, "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"},
      {4096, 14336, 4096, OG_DTYPE_F16, false, big},       {4096, 4096, 14336, OG_DTYPE_BF16, false, big},
  };
  for (const Row& r : rows) {
    const Problem p = problem(r.m, r.n, r.k, r.in, r.in == OG_DTYPE_FP8_E4M3 ? OG_DTYPE_F16 : r.in, r.b_col_major);
    CAPTURE(r.m);
    CAPTURE(r.n);
    CAPTURE(r.k);
    CHECK(choice(be, p) == r.expected);
  }
}

// Kernels without the register epilogue (kernel_key.hpp: ping-pong, clusters, two 64-row blocks,
// 96-column consumers) finish fused epilogues through shared memory: the model adds that to their
// predicted time, while the squares' choices (128x256, which has it) stay those of the plain GEMM.
TEST_CASE("cuda model: fused epilogues are priced on Hopper kernels that cannot finish them in registers") {
  ModelledHopper be;
  auto in_registers = [](const Config& c) {
    sm90::Form form = sm90::Form::coop;
    REQUIRE(sm90::parse_form(c.form.text, form));
    return sm90::kernel_key(c.block_m, c.block_n, c.split_k, form).register_epilogue();
  };
  for (int64_t size : {2048, 3072, 4096, 8192}) {
    const Problem p = problem(size, size, size, OG_DTYPE_F16, OG_DTYPE_F16);
    const std::string plain = choice(be, p);
    CAPTURE(size);
    CAPTURE(plain);
    for (int variant = 0; variant < 3; ++variant) {
      Problem f = p;
      if (variant == 0) f.activation = OG_ACT_GELU_TANH;
      if (variant == 1) f.bias_mode = OG_BIAS_PER_N;
      if (variant == 2) f.c = f.d, f.beta = 0.5f;
      CAPTURE(variant);
      const auto plain_ranked = rank_candidates(be, p), fused_ranked = rank_candidates(be, f);
      int priced = 0;
      for (const Candidate& fc : fused_ranked) {
        if (fc.config.family != "sm90_wgmma") continue;
        for (const Candidate& pc : plain_ranked)
          if (pc.config == fc.config) {
            CAPTURE(fc.config.to_string());
            if (in_registers(fc.config)) CHECK(fc.cost.extra_ms == doctest::Approx(pc.cost.extra_ms));
            else {
              CHECK(fc.cost.extra_ms > pc.cost.extra_ms);
              ++priced;
            }
          }
      }
      CHECK(priced > 0);
      if (size != 3072) CHECK(choice(be, f) == plain);  // 128x256: in registers already
    }
    // An f32 D leaves by TMA stores only from kernels with the register epilogue: priced on the
    // others (the multicast 128x256 tile above the cooperative one), and the f16 -> f32 squares
    // run on one with it.
    const Problem f32_d = problem(size, size, size, OG_DTYPE_F16, OG_DTYPE_F32);
    const std::string f32_out = choice(be, f32_d);
    CAPTURE(f32_out);
    CHECK(in_registers(*Config::parse(f32_out)));
    double coop_ms = -1.0, mcast_ms = -1.0;
    for (const Candidate& c : rank_candidates(be, f32_d)) {
      if (c.config.to_string() == "sm90_wgmma:128x256x64-g16-s4-w12-coop") coop_ms = c.cost.extra_ms;
      if (c.config.to_string() == "sm90_wgmma:128x256x64-g8-s4-w12-mcast") mcast_ms = c.cost.extra_ms;
    }
    if (coop_ms >= 0.0 && mcast_ms >= 0.0) CHECK(mcast_ms > coop_ms);
    else MESSAGE("the modelled H100 offers no 128x256 coop / mcast pair at " << size);
  }
}

TEST_CASE("cuda model: narrow, tall and 192x192 Hopper tiles are offered only where they pay") {
  ModelledHopper be;
  auto f16 = [](int64_t m, int64_t n, int64_t k) { return problem(m, n, k, OG_DTYPE_F16, OG_DTYPE_F16); };
  CHECK(offered(be, f16(16, 4096, 4096), "sm90_wgmma:16x128x64-g8-s10-w12-swap"));
  CHECK(offered(be, f16(16, 4096, 4096), "sm90_wgmma:32x128x64-g8-s9-w12-swap"));
  CHECK(offered(be, f16(32, 4096, 4096), "sm90_wgmma:32x128x64-g8-s9-w12-k2-swap"));
  CHECK_FALSE(offered(be, f16(17, 4096, 4096), "sm90_wgmma:16x128x64-g8-s10-w12-swap"));
  CHECK_FALSE(offered(be, f16(128, 4096, 4096), "sm90_wgmma:32x128x64-g8-s9-w12-swap"));
  CHECK(offered(be, f16(128, 4096, 4096), "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"));
  CHECK_FALSE(offered(be, f16(512, 512, 512), "sm90_wgmma:16x128x64-g8-s10-w12-swap"));
  // Tiles of 128 rows are not offered for M <= 64 where a shorter tile runs.
  CHECK_FALSE(offered(be, f16(64, 4096, 4096), "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"));
  CHECK(offered(be, f16(65, 4096, 4096), "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"));
  // 192x192 only where its waves cover less area than 128x256's, in the swap form for a
  // row-major B (coop 192x192 needs B K-major).
  CHECK(offered(be, f16(3072, 3072, 3072), "sm90_wgmma:192x192x64-g8-s4-w12-swap"));
  CHECK_FALSE(offered(be, f16(3072, 3072, 3072), "sm90_wgmma:192x192x64-g8-s4-w12-coop"));
  CHECK_FALSE(offered(be, f16(4096, 4096, 4096), "sm90_wgmma:192x192x64-g8-s4-w12-swap"));
  CHECK_FALSE(offered(be, f16(6144, 6144, 6144), "sm90_wgmma:192x192x64-g8-s4-w12-swap"));
  // A short K with a large row-major D (held-out seed 505's 6211x11094x3, leading dimensions
  // 8, 8 and 11096): coop 192x192's consumers own 96 columns, whose rows leave through the
  // vector way (bench/results/h200); the model prices that and takes another tile.
  Problem p = problem(6211, 11094, 3, OG_DTYPE_F16, OG_DTYPE_F16, true);
  p.a.stride_row = 8, p.b.stride_col = 8, p.d.stride_row = 11096;
  CHECK(offered(be, p, "sm90_wgmma:192x192x64-g8-s4-w12-coop"));
  const std::string short_k = choice(be, p);
  CHECK(short_k.rfind("sm90_wgmma:", 0) == 0);
  CHECK(short_k != "sm90_wgmma:192x192x64-g8-s4-w12-coop");
}

TEST_CASE("cuda model: problems TMA or wgmma cannot take fall to sm90_repack, sm80_mma, then simt, and say why") {
  ModelledHopper be;
  // Leading dimensions not a multiple of 16 bytes: no TMA in place; the copies make it sm90's.
  const Problem odd = problem(1000, 1000, 1000, OG_DTYPE_BF16, OG_DTYPE_BF16, false, 3);
  CHECK(choice(be, odd).rfind("sm90_repack:", 0) == 0);
  Status s = be.families()[0]->can_implement(odd, be.families()[0]->configs()[0]);
  CHECK_FALSE(s.ok());
  CHECK(s.message.find("16 bytes") != std::string::npos);
  // f32 inputs (full f32 by default) run on the f32 family (at 300^3 the model ranks it and simt's
  // small tiles about equal); mixed f16 x bf16 inputs on sm90_repack's TF32 copies, small ones
  // too (simt's latency floor, 23 us per wave and K-step, is above the copies and one launch);
  // f32 x f16 (no exact common wgmma type) on simt past short_k's K.
  CHECK(choice(be, problem(1000, 1000, 1000, OG_DTYPE_F32, OG_DTYPE_F32)).rfind("sgemm:", 0) == 0);
  CHECK(choice(be, problem(32, 32, 32, OG_DTYPE_F16, OG_DTYPE_F32, false, 0, OG_DTYPE_BF16)).rfind("sm90_repack:", 0) == 0);
  CHECK(choice(be, problem(64, 64, 200, OG_DTYPE_F32, OG_DTYPE_F32, false, 0, OG_DTYPE_F16)).rfind("simt:", 0) == 0);
  // fp8 with B row-major (N-major): wgmma needs K-major fp8; the repack copy transposes B.
  CHECK(choice(be, problem(2048, 2048, 2048, OG_DTYPE_FP8_E4M3, OG_DTYPE_F16)).rfind("sm90_repack:", 0) == 0);
  // f16 x bf16 has no Hopper kernel in place: sm90_wgmma refuses it, naming the pairs it takes.
  s = be.families()[0]->can_implement(problem(300, 300, 300, OG_DTYPE_F16, OG_DTYPE_F32, false, 0, OG_DTYPE_BF16),
                                      *Config::parse("sm90_wgmma:128x128x32-g8-s6-w12-coop"));
  CHECK_FALSE(s.ok());
  CHECK(s.message.find("inputs must be") != std::string::npos);
  // Every row of every table is well-formed and names its family.
  for (const KernelFamily* f : be.families())
    for (const Config& c : f->configs()) {
      CAPTURE(c.to_string());
      CHECK(c.family == f->name());
      CHECK(Config::parse(c.to_string()) == c);
    }
}

TEST_CASE("cuda model: unaligned operands of 1024 and more run on sm90_repack, tiny ones on sm80_mma") {
  ModelledHopper be;
  KernelFamily& repack = *be.families()[1];
  REQUIRE(std::string(repack.name()) == "sm90_repack");
  // Odd leading dimensions (3 elements of padding), both B layouts, f16 and bf16, squares and
  // LLM-like shapes with an odd vocabulary or K: the copies' bytes are small against 2MNK.
  struct Row {
    int64_t m, n, k;
    og_dtype in;
    bool b_col_major;
  };
  const std::vector<Row> large = {{1024, 1024, 1024, OG_DTYPE_F16, false}, {1024, 1024, 1024, OG_DTYPE_BF16, true},
                                  {2048, 2048, 2048, OG_DTYPE_BF16, false}, {4096, 4096, 4096, OG_DTYPE_F16, true},
                                  {4096, 32001, 4096, OG_DTYPE_BF16, false}, {1024, 4096, 4095, OG_DTYPE_F16, true},
                                  {8192, 1024, 1024, OG_DTYPE_BF16, false}, {1024, 1024, 16384, OG_DTYPE_F16, false}};
  for (const Row& r : large) {
    CAPTURE(r.m);
    CAPTURE(r.n);
    CAPTURE(r.k);
    const Problem p = problem(r.m, r.n, r.k, r.in, r.in, r.b_col_major, 3);
    CHECK(choice(be, p).rfind("sm90_repack:", 0) == 0);
    // The cost model saw the copy: its predicted time includes the extra bytes and launch.
    const auto ranked = rank_candidates(be, p);
    REQUIRE_FALSE(ranked.empty());
    CHECK(ranked.front().cost.extra_ms > 0);
  }
  // Tiny problems: the copy's launch costs more than a one-launch family's whole run (16-bit:
  // skinny_mma's tensor-core kernels up to 64 rows).
  for (int64_t s : {8, 16, 24, 32}) {
    CAPTURE(s);
    const std::string c = choice(be, problem(s, s, s, OG_DTYPE_F16, OG_DTYPE_F16, false, 3));
    CHECK(c.rfind("skinny_mma:", 0) == 0);
    int repack_ranked = 0;  // it was ranked, and predicted slower
    for (const auto& cand : rank_candidates(be, problem(s, s, s, OG_DTYPE_F16, OG_DTYPE_F16, false, 3)))
      repack_ranked += cand.config.family == "sm90_repack";
    CHECK(repack_ranked > 0);
  }
  // Aligned problems need no copies: the family refuses, saying that sm90_wgmma runs them.
  const Problem aligned = problem(2048, 2048, 2048, OG_DTYPE_F16, OG_DTYPE_F16);
  const Status s = repack.can_implement(aligned, repack.configs()[0]);
  CHECK_FALSE(s.ok());
  CHECK(s.message.find("sm90_wgmma runs it") != std::string::npos);
  CHECK(choice(be, aligned).rfind("sm90_wgmma:", 0) == 0);
  // A misaligned base alone (leading dimensions aligned) is copied too.
  Problem shifted = aligned;
  shifted.a.mem.offset = 2;
  CHECK(choice(be, shifted).rfind("sm90_repack:", 0) == 0);
  // Its configs are sm90_wgmma's rows under its own name, and its plan (no tensor maps on the
  // model) keeps sm90_wgmma's refusals: a tile that needs a K-major B is fine on the copies.
  REQUIRE(repack.configs().size() == be.families()[0]->configs().size());
  for (size_t i = 0; i < repack.configs().size(); ++i) {
    Config c = repack.configs()[i];
    CHECK(c.family == "sm90_repack");
    c.family = "sm90_wgmma";
    CHECK(c == be.families()[0]->configs()[i]);
  }
  CHECK(repack.can_implement(problem(1000, 1000, 1000, OG_DTYPE_F16, OG_DTYPE_F16, false, 3),
                             *Config::parse("sm90_repack:192x192x64-g8-s4-w12-coop")));
}

TEST_CASE("cuda model: unaligned skinny problems stream in place on a skinny family; aligned ones keep sm90_wgmma") {
  ModelledHopper be;
  // Shapes of the random sweep where copying the large operand cost most of the time: at most 16
  // rows or columns, odd leading dimensions (no TMA in place), both B layouts.
  struct Row {
    int64_t m, n, k;
    bool b_col_major;
  };
  const std::vector<Row> skinny = {{1, 7433, 1290, false}, {3, 771, 1360, false}, {1, 3568, 2090, true},
                                   {4789, 1, 4968, false}, {1, 1038, 820, false},  {314, 1, 1448, false},
                                   {1, 4096, 4096, true}};
  for (const Row& r : skinny) {
    CAPTURE(r.m);
    CAPTURE(r.n);
    CAPTURE(r.k);
    // 16-bit inputs: skinny_mma's tensor cores (skinny's loaders ran at half its rate or less on
    // the H200); f32 and fp8, which skinny_mma does not take: skinny's kernels. Never the copy.
    CHECK(choice(be, problem(r.m, r.n, r.k, OG_DTYPE_BF16, OG_DTYPE_BF16, r.b_col_major, 3)).rfind("skinny_mma:", 0) == 0);
    CHECK(choice(be, problem(r.m, r.n, r.k, OG_DTYPE_F32, OG_DTYPE_F32, r.b_col_major, 3)).rfind("skinny:", 0) == 0);
    CHECK(choice(be, problem(r.m, r.n, r.k, OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E4M3, r.b_col_major, 3)).rfind("skinny:", 0) == 0);
  }
  // Aligned decode shapes (the LLM set): the TMA-fed kernel streams B in place, faster; skinny refuses them.
  for (int64_t m : {1, 16})
    for (int64_t n : {4096, 11008}) {
      CAPTURE(m);
      CAPTURE(n);
      CHECK(choice(be, problem(m, n, 4096, OG_DTYPE_F16, OG_DTYPE_F16)).rfind("sm90_wgmma:", 0) == 0);
    }
  // Ten rows against a long K with B contiguous along K: skinny_mma reads B in place, priced
  // below copying it into sm90_repack's workspace and below skinny's dot loader.
  CHECK(choice(be, problem(10, 959, 8512, OG_DTYPE_F16, OG_DTYPE_F16, true, 3)).rfind("skinny_mma:", 0) == 0);
  // A problem with more than 16 rows and columns is not skinny's.
  const Problem wide = problem(17, 300, 100, OG_DTYPE_F16, OG_DTYPE_F16, false, 3);
  for (const KernelFamily* f : be.families())
    if (std::string(f->name()) == "skinny")
      for (const Config& c : f->configs()) CHECK_FALSE(f->can_implement(wide, c));
}

TEST_CASE("cuda model: skinny_mma plans and is chosen for unaligned 16-bit problems of up to 64 rows") {
  ModelledHopper be;
  KernelFamily* mma = nullptr;
  for (KernelFamily* f : be.families())
    if (std::string(f->name()) == "skinny_mma") mma = f;
  REQUIRE(mma);
  // The random sweep's slowest unaligned few-row problems (copied whole by sm90_repack today).
  struct Row {
    int64_t m, n, k;
    bool b_col_major;
  };
  for (const Row& r : std::vector<Row>{{28, 7867, 5384, false}, {10, 6640, 11319, false}, {18, 6758, 954, true}, {2, 985, 12095, false},
                                       {46, 1050, 5531, false}}) {
    CAPTURE(r.m);
    const Problem p = problem(r.m, r.n, r.k, OG_DTYPE_F16, OG_DTYPE_F16, r.b_col_major, 3);
    // Its row of the table (16, 32 or 64 rows, not transposed) with every split of at most K's stages.
    const int64_t stages = (r.k + 63) / 64;
    int runs = 0, splits = 0;
    for (const Config& c : mma->configs()) runs += mma->can_implement(p, c).ok();
    for (int split : {1, 2, 4, 8, 16, 32, 64}) splits += split <= stages;
    CHECK(runs == splits);
    // A forced config plans: 64 columns a block times the slices, a cluster up to 8 slices, a
    // workspace of partial sums beyond; 256 threads and the ring's shared memory.
    const char* row = r.m <= 16 ? "16x64x64-g1-s4" : r.m <= 32 ? "32x64x64-g1-s4" : "64x64x64-g1-s3";
    for (int split : {1, 8, 32}) {
      if (split > stages) continue;
      CAPTURE(split);
      const Config c = *Config::parse(std::string("skinny_mma:") + row + "-w8" + (split > 1 ? "-k" + std::to_string(split) : "") + "-mma");
      PlanSummary plan;
      REQUIRE(mma->describe(p, c, plan).ok());
      CHECK(plan.grid[0] == (r.n + 63) / 64 * split);
      CHECK(plan.cluster == (split <= 8 ? split : 1));
      CHECK(plan.threads == 256);
      CHECK(plan.shared_bytes > 0);
      CHECK(plan.shared_bytes <= 110 * 1024);
      CHECK((plan.workspace_bytes > 0) == (split > 8));
    }
    // The cost model chooses it over copying the large operand (sm90_repack) and over f32 FMA
    // (skinny), except where the copies feed a few Hopper CTAs a deep split (H200, f16,
    // 46 x 1051 x 5531: skinny_mma 34.3 us, the copies and 64x128 in 8 slices 25.8).
    const std::string c = choice(be, p);
    CAPTURE(c);
    if (r.m == 46) CHECK(c.rfind("sm90_repack:64x128x64-g8-s8-w12-k8-swap", 0) == 0);
    else CHECK(c.rfind("skinny_mma:", 0) == 0);
  }
  // Transposed (few columns): the tmma rows.
  const Problem tall = problem(2849, 26, 597, OG_DTYPE_BF16, OG_DTYPE_BF16, false, 3);
  CHECK(mma->can_implement(tall, *Config::parse("skinny_mma:64x32x64-g1-s4-w8-k2-tmma")).ok());
}

TEST_CASE("cuda model: aligned problems of at most 16 rows against a long K split deep") {
  ModelledHopper be;
  // Leading dimensions rounded up to 8 elements (16 bytes): TMA could load every operand in place.
  auto aligned = [](int64_t m, int64_t n, int64_t k, bool a_col, bool b_col) {
    Problem p = problem(m, n, k, OG_DTYPE_F16, OG_DTYPE_F16, b_col);
    auto up = [](int64_t v) { return (v + 7) / 8 * 8; };
    p.a.stride_row = a_col ? 1 : up(k);
    p.a.stride_col = a_col ? up(m) : 1;
    if (b_col) p.b.stride_col = up(k);
    else p.b.stride_row = up(n);
    p.d.stride_row = up(n);
    return p;
  };
  struct Row {
    int64_t m, n, k;
    bool a_col, b_col;
  };
  // The random sweep's aligned rows where sm90_wgmma ran 2 to 10 persistent CTAs of 64x128 (the
  // narrow swap tiles cannot take these layouts) through K in at most two slices: 0.28x-0.90x
  // cuBLAS on the H200. They split deep: on skinny_mma, or on sm90_wgmma's 8 and 16 slices where
  // those are priced faster (H200, f16, rr: 8 x 232 x 16160 15.2 -> 9.6 us, 12 x 560 x 11984
  // 12.5 -> 9.1 from skinny_mma to sm90_wgmma's 64x128 or 16x128 in 8 or 16 slices).
  for (const Row& r : std::vector<Row>{{8, 228, 16154, true, true}, {12, 556, 11982, true, true}, {3, 12, 8830, true, false},
                                       {58, 7, 5870, false, true}}) {
    CAPTURE(r.m);
    CAPTURE(r.n);
    CAPTURE(r.k);
    const std::string c = choice(be, aligned(r.m, r.n, r.k, r.a_col, r.b_col));
    CAPTURE(c);
    const bool deep_hopper = c.rfind("sm90_wgmma:", 0) == 0 && (c.find("-k8-") != std::string::npos || c.find("-k16-") != std::string::npos);
    CHECK((c.rfind("skinny_mma:", 0) == 0 || deep_hopper));
    CHECK(c.find("-k") != std::string::npos);  // split-K
  }
  // More than 16 rows, or a K of fewer than 80 chunks: skinny_mma ran slower there, so it refuses.
  KernelFamily* mma = nullptr;
  for (KernelFamily* f : be.families())
    if (std::string(f->name()) == "skinny_mma") mma = f;
  REQUIRE(mma);
  const Status rows = mma->can_implement(aligned(26, 354, 16244, false, false), *Config::parse("skinny_mma:32x64x64-g1-s4-w8-k32-mma"));
  CHECK_FALSE(rows.ok());
  CHECK(rows.message.find("in place through TMA") != std::string::npos);
  CHECK_FALSE(mma->can_implement(aligned(10, 500, 4000, false, false), *Config::parse("skinny_mma:16x64x64-g1-s4-w8-k16-mma")).ok());
  CHECK(mma->can_implement(aligned(10, 500, 6000, false, false), *Config::parse("skinny_mma:16x64x64-g1-s4-w8-k16-mma")).ok());
  // The LLM decode and prefill-tail shapes fill the GPU with sm90_wgmma's tiles: they stay there.
  for (int64_t m : {1, 16, 48, 64, 128})
    for (int64_t n : {4096, 11008, 14336})
      for (int64_t k : {4096, 14336}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        CHECK(choice(be, aligned(m, n, k, false, false)).rfind("sm90_wgmma:", 0) == 0);
      }
}

TEST_CASE("cuda model: f32 runs on the f32 family in full f32, on tensor cores only with compute_mode TF32") {
  ModelledHopper be;
  // Default compute mode: the sgemm family at every size, its 128x128 tile at 2048, 4096 and
  // 8192 (whole rounds of two blocks per SM), 64x64 at 3072^2 (576 tiles of 128x128 need three
  // rounds of 264 blocks where 2304 of 64x64 fill three rounds of 792) and at 1024^2 split 3
  // (256 tiles of 64x64 fill two of an SM's six places; 768 slices fill them all), as measured
  // on the H200.
  for (int64_t s : {1024, 2048, 3072, 4096, 8192})
    for (bool b_col : {false, true}) {
      CAPTURE(s);
      CAPTURE(b_col);
      const std::string c = choice(be, problem(s, s, s, OG_DTYPE_F32, OG_DTYPE_F32, b_col));
      CHECK(c.rfind("sgemm:", 0) == 0);
      if (s == 1024) CHECK(c == "sgemm:64x64x8-g8-s2-w2-k3");
      else if (s == 3072) CHECK(c == "sgemm:64x64x8-g8-s2-w2");
      else CHECK(c == "sgemm:128x128x8-g8-s2-w8");
    }
  // No wgmma family takes f32 without the opt-in, and it says what would.
  const Problem f32 = problem(4096, 4096, 4096, OG_DTYPE_F32, OG_DTYPE_F32, true);
  const Status s = be.families()[0]->can_implement(f32, *Config::parse("sm90_wgmma:128x256x32-g16-s4-w12-coop"));
  CHECK_FALSE(s.ok());
  CHECK(s.message.find("compute_mode TF32") != std::string::npos);
  // TF32: K-major operands (B column-major) on sm90_wgmma's tf32 rows (BLOCK_K 32), a row-major B
  // through the repack copy (transposed K-major) at these sizes.
  for (int64_t n : {1024, 4096, 8192}) {
    CAPTURE(n);
    Problem t = problem(n, n, n, OG_DTYPE_F32, OG_DTYPE_F32, true);
    t.compute_mode = OG_COMPUTE_TF32;
    const std::string c = choice(be, t);
    CHECK(c.rfind("sm90_wgmma:", 0) == 0);
    CHECK(Config::parse(c)->block_k == 32);
    Problem row_b = problem(n, n, n, OG_DTYPE_F32, OG_DTYPE_F32, false);
    row_b.compute_mode = OG_COMPUTE_TF32;
    CHECK(choice(be, row_b).rfind("sm90_repack:", 0) == 0);
  }
}

TEST_CASE("cuda model: f32 problems of few tiles against a long K split K on sgemm; unaligned ones avoid its 256-thread row") {
  ModelledHopper be;
  // Five 64x64 tiles and 733 K-steps: 64 slices (measured 23 us split, 551 us unsplit on the H200).
  CHECK(choice(be, problem(39, 315, 5860, OG_DTYPE_F32, OG_DTYPE_F32, false, 1)) == "sgemm:64x64x8-g8-s2-w2-k64");
  // 40 tiles, 158 K-steps: split (23 us split 16, 107 us unsplit).
  const auto mid = Config::parse(choice(be, problem(304, 500, 1264, OG_DTYPE_F32, OG_DTYPE_F32, false, 1)));
  REQUIRE(mid);
  CHECK(mid->family == "sgemm");
  CHECK(mid->split_k >= 8);
  // Many tiles, short K: unsplit; scalar loads (odd leading dimensions) keep off the 256-thread
  // row (451x4801x127 x10: 226 us on 64x64, 400 us on 128x128), aligned operands take it.
  Problem odd = problem(451, 4801, 127, OG_DTYPE_F32, OG_DTYPE_F32, false, 3);
  odd.batch = 10;
  odd.a.batch_stride = 451 * 130, odd.b.batch_stride = 127 * 4804, odd.d.batch_stride = 451 * 4804;
  CHECK(choice(be, odd) == "sgemm:64x64x8-g8-s2-w2");
  CHECK(choice(be, problem(4096, 4096, 4096, OG_DTYPE_F32, OG_DTYPE_F32)) == "sgemm:128x128x8-g8-s2-w8");
  // The splits' refusals: the 256-thread row, more slices than K-steps.
  KernelFamily* sgemm = be.families()[3];
  REQUIRE(std::string(sgemm->name()) == "sgemm");
  const Problem p = problem(39, 315, 100, OG_DTYPE_F32, OG_DTYPE_F32);
  CHECK(sgemm->can_implement(p, *Config::parse("sgemm:64x64x8-g8-s2-w2-k8")).ok());
  CHECK(sgemm->can_implement(p, *Config::parse("sgemm:64x64x8-g8-s2-w2-k16")).message.find("needs as many K-steps") !=
        std::string::npos);
  CHECK(sgemm->can_implement(p, *Config::parse("sgemm:128x128x8-g8-s2-w8-k2")).message.find("256-thread row") !=
        std::string::npos);
}

TEST_CASE("cuda model: mixed inputs run on the Hopper tensor cores through sm90_repack's converting copies") {
  ModelledHopper be;
  KernelFamily& repack = *be.families()[1];
  REQUIRE(std::string(repack.name()) == "sm90_repack");
  struct Pair {
    og_dtype a, b;
    bool tf32;  // f16 x bf16: f32 copies on the TF32 rows (BLOCK_K 32); else the 16-bit rows (64)
  };
  const std::vector<Pair> pairs = {
      {OG_DTYPE_F16, OG_DTYPE_FP8_E4M3, false},  {OG_DTYPE_FP8_E4M3, OG_DTYPE_F16, false},
      {OG_DTYPE_F16, OG_DTYPE_FP8_E5M2, false},  {OG_DTYPE_FP8_E5M2, OG_DTYPE_F16, false},
      {OG_DTYPE_BF16, OG_DTYPE_FP8_E4M3, false}, {OG_DTYPE_FP8_E4M3, OG_DTYPE_BF16, false},
      {OG_DTYPE_BF16, OG_DTYPE_FP8_E5M2, false}, {OG_DTYPE_FP8_E5M2, OG_DTYPE_BF16, false},
      {OG_DTYPE_F16, OG_DTYPE_BF16, true},       {OG_DTYPE_BF16, OG_DTYPE_F16, true}};
  for (const Pair& pr : pairs)
    for (int64_t s : {1024, 2048, 4096, 8192})
      for (bool b_col : {false, true})
        for (int64_t pad : {0, 3}) {
          CAPTURE(int(pr.a));
          CAPTURE(int(pr.b));
          CAPTURE(s);
          CAPTURE(b_col);
          CAPTURE(pad);
          Problem p = problem(s, s, s, pr.a, OG_DTYPE_F16, b_col, pad);
          p.b.dtype = pr.b;
          const auto ranked = rank_candidates(be, p);
          REQUIRE_FALSE(ranked.empty());
          const Config& c = ranked.front().config;
          CHECK(c.family == "sm90_repack");
          CHECK(c.block_k == (pr.tf32 ? 32 : 64));
          CHECK(ranked.front().cost.extra_ms > 0);  // the copies are priced
          // The TF32 rows' efficiency is restated against the 16-bit peak the model applies to
          // p: half the 16-bit rows' (TF32 wgmma runs at half the 16-bit rate).
          CHECK(ranked.front().hints.efficiency == doctest::Approx(pr.tf32 ? 0.375 : 0.75));
        }
  // Aligned K-major operands still need the copy where the types differ: one operand for
  // 16-bit x fp8 (the fp8 one, converted), both for f16 x bf16.
  Problem aligned = problem(2048, 2048, 2048, OG_DTYPE_F16, OG_DTYPE_F16, true);
  aligned.b.dtype = OG_DTYPE_FP8_E4M3;
  CHECK(repack.can_implement(aligned, *Config::parse("sm90_repack:128x256x64-g16-s4-w12-coop")));
  aligned.b.dtype = OG_DTYPE_BF16;
  CHECK(repack.can_implement(aligned, *Config::parse("sm90_repack:128x256x32-g16-s4-w12-coop")));
  // f16 x bf16 on a 16-bit row is refused with the TF32 kernel's reason, saying it runs on f32 copies.
  const Status s = repack.can_implement(aligned, *Config::parse("sm90_repack:128x256x64-g16-s4-w12-coop"));
  CHECK_FALSE(s.ok());
  CHECK(s.message.find("f32 copies run as TF32") != std::string::npos);
  CHECK(s.message.find("BLOCK_K") != std::string::npos);
  // Pairs with no exact common wgmma type are refused, naming the pairs it takes.
  Problem f32_f16 = aligned;
  f32_f16.a.dtype = OG_DTYPE_F32;
  const Status r = repack.can_implement(f32_f16, repack.configs()[0]);
  CHECK_FALSE(r.ok());
  CHECK(r.message.find("16-bit x fp8") != std::string::npos);
  // Small problems: up to 32^3 (one K-tile) 16-bit x fp8 runs on sm80_mma's gathering loader,
  // whose latency floor (one wave, 7.5 us) is below the copies' launch and the Hopper kernel's
  // (8 us); from 256^3 the tensor cores' rate pays for the copies. Between them the paths are
  // within about one launch of each other and the model's crossover (32 to 40) is not asserted.
  // f16 x bf16 runs on the copies at every size (simt's floor is 23 us per K-step).
  for (int64_t s : {17, 24, 32, 40, 48, 256, 384, 512}) {
    CAPTURE(s);
    Problem p8 = problem(s, s, s, OG_DTYPE_F16, OG_DTYPE_F16, true);
    p8.b.dtype = OG_DTYPE_FP8_E4M3;
    const std::string c8 = choice(be, p8);
    if (s <= 32 || s >= 256) CHECK_MESSAGE(c8.rfind(s <= 32 ? "sm80_mma:" : "sm90_repack:", 0) == 0, c8);
    Problem pm = problem(s, s, s, OG_DTYPE_F16, OG_DTYPE_F16, true);
    pm.b.dtype = OG_DTYPE_BF16;
    const std::string cm = choice(be, pm);
    CHECK_MESSAGE(cm.rfind("sm90_repack:", 0) == 0, cm);
    int repack_ranked = 0;
    for (const auto& cand : rank_candidates(be, pm)) repack_ranked += cand.config.family == "sm90_repack";
    CHECK(repack_ranked > 0);
  }
}

TEST_CASE("cuda model: sm90_repack's plan for mixed inputs says what it converted and sizes the copies") {
  ModelledHopper be(true);
  KernelFamily& repack = *be.families()[1];
  // f16 x bf16, 1000 x 600 x 1001, B column-major, odd leading dimensions: both copied to f32,
  // K-major, K rounded up to 1004 elements (16 bytes).
  Problem p = problem(1000, 600, 1001, OG_DTYPE_F16, OG_DTYPE_F16, true, 3);
  p.b.dtype = OG_DTYPE_BF16;
  PlanSummary out;
  Status s = repack.describe(p, *Config::parse("sm90_repack:128x128x32-g8-s6-w12-coop"), out);
  REQUIRE_MESSAGE(s.ok(), s.message);
  CAPTURE(out.notes);
  CHECK(out.notes.find("A (f16 converted to f32) copied K-major and B (bf16 converted to f32) copied K-major") != std::string::npos);
  CHECK(out.notes.find("one launch") != std::string::npos);
  CHECK(out.notes.find("TF32 wgmma (exact for f16 and bf16 inputs)") != std::string::npos);
  // K = 1001 f32 elements (4004 bytes) on a pitch of 4096 bytes.
  CHECK(out.workspace_bytes == WorkspaceNeed::round(1000ll * 1024 * 4) + WorkspaceNeed::round(600ll * 1024 * 4));
  CHECK(out.notes.find("on 128-byte pitches") != std::string::npos);
  // f16 x e4m3 with A in place (its pitch of 2016 bytes a multiple of 32) and B (fp8) row-major:
  // only B is copied, converted to f16, N-major as it lies (N = 600 elements on a pitch of 640),
  // by one launch.
  Problem q = problem(1024, 600, 1001, OG_DTYPE_F16, OG_DTYPE_F16, false, 0);
  q.a.stride_row = 1008;  // A's rows 16-byte aligned
  q.b.dtype = OG_DTYPE_FP8_E4M3;
  s = repack.describe(q, *Config::parse("sm90_repack:128x128x64-g8-s6-w12-coop"), out);
  REQUIRE_MESSAGE(s.ok(), s.message);
  CAPTURE(out.notes);
  CHECK(out.notes.rfind("B (fp8_e4m3 converted to f16) copied N-major", 0) == 0);
  CHECK(out.notes.find("one launch") != std::string::npos);
  CHECK(out.workspace_bytes == WorkspaceNeed::round(1001ll * 640 * 2));
  // Both copied, from 1 and 2 bytes per element: two launches, priced as two.
  q.a.stride_row = 1001;
  s = repack.describe(q, *Config::parse("sm90_repack:128x128x64-g8-s6-w12-coop"), out);
  REQUIRE_MESSAGE(s.ok(), s.message);
  CHECK(out.notes.find("A copied K-major and B (fp8_e4m3 converted to f16) copied N-major") != std::string::npos);
  CHECK(out.notes.find("two launches") != std::string::npos);
  const Config cfg = *Config::parse("sm90_repack:128x128x64-g8-s6-w12-coop");
  Problem one = q;
  one.a.stride_row = 1008;
  CHECK(repack.hints(q, cfg).extra_us == doctest::Approx(2 * repack.hints(one, cfg).extra_us));
}

TEST_CASE("cuda model: sm90_repack copies a 16-bit MN-major operand as it lies where the tile takes it, else K-major") {
  ModelledHopper be(true);
  KernelFamily& repack = *be.families()[1];
  // f16, A column-major (M-major) and B row-major (N-major), odd leading dimensions.
  Problem p = problem(1000, 600, 1001, OG_DTYPE_F16, OG_DTYPE_F16, false, 3);
  p.a.stride_row = 1, p.a.stride_col = 1003;
  p.b.stride_row = 603, p.b.stride_col = 1;
  PlanSummary out;
  Status s = repack.describe(p, *Config::parse("sm90_repack:128x128x64-g8-s6-w12-coop"), out);
  REQUIRE_MESSAGE(s.ok(), s.message);
  CAPTURE(out.notes);
  // Lines of M and N (1000 and 600 elements, on pitches of 1024 and 640), K lines of each.
  CHECK(out.notes.rfind("A copied M-major and B copied N-major into", 0) == 0);
  CHECK(out.workspace_bytes == WorkspaceNeed::round(1001ll * 1024 * 2) + WorkspaceNeed::round(1001ll * 640 * 2));
  // 192x192 (96 columns per consumer) takes only a K-major B: both copied K-major (K on a pitch
  // of 1024 elements).
  s = repack.describe(p, *Config::parse("sm90_repack:192x192x64-g8-s4-w12-coop"), out);
  REQUIRE_MESSAGE(s.ok(), s.message);
  CAPTURE(out.notes);
  CHECK(out.notes.rfind("A copied K-major and B copied K-major into", 0) == 0);
  CHECK(out.workspace_bytes == WorkspaceNeed::round(1000ll * 1024 * 2) + WorkspaceNeed::round(600ll * 1024 * 2));
}

TEST_CASE("cuda model: latency floors of the gathering mma.sync loader, simt and sm90_repack") {
  ModelledHopper be(true);
  KernelFamily& repack = *be.families()[1];
  KernelFamily& sm80 = *be.families()[2];
  KernelFamily& simt = *be.families()[6];
  // f16, odd leading dimensions: mma.sync gathers. 2914 x 1066 x 3 on 64x64 tiles: 782 tiles,
  // three waves of two blocks per SM, one K-tile each: 3 x (2.5 + 5) us; 128x128: 207 tiles, two
  // waves of one, 2 x (3.2 + 6.8) us.
  const Problem p = problem(2914, 1066, 3, OG_DTYPE_F16, OG_DTYPE_F16, false, 7);
  const Config small = *Config::parse("sm80_mma:64x64x32-g8-s4-w4"), large = *Config::parse("sm80_mma:128x128x32-g8-s4-w8");
  CHECK(sm80.hints(p, small).latency_us == doctest::Approx(22.5));
  CHECK(sm80.hints(p, large).latency_us == doctest::Approx(20.0));
  const CostTerms t = predict(p, small, sm80.hints(p, small), be.device().limits);
  CHECK(t.latency_ms == doctest::Approx(0.0225));
  CHECK(t.ms >= t.latency_ms);
  // K = 200 adds 2.5 us per K-tile per wave; the copy loader (aligned operands) waits 1.1 us
  // per K-tile and 4 per wave.
  const Problem long_k = problem(2914, 1066, 200, OG_DTYPE_F16, OG_DTYPE_F16, false, 7);
  CHECK(sm80.hints(long_k, small).latency_us == doctest::Approx(3 * (2.5 * 7 + 5)));
  CHECK(sm80.hints(problem(2914, 1064, 200, OG_DTYPE_F16, OG_DTYPE_F16), small).latency_us == doctest::Approx(3 * (1.1 * 7 + 4)));
  // Larger blocks wait longer per K tile, and 128x256 holds one block per SM: 28 x 3238 x 268 x 14
  // with A M-major (H200, forced) ran 55 us on 128x256 (182 tiles, 9 K tiles), 41.5 on 128x128
  // (364 tiles), 37.6 on 64x64; the Hopper kernel's 64x256 ping-pong 13.2, its choice now.
  {
    const Problem few_rows = strided_problem(28, 3238, 268, 14, "cr", 40, 3240, 3240, OG_DTYPE_F16);
    const Config wide = *Config::parse("sm80_mma:128x256x32-g8-s3-w8");
    CHECK(std::fabs(sm80.hints(few_rows, wide).latency_us - 55.0) <= 6.0);
    CHECK(std::fabs(sm80.hints(few_rows, large).latency_us - 41.5) <= 6.0);
    CHECK(std::fabs(sm80.hints(few_rows, small).latency_us - 37.6) <= 6.0);
    CHECK(choice(be, few_rows).rfind("sm90_wgmma:", 0) == 0);
  }
  // simt: 23 us per wave (one block per SM) and per 32 of K for tiles up to 64x128, twice that
  // for 128x128: 414 tiles of 64x128 in four waves; 207 of 128x128 in two, K = 200 in 7 steps.
  CHECK(simt.hints(p, *Config::parse("simt:64x128x32-g8-s4-w4")).latency_us == doctest::Approx(4 * 23.0));
  CHECK(simt.hints(long_k, *Config::parse("simt:128x128x32-g8-s4-w4")).latency_us == doctest::Approx(2 * 7 * 46.0));
  // sm90_repack: at least one launch of the Hopper kernel (4.5 us) and the time its epilogue
  // writes D, whose lines here start 2 bytes into a 16-byte unit (0.7 TB/s); its copy launch
  // comes on top.
  const Config rp = *Config::parse("sm90_repack:128x128x64-g8-s6-w12-coop");
  CHECK(repack.hints(p, rp).latency_us == doctest::Approx(2914.0 * 1066 * 2 / 0.7e6));
  CHECK(repack.hints(problem(291, 106, 3, OG_DTYPE_F16, OG_DTYPE_F16, false, 7), rp).latency_us == doctest::Approx(4.5));
  // The floors decide this problem: the copies and the Hopper kernel, or short_k's row writers
  // (K = 3), not the gathering loader.
  const std::string c = choice(be, p);
  CAPTURE(c);
  CHECK((c.rfind("sm90_repack:", 0) == 0 || c.rfind("short_k:", 0) == 0));
}

TEST_CASE("cuda model: latency floors of the skinny families and of few-tile Hopper and mma.sync launches") {
  ModelledHopper be;
  KernelFamily& skinny_mma = *be.families()[4];
  REQUIRE(std::string(skinny_mma.name()) == "skinny_mma");
  // skinny_mma's floor: 10 us per launch and 0.9 us per K chunk of a block for the 64-row tile
  // (3.8 and 0.6 at 16 rows), per wave of one block per SM. 1647 x 40 x 297 on the transposed
  // 64-row tile in 4 slices: 26 column blocks x 4 slices in one wave, two chunks per slice.
  const Problem narrow = strided_problem(1647, 40, 297, 1, "cc", 1650, 300, 40, OG_DTYPE_F16);
  CHECK(skinny_mma.hints(narrow, *Config::parse("skinny_mma:64x64x64-g1-s3-w8-k4-tmma")).latency_us == doctest::Approx(10.0 + 2 * 0.9));
  CHECK(skinny_mma.hints(narrow, *Config::parse("skinny_mma:64x64x64-g1-s3-w8-tmma")).latency_us == doctest::Approx(10.0 + 5 * 0.9));
  // More blocks than SMs run in waves, a split's blocks 0.3 us per slice of its cluster more in
  // each wave after the first (2.4 us through the workspace, plus its serial tail). 7001 x 7 x
  // 1037 on the transposed 16-row tile (1.7 + 8.3 / 4 us per launch), 110 column blocks: unsplit
  // one wave of 17 chunks; in 8 slices 880 blocks, 7 waves of three chunks; in 16 slices 14
  // waves of two chunks and 16 x 0.1 us of tail.
  const Problem tall = strided_problem(7001, 7, 1037, 1, "rr", 1040, 7, 7, OG_DTYPE_F16);
  const double launch16 = 1.7 + 8.3 / 4;
  CHECK(skinny_mma.hints(tall, *Config::parse("skinny_mma:64x16x64-g1-s4-w8-tmma")).latency_us == doctest::Approx(launch16 + 17 * 0.6));
  const CostHints k8 = skinny_mma.hints(tall, *Config::parse("skinny_mma:64x16x64-g1-s4-w8-k8-tmma"));
  CHECK(k8.latency_us == doctest::Approx(launch16 + 7 * 3 * 0.6 + 6 * 8 * 0.3));
  CHECK(k8.extra_us == 0);
  const CostHints k16 = skinny_mma.hints(tall, *Config::parse("skinny_mma:64x16x64-g1-s4-w8-k16-tmma"));
  CHECK(k16.latency_us == doctest::Approx(launch16 + 14 * 2 * 0.6 + 13 * 8 * 0.3));
  CHECK(k16.extra_us == doctest::Approx(16 * 0.1));
  // Choices measured on the H200 (bench/results/h200, random seeds 808 and 1313: OmniGEMM us),
  // made on both modelled parts.
  const Problem row = strided_problem(1, 2897, 2023, 1, "cc", 8, 2024, 2904, OG_DTYPE_BF16);
  for (HopperPart part : {HopperPart::h100, HopperPart::h200}) {
    ModelledHopper gpu(false, part);
    CAPTURE(gpu.device().name);
    // The copies and the Hopper kernel beat skinny_mma's 64-row tile on a mid-size narrow
    // problem (8.4-12.1 against 13.4).
    CHECK(choice(gpu, narrow).rfind("sm90_repack:", 0) == 0);
    // One or a few rows against a long K: skinny_mma's 16-row tile in place (13.5 and 8.9) before
    // skinny's CUDA-core loaders (15.1 and 11.5) and before copies fed to one Hopper CTA per slice.
    CHECK(choice(gpu, strided_problem(13, 1, 13242, 1, "cr", 13, 8, 16, OG_DTYPE_F16)).rfind("skinny_mma:16x64x64-", 0) == 0);
    CHECK(choice(gpu, strided_problem(1, 186, 2443, 1, "rr", 2448, 188, 200, OG_DTYPE_BF16)).rfind("skinny_mma:16x64x64-", 0) ==
          0);
    // Fifteen batches of one row and two columns against K = 8015 (B's columns at odd offsets):
    // the copies and 16x128 Hopper tiles in four slices took 32.7 us, skinny_mma 15.5, skinny's
    // one-row dot form, S staged at the columns' shift, 10.6.
    CHECK(choice(gpu, strided_problem(1, 2, 8015, 15, "rc", 8015, 8019, 8, OG_DTYPE_BF16)).rfind("skinny:1x32x256-", 0) == 0);
    // Few rows against a long K, unaligned: the copies of the large operand cost more than
    // skinny_mma's streaming in place (4 x 2187 x 6826: 42.6 us against 23.3; 31 x 6612 x 2454:
    // 67.4 against 32.3; 5475 x 58 x 10231: 155.8 against 107.8).
    CHECK(choice(gpu, strided_problem(4, 2187, 6826, 1, "rr", 6829, 2198, 2200, OG_DTYPE_F16)).rfind("skinny_mma:", 0) == 0);
    CHECK(choice(gpu, strided_problem(31, 6612, 2454, 1, "cr", 31, 6617, 6613, OG_DTYPE_F16)).rfind("skinny_mma:", 0) == 0);
    CHECK(choice(gpu, strided_problem(5475, 58, 10231, 1, "cc", 5481, 10232, 64, OG_DTYPE_F16)).rfind("skinny_mma:", 0) == 0);
    // Tall problems split only as far as their column blocks leave SMs idle: 7001 x 7 x 1037 ran
    // 15.2 / 14.9 / 17.0 / 23.8 us in 1 / 2 / 4 / 8 slices, 8039 x 2 x 1806 26.4 / 24.8 / 27.9 / 33.2.
    for (const Problem& t : {strided_problem(7001, 7, 1037, 1, "cc", 7007, 1042, 13, OG_DTYPE_F16),
                             strided_problem(8039, 2, 1806, 1, "cr", 8046, 5, 6, OG_DTYPE_F16)}) {
      const std::string c = choice(gpu, t);
      CAPTURE(c);
      CHECK((c == "skinny_mma:64x16x64-g1-s4-w8-tmma" || c == "skinny_mma:64x16x64-g1-s4-w8-k2-tmma"));
    }
    // An aligned row against 2897 columns: mma.sync's cp.async loader waits on each of its 64 K
    // tiles (72.9 us); sm90_wgmma streams it (13.5).
    CHECK(choice(gpu, row).rfind("sm90_wgmma:", 0) == 0);
  }
  const Config sm80 = *Config::parse("sm80_mma:64x64x32-g8-s4-w4");
  CHECK(be.families()[2]->hints(row, sm80).latency_us == doctest::Approx(1.1 * 64 + 4.0));
  // A problem of a few 128x128 tiles: 2.9 us, then each Hopper CTA's K steps one after another at
  // the slower of its operand stream (137 GB/s: 0.18 us for 64x128's 24 KB) and its SM's share of
  // the peak, a third slower in a cluster pair; slices that meet in global memory add 1.5 us and
  // 0.2 us per slice and 32 KB of partials. With more tiles (the LLM set) only the floor of one
  // launch, 4.5 us.
  const Problem few = strided_problem(29, 324, 6997, 1, "cc", 32, 7000, 328, OG_DTYPE_F16);
  const Config swap2 = *Config::parse("sm90_wgmma:64x128x64-g8-s8-w12-k2-swap");
  const double step = 192.0 * 64 * 2 / 137e3;
  CHECK(be.families()[0]->hints(few, swap2).latency_us == doctest::Approx(2.9 + 55 * step * 4 / 3));
  const Config swap16 = *Config::parse("sm90_wgmma:64x128x64-g8-s8-w12-k16-swap");
  CHECK(be.families()[0]->hints(few, swap16).latency_us == doctest::Approx(2.9 + 7 * step + 1.5 + 16 * 0.2 * 2));
  CHECK(be.families()[0]->hints(problem(128, 4096, 14336, OG_DTYPE_F16, OG_DTYPE_F16), swap2).latency_us == doctest::Approx(4.5));
}

TEST_CASE("cuda model: few tiles against a long K split deep on Hopper; many tiles are not offered deep splits") {
  // H200 (bench/results/h200, forced sweep, f16 us): 64 x 128 x 16384 ran 38.4 on 64x128 k2 and
  // 13.1 / 13.5 on k8 / k16; 32 x 32 x 16384 16.5 on 32x128 k4 and 12.4 on 128x64 k16; 128 x 256 x
  // 16384 17.6 on 128x64 k4 and 13.3 on k8.
  for (HopperPart part : {HopperPart::h100, HopperPart::h200}) {
    ModelledHopper be(false, part);
    CAPTURE(be.device().name);
    for (auto [m, n] : {std::pair{64, 128}, std::pair{32, 32}, std::pair{128, 256}}) {
      const std::string c = choice(be, problem(m, n, 16384, OG_DTYPE_F16, OG_DTYPE_F16));
      CAPTURE(c);
      CHECK(c.rfind("sm90_wgmma:", 0) == 0);
      CHECK((c.find("-k8-") != std::string::npos || c.find("-k16-") != std::string::npos));
    }
    const Problem many = problem(1024, 2048, 16384, OG_DTYPE_F16, OG_DTYPE_F16);
    CHECK_FALSE(offered(be, many, "sm90_wgmma:128x64x64-g8-s8-w12-k8-coop"));
    CHECK(offered(be, many, "sm90_wgmma:128x64x64-g8-s8-w12-k4-coop"));
  }
}

TEST_CASE("cuda model: short K with D's lines off 16 bytes runs on short_k; aligned D and longer K stay on the tensor cores") {
  // H200, f16, packed leading dimensions (the bench's --shapes), default choice before against
  // short_k forced, us: 3549 x 6617 x 1 / 2 / 8 66.7 / 67.2 / 67.2 -> 41.6 / 43.8 / 53.0, 144 x
  // 15765 x 2 16.7 -> 8.1, 1533 x 8629 x 1 38.9 -> 25.9, 8192 x 8191 x 4 153.1 -> 115.5, and on
  // the mma form 3549 x 6617 x 16 66.4 -> 55.7; kept: 2449 x 3849 x 25 32.0 (FMA 49.9, mma 33.0),
  // 16060 x 12 x 12 6.9 (16.4), 8192 x 8192 x 1 55.6 (74.3: TMA stores), 3549 x 6616 x 8 27.7 (45.3).
  for (HopperPart part : {HopperPart::h100, HopperPart::h200}) {
    ModelledHopper be(false, part);
    CAPTURE(be.device().name);
    auto packed = [](int64_t m, int64_t n, int64_t k) { return strided_problem(m, n, k, 1, "rr", k, n, n, OG_DTYPE_F16); };
    for (auto [m, n, k] : {std::tuple{3549, 6617, 1}, std::tuple{3549, 6617, 2}, std::tuple{3549, 6617, 8}, std::tuple{144, 15765, 2},
                           std::tuple{1533, 8629, 1}, std::tuple{8192, 8191, 4}, std::tuple{3549, 6617, 16}}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      const std::string c = choice(be, packed(m, n, k));
      CHECK(c.rfind("short_k:", 0) == 0);
      CHECK((c.find("-mma") != std::string::npos) == (k >= 8));  // tensor cores once K costs more than the result tile
    }
    for (auto [m, n, k] : {std::tuple{2449, 3849, 25}, std::tuple{16060, 12, 12}, std::tuple{8192, 8192, 1}, std::tuple{3549, 6616, 8}}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      CHECK(choice(be, packed(m, n, k)).rfind("short_k:", 0) != 0);
    }
    // B column-major (B' along K): a K under one chunk runs on the mma form (3504 x 671 x 13, H200
    // 11.3 -> 8.6 us); whole chunks are priced at the slowest measured, so 4245 x 14402 x 19 x 2
    // stays on the Hopper kernel (318 us; the mma form 314 here, 960 at another stride).
    CHECK(choice(be, strided_problem(3504, 671, 13, 1, "rc", 16, 18, 680, OG_DTYPE_BF16)) == "short_k:32x256x16-g1-s1-w8-mma");
    CHECK(choice(be, strided_problem(4245, 14402, 19, 2, "rc", 22, 24, 14402, OG_DTYPE_BF16)).rfind("short_k:", 0) != 0);
  }
}

TEST_CASE("cuda model: short_k plans whole-row blocks, transposes a column-major D, and refuses what it does not serve") {
  ModelledHopper be;
  KernelFamily* sk = nullptr;
  for (KernelFamily* f : be.families())
    if (std::string(f->name()) == "short_k") sk = f;
  REQUIRE(sk);
  REQUIRE(sk->configs().size() == 4);
  const Config narrow = sk->configs()[0], wide = sk->configs()[1], narrow_mma = sk->configs()[2];
  CHECK(narrow.to_string() == "short_k:32x256x16-g1-s1-w8");
  CHECK(wide.to_string() == "short_k:32x512x16-g1-s1-w8");
  CHECK(narrow_mma.to_string() == "short_k:32x256x16-g1-s1-w8-mma");
  CHECK(sk->configs()[3].to_string() == "short_k:32x512x16-g1-s1-w8-mma");
  // 3549 x 6617: 111 blocks of 32 rows x 26 (or 13) of 256 (512) columns, 256 threads.
  const Problem p = strided_problem(3549, 6617, 1, 2, "rr", 1, 6617, 6617, OG_DTYPE_F16);
  PlanSummary plan;
  REQUIRE(sk->describe(p, narrow, plan).ok());
  CHECK(plan.grid[0] == 26);
  CHECK(plan.grid[1] == 111);
  CHECK(plan.grid[2] == 2);
  CHECK(plan.threads == 256);
  CHECK(plan.notes.find("aligned 16-byte units") != std::string::npos);
  REQUIRE(sk->describe(p, wide, plan).ok());
  CHECK(plan.grid[0] == 13);
  // The mma form: the same grid, its sums on tensor cores through a shared f32 tile of the block.
  REQUIRE(sk->describe(p, narrow_mma, plan).ok());
  CHECK(plan.grid[0] == 26);
  CHECK(plan.grid[1] == 111);
  CHECK(plan.notes.find("mma.sync") != std::string::npos);
  CHECK(plan.shared_bytes >= 32 * 256 * 4);
  // A column-major D runs as D^T: its columns are the rows the warps own.
  Problem t = p;
  t.d.stride_row = 1, t.d.stride_col = 3549;
  REQUIRE(sk->describe(t, narrow, plan).ok());
  CHECK(plan.grid[0] == 14);
  CHECK(plan.grid[1] == 207);
  CHECK(plan.notes.find("D^T") != std::string::npos);
  // Refusals name the rule: K past 128, a D with no unit stride, a row not in the table.
  const Status long_k = sk->can_implement(strided_problem(64, 64, 129, 1, "rr", 129, 64, 64, OG_DTYPE_F16), narrow);
  CHECK_FALSE(long_k.ok());
  CHECK(long_k.message.find("K from 1 to 128") != std::string::npos);
  Problem strided = p;
  strided.d.stride_col = 2, strided.d.stride_row = 2 * 6617;
  const Status no_unit = sk->can_implement(strided, narrow);
  CHECK_FALSE(no_unit.ok());
  CHECK(no_unit.message.find("unit stride") != std::string::npos);
  CHECK_FALSE(sk->can_implement(p, *Config::parse("short_k:32x128x16-g1-s1-w8")).ok());
  // The mma form takes like inputs only (fp8 x fp8 of either kind: decoded to f16 exactly).
  Problem mixed_in = strided_problem(64, 300, 20, 1, "rr", 20, 300, 300, OG_DTYPE_F16);
  mixed_in.b.dtype = OG_DTYPE_BF16;
  const Status mixed = sk->can_implement(mixed_in, narrow_mma);
  CHECK_FALSE(mixed.ok());
  CHECK(mixed.message.find("f16 x f16, bf16 x bf16 or fp8 x fp8") != std::string::npos);
  Problem f32_in = strided_problem(64, 300, 20, 1, "rr", 20, 300, 300, OG_DTYPE_F32);
  CHECK_FALSE(sk->can_implement(f32_in, narrow_mma).ok());
  CHECK(sk->can_implement(f32_in, narrow).ok());
}

TEST_CASE("cuda model: few-row fp8 problems stay on the tensor cores: skinny pays its latency floor for fp8 too") {
  // H200, fp8 seed 303 (K-major B): without the floor skinny took these from sm90_wgmma, 2 x 1712
  // x 608 5.1 -> 33.7 us, 1 x 480 x 4992 6.3 -> 46.2, 31 x 16 x 8192 11.0 -> 23.8.
  for (HopperPart part : {HopperPart::h100, HopperPart::h200}) {
    ModelledHopper be(false, part);
    CAPTURE(be.device().name);
    for (auto [m, n, k] : {std::tuple{2, 1712, 608}, std::tuple{1, 480, 4992}, std::tuple{31, 16, 8192}}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      Problem p = strided_problem(m, n, k, 1, "rc", k, k, n, OG_DTYPE_FP8_E4M3);
      p.d.dtype = OG_DTYPE_F16;
      CHECK(choice(be, p).rfind("skinny:", 0) != 0);
    }
  }
}

TEST_CASE("cuda model: waves of short-K tiles and of one-chunk skinny_mma blocks are priced; a batched GEMV runs on skinny") {
  ModelledHopper be;
  // Two waves or more of Hopper tiles take 2.9 us, then per wave 1 us and 0.075 us per 1024 tile
  // elements: 6432 x 1511 x 2 on 128x128 tiles is 612 tiles, 5 waves of 132 CTAs.
  const Problem wide = strided_problem(6432, 1511, 2, 1, "rc", 8, 16, 1520, OG_DTYPE_BF16);
  CHECK(be.families()[0]->hints(wide, *Config::parse("sm90_wgmma:128x128x64-g8-s6-w12-coop")).latency_us ==
        doctest::Approx(2.9 + 5 * (1.0 + 0.075 * 16)));
  // One wave keeps the launch floor.
  const Problem one_wave = strided_problem(1024, 1024, 64, 1, "rr", 64, 1024, 1024, OG_DTYPE_F16);
  CHECK(be.families()[0]->hints(one_wave, *Config::parse("sm90_wgmma:128x256x64-g16-s4-w12-coop")).latency_us == doctest::Approx(4.5));
  // skinny_mma's unsplit blocks cost 0.8 us more in every wave after the first: 16060 x 1 x 12 in
  // 11 batches on the transposed 16-row tile is 251 x 11 blocks of one chunk, 21 waves.
  const Problem gemv = strided_problem(16060, 1, 12, 11, "cr", 16067, 3, 5, OG_DTYPE_F16);
  KernelFamily& skinny_mma = *be.families()[4];
  REQUIRE(std::string(skinny_mma.name()) == "skinny_mma");
  CHECK(skinny_mma.hints(gemv, *Config::parse("skinny_mma:64x16x64-g1-s4-w8-tmma")).latency_us ==
        doctest::Approx(1.7 + 8.3 / 4 + 21 * 0.6 + 20 * 0.8));
  // H200 (seed 7919): the copies and 11 waves of 128x64 tiles took 42.8 us, skinny_mma 32.8,
  // skinny's one-row axpy form 16.3.
  for (HopperPart part : {HopperPart::h100, HopperPart::h200}) {
    ModelledHopper gpu(false, part);
    CAPTURE(gpu.device().name);
    CHECK(choice(gpu, gemv) == "skinny:64x1x64-g1-s1-w8-taxpy");
  }
  // One column against K = 3866 in 11 batches, A K-contiguous: on the H200 skinny's one-row dot
  // form with four-element loads (13.4 us in 4 slices, 16.6 in 8) before the copies (18.8).
  ModelledHopper h200(false, HopperPart::h200);
  CHECK(choice(h200, strided_problem(187, 1, 3866, 11, "rc", 3872, 3871, 1, OG_DTYPE_F16)).rfind("skinny:32x1x256-", 0) == 0);
}

TEST_CASE("cuda model: tall problems whose N-major B has narrow lines run on its K-major copy over many tiles") {
  // H200, f16, 128x64 tiles: 65536 x 8 x 256 ran 29.7 us with B N-major in place, 12.6 with B
  // K-major, 18.2 on sm90_repack's K-major copy (bench/results/h200, runs p44 and p45).
  for (HopperPart part : {HopperPart::h100, HopperPart::h200}) {
    ModelledHopper gpu(false, part);
    CAPTURE(gpu.device().name);
    KernelFamily& sm90 = *gpu.families()[0];
    KernelFamily& repack = *gpu.families()[1];
    REQUIRE(std::string(sm90.name()) == "sm90_wgmma");
    REQUIRE(std::string(repack.name()) == "sm90_repack");
    const Config tile = *Config::parse("sm90_wgmma:128x64x64-g8-s8-w12-coop");
    // Each program's first 8 K steps wait on the line-by-line fetches: 1.0 us per step for lines
    // of 16 bytes, 0.4 for 32, 0.7 for 48, where there is more than one wave of work items.
    const double items = 65536.0 / 128, programs = gpu.device().limits.compute_units;
    const double per_program = std::ceil(items / programs);
    CHECK(sm90.hints(problem(65536, 8, 256, OG_DTYPE_F16, OG_DTYPE_F16), tile).extra_us == doctest::Approx(per_program * 4 * 1.0));
    CHECK(sm90.hints(problem(65536, 16, 256, OG_DTYPE_F16, OG_DTYPE_F16), tile).extra_us == doctest::Approx(per_program * 4 * 0.4));
    CHECK(sm90.hints(problem(65536, 24, 4096, OG_DTYPE_F16, OG_DTYPE_F16), tile).extra_us == doctest::Approx(per_program * 8 * 0.7));
    // One wave, a K-major B, lines of 64 bytes and more or under 16: no wait.
    CHECK(sm90.hints(problem(8192, 8, 256, OG_DTYPE_F16, OG_DTYPE_F16), tile).extra_us == 0);
    CHECK(sm90.hints(strided_problem(65536, 4, 256, 1, "rr", 256, 8, 8, OG_DTYPE_F16), tile).extra_us == 0);
    CHECK(sm90.hints(problem(65536, 8, 256, OG_DTYPE_F16, OG_DTYPE_F16, true), tile).extra_us == 0);
    CHECK(sm90.hints(problem(65536, 32, 256, OG_DTYPE_F16, OG_DTYPE_F16), tile).extra_us == 0);
    // sm90_repack offers the copy of an aligned operand for narrow lines only.
    const Config copied = *Config::parse("sm90_repack:128x64x64-g8-s8-w12-coop");
    CHECK(repack.can_implement(problem(65536, 8, 256, OG_DTYPE_F16, OG_DTYPE_F16), copied));
    CHECK_FALSE(repack.can_implement(problem(65536, 32, 256, OG_DTYPE_F16, OG_DTYPE_F16), copied));
    CHECK(choice(gpu, problem(65536, 8, 256, OG_DTYPE_F16, OG_DTYPE_F16)).rfind("sm90_repack:", 0) == 0);
    CHECK(choice(gpu, problem(131072, 8, 128, OG_DTYPE_BF16, OG_DTYPE_BF16)).rfind("sm90_repack:", 0) == 0);
    CHECK(choice(gpu, problem(65536, 8, 256, OG_DTYPE_F16, OG_DTYPE_F16, true)).rfind("sm90_wgmma:", 0) == 0);
    // One wave waits little: in place (1000 x 8 x 1000 ran 7.5 us in place, 13.0 on the copy).
    CHECK(choice(gpu, problem(1000, 8, 1000, OG_DTYPE_F16, OG_DTYPE_F16)).rfind("sm90_wgmma:", 0) == 0);
  }
}

TEST_CASE("cuda model: lines on pitches off 128 bytes slow the Hopper main loop as measured; multicast halves B's, straddling ones may be copied") {
  // H200, f16 4096 x 4096 x 1000, A and B K-major on pitches of 2000, 2016 and 2048 bytes
  // (sm90/tma_lines.hpp): 128x128 ran 99.2, 69.0 and 57.9 us, 128x256 77.2, 57.0 and 54.8.
  ModelledHopper gpu(false, HopperPart::h200);
  KernelFamily& sm90 = *gpu.families()[0];
  KernelFamily& repack = *gpu.families()[1];
  REQUIRE(std::string(repack.name()) == "sm90_repack");
  auto on_pitch = [](int64_t ld) { return problem(4096, 4096, 1000, OG_DTYPE_F16, OG_DTYPE_F16, true, ld - 1000); };
  struct Measured {
    const char* tile;
    double us_2000, us_2016, us_2048;
  };
  for (const Measured m : {Measured{"sm90_wgmma:128x128x64-g8-s6-w12-coop", 99.2, 69.0, 57.9},
                           Measured{"sm90_wgmma:128x256x64-g16-s4-w12-coop", 77.2, 57.0, 54.8}}) {
    CAPTURE(m.tile);
    const Config c = *Config::parse(m.tile);
    const CostHints fast = sm90.hints(on_pitch(1024), c), off_2000 = sm90.hints(on_pitch(1000), c), off_2016 = sm90.hints(on_pitch(1008), c);
    // What the slow lines add is priced within 6 us of what they added on the H200; the main
    // loop's efficiency is the same on every pitch.
    CAPTURE(off_2000.extra_us - fast.extra_us);
    CAPTURE(off_2016.extra_us - fast.extra_us);
    CHECK(std::fabs(off_2000.extra_us - fast.extra_us - (m.us_2000 - m.us_2048)) <= 6.0);
    CHECK(std::fabs(off_2016.extra_us - fast.extra_us - (m.us_2016 - m.us_2048)) <= 6.0);
    CHECK(off_2000.efficiency == fast.efficiency);
  }
  // The multicast tile's programs each load half of B's lines: on the 2000-byte pitch it ran
  // 56.8 us (128x256 coop 77.2), priced within 6 us of the fast pitch, and it is the choice there.
  {
    const Config mcast = *Config::parse("sm90_wgmma:128x256x64-g8-s4-w12-mcast");
    CHECK(std::fabs(sm90.hints(on_pitch(1000), mcast).extra_us - sm90.hints(on_pitch(1024), mcast).extra_us - (56.8 - 53.5)) <= 6.0);
    CHECK(choice(gpu, on_pitch(1000)) == mcast.to_string());
  }
  // Its tile rows come in pairs: with an odd count that adds a wave, it is not the choice
  // (4466 x 3626 x 1296, 35 rows of 128x256 tiles: mcast 87.6 us, coop 78.7; 1584 x 12600 x 1225,
  // 13 rows: 100.0 and 90.0).
  CHECK(choice(gpu, strided_problem(4466, 3626, 1296, 1, "cc", 4472, 1296, 3632, OG_DTYPE_F16)).find("mcast") == std::string::npos);
  CHECK(choice(gpu, strided_problem(1584, 12600, 1225, 1, "rc", 1240, 1232, 12600, OG_DTYPE_F16)).find("mcast") == std::string::npos);
  // sm90_repack copies operands whose lines straddle sectors, not those on 32-byte multiples.
  const Config copied = *Config::parse("sm90_repack:128x256x64-g16-s4-w12-coop");
  CHECK(repack.can_implement(on_pitch(1000), copied));
  CHECK_FALSE(repack.can_implement(on_pitch(1008), copied));
  CHECK_FALSE(repack.can_implement(on_pitch(1024), copied));
  // Tall problems whose N-major B has lines of 256-511 bytes on a straddling pitch wait more than
  // the lines' rate: 65536 x 136 x 256 f16 ran 28.6-29.1 us in place (128x192, 192x192) and 23.4
  // on sm90_repack's copy of B (128x192), 20.7 in place with B on a 384-byte pitch; N = 72 (two
  // boxes) waited 2 us, less than the copy's launch.
  CHECK(choice(gpu, strided_problem(65536, 136, 256, 1, "rr", 256, 136, 136, OG_DTYPE_F16)).rfind("sm90_repack:", 0) == 0);
  CHECK(choice(gpu, strided_problem(65536, 136, 256, 1, "rr", 256, 144, 136, OG_DTYPE_F16)).rfind("sm90_wgmma:", 0) == 0);
  CHECK(choice(gpu, strided_problem(65536, 72, 256, 1, "rr", 256, 72, 72, OG_DTYPE_F16)).rfind("sm90_wgmma:", 0) == 0);
  // The engine remembers a choice per problem signature: the same problem on a 32-byte pitch,
  // where sm90_repack does not run, is not given the copy chosen for the straddling one.
  {
    Tuner tuner("", OG_TUNE_CACHE_ONLY);
    Config straddling, aligned;
    REQUIRE(tuner.choose(gpu, strided_problem(65536, 136, 256, 1, "rr", 256, 136, 136, OG_DTYPE_F16), straddling).ok());
    REQUIRE(tuner.choose(gpu, strided_problem(65536, 136, 256, 1, "rr", 256, 144, 136, OG_DTYPE_F16), aligned).ok());
    CHECK(straddling.family == "sm90_repack");
    CHECK(aligned.family == "sm90_wgmma");
  }
  // The copies' pitches are multiples of 128 bytes: the kernel on them runs at the fast rate.
  ModelledHopper planning(true, HopperPart::h200);
  PlanSummary out;
  const Status s = planning.families()[1]->describe(on_pitch(1000), copied, out);
  REQUIRE_MESSAGE(s.ok(), s.message);
  CHECK(out.workspace_bytes == 2 * WorkspaceNeed::round(4096ll * 1024 * 2));
}
