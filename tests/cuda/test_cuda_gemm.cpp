// CUDA backend tests. Without a CUDA device every test prints "SKIPPED cuda: <test>: <reason>".
#include <doctest/doctest.h>

#include "backend_cases.hpp"
#include "context_internal.hpp"
#include "dispatch.hpp"
#include "tuner.hpp"

#include <utility>

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::optional<Context> cuda_context(const char* test_name) { return backend_context(Backend::cuda, test_name); }

// The CUDA backend's family `name` (every family exists on every device; whether it runs a
// problem is its can_implement's answer).
detail::KernelFamily& family(Context& ctx, const char* name) {
  for (detail::KernelFamily* f : detail::context_backend(ctx.c_handle()).families())
    if (std::string(f->name()) == name) return *f;
  FAIL("no CUDA family " << name);
  throw 0;
}

// The configs the cost model ranks for p, fastest first.
std::vector<detail::Config> ranked(const detail::Backend& be, const detail::Problem& p) {
  std::vector<detail::Config> out;
  for (const auto& c : detail::rank_candidates(be, p)) out.push_back(c.config);
  return out;
}

// The CUDA context of an sm_90 device; otherwise none, after printing why the test is skipped.
std::optional<Context> hopper_context(const char* test_name) {
  auto ctx = cuda_context(test_name);
  if (!ctx) return ctx;
  const auto& device = detail::context_backend(ctx->c_handle()).device();
  if (device.driver.find("sm_90") == std::string::npos) {
    MESSAGE("SKIPPED cuda: " << test_name << ": " << device.name << " (" << device.driver << ") is not an sm_90 device");
    return std::nullopt;
  }
  return ctx;
}

}  // namespace

TEST_CASE("cuda: random shapes, dtypes, layouts, batches and epilogues match float64") {
  auto ctx = cuda_context("random cases");
  if (!ctx) return;
  for (int t = 0; t < 60; ++t) run_case(*ctx, random_case(300, t % 3 != 0));
}

TEST_CASE("cuda: every table config the generic kernel runs, forced, on edge shapes; others refused") {
  auto ctx = cuda_context("forced configs");
  if (!ctx) return;
  auto& simt = family(*ctx, "simt");
  int ran = 0;
  for (const auto& cfg : simt.configs()) {
    if (!simt.can_implement(detail::Problem{}, cfg)) continue;
    run_edge_shapes(*ctx, cfg.to_string(), cfg.block_m, cfg.block_n, cfg.block_k, Dtype::bf16, Dtype::fp8_e5m2,
                    Dtype::f16, Activation::gelu_tanh);
    ++ran;
  }
  CHECK(ran > 0);
  const Status s = run_probe(*ctx, Dtype::f16, "simt:128x128x32-g8-s4-w4-k4");
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("split-K") != std::string::npos);
}

