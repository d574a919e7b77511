#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "gemm_check.hpp"
#include "dispatch.hpp"
#include "tuner.hpp"
#include "validate.hpp"

using omnigemm::Dtype;
using omnigemm::Gemm;
using omnigemm::Status;
using namespace omnigemm::detail;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/omnigemm-tuner-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const char* name) const { return (path / name).string(); }
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<Backend> cpu_backend() {
  std::unique_ptr<Backend> be;
  REQUIRE(backend_factory(OG_BACKEND_CPU)(BackendOptions{}, be).ok());
  return be;
}

// A validated host problem; the buffers live in the returned holder.
struct HostProblem {
  omnigemm::test::HostMatrix a, b, d;
  Problem p;
  HostProblem(int64_t m, int64_t n, int64_t k, Dtype dt = Dtype::f32) : a(m, k, dt), b(k, n, dt), d(m, n, Dtype::f32) {
    a.randomize();
    b.randomize();
    Gemm g;
    g.a = a.host_view();
    g.b = b.host_view();
    g.d = d.host_view();
    og_gemm_desc desc = g.to_c();
    REQUIRE(validate(desc, p).ok());
  }
};

// The inner backend's first family, offering `offered` instead of its own table when set.
class OfferedFamily final : public KernelFamily {
 public:
  explicit OfferedFamily(KernelFamily& inner) : inner_(inner) {}
  std::vector<Config> offered;
  mutable std::atomic<int> checks{0};  // can_implement calls
  const char* name() const override { return inner_.name(); }
  std::span<const Config> configs() const override { return offered.empty() ? inner_.configs() : std::span<const Config>(offered); }
  Status can_implement(const Problem& p, const Config& c) const override {
    ++checks;
    return inner_.can_implement(p, c);
  }
  Status describe(const Problem& p, const Config& c, PlanSummary& out) const override { return inner_.describe(p, c, out); }
  Status run(const Problem& p, const Config& c, void* s) override { return inner_.run(p, c, s); }

 private:
  KernelFamily& inner_;
};

// Wraps a backend and counts timed launches, to tell a cache hit from a tuning run.
class CountingBackend final : public Backend {
 public:
  CountingBackend(std::unique_ptr<Backend> inner, int compute_units = 0)
      : inner_(std::move(inner)), info_(inner_->device()), family_(*inner_->families()[0]) {
    if (compute_units) info_.limits.compute_units = compute_units;
  }
  std::atomic<int> timed{0};
  // Replaces the family's table (the configs are given without a family name; it is added).
  void offer(std::vector<Config> configs) {
    for (Config& c : configs) c.family = family_.name();
    family_.offered = std::move(configs);
  }
  const std::vector<Config>& offered() const { return family_.offered; }
  int checks() const { return family_.checks.load(); }
  std::vector<Config> candidates(const Problem& p) const {
    std::vector<Config> out;
    for (const Candidate& c : rank_candidates(*this, p)) out.push_back(c.config);
    return out;
  }
  Config first_choice(const Problem& p) const { return Tuner::heuristic(rank_candidates(*this, p)); }
  og_backend kind() const override { return inner_->kind(); }
  const DeviceInfo& device() const override { return info_; }
  uint32_t input_dtypes() const override { return inner_->input_dtypes(); }
  uint32_t output_dtypes() const override { return inner_->output_dtypes(); }
  uint32_t memory_kinds() const override { return inner_->memory_kinds(); }
  std::span<KernelFamily* const> families() const override { return families_; }
  Status synchronize(void* s) override { return inner_->synchronize(s); }
  Status allocate(size_t n, og_memory& m) override { return inner_->allocate(n, m); }
  void release(const og_memory& m) override { inner_->release(m); }
  Status upload(const og_memory& d, const void* s, size_t n) override { return inner_->upload(d, s, n); }
  Status download(void* d, const og_memory& s, size_t n) override { return inner_->download(d, s, n); }
  Status time_ms(const std::function<Status()>& f, double& ms) override {
    ++timed;
    return inner_->time_ms(f, ms);
  }

 private:
  std::unique_ptr<Backend> inner_;
  DeviceInfo info_;
  OfferedFamily family_;
  KernelFamily* const families_[1] = {&family_};
};

}  // namespace

