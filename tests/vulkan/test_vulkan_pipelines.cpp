// The Vulkan pipelines a context makes: epilogue options are push constants (a new combination
// compiles nothing), og_gemm_prepare compiles at load time what later calls use, and the set of
// pipelines stays within its budget while threads share the context (the set's policy on fake
// pipelines, and on lavapipe the process's memory).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend_cases.hpp"
#include "context_internal.hpp"
#include "vulkan_backend.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
using detail::vulkan::PipelineSet;
using detail::vulkan::PipelineStats;
using detail::vulkan::Shader;
using detail::vulkan::Specialization;

namespace {

detail::vulkan::VulkanBackend& vulkan_backend(Context& ctx) {
  auto* be = dynamic_cast<detail::vulkan::VulkanBackend*>(&detail::context_backend(ctx.c_handle()));
  REQUIRE(be != nullptr);
  return *be;
}

// Resident memory of this process in bytes (/proc/self/status VmRSS).
int64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}

Specialization spec_of(uint32_t v) {
  Specialization s;
  s.values[0] = v;
  s.count = 1;
  return s;
}

// A checked GEMM on host memory: inputs of `a`/`b`, output `d`, the given epilogue.
struct Problem1 {
  int64_t m, n, k;
  Dtype a, b, d;
  EpilogueSpec epi;
};

Gemm gemm_of(const HostMatrix& A, const HostMatrix& B, const HostMatrix& C, HostMatrix& D, std::vector<float>& bias,
             const EpilogueSpec& e) {
  Gemm g = host_gemm(A, B, C, D, 1, {});
  set_epilogue(g, e, Memory::host(bias.data()));
  return g;
}

// Runs `p` through og_gemm_host with fresh random inputs and poisoned D; returns the relative
// error against float64 (infinite when D has a non-finite element), or -1 with `why` set when
// the call failed. Uses `gen` (one per thread: the tests' shared generator is not thread-safe).
double run_checked(Context& ctx, const Problem1& p, std::mt19937_64& gen, std::string& why) {
  HostMatrix A(p.m, p.k, p.a), B(p.k, p.n, p.b), C(p.m, p.n, p.d), D(p.m, p.n, p.d);
  std::uniform_real_distribution<float> u(0.05f, 1.0f);
  std::bernoulli_distribution sign(0.5);
  for (HostMatrix* x : {&A, &B, &C})
    for (int64_t i = 0; i < x->rows; ++i)
      for (int64_t j = 0; j < x->cols; ++j) x->set(0, i, j, sign(gen) ? -u(gen) : u(gen));
  std::vector<float> bias(size_t(std::max(p.m, p.n)));
  for (float& x : bias) x = sign(gen) ? -u(gen) : u(gen);
  D.poison();
  const Status s = ctx.run_host(gemm_of(A, B, C, D, bias, p.epi));
  if (!s) {
    why = s.message;
    return -1;
  }
  const ErrorReport r = compare(D, reference_gemm(A, B, &C, &bias, p.epi, 1));
  return r.non_finite ? INFINITY : r.rel_error;
}

}  // namespace