TEST_CASE("cuda: the Hopper TMA/wgmma kernel, forced, on every tile shape, input pair and operand layout") {
  auto ctx = hopper_context("Hopper kernel");
  if (!ctx) return;
  // Every row of the sm90_wgmma table, and the narrow tiles unswapped (the table uses them only
  // in the swap form), whose vector epilogue then runs on 16- and 32-column chunks.
  std::vector<detail::Config> configs;
  for (const auto& cfg : family(*ctx, "sm90_wgmma").configs()) configs.push_back(cfg);
  for (const char* text : {"sm90_wgmma:128x16x64-g8-s10-w12-k2-coop", "sm90_wgmma:128x32x64-g8-s9-w12-coop"}) configs.push_back(*detail::Config::parse(text));
  int ran = 0, expected = 0, refused = 0;
  for (const auto& cfg : configs) {
    if (cfg.block_k == 32) continue;  // tf32 rows (f32 inputs): test_cuda_tf32.cpp
    const bool fp8 = cfg.block_k == 128;
    // Narrow tiles (16 or 32 columns of the kernel's problem) and 192x192 (96 columns per
    // consumer) load B K-major only: B stored column-major, or for swap (whose B is A^T) A stored
    // row-major.
    const bool swap = cfg.form == "swap";
    const bool narrow = (swap ? cfg.block_m : cfg.block_n) < 64 || (cfg.block_m == 192 && cfg.block_n == 192);
    expected += 4 * (fp8 ? 4 : 2 * 4);
    struct Inputs { Dtype a, b; };
    const std::vector<Inputs> inputs = fp8 ? std::vector<Inputs>{{Dtype::fp8_e4m3, Dtype::fp8_e4m3}, {Dtype::fp8_e4m3, Dtype::fp8_e5m2},
                                                                 {Dtype::fp8_e5m2, Dtype::fp8_e4m3}, {Dtype::fp8_e5m2, Dtype::fp8_e5m2}}
                                           : std::vector<Inputs>{{Dtype::f16, Dtype::f16}, {Dtype::bf16, Dtype::bf16}};
    for (const Inputs& in : inputs)
      for (int layout = 0; layout < (fp8 ? 1 : 4); ++layout)
        for (int i = 0; i < 4; ++i) {
          // M: one row, a tile minus one, a tile plus one, two tiles and a bit; N: a masked
          // column tail (not a whole 8-column vector); K: a partial last K tile; a second batch,
          // C, bias and an activation on some of them. The epilogue's ways out: i == 0 and 2
          // generic (C or f32 unaligned D), i == 1 vector (aligned D rows, bias, activation),
          // i == 3 packed (aligned 16-bit D, plain alpha * AB).
          const int64_t m = i == 0 ? 1 : i == 1 ? cfg.block_m - 1 : i == 2 ? cfg.block_m + 1 : 2 * cfg.block_m + 5;
          Case c{m, cfg.block_n + 3, 2 * int64_t(cfg.block_k) + 1 + 8 * i, i % 2 ? 2 : 1};
          c.config = cfg.to_string();
          c.tma_aligned = true;
          c.d_aligned = i % 2 == 1;
          c.a = in.a;
          c.b = in.b;
          c.d = i == 0 ? Dtype::f32 : i == 1 ? Dtype::f16 : Dtype::bf16;
          // fp8 operands must be K-major: B stored N x K (pre-transposed) and A row-major.
          c.ta = !fp8 && (layout & 1);
          c.tb = fp8 || (layout & 2);
          c.epi.alpha = 0.75f;
          c.epi.beta = i == 2 ? -0.5f : 0.0f;
          c.epi.bias_mode = BiasMode(i % 3);  // i == 3: none
          c.epi.act = i == 1 ? Activation::silu : Activation::none;
          if (narrow && (swap ? c.ta : !c.tb)) {
            c.must_refuse = "needs a K-major B";
            ++refused;
          }
          run_case(*ctx, c);
          ++ran;
        }
    // Several work items per persistent program (and per ping-pong consumer), across 2 batches:
    // about 600 tiles of 64x256 for 132 SMs.
    Case many{2050, 2100, 72, 2};
    many.config = cfg.to_string();
    many.tma_aligned = many.d_aligned = true;
    many.a = inputs[0].a;
    many.b = inputs[0].b;
    many.d = Dtype::f16;
    many.tb = fp8 || (narrow && !swap);
    many.epi.bias_mode = BiasMode::per_n;
    run_case(*ctx, many);
    // The plain GEMM (alpha * AB into an aligned 16-bit D): the cooperative kernels with one
    // 64-row block per consumer hold each finished tile and send it to D by TMA stores during
    // the next work item's K-tiles (the deferred epilogue), where N is a multiple of 8 (TMA
    // clips columns in 16-byte units): N = 2104 ends inside a 64-column box, and D's padding
    // after each row must stay untouched. K = 264 leaves every chunk inside the next item's
    // mainloop (5 K-tiles of 16-bit inputs); K = 72 has 2 K-tiles (1 for fp8), fewer than a
    // 256-column tile's 4 chunks, so the rest leave after it. With N = 2100 (no TMA map for D)
    // every tile is stored at once.
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{2104, 72}, {2104, 264}, {2100, 264}}) {
      Case plain = many;
      plain.n = n;
      plain.k = k;
      plain.d = k == 72 ? Dtype::f16 : Dtype::bf16;
      plain.epi = EpilogueSpec{};
      plain.epi.alpha = 0.75f;
      run_case(*ctx, plain);
    }
  }
  CHECK(ran == expected);
  CHECK(refused == 2 * 2 * 4 * (10 + 2 + 2));  // per narrow (or 192x192) 16-bit config: 2 input pairs x 2 layouts x 4 cases
  CHECK(ran >= 4 * (2 * 4 + 4) * 3);
}