TEST_CASE("tuner: tuning picks a candidate, stores it, and a new tuner reads it back without timing") {
  TempDir dir;
  const std::string path = dir.file("sub/tune.txt");  // the parent directory is created
  CountingBackend be(cpu_backend());
  HostProblem hp(64, 48, 40);
  // D is poisoned: tuning must not write the caller's output.
  hp.d.poison();
  const auto d_before = hp.d.bytes;

  Tuner t1(path, OG_TUNE_ON_MISS);
  Config chosen;
  REQUIRE(t1.choose(be, hp.p, chosen).ok());
  const auto cands = be.candidates(hp.p);
  CHECK(std::find(cands.begin(), cands.end(), chosen) != cands.end());
  CHECK(be.timed.load() >= int(cands.size()));
  CHECK(hp.d.bytes == d_before);
  const std::string key = Tuner::problem_key(be, hp.p);
  const std::string text = slurp(path);
  CHECK(text.rfind(kTuneCacheHeader, 0) == 0);
  CHECK(text.find(key + "\t" + chosen.to_string() + "\t") != std::string::npos);

  be.timed = 0;
  Tuner t2(path, OG_TUNE_ON_MISS);
  Config again;
  REQUIRE(t2.choose(be, hp.p, again).ok());
  CHECK(again == chosen);
  CHECK(be.timed.load() == 0);
}

TEST_CASE("tuner: cache-only mode never times; off mode ignores the cache; forced config wins") {
  TempDir dir;
  const std::string path = dir.file("tune.txt");
  CountingBackend be(cpu_backend());
  HostProblem hp(32, 32, 32);
  const auto cands = be.candidates(hp.p);
  REQUIRE(cands.size() >= 2);
  const Config cached = cands.back();
  REQUIRE(Tuner(path, OG_TUNE_CACHE_ONLY).record(Tuner::problem_key(be, hp.p), cached, 1.0).ok());

  Config c;
  Tuner only(path, OG_TUNE_CACHE_ONLY);
  REQUIRE(only.choose(be, hp.p, c).ok());
  CHECK(c == cached);
  CHECK(be.timed.load() == 0);

  Tuner off(path, OG_TUNE_OFF);
  REQUIRE(off.choose(be, hp.p, c).ok());
  CHECK(c == be.first_choice(hp.p));

  Problem forced = hp.p;
  forced.forced_config = cands.front();
  REQUIRE(only.choose(be, forced, c).ok());
  CHECK(c == cands.front());

  // A miss in cache-only mode falls back to the heuristic, without timing.
  HostProblem other(33, 31, 7);
  REQUIRE(only.choose(be, other.p, c).ok());
  CHECK(c == be.first_choice(other.p));
  CHECK(be.timed.load() == 0);
}

TEST_CASE("tuner: a cached config the backend no longer offers is ignored") {
  TempDir dir;
  const std::string path = dir.file("tune.txt");
  CountingBackend be(cpu_backend());
  HostProblem hp(16, 16, 16);
  Config stale = *Config::parse("8x8x8-g1-s1-w1");
  REQUIRE(Tuner(path, OG_TUNE_CACHE_ONLY).record(Tuner::problem_key(be, hp.p), stale, 1.0).ok());
  Config c;
  Tuner t(path, OG_TUNE_CACHE_ONLY);
  REQUIRE(t.choose(be, hp.p, c).ok());
  CHECK(c != stale);
}