TEST_CASE("vulkan pipelines: the set keeps its budget, waits for a pipeline being made, and never destroys one in use") {
  std::mutex m;
  std::vector<VkPipeline> destroyed;
  std::atomic<int> builds{0};
  PipelineSet set;
  set.init(
      [&](Shader, const Specialization& s, VkPipeline& out) {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(s.values[0] == 99 ? 200 : 1));
        out = reinterpret_cast<VkPipeline>(uintptr_t(0x1000 + s.values[0]));
        return Status{};
      },
      [&](VkPipeline p) {
        std::lock_guard<std::mutex> lock(m);
        destroyed.push_back(p);
      },
      3);
  auto handle = [](uint32_t v) { return reinterpret_cast<VkPipeline>(uintptr_t(0x1000 + v)); };
  VkPipeline p;
  PipelineSet::Hold h;

  // Eight threads ask for the same new pipeline at once: it is made once.
  std::vector<std::thread> threads;
  std::atomic<int> got{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      VkPipeline q;
      PipelineSet::Hold hq;
      if (set.acquire(Shader::portable, spec_of(99), PipelineSet::Use::submit, q, hq) && q == handle(99)) ++got;
      set.release(hq);
    });
  for (auto& t : threads) t.join();
  CHECK(got == 8);
  CHECK(builds == 1);
  CHECK(set.stats().hits == 7);

  // Least recently used first out, within the budget of 3.
  for (uint32_t v : {1u, 2u, 3u}) {
    REQUIRE(set.acquire(Shader::portable, spec_of(v), PipelineSet::Use::submit, p, h));
    set.release(h);
  }
  CHECK(set.stats().live == 3);
  REQUIRE(destroyed.size() == 1);
  CHECK(destroyed[0] == handle(99));
  REQUIRE(set.acquire(Shader::portable, spec_of(1), PipelineSet::Use::submit, p, h));  // 1 becomes the most recent
  set.release(h);
  REQUIRE(set.acquire(Shader::portable, spec_of(4), PipelineSet::Use::submit, p, h));
  set.release(h);
  REQUIRE(destroyed.size() == 2);
  CHECK(destroyed[1] == handle(2));

  // A pipeline in use is not destroyed while held, and leaves when released.
  PipelineSet::Hold held;
  REQUIRE(set.acquire(Shader::portable, spec_of(3), PipelineSet::Use::submit, p, held));
  set.set_budget(0);
  CHECK(std::find(destroyed.begin(), destroyed.end(), handle(3)) == destroyed.end());
  CHECK(set.stats().live == 1);
  set.release(held);
  CHECK(std::find(destroyed.begin(), destroyed.end(), handle(3)) != destroyed.end());
  CHECK(set.stats().live == 0);

  // Prepared pipelines are pinned outside the budget; one recorded into a caller's command buffer
  // is retired, not destroyed, when it leaves.
  REQUIRE(set.acquire(Shader::portable, spec_of(5), PipelineSet::Use::prepare, p, h));
  set.release(h);
  REQUIRE(set.acquire(Shader::portable, spec_of(6), PipelineSet::Use::caller, p, h));
  set.release(h);
  const PipelineStats s = set.stats();
  CHECK(s.live == 1);
  CHECK(s.pinned == 1);
  CHECK(s.retired == 1);
  CHECK(std::find(destroyed.begin(), destroyed.end(), handle(6)) == destroyed.end());
  // A failed build leaves nothing behind and is tried again next time.
  PipelineSet failing;
  int tries = 0;
  failing.init([&](Shader, const Specialization&, VkPipeline&) { return ++tries, Status{StatusCode::backend_failure, "no"}; },
               [](VkPipeline) {}, 4);
  CHECK(failing.acquire(Shader::portable, spec_of(1), PipelineSet::Use::submit, p, h).code == StatusCode::backend_failure);
  CHECK(failing.acquire(Shader::portable, spec_of(1), PipelineSet::Use::submit, p, h).code == StatusCode::backend_failure);
  CHECK(tries == 2);
  CHECK(failing.stats().live == 0);
  set.clear();
  CHECK(std::find(destroyed.begin(), destroyed.end(), handle(6)) != destroyed.end());
}

TEST_CASE("vulkan pipelines: epilogue options and C / D dtypes select no new pipeline") {
  auto ctx = backend_context(Backend::vulkan, "epilogue push constants");
  if (!ctx) return;
  auto& be = vulkan_backend(*ctx);
  std::mt19937_64 gen(test_seed() ^ 0x5eed);
  const int64_t m = 45, n = 38, k = 70;  // one portable tile config for all of them
  std::vector<EpilogueSpec> epilogues(6);
  epilogues[1].beta = 0.5f;
  epilogues[2].act = Activation::relu;
  epilogues[2].bias_mode = BiasMode::per_n;
  epilogues[3].act = Activation::gelu_tanh;
  epilogues[3].bias_mode = BiasMode::per_m;
  epilogues[3].alpha = -1.5f;
  epilogues[4].act = Activation::leaky_relu;
  epilogues[4].slope = 0.2f;
  epilogues[4].beta = -1.0f;
  epilogues[5].act = Activation::silu;
  uint64_t first = 0;
  int i = 0;
  for (Dtype d : {Dtype::f32, Dtype::f16, Dtype::bf16})
    for (const EpilogueSpec& e : epilogues) {
      CAPTURE(std::string(name(d)));
      CAPTURE(i);
      std::string why;
      const double err = run_checked(*ctx, {m, n, k, Dtype::f16, Dtype::bf16, d, e}, gen, why);
      REQUIRE_MESSAGE(err >= 0, why);
      CHECK(err <= tolerance(d, k, Dtype::f16, Dtype::bf16));
      if (i++ == 0) first = be.pipeline_stats().created;
    }
  CHECK(first >= 1);
  CHECK(be.pipeline_stats().created == first);  // 18 combinations, the first call's pipeline(s) only
}