TEST_CASE("cuda: narrow, tall and 192x192 Hopper tiles are offered only where they pay") {
  auto ctx = hopper_context("narrow, tall and 192x192 tile offers");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  // f16, A row-major (M x K), B row-major (K x N), D row-major; the ranking only plans.
  auto problem = [](int64_t m, int64_t n, int64_t k) {
    detail::Problem p;
    p.m = m, p.n = n, p.k = k;
    auto operand = [](int64_t rows, int64_t cols, og_dtype t) {
      detail::Operand o;
      o.present = true, o.dtype = t, o.rows = rows, o.cols = cols, o.stride_row = cols, o.stride_col = 1;
      o.mem.kind = OG_MEMORY_CUDA;
      return o;
    };
    p.a = operand(m, k, OG_DTYPE_F16);
    p.b = operand(k, n, OG_DTYPE_F16);
    p.d = operand(m, n, OG_DTYPE_F16);
    return p;
  };
  auto offered = [&](const detail::Problem& p, const char* config) {
    for (const auto& c : ranked(be, p))
      if (c == *detail::Config::parse(config)) return true;
    return false;
  };
  CHECK(offered(problem(16, 4096, 4096), "sm90_wgmma:16x128x64-g8-s10-w12-swap"));
  CHECK(offered(problem(16, 4096, 4096), "sm90_wgmma:32x128x64-g8-s9-w12-swap"));
  CHECK(offered(problem(32, 4096, 4096), "sm90_wgmma:32x128x64-g8-s9-w12-k2-swap"));
  CHECK_FALSE(offered(problem(17, 4096, 4096), "sm90_wgmma:16x128x64-g8-s10-w12-swap"));
  CHECK_FALSE(offered(problem(128, 4096, 4096), "sm90_wgmma:32x128x64-g8-s9-w12-swap"));
  CHECK(offered(problem(128, 4096, 4096), "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"));
  CHECK_FALSE(offered(problem(512, 512, 512), "sm90_wgmma:16x128x64-g8-s10-w12-swap"));
  // Tiles of 128 rows are not offered for M <= 64 (half of them or more would be padding);
  // batched decode then runs the 64x128 swap tile in split-K pairs.
  CHECK_FALSE(offered(problem(64, 4096, 4096), "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"));
  CHECK(offered(problem(65, 4096, 4096), "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop"));
  for (const int64_t m : {48, 64}) {
    const detail::Problem p = problem(m, 4096, 4096);
    CHECK(ranked(be, p).front() == *detail::Config::parse("sm90_wgmma:64x128x64-g8-s8-w12-k2-swap"));
  }
  // 192x192 only where its waves cover less area than 128x256's (on 132 SMs: 3072^2 yes; 4096^2
  // and 6144^2 no), in the swap form for a row-major B (coop needs B K-major).
  if (be.device().limits.compute_units == 132) {
    CHECK(offered(problem(3072, 3072, 3072), "sm90_wgmma:192x192x64-g8-s4-w12-swap"));
    CHECK_FALSE(offered(problem(3072, 3072, 3072), "sm90_wgmma:192x192x64-g8-s4-w12-coop"));
    CHECK_FALSE(offered(problem(4096, 4096, 4096), "sm90_wgmma:192x192x64-g8-s4-w12-swap"));
    CHECK_FALSE(offered(problem(6144, 6144, 6144), "sm90_wgmma:192x192x64-g8-s4-w12-swap"));
  }
}