TEST_CASE("tuner: corrupt or foreign cache files are ignored with a warning, then rewritten") {
  const char* bad_files[] = {
      "\x01\x02garbage\xff\n",
      "omnigemm-tune-cache v0\nkey\t64x64x16-g8-s1-w4\t1.0\t5\n",        // foreign version
      "omnigemm-tune-cache v1\nkey\t64x64x16-g8-s1-w4-x1\t1.0\t5\n",     // the version before kernel families
      "omnigemm-tune-cache v2\nkey\t64x64x16-g8-s1-w4\t1.0\n",           // missing field
      "omnigemm-tune-cache v2\nkey\tnot-a-config\t1.0\t5\n",              // bad config
      "omnigemm-tune-cache v2\nkey\t64x64x16-g8-s1-w4\tnan\t5\n",         // bad time
      "omnigemm-tune-cache v2\nkey\t64x64x16-g8-s1-w4\t1.0\t5",           // truncated
  };
  for (const char* bad : bad_files) {
    CAPTURE(bad);
    std::map<std::string, Tuner::Entry> parsed;
    std::string why;
    CHECK_FALSE(parse_tune_cache(bad, parsed, why));
    CHECK(parsed.empty());
    CHECK_FALSE(why.empty());

    TempDir dir;
    const std::string path = dir.file("tune.txt");
    { std::ofstream(path) << bad; }
    Tuner t(path, OG_TUNE_CACHE_ONLY);
    CHECK_FALSE(t.lookup("key").has_value());
    const Config c = *Config::parse("32x32x16-g4-s1-w2");
    REQUIRE(t.record("fresh", c, 0.5).ok());
    std::map<std::string, Tuner::Entry> now;
    REQUIRE(parse_tune_cache(slurp(path), now, why));
    REQUIRE(now.count("fresh") == 1);
    CHECK(now["fresh"].config == c);
    CHECK(now.count("key") == 0);
  }
}

TEST_CASE("tuner: concurrent writers (threads and processes) lose no entry and leave a valid file") {
  TempDir dir;
  const std::string path = dir.file("tune.txt");
  const Config c = *Config::parse("64x64x16-g8-s1-w4");
  constexpr int kThreads = 4, kProcs = 3, kEach = 15;
  std::vector<pid_t> kids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      Tuner t(path, OG_TUNE_CACHE_ONLY);
      bool ok = true;
      for (int i = 0; i < kEach; ++i) ok &= t.record("proc" + std::to_string(p) + "-" + std::to_string(i), c, i).ok();
      _exit(ok ? 0 : 1);
    }
    kids.push_back(pid);
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      Tuner t(path, OG_TUNE_CACHE_ONLY);  // separate tuners: only the file lock orders them
      for (int i = 0; i < kEach; ++i)
        if (!t.record("thread" + std::to_string(th) + "-" + std::to_string(i), c, i).ok()) ++failures;
    });
  for (auto& t : threads) t.join();
  for (pid_t pid : kids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(failures.load() == 0);
  std::map<std::string, Tuner::Entry> all;
  std::string why;
  REQUIRE_MESSAGE(parse_tune_cache(slurp(path), all, why), why);
  CHECK(all.size() == size_t((kThreads + kProcs) * kEach));
}

TEST_CASE("tuner: an unwritable cache location warns and the GEMM still gets a config") {
  CountingBackend be(cpu_backend());
  HostProblem hp(16, 16, 16);
  Tuner t("/proc/omnigemm-cannot-write/tune.txt", OG_TUNE_ON_MISS);
  Config c;
  REQUIRE(t.choose(be, hp.p, c).ok());
  CHECK(t.lookup(Tuner::problem_key(be, hp.p)).has_value());  // kept in memory
}

TEST_CASE("tuner: the problem key names backend, device, driver, sizes, dtypes, layouts and epilogue") {
  auto be = cpu_backend();
  HostProblem hp(100, 200, 300, Dtype::f16);
  const std::string k = Tuner::problem_key(*be, hp.p);
  for (const std::string& part : {std::string("cpu"), be->device().name, be->device().driver, std::string("m100"),
                                  std::string("n200"), std::string("k300"), std::string("f16")})
    CHECK_MESSAGE(k.find(part) != std::string::npos, k << " lacks " << part);
  Problem relu = hp.p;
  relu.activation = OG_ACT_RELU;
  Problem transposed = hp.p;
  std::swap(transposed.a.stride_row, transposed.a.stride_col);
  CHECK(Tuner::problem_key(*be, relu) != k);
  CHECK(Tuner::problem_key(*be, transposed) != k);
}

TEST_CASE("tuner: the heuristic is wave-quantisation aware") {
  CountingBackend be(cpu_backend(), /*compute_units=*/132);
  be.offer({*Config::parse("128x128x64-g8-s3-w4"), *Config::parse("64x128x64-g8-s3-w4")});
  // 1536 x 1408: 12 x 11 = 132 tiles of 128x128 (one full wave) vs 264 tiles of 64x128 (two
  // full waves of smaller, less efficient tiles): the larger tile wins.
  HostProblem full(1536, 1408, 8);
  CHECK(be.first_choice(full.p) == be.offered()[0]);
  // 256 x 1408: 22 tiles of 128x128 leave 110 of 132 units idle; 44 tiles of 64x128 use twice
  // as many units, which outweighs their lower arithmetic intensity.
  HostProblem small(256, 1408, 8);
  CHECK(be.first_choice(small.p) == be.offered()[1]);
}