TEST_CASE("vulkan pipelines: og_gemm_prepare compiles at load time what later calls use") {
  auto ctx = backend_context(Backend::vulkan, "prepare");
  if (!ctx) return;
  auto& be = vulkan_backend(*ctx);
  std::mt19937_64 gen(test_seed() ^ 0x9e37);
  // The problems a host application names at load time, memory not yet allocated.
  const std::vector<Problem1> problems = {{33, 65, 47, Dtype::fp8_e4m3, Dtype::f16, Dtype::bf16, {}},
                                          {200, 17, 96, Dtype::bf16, Dtype::bf16, Dtype::f32, {1.0f, 0.25f}},
                                          {5, 128, 64, Dtype::fp8_e5m2, Dtype::fp8_e4m3, Dtype::f16, {}}};
  std::vector<Gemm> named;
  for (const Problem1& p : problems) {
    Gemm g;
    g.a = Matrix(p.m, p.k, p.a, Memory{});
    g.b = Matrix(p.k, p.n, p.b, Memory{});
    g.c = Matrix(p.m, p.n, p.d, Memory{});
    g.d = Matrix(p.m, p.n, p.d, Memory{});
    g.epilogue.beta = p.epi.beta;
    named.push_back(g);
  }
  const uint64_t before = be.pipeline_stats().created;
  Status s = ctx->prepare(named);
  REQUIRE_MESSAGE(s.ok(), s.message);
  const PipelineStats prepared = be.pipeline_stats();
  CHECK(prepared.created > before);
  CHECK(prepared.pinned >= 1);
  // Preparing again makes nothing; the calls themselves make nothing and are right.
  REQUIRE(ctx->prepare(named).ok());
  for (const Problem1& p : problems) {
    std::string why;
    const double err = run_checked(*ctx, p, gen, why);
    REQUIRE_MESSAGE(err >= 0, why);
    CHECK(err <= tolerance(p.d, p.k, p.a, p.b));
  }
  CHECK(be.pipeline_stats().created == prepared.created);
  // Pinned pipelines stay whatever the budget.
  be.pipelines().set().set_budget(0);
  CHECK(be.pipeline_stats().live == prepared.pinned);
  be.pipelines().set().set_budget(PipelineSet::default_budget());

  // Errors: the C call's argument checks, and a bad descriptor named by its index.
  CHECK(og_gemm_prepare(nullptr, nullptr, 0) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_prepare(ctx->c_handle(), nullptr, 2) == OG_ERROR_INVALID_ARGUMENT);
  CHECK(og_gemm_prepare(ctx->c_handle(), nullptr, 0) == OG_OK);
  named[1].a = Matrix(200, 95, Dtype::bf16, Memory{});  // K mismatch
  s = ctx->prepare(named);
  CHECK(s.code == StatusCode::invalid_argument);
  CHECK_MESSAGE(s.message.find("descriptor 1") != std::string::npos, s.message);
}