TEST_CASE("cuda: the mma.sync kernel, forced, on every tile shape, stage count, loader, input pair and layout") {
  auto ctx = cuda_context("mma.sync kernel");
  if (!ctx) return;
  int ran = 0, expected = 0;
  for (const auto& table_cfg : family(*ctx, "sm80_mma").configs()) {
    const bool gathers = table_cfg.block_n <= 128;  // 128x256 has only the cp.async loader
    for (int stages : {table_cfg.stages, 2, 5}) {
      detail::Config cfg = table_cfg;
      cfg.stages = stages;
      const std::string config = cfg.to_string();
      // cp.async loader: both inputs f16 or both bf16, 16-byte aligned, every operand layout;
      // edges as in the Hopper test (one row, a tile -1/+1, two tiles and a bit; a masked column
      // tail; a partial last K tile and a partial 16-byte vector of K), C, bias, activations.
      for (Dtype in : {Dtype::f16, Dtype::bf16})
        for (int layout = 0; layout < 4; ++layout) {
          const int64_t m = layout == 0 ? 1 : layout == 1 ? cfg.block_m - 1 : layout == 2 ? cfg.block_m + 1 : 2 * cfg.block_m + 5;
          Case c{m, cfg.block_n + 3, 2 * int64_t(cfg.block_k) + 1 + 8 * layout, layout % 2 ? 2 : 1};
          c.config = config;
          c.tma_aligned = true;
          c.d_aligned = layout % 2 == 1;
          c.a = c.b = in;
          c.d = layout == 0 ? Dtype::f32 : in;
          c.ta = layout & 1;
          c.tb = layout & 2;
          c.epi.alpha = 0.75f;
          c.epi.beta = layout == 2 ? -0.5f : 0.0f;
          c.epi.bias_mode = BiasMode(layout % 3);
          c.epi.act = layout == 1 ? Activation::silu : Activation::none;
          c.may_refuse = "bytes of shared memory";  // 5 stages on a device with less shared memory than an H100
          run_case(*ctx, c);
          ++ran;
        }
      expected += 8;
      if (!gathers) continue;
      // Gathering loader: odd leading dimensions and batch gaps, fp8 converted exactly, mixed
      // with a 16-bit type or with each other, column-major storage as well as transposes.
      struct Inputs { Dtype a, b; };
      const Inputs inputs[] = {{Dtype::f16, Dtype::f16}, {Dtype::fp8_e4m3, Dtype::f16}, {Dtype::bf16, Dtype::fp8_e5m2},
                               {Dtype::fp8_e4m3, Dtype::fp8_e5m2}};
      for (int i = 0; i < 4; ++i) {
        Case c{i == 0 ? 1 : cfg.block_m + 7 * i, cfg.block_n * (i % 2 + 1) - 3, 3 * int64_t(cfg.block_k) - 5 + i, 1 + i % 2};
        c.config = config;
        c.a = inputs[i].a;
        c.b = inputs[i].b;
        c.d = i == 2 ? Dtype::bf16 : Dtype::f32;
        c.ta = i == 1;
        c.tb = i == 2;
        c.la = i == 3 ? Layout::col_major : Layout::row_major;
        c.lb = i == 0 ? Layout::col_major : Layout::row_major;
        c.epi.beta = i == 1 ? 0.25f : 0.0f;
        c.epi.bias_mode = BiasMode((i + 1) % 3);
        c.epi.act = i == 3 ? Activation::gelu_tanh : Activation::none;
        c.may_refuse = "bytes of shared memory";
        run_case(*ctx, c);
        ++ran;
      }
      expected += 4;
    }
  }
  CHECK(ran == expected);
  CHECK(ran >= 3 * 3 * 8 + 2 * 3 * 4);
  // 128x256 has no gathering loader: fp8 inputs, f32 inputs and split-K are refused by name.
  Status s = run_probe(*ctx, Dtype::fp8_e4m3, "sm80_mma:128x256x32-g8-s3-w8");
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("cp.async") != std::string::npos);
  s = run_probe(*ctx, Dtype::f32, "sm80_mma:128x128x32-g8-s4-w8");
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("simt") != std::string::npos);
  s = run_probe(*ctx, Dtype::f16, "sm80_mma:128x128x32-g8-s4-w8-k2");
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("split-K") != std::string::npos);
}