TEST_CASE("tuner: the heuristic splits K only where slices fill idle units") {
  CountingBackend be(cpu_backend(), /*compute_units=*/132);
  be.offer({*Config::parse("128x64x64-g8-s8-w12"), *Config::parse("128x64x64-g8-s8-w12-k2"),
                *Config::parse("128x64x64-g8-s8-w12-k4")});
  // M = 16, N = 4096, K = 4096: 64 tiles leave half of 132 units idle; two slices per tile fill
  // them (128 work items of 32 K-steps each), four would take two waves for the same occupancy.
  HostProblem decode(16, 4096, 4096);
  CHECK(be.first_choice(decode.p) == be.offered()[1]);
  // 2048 x 2112: 16 x 33 = 528 tiles are four full waves already: no split.
  HostProblem square(2048, 2112, 64);
  CHECK(be.first_choice(square.p) == be.offered()[0]);
  // 512^3: 32 tiles of 8 K-steps leave most units idle, but slices of 4 or 2 K-steps would
  // spend more on the fixed cost of a split than the idle units give back: no split.
  HostProblem small(512, 512, 512);
  CHECK(be.first_choice(small.p) == be.offered()[0]);
  // A skinny tile's K-steps stream operands: the split's price in its steps follows the bytes a
  // step loads, not its FLOPs. 32 x 4096 x 4096 on 32x128 tiles: 32 tiles for 132 units are
  // worth splitting (H100: 17.9 us unsplit, 16.6 in 2 slices, 17.1 in 4); 32 x 14336 x 4096
  // (112 tiles) is not (44.1 us unsplit, 46.9 in 2 slices).
  be.offer({*Config::parse("32x128x64-g8-s9-w12"), *Config::parse("32x128x64-g8-s9-w12-k2"),
                *Config::parse("32x128x64-g8-s9-w12-k4")});
  HostProblem narrow(32, 4096, 4096);
  CHECK(be.first_choice(narrow.p).split_k > 1);
  HostProblem wide(32, 14336, 4096);
  CHECK(be.first_choice(wide.p) == be.offered()[0]);
}

TEST_CASE("tuner: a repeated problem reuses its choice without ranking again; other problems do not") {
  TempDir dir;
  CountingBackend be(cpu_backend());
  Tuner t(dir.file("tune.txt"), OG_TUNE_CACHE_ONLY);
  HostProblem hp(96, 80, 64);
  Config first, again;
  ChoiceSource source;
  REQUIRE(t.choose(be, hp.p, first, &source).ok());
  CHECK(source == ChoiceSource::heuristic);
  const int checks = be.checks();
  CHECK(checks > 0);
  REQUIRE(t.choose(be, hp.p, again, &source).ok());
  CHECK(again == first);
  CHECK(source == ChoiceSource::heuristic);
  CHECK(be.checks() == checks);  // remembered: no family was asked again
  // Same sizes, other buffers with the same alignment: the same choice, remembered.
  HostProblem twin(96, 80, 64);
  REQUIRE(t.choose(be, twin.p, again).ok());
  CHECK(again == first);
  CHECK(be.checks() == checks);
  // A different size, or a leading dimension that is no longer a multiple of 16 bytes, is ranked.
  HostProblem other(97, 80, 64);
  REQUIRE(t.choose(be, other.p, again).ok());
  CHECK(be.checks() > checks);
  const int after_other = be.checks();
  Problem odd_ld = hp.p;
  odd_ld.a.stride_row += 1;
  REQUIRE(t.choose(be, odd_ld, again).ok());
  CHECK(be.checks() > after_other);
  // A forced config is never remembered in place of the ranking.
  Problem forced = hp.p;
  forced.forced_config = *Config::parse("packed:112x1024x2048-g1-s1-w1");
  REQUIRE(t.choose(be, forced, again, &source).ok());
  CHECK(source == ChoiceSource::forced);
  REQUIRE(t.choose(be, hp.p, again, &source).ok());
  CHECK(again == first);
  CHECK(source == ChoiceSource::heuristic);
}