TEST_CASE("vulkan pipelines: 8 threads sharing a context stay within the pipeline budget and a memory bound") {
  auto ctx = backend_context(Backend::vulkan, "pipeline memory bound");
  if (!ctx) return;
  auto& be = vulkan_backend(*ctx);
  constexpr size_t kBudget = 4;
  constexpr int kThreads = 8, kPerThread = 5;
  be.pipelines().set().set_budget(kBudget);
  std::mt19937_64 warm_gen(test_seed());
  std::string why;
  REQUIRE(run_checked(*ctx, {16, 16, 16, Dtype::f32, Dtype::f32, Dtype::f32, {}}, warm_gen, why) >= 0);
  const int64_t rss0 = resident_bytes();
  const uint64_t created0 = be.pipeline_stats().created;

  // Mixed input dtypes (each pair a pipeline per tile), outputs, C, bias and activations.
  const Dtype ins[] = {Dtype::f16, Dtype::bf16, Dtype::fp8_e4m3};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  struct Outcome {
    std::vector<std::string> failures;
    size_t max_live = 0;
  };
  std::vector<Outcome> outcome(kThreads);
  std::vector<std::thread> threads;
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937_64 gen(test_seed() + 1000 + uint64_t(t));
      std::uniform_int_distribution<int> dim(1, 72), pick(0, 2), act(0, 4);
      for (int r = 0; r < kPerThread; ++r) {
        Problem1 p{dim(gen), dim(gen), dim(gen), ins[pick(gen)], ins[pick(gen)], outs[pick(gen)], {}};
        p.epi.beta = pick(gen) == 0 ? 0.5f : 0.0f;
        p.epi.act = Activation(act(gen));
        p.epi.bias_mode = BiasMode(pick(gen));
        std::string w;
        const double err = run_checked(*ctx, p, gen, w);
        const double tol = tolerance(p.d, p.k, p.a, p.b);
        if (err < 0 || !(err <= tol))
          outcome[size_t(t)].failures.push_back(std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
                                                name(p.a) + "x" + name(p.b) + "->" + name(p.d) + ": " +
                                                (err < 0 ? w : "error " + std::to_string(err)));
        outcome[size_t(t)].max_live = std::max(outcome[size_t(t)].max_live, be.pipeline_stats().live);
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const PipelineStats s = be.pipeline_stats();
  const int64_t grown = resident_bytes() - rss0;
  MESSAGE("8 threads x " << kPerThread << " problems: " << seconds << " s, " << (s.created - created0) << " pipelines made, "
                         << s.evicted << " evicted, " << s.live << " kept; resident memory grew by " << grown / (1 << 20)
                         << " MiB; pipeline cache " << be.pipelines().cache_bytes() / 1024 << " KiB");
  for (const Outcome& o : outcome) {
    for (const std::string& f : o.failures) FAIL_CHECK(f);
    // At most the budget plus one in use per thread.
    CHECK(o.max_live <= kBudget + kThreads);
  }
  CHECK(s.live <= kBudget);
  CHECK(s.evicted > 0);
  CHECK(be.pipelines().cache_bytes() <= detail::vulkan::VulkanPipelines::kCacheBudgetBytes);
  // The bound: what the set may hold (budget + one per thread) at 40 MiB each, plus 256 MiB of
  // the driver's and the allocator's own (lavapipe compiles with LLVM; its pipelines take about
  // 15-20 MiB each); without the set's bound this grew by the size of every pipeline made.
  CHECK(grown <= int64_t(kBudget + kThreads) * (40 << 20) + (int64_t(256) << 20));
}

namespace {

// Device buffers for one GEMM of `p` (random inputs; D and C poisoned), freed with the object.
struct DeviceGemm {
  og_context* ctx;
  std::vector<og_memory> mems;
  Gemm g;
  DeviceGemm(Context& context, const Problem1& p, std::mt19937_64& gen) : ctx(context.c_handle()) {
    HostMatrix A(p.m, p.k, p.a), B(p.k, p.n, p.b), C(p.m, p.n, p.d), D(p.m, p.n, p.d);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (HostMatrix* x : {&A, &B, &C})
      for (int64_t i = 0; i < x->rows; ++i)
        for (int64_t j = 0; j < x->cols; ++j) x->set(0, i, j, u(gen));
    D.poison();
    std::vector<float> bias(size_t(std::max(p.m, p.n)), 0.5f);
    auto upload = [&](const void* data, size_t bytes) {
      og_memory m{};
      REQUIRE(og_memory_alloc(ctx, bytes, &m) == OG_OK);
      REQUIRE(og_memory_upload(ctx, m, data, bytes) == OG_OK);
      mems.push_back(m);
      return Memory{m};
    };
    g = gemm_of(A, B, C, D, bias, p.epi);
    g.a = A.view(upload(A.bytes.data(), A.bytes.size()));
    g.b = B.view(upload(B.bytes.data(), B.bytes.size()));
    g.c = C.view(upload(C.bytes.data(), C.bytes.size()));
    g.d = D.view(upload(D.bytes.data(), D.bytes.size()));
    g.epilogue.bias = upload(bias.data(), bias.size() * 4);
  }
  ~DeviceGemm() {
    for (const og_memory& m : mems) og_memory_free(ctx, m);
  }
  // Wall-clock milliseconds of one og_gemm (it waits for the device).
  double run_ms(Context& context) {
    const auto t0 = std::chrono::steady_clock::now();
    const Status s = context.run(g);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE_MESSAGE(s.ok(), s.message);
    return ms;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

// Timings for the first-call question (printed); what is asserted is which calls compile.
// OMNIGEMM_VK_FIRST_CALL_TRIALS (default 1) sets the trials, each on fresh contexts with a fresh
// pipeline-cache file; a driver's own shader cache is the caller's to switch off (NVIDIA:
// __GL_SHADER_DISK_CACHE=0; Mesa: MESA_SHADER_CACHE_DISABLE=true).
TEST_CASE("vulkan pipelines: first-call latency of a new epilogue and of a new dtype pair, with and without og_gemm_prepare") {
  int trials = 1;
  if (const char* t = std::getenv("OMNIGEMM_VK_FIRST_CALL_TRIALS"); t && std::atoi(t) > 0) trials = std::atoi(t);
  std::mt19937_64 gen(test_seed() ^ 0xf1257);
  std::vector<double> warm_ms, new_epilogue_ms, new_dtypes_ms, later_ms, prepare_ms, prepared_first_ms;
  const std::string saved_cache = std::getenv("OMNIGEMM_VK_PIPELINE_CACHE") ? std::getenv("OMNIGEMM_VK_PIPELINE_CACHE") : "";
  for (int t = 0; t < trials; ++t) {
    const std::string cache = "/tmp/omnigemm_first_call_" + std::to_string(test_seed()) + "_" + std::to_string(t) + ".bin";
    setenv("OMNIGEMM_VK_PIPELINE_CACHE", cache.c_str(), 1);
    auto ctx = backend_context(Backend::vulkan, "first-call latency");
    if (!ctx) return;
    auto& be = vulkan_backend(*ctx);
    const int64_t n = be.vk_device().cpu_device ? 64 : 1024;
    EpilogueSpec fancy;
    fancy.beta = 0.5f;
    fancy.act = Activation::gelu_tanh;
    fancy.bias_mode = BiasMode::per_n;
    const Problem1 plain{n, n, n, Dtype::f16, Dtype::f16, Dtype::f16, {}};
    const Problem1 new_epilogue{n, n, n, Dtype::f16, Dtype::f16, Dtype::f32, fancy};
    const Problem1 new_dtypes{n, n, n, Dtype::fp8_e4m3, Dtype::f16, Dtype::bf16, fancy};
    DeviceGemm g_plain(*ctx, plain, gen), g_epi(*ctx, new_epilogue, gen), g_dtypes(*ctx, new_dtypes, gen);
    g_plain.run_ms(*ctx);
    warm_ms.push_back(g_plain.run_ms(*ctx));
    const uint64_t made = be.pipeline_stats().created;
    new_epilogue_ms.push_back(g_epi.run_ms(*ctx));
    CHECK(be.pipeline_stats().created == made);  // a new epilogue and D dtype: no compile
    new_dtypes_ms.push_back(g_dtypes.run_ms(*ctx));
    CHECK(be.pipeline_stats().created > made);  // a new A/B dtype pair: a compile
    later_ms.push_back(g_dtypes.run_ms(*ctx));

    // A second application prepares the same problem at load time: its first call compiles nothing.
    setenv("OMNIGEMM_VK_PIPELINE_CACHE", (cache + ".2").c_str(), 1);
    auto ctx2 = backend_context(Backend::vulkan, "first-call latency");
    REQUIRE(ctx2.has_value());
    auto& be2 = vulkan_backend(*ctx2);
    DeviceGemm g2(*ctx2, new_dtypes, gen);
    const auto t0 = std::chrono::steady_clock::now();
    const Gemm named[] = {g2.g};
    REQUIRE(ctx2->prepare(named).ok());
    prepare_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    const uint64_t made2 = be2.pipeline_stats().created;
    prepared_first_ms.push_back(g2.run_ms(*ctx2));
    CHECK(be2.pipeline_stats().created == made2);
    std::remove(cache.c_str());
    std::remove((cache + ".2").c_str());
  }
  if (saved_cache.empty()) unsetenv("OMNIGEMM_VK_PIPELINE_CACHE");
  else setenv("OMNIGEMM_VK_PIPELINE_CACHE", saved_cache.c_str(), 1);
  MESSAGE("first-call latency, median of " << trials << " (ms): warm call " << median(warm_ms) << "; new epilogue + D dtype "
                                           << median(new_epilogue_ms) << "; new A/B dtypes without prepare " << median(new_dtypes_ms)
                                           << ", its next call " << median(later_ms) << "; og_gemm_prepare " << median(prepare_ms)
                                           << ", then the first call " << median(prepared_first_ms));
}