TEST_CASE("cuda: dependent GEMMs back to back on one stream see each other's writes") {
  // The Hopper kernel is launched as a programmatic dependent launch: it may start before the
  // previous kernel on the stream has finished. Chain X = A B (split-K), Y_j = X C (reads X),
  // X = A2 B (overwrites what the previous GEMM reads) four times without synchronising: every
  // Y_j must be X1 C for the X1 of the first GEMM (a read-after-write and a write-after-read).
  auto ctx = hopper_context("dependent launches");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  HostMatrix A(256, 320, Dtype::f16), A2(256, 320, Dtype::f16), B(320, 384, Dtype::f16), C(384, 192, Dtype::f16);
  HostMatrix X1(256, 384, Dtype::f16), X(256, 384, Dtype::f16);
  for (HostMatrix* m : {&A, &A2, &B, &C}) m->randomize();
  std::vector<HostMatrix> Y(4, HostMatrix(256, 192, Dtype::f16));
  auto device_copy = [&](HostMatrix& m, bool upload) {
    og_memory mem;
    REQUIRE(be.allocate(m.bytes.size(), mem).ok());
    if (upload) REQUIRE(be.upload(mem, m.bytes.data(), m.bytes.size()).ok());
    return mem;
  };
  const og_memory da = device_copy(A, true), da2 = device_copy(A2, true), db = device_copy(B, true),
                  dc = device_copy(C, true), dx = device_copy(X, false);
  std::vector<og_memory> dy;
  for (HostMatrix& y : Y) {
    y.poison();
    dy.push_back(device_copy(y, true));
  }
  Gemm first, second, third;
  first.a = A.view(Memory{da});
  first.b = B.view(Memory{db});
  first.d = X.view(Memory{dx});
  first.config = "sm90_wgmma:128x64x64-g8-s8-w12-k2-coop";
  second.a = X.view(Memory{dx});
  second.b = C.view(Memory{dc});
  second.config = "sm90_wgmma:128x128x64-g8-s6-w12-coop";
  third = first;
  third.a = A2.view(Memory{da2});
  third.config = "sm90_wgmma:64x128x64-g8-s8-w12-swap";
  REQUIRE(ctx->run(first).ok());
  REQUIRE(be.download(X1.bytes.data(), dx, X1.bytes.size()).ok());
  for (size_t j = 0; j < Y.size(); ++j) {
    second.d = Y[j].view(Memory{dy[j]});
    REQUIRE(ctx->run_async(first, nullptr).ok());
    REQUIRE(ctx->run_async(second, nullptr).ok());
    REQUIRE(ctx->run_async(third, nullptr).ok());
  }
  REQUIRE(be.synchronize(nullptr).ok());
  const auto expected_y = reference_gemm(X1, C, nullptr, nullptr, EpilogueSpec{}, 1);
  for (size_t j = 0; j < Y.size(); ++j) {
    CAPTURE(j);
    REQUIRE(be.download(Y[j].bytes.data(), dy[j], Y[j].bytes.size()).ok());
    const ErrorReport r = compare(Y[j], expected_y);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f16, 384));
  }
  REQUIRE(be.download(X.bytes.data(), dx, X.bytes.size()).ok());
  CHECK(compare(X, reference_gemm(A2, B, nullptr, nullptr, EpilogueSpec{}, 1)).rel_error <= tolerance(Dtype::f16, 320));
  for (const og_memory& m : {da, da2, db, dc, dx}) be.release(m);
  for (const og_memory& m : dy) be.release(m);
}

TEST_CASE("cuda: sanitizer subset: one small case per Hopper kernel family") {
  // Small enough for compute-sanitizer (memcheck, racecheck) to finish quickly; every family
  // and both ways out of the epilogue (general and packed), then the deferred epilogue with
  // several work items per program.
  auto ctx = hopper_context("sanitizer subset");
  if (!ctx) return;
  for (const char* config : {"sm90_wgmma:128x256x64-g8-s4-w12-coop", "sm90_wgmma:64x256x64-g8-s4-w12-pingpong", "sm90_wgmma:128x256x64-g8-s4-w12-mcast",
                             "sm90_wgmma:128x64x64-g8-s8-w12-k4-coop", "sm90_wgmma:64x128x64-g8-s8-w12-k2-swap", "sm90_wgmma:16x128x64-g8-s10-w12-k2-swap"}) {
    Case c{515, 300, 200, 2};
    c.config = config;
    c.tma_aligned = c.d_aligned = true;
    c.a = c.b = Dtype::f16;
    c.d = Dtype::f16;
    c.epi.bias_mode = BiasMode::per_m;
    c.epi.act = Activation::relu;
    run_case(*ctx, c);
    c.epi.bias_mode = BiasMode::none;  // the packed 16-bit epilogue, with a partial last vector
    c.epi.act = Activation::none;
    c.n = 301;
    c.d = Dtype::bf16;
    run_case(*ctx, c);
  }
  // Several work items per program with the plain epilogue (2 x 17 x 5 = 170 tiles of 128x256,
  // 2 x 9 x 9 = 162 of 256x128, for at most 132 programs): the 128x256 tiles hold each finished
  // tile and send it through the staging buffers by TMA stores during the next tile's K-tiles
  // (the deferred epilogue; N a multiple of 8, the last box partial), the 256x128 tiles store it
  // at once.
  // 192x192 (the consumers split the columns, K-major B only): 2 x 11 x 6 = 132 tiles, one per
  // program (the forced-config test's 2050x2100 case gives it two or more).
  for (const char* config : {"sm90_wgmma:128x256x64-g8-s4-w12-coop", "sm90_wgmma:256x128x64-g8-s4-w12-coop", "sm90_wgmma:128x256x64-g8-s4-w12-mcast",
                             "sm90_wgmma:192x192x64-g8-s4-w12-coop"}) {
    Case c{2100, 1096, 200, 2};
    c.config = config;
    c.tma_aligned = c.d_aligned = true;
    c.a = c.b = Dtype::f16;
    c.tb = std::string_view(config).find(":192x192") != std::string_view::npos;
    c.d = Dtype::bf16;
    c.epi.alpha = 1.5f;
    run_case(*ctx, c);
  }
}

TEST_CASE("cuda: sanitizer subset: the mma.sync kernel, both loaders") {
  // Several K tiles per tile (ring wrap-around at 3 stages) and a masked K tail.
  auto ctx = cuda_context("sanitizer subset (mma.sync)");
  if (!ctx) return;
  for (const char* config : {"sm80_mma:128x128x32-g8-s3-w8", "sm80_mma:64x64x32-g8-s4-w4"}) {
    Case c{200, 150, 170, 2};
    c.config = config;
    c.tma_aligned = c.d_aligned = true;  // cp.async loader
    c.a = c.b = Dtype::bf16;
    c.d = Dtype::f16;
    c.tb = true;
    c.epi.bias_mode = BiasMode::per_n;
    run_case(*ctx, c);
    c.tma_aligned = false;  // gathering loader: odd leading dimensions, fp8 A
    c.a = Dtype::fp8_e4m3;
    run_case(*ctx, c);
  }
}

TEST_CASE("cuda: the seed fp8 case (docs/config_seeds.md) (A e5m2, B pre-transposed e5m2, f16 out) and 512^3 f16") {
  auto ctx = cuda_context("seeds cases");
  if (!ctx) return;
  Case fp8{512, 512, 512};
  fp8.a = Dtype::fp8_e5m2;
  fp8.b = Dtype::fp8_e5m2;
  fp8.tb = true;
  fp8.d = Dtype::f16;
  run_case(*ctx, fp8);
  Case f16{512, 512, 512};
  f16.a = f16.b = f16.d = Dtype::f16;
  run_case(*ctx, f16);
}

TEST_CASE("cuda: device pointers, a user stream, in place, K == 0, timing") {
  auto ctx = cuda_context("device pointers");
  if (!ctx) return;
  auto& be = detail::context_backend(ctx->c_handle());
  HostMatrix A(70, 50, Dtype::bf16), B(50, 60, Dtype::bf16), D(70, 60, Dtype::f32);
  A.randomize();
  B.randomize();
  D.randomize();
  const HostMatrix C0 = D;
  og_memory da, db, dd;
  REQUIRE(be.allocate(A.bytes.size(), da).ok());
  REQUIRE(be.allocate(B.bytes.size(), db).ok());
  REQUIRE(be.allocate(D.bytes.size(), dd).ok());
  REQUIRE(be.upload(da, A.bytes.data(), A.bytes.size()).ok());
  REQUIRE(be.upload(db, B.bytes.data(), B.bytes.size()).ok());
  REQUIRE(be.upload(dd, D.bytes.data(), D.bytes.size()).ok());
  Gemm g;
  g.a = A.view(Memory{da});
  g.b = B.view(Memory{db});
  g.d = D.view(Memory{dd});
  g.c = g.d;  // in place
  g.epilogue.beta = 0.5f;
  REQUIRE(ctx->run(g).ok());
  REQUIRE(be.download(D.bytes.data(), dd, D.bytes.size()).ok());
  EpilogueSpec e;
  e.beta = 0.5f;
  CHECK(compare(D, reference_gemm(A, B, &C0, nullptr, e, 1)).rel_error <= tolerance(Dtype::f32, 50));
  // og_gemm_async on the legacy default stream (a cudaStream_t of 0 is passed as nullptr).
  g.epilogue.beta = 0.0f;
  g.c = Matrix();
  REQUIRE(ctx->run_async(g, nullptr).ok());
  REQUIRE(be.synchronize(nullptr).ok());
  double ms = -1;
  REQUIRE(be.time_ms([&] { return ctx->run_async(g, nullptr); }, ms).ok());
  CHECK(ms > 0);
  REQUIRE(be.download(D.bytes.data(), dd, D.bytes.size()).ok());
  CHECK(compare(D, reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, 1)).rel_error <= tolerance(Dtype::f32, 50));
  Case k0{9, 7, 0};
  k0.epi.beta = 1.0f;
  k0.epi.bias_mode = BiasMode::per_n;
  run_case(*ctx, k0);
  be.release(da);
  be.release(db);
  be.release(dd);
}
