// omnigemm-bench: OmniGEMM against the vendor GEMM of the same device, in the same run.
//
// For every problem (shape x dtype x epilogue) and every backend: inputs are random (never
// zero), uploaded into several rotating buffer sets whose total exceeds twice the device's L2;
// each implementation is warmed up, then timed with Backend::time_ms (CUDA events / Vulkan
// timestamps on the device's default queue, a host clock on the CPU) over many samples, and its
// result is checked ONCE against a float64 reference (every element for small problems, 256
// sampled elements otherwise). A wrong result marks the row FAIL. Run with --help for options.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "context_internal.hpp"
#include "validate.hpp"
#include "vendor.hpp"

namespace {

using namespace omnigemm::bench;
using omnigemm::Dtype;
using omnigemm::Status;
using omnigemm::StatusCode;
using omnigemm::detail::Backend;
using omnigemm::detail::Config;
using omnigemm::detail::Problem;
using omnigemm::test::HostMatrix;

// ------------------------------------------------------------------------------------------
// Options

struct Shape {
  int64_t m, n, k;
  std::string label() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};
struct DtypeSpec {
  og_dtype in, out;
  std::string name() const {
    std::string s = og_dtype_name(in);
    return s + "->" + og_dtype_name(out);
  }
};

struct Options {
  std::vector<og_backend> backends;  // empty: every available one
  std::vector<DtypeSpec> dtypes{{OG_DTYPE_F16, OG_DTYPE_F16}};
  std::vector<Shape> shapes;
  std::string sweep = "square";  // square | k | list | llm: the x axis of the plot
  std::string out_dir;
  std::string b_layout = "auto";  // auto (row-major; column-major for fp8) | row | col
  bool epilogue_leaky = false;
  float leaky_slope = 0.1f;
  double budget_ms = 400;          // timed samples per implementation and configuration
  double max_config_s = 20;        // skip a configuration estimated to take longer (per backend)
  int min_samples = 5, max_samples = 100;
  double warmup_ms = 30;
  uint64_t seed = 0;
  bool seed_given = false;
  bool plot = true;
  bool vendor = true;
  std::string forced_config;             // --config: run OmniGEMM with this config instead of the tuner's
  og_tune_mode tune_mode = OG_TUNE_CACHE_ONLY;
  std::string activation_pass = "auto";  // vendor + separate pass: loop (host, CPU only) | omnigemm | auto
  std::string python;  // interpreter for plot.py; empty: the first python3 with matplotlib; "none": no python
};

void usage() {
  std::puts(
      "omnigemm-bench [options]\n"
      "  --backend cpu,vulkan,cuda     backends to run (default: every available one)\n"
      "  --dtype f16,bf16,f32,fp8_e4m3,fp8_e5m2[:out]  input dtypes; output dtype rule: f32->f32,\n"
      "                                f16->f16, bf16->bf16, fp8->f16; 'in:out' overrides (e.g. f16:f32)\n"
      "  (sweeps; default: the Triton tutorial's square series M=N=K=128*i, i=2..32)\n"
      "  --quick                       square sizes 256, 512, 768, 1024, 1536, 2048\n"
      "  --sizes 512,1024              square sizes\n"
      "  --shapes MxNxK,...            explicit shapes\n"
      "  --llm                         M in {16,128,4096} x (N,K) in {(4096,4096),(14336,4096),(4096,14336)}\n"
      "  --K_range A B --K_step S --MN X   K sweep with M=N=X (default X=4096)\n"
      "  --epilogue leaky_relu         fused leaky_relu (OmniGEMM) vs vendor GEMM + a separate pass\n"
      "  --activation-pass auto|loop|kernel|omnigemm   the vendor's separate activation pass: a host loop\n"
      "                                (CPU only; CPU default), a PTX kernel (CUDA only; CUDA default) or\n"
      "                                OmniGEMM's K=0 elementwise call (elsewhere, or when the kernel cannot load)\n"
      "  --config TEXT                 force OmniGEMM's config (e.g. 128x128x32-g8-s4-w4; default: the tuner's choice)\n"
      "  --tune-mode cache_only|on_miss|off   the context's tune mode (default cache_only, as og_gemm)\n"
      "  --b-layout auto|row|col       B storage (auto: row-major, column-major for fp8 as cuBLASLt needs)\n"
      "  --budget-ms X                 timing budget per implementation and configuration (default 400)\n"
      "  --warmup-ms X                 device time run before timing each implementation (default 30 ms,\n"
      "                                at least what the backend needs to bring its clocks up: 1.5 s on Vulkan)\n"
      "  --max-config-seconds X        skip configurations estimated to take longer (default 20)\n"
      "  --seed N                      input seed (default: fresh, printed)\n"
      "  --no-vendor                   skip vendor baselines\n"
      "  --out DIR                     CSV/JSON/plots (default bench/out if it exists, else ./omnigemm-bench-out)\n"
      "  --no-plot                     no plot\n"
      "  --python PATH|none            interpreter for plot.py (default: the first python3 with matplotlib;\n"
      "                                none, or none found: a basic plot.svg written by the bench itself)\n"
      "Environment: OMNIGEMM_CUBLAS_DIR, OMNIGEMM_OPENBLAS_DIR (folders of the vendor libraries).");
}

std::optional<og_dtype> parse_dtype(const std::string& s) {
  for (int d = 0; d < OG_DTYPE_COUNT; ++d)
    if (s == og_dtype_name(og_dtype(d))) return og_dtype(d);
  if (s == "e4m3" || s == "fp8") return OG_DTYPE_FP8_E4M3;
  if (s == "e5m2") return OG_DTYPE_FP8_E5M2;
  return std::nullopt;
}

og_dtype default_output(og_dtype in) {
  switch (in) {
    case OG_DTYPE_F32: return OG_DTYPE_F32;
    case OG_DTYPE_BF16: return OG_DTYPE_BF16;
    default: return OG_DTYPE_F16;  // f16, and fp8 -> f16 as cuBLASLt's fp8 GEMM writes
  }
}

bool parse_args(int argc, char** argv, Options& o, std::string& err) {
  std::vector<int64_t> sizes;
  bool quick = false, llm = false;
  int64_t k_lo = 0, k_hi = 0, k_step = 0, mn = 4096;
  bool mn_given = false;
  auto need = [&](int& i, const char* flag) -> const char* {
    if (i + 1 >= argc) { err = std::string(flag) + " needs a value"; return nullptr; }
    return argv[++i];
  };
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const char* v = nullptr;
      if (a == "--help" || a == "-h") { usage(); std::exit(0); }
      else if (a == "--quick") quick = true;
      else if (a == "--llm") llm = true;
      else if (a == "--no-plot") o.plot = false;
      else if (a == "--no-vendor") o.vendor = false;
      else if (a == "--config") {
        if (!(v = need(i, "--config"))) return false;
        o.forced_config = v;
      } else if (a == "--tune-mode") {
        if (!(v = need(i, "--tune-mode"))) return false;
        const std::string t = v;
        if (t == "cache_only") o.tune_mode = OG_TUNE_CACHE_ONLY;
        else if (t == "on_miss") o.tune_mode = OG_TUNE_ON_MISS;
        else if (t == "off") o.tune_mode = OG_TUNE_OFF;
        else { err = "--tune-mode cache_only|on_miss|off"; return false; }
      } else if (a == "--activation-pass") {
        if (!(v = need(i, "--activation-pass"))) return false;
        o.activation_pass = v;
        if (o.activation_pass != "auto" && o.activation_pass != "loop" && o.activation_pass != "omnigemm" &&
            o.activation_pass != "kernel") {
          err = "--activation-pass auto|loop|kernel|omnigemm";
          return false;
        }
      } else if (a == "--python") {
        if (!(v = need(i, "--python"))) return false;
        o.python = v;
      }
      else if (a == "--backend") {
        if (!(v = need(i, "--backend"))) return false;
        for (const auto& b : split(v, ',')) {
          if (b == "cpu") o.backends.push_back(OG_BACKEND_CPU);
          else if (b == "vulkan") o.backends.push_back(OG_BACKEND_VULKAN);
          else if (b == "cuda") o.backends.push_back(OG_BACKEND_CUDA);
          else if (b == "hip") o.backends.push_back(OG_BACKEND_HIP);
          else { err = "unknown backend '" + b + "' (cpu, vulkan, cuda, hip)"; return false; }
        }
      } else if (a == "--dtype") {
        if (!(v = need(i, "--dtype"))) return false;
        o.dtypes.clear();
        for (const auto& spec : split(v, ',')) {
          auto parts = split(spec, ':');
          auto in = parts.empty() ? std::nullopt : parse_dtype(parts[0]);
          auto out = parts.size() > 1 ? parse_dtype(parts[1]) : (in ? std::optional(default_output(*in)) : std::nullopt);
          if (!in || !out || parts.size() > 2) { err = "bad dtype '" + spec + "'"; return false; }
          if (*in >= OG_DTYPE_MXFP8 || *out >= OG_DTYPE_MXFP8) {
            err = "block-scaled dtypes (mxfp8, mxfp4, nvfp4) need scale tensors, which omnigemm-bench does not make yet";
            return false;
          }
          o.dtypes.push_back({*in, *out});
        }
      } else if (a == "--sizes") {
        if (!(v = need(i, "--sizes"))) return false;
        for (const auto& s : split(v, ',')) sizes.push_back(std::stoll(s));
      } else if (a == "--shapes") {
        if (!(v = need(i, "--shapes"))) return false;
        for (const auto& s : split(v, ',')) {
          auto p = split(s, 'x');
          if (p.size() != 3) { err = "bad shape '" + s + "' (MxNxK)"; return false; }
          o.shapes.push_back({std::stoll(p[0]), std::stoll(p[1]), std::stoll(p[2])});
        }
        o.sweep = "list";
      } else if (a == "--K_range") {
        if (i + 2 >= argc) { err = "--K_range needs two values"; return false; }
        k_lo = std::stoll(argv[++i]);
        k_hi = std::stoll(argv[++i]);
      } else if (a == "--K_step") {
        if (!(v = need(i, "--K_step"))) return false;
        k_step = std::stoll(v);
      } else if (a == "--MN") {
        if (!(v = need(i, "--MN"))) return false;
        mn = std::stoll(v);
        mn_given = true;
      } else if (a == "--epilogue") {
        if (!(v = need(i, "--epilogue"))) return false;
        if (std::string(v) != "leaky_relu") { err = "--epilogue supports leaky_relu"; return false; }
        o.epilogue_leaky = true;
      } else if (a == "--b-layout") {
        if (!(v = need(i, "--b-layout"))) return false;
        o.b_layout = v;
        if (o.b_layout != "auto" && o.b_layout != "row" && o.b_layout != "col") { err = "--b-layout auto|row|col"; return false; }
      } else if (a == "--warmup-ms") {
        if (!(v = need(i, "--warmup-ms"))) return false;
        o.warmup_ms = std::stod(v);
      } else if (a == "--budget-ms") {
        if (!(v = need(i, "--budget-ms"))) return false;
        o.budget_ms = std::stod(v);
      } else if (a == "--max-config-seconds") {
        if (!(v = need(i, "--max-config-seconds"))) return false;
        o.max_config_s = std::stod(v);
      } else if (a == "--seed") {
        if (!(v = need(i, "--seed"))) return false;
        o.seed = std::stoull(v);
        o.seed_given = true;
      } else if (a == "--out") {
        if (!(v = need(i, "--out"))) return false;
        o.out_dir = v;
      } else {
        err = "unknown option '" + a + "' (see --help)";
        return false;
      }
    }
  } catch (const std::exception&) {
    err = "bad number in the arguments";
    return false;
  }
  if ((k_step != 0 || mn_given) && k_lo == 0 && k_hi == 0) {
    err = "--K_step and --MN belong to a K sweep: add --K_range A B";
    return false;
  }
  if (k_lo > 0 || k_hi > 0) {
    if (k_lo <= 0 || k_hi < k_lo || k_step < 0) { err = "--K_range A B needs 0 < A <= B"; return false; }
    if (k_step == 0) k_step = 256;
    o.shapes.clear();
    for (int64_t k = k_lo; k <= k_hi; k += k_step) o.shapes.push_back({mn, mn, k});
    o.sweep = "k";
  } else if (llm) {
    o.shapes.clear();
    for (int64_t m : {16, 128, 4096})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}}) o.shapes.push_back({m, n, k});
    o.sweep = "llm";
  } else if (!sizes.empty() || quick) {
    if (quick && sizes.empty()) sizes = {256, 512, 768, 1024, 1536, 2048};
    o.shapes.clear();
    for (int64_t s : sizes) o.shapes.push_back({s, s, s});
    o.sweep = "square";
  } else if (o.shapes.empty()) {
    for (int i = 2; i <= 32; ++i) o.shapes.push_back({128 * i, 128 * i, 128 * i});
  }
  for (const Shape& s : o.shapes)
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) { err = "sizes must be positive"; return false; }
  return true;
}

// ------------------------------------------------------------------------------------------
// Timing

struct Timing {
  double median = NAN, q20 = NAN, q80 = NAN;
  // Host time to enqueue one launch (median over the samples): where it reaches the device
  // time, the device waits for the host and the timing measures the launch path.
  double host_us = NAN;
  int samples = 0, inner = 0;
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

// Warm-up, then samples of `inner` back-to-back launches each (rotating over the buffer sets),
// each sample timed by the backend; returns per-launch milliseconds.
Status measure(Backend& be, const std::function<Status(int)>& launch, int sets, const Options& o, Timing& t) {
  int next = 0;
  auto one = [&]() { return launch(next++ % sets); };
  double first = 0;
  Status s = be.time_ms(one, first);
  if (!s) return s;
  double warm = first;
  int warm_runs = 1;
  // At least warmup_ms of device time, and the backend's clock ramp of back-to-back runs.
  const auto start = std::chrono::steady_clock::now();
  auto ramping = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < be.clock_ramp_ms();
  };
  double last = first;  // the estimate: the last warm-up run, at the clocks the timing will see
  while ((warm < o.warmup_ms || ramping()) && warm_runs < 1000000) {
    if (!(s = be.time_ms(one, last))) return s;
    warm += last;
    ++warm_runs;
  }
  const double est = std::max(last, 1e-4);
  // Samples of at least ~1 ms so that the event/clock resolution and launch gaps do not dominate.
  t.inner = int(std::clamp(std::ceil(1.0 / est), 1.0, 64.0));
  // Vulkan timestamps measure device time alone, so single launches need no amortising.
  if (be.kind() == OG_BACKEND_VULKAN) t.inner = 1;
  t.samples = int(std::clamp(o.budget_ms / (est * t.inner), double(o.min_samples), double(o.max_samples)));
  std::vector<double> per_launch, host_us;
  for (int i = 0; i < t.samples; ++i) {
    double ms = 0;
    s = be.time_ms([&]() -> Status {
      const auto enqueue_start = std::chrono::steady_clock::now();
      for (int j = 0; j < t.inner; ++j)
        if (Status r = one(); !r) return r;
      host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - enqueue_start).count() /
                        t.inner);
      return {};
    }, ms);
    if (!s) return s;
    per_launch.push_back(ms / t.inner);
  }
  t.host_us = quantile(host_us, 0.5);
  t.median = quantile(per_launch, 0.5);
  t.q20 = quantile(per_launch, 0.2);
  t.q80 = quantile(per_launch, 0.8);
  return {};
}

// ------------------------------------------------------------------------------------------
// Host inputs and the float64 check

Dtype D(og_dtype d) { return static_cast<Dtype>(d); }
Status error_status(std::string message) { return Status{StatusCode::invalid_argument, std::move(message)}; }

struct HostProblem {
  Shape shape;
  DtypeSpec dt;
  bool b_col_major = false;
  bool leaky = false;
  float slope = 0.1f;
  HostMatrix a, b;
  // Checked output elements (row, col) and their float64 reference values.
  std::vector<std::pair<int64_t, int64_t>> check_at;
  std::vector<double> ref;
  bool full_check = false;
  std::string forced_config;
  std::map<og_dtype, std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> converted;  // inputs in other dtypes

  // A and B as bytes of dtype `d` (exact: only to wider types, or the same).
  const std::vector<uint8_t>& a_bytes(og_dtype d) { return convert(d).first; }
  const std::vector<uint8_t>& b_bytes(og_dtype d) { return convert(d).second; }

 private:
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>>& convert(og_dtype d) {
    auto it = converted.find(d);
    if (it != converted.end()) return it->second;
    auto conv = [&](const HostMatrix& m) {
      if (D(d) == m.dtype) return m.bytes;
      const int si = omnigemm::test::dtype_size(m.dtype), so = omnigemm::test::dtype_size(D(d));
      const size_t n = m.bytes.size() / size_t(si);
      std::vector<uint8_t> out(n * size_t(so));
      for (size_t i = 0; i < n; ++i)
        omnigemm::test::encode(D(d), &out[i * size_t(so)], float(omnigemm::test::decode(m.dtype, &m.bytes[i * size_t(si)])));
      return out;
    };
    return converted[d] = {conv(a), conv(b)};
  }
};

void make_host_problem(HostProblem& hp, uint64_t seed) {
  const Shape& s = hp.shape;
  hp.a = HostMatrix(s.m, s.k, D(hp.dt.in));
  hp.b = hp.b_col_major ? HostMatrix(s.k, s.n, D(hp.dt.in), omnigemm::Layout::col_major) : HostMatrix(s.k, s.n, D(hp.dt.in));
  fill_random(hp.a, seed * 2 + 1);
  fill_random(hp.b, seed * 2 + 2);
  hp.full_check = double(s.m) * double(s.n) * double(s.k) <= double(1 << 24);
  hp.check_at.clear();
  if (hp.full_check) {
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) hp.check_at.push_back({i, j});
  } else {
    std::mt19937_64 g(seed ^ 0x5eed);
    hp.check_at = {{0, 0}, {s.m - 1, s.n - 1}, {0, s.n - 1}, {s.m - 1, 0}};
    while (hp.check_at.size() < 256)
      hp.check_at.push_back({int64_t(g() % uint64_t(s.m)), int64_t(g() % uint64_t(s.n))});
  }
  hp.ref.assign(hp.check_at.size(), 0);
  std::vector<double> row(size_t(s.k));
  int64_t cached_row = -1;
  for (size_t e = 0; e < hp.check_at.size(); ++e) {
    auto [i, j] = hp.check_at[e];
    if (i != cached_row) {
      for (int64_t k = 0; k < s.k; ++k) row[size_t(k)] = hp.a.get(0, i, k);
      cached_row = i;
    }
    double acc = 0;
    for (int64_t k = 0; k < s.k; ++k) acc += row[size_t(k)] * hp.b.get(0, k, j);
    hp.ref[e] = hp.leaky ? omnigemm::test::activate_ref(omnigemm::Activation::leaky_relu, acc, hp.slope) : acc;
  }
}

struct Check {
  bool ok = false;
  double rel_error = NAN, tol = NAN;
  int64_t non_finite = 0;
  std::string text() const {
    if (ok) return "ok";
    if (non_finite) return "FAIL (" + std::to_string(non_finite) + " not finite)";
    return "FAIL (err " + fmt("%.2e", rel_error) + " > " + fmt("%.1e", tol) + ")";
  }
};

// D (row-major M x N of dtype d, downloaded) against the reference at the checked elements.
Check check_output(const HostProblem& hp, const std::vector<uint8_t>& d_bytes, og_dtype d) {
  Check c;
  const int es = omnigemm::test::dtype_size(D(d));
  double num = 0, den = 0;
  for (size_t e = 0; e < hp.check_at.size(); ++e) {
    auto [i, j] = hp.check_at[e];
    const double o = omnigemm::test::decode(D(d), &d_bytes[size_t(i * hp.shape.n + j) * size_t(es)]);
    if (!std::isfinite(o)) { ++c.non_finite; continue; }
    num += (o - hp.ref[e]) * (o - hp.ref[e]);
    den += hp.ref[e] * hp.ref[e];
  }
  c.rel_error = c.non_finite ? INFINITY : std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
  c.tol = omnigemm::test::tolerance(D(d), hp.shape.k, D(hp.dt.in), D(hp.dt.in));
  c.ok = c.non_finite == 0 && c.rel_error <= c.tol;
  return c;
}

// ------------------------------------------------------------------------------------------
// Device buffers

struct DeviceBuffers {
  Backend* be = nullptr;
  std::vector<og_memory> mems;
  ~DeviceBuffers() { for (auto& m : mems) be->release(m); }
  Status add(size_t bytes, og_memory& out) {
    Status s = be->allocate(std::max<size_t>(bytes, 16), out);
    if (s) mems.push_back(out);
    return s;
  }
};

std::vector<uint8_t> poison_bytes(og_dtype d, size_t elements) {
  const int es = omnigemm::test::dtype_size(D(d));
  std::vector<uint8_t> v(elements * size_t(es));
  for (size_t i = 0; i < elements; ++i) omnigemm::test::encode(D(d), &v[i * size_t(es)], NAN);
  return v;
}

// ------------------------------------------------------------------------------------------
// Rows

struct Row {
  std::string sweep;
  double x = 0;
  std::string backend, device, impl, label;  // impl: "omnigemm" | "vendor"
  DtypeSpec dt{};
  std::string layout, epilogue;
  Shape shape{};
  Timing t;
  double tflops = NAN, ratio = NAN;  // ratio: vendor ms / omnigemm ms (> 1: OmniGEMM faster)
  std::string check, status, config, note;
  double rel_error = NAN, tol = NAN;
  int sets = 0;
};

struct BackendState {
  og_backend kind;
  og_context* ctx = nullptr;
  Backend* be = nullptr;
  std::unique_ptr<Vendor> vendor;
  std::string vendor_why;
  std::unique_ptr<ActivationPass> act;  // device kernel for the unfused-epilogue baseline
  std::string act_why;
  double rate_gflops = 0;  // last measured (slowest implementation), for the time-budget estimate
};

// The prepared problem exactly as og_gemm would run it (validation, backend checks, tuner config).
Status prepare(BackendState& bs, const og_gemm_desc& desc, Problem& p, Config& cfg) {
  Status s = omnigemm::detail::validate(desc, p);
  if (!s) return s;
  if (!(s = omnigemm::detail::check_backend_support(*bs.be, p))) return s;
  return omnigemm::detail::context_tuner(bs.ctx).choose(*bs.be, p, cfg);
}

og_gemm_desc make_desc(const HostProblem& hp, og_dtype a_dt, og_dtype b_dt, og_dtype d_dt, const og_memory& a,
                       const og_memory& b, const og_memory& d) {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(hp.shape.m, hp.shape.k, a_dt, OG_ROW_MAJOR);
  g.b = og_matrix_make(hp.shape.k, hp.shape.n, b_dt, hp.b_col_major ? OG_COL_MAJOR : OG_ROW_MAJOR);
  g.d = og_matrix_make(hp.shape.m, hp.shape.n, d_dt, OG_ROW_MAJOR);
  g.a.mem = a;
  g.b.mem = b;
  g.d.mem = d;
  if (hp.leaky) {
    g.epilogue.activation = OG_ACT_LEAKY_RELU;
    g.epilogue.leaky_slope = hp.slope;
  }
  if (!hp.forced_config.empty()) g.config = hp.forced_config.c_str();
  return g;
}

// In-place activation D = leaky(D) as a separate pass: a host loop on the CPU; elsewhere
// OmniGEMM's own elementwise path (a K = 0 GEMM: D = act(1 * C) with C = D), since the bench
// compiles no device code of its own.
og_gemm_desc make_activation_desc(const HostProblem& hp, og_dtype d_dt, const og_memory& d) {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(hp.shape.m, 0, d_dt, OG_ROW_MAJOR);
  g.b = og_matrix_make(0, hp.shape.n, d_dt, OG_ROW_MAJOR);
  g.c = og_matrix_make(hp.shape.m, hp.shape.n, d_dt, OG_ROW_MAJOR);
  g.d = g.c;
  g.c.mem = g.d.mem = d;
  g.epilogue.beta = 1.0f;
  g.epilogue.activation = OG_ACT_LEAKY_RELU;
  g.epilogue.leaky_slope = hp.slope;
  return g;
}

void host_leaky_pass(const og_memory& d, og_dtype dt, int64_t elements, float slope) {
  char* base = static_cast<char*>(d.ptr) + d.offset;
  if (dt == OG_DTYPE_F32) {
    float* f = reinterpret_cast<float*>(base);
    for (int64_t i = 0; i < elements; ++i) f[i] = f[i] >= 0 ? f[i] : slope * f[i];
    return;
  }
  const int es = omnigemm::test::dtype_size(D(dt));
  for (int64_t i = 0; i < elements; ++i) {
    uint8_t* p = reinterpret_cast<uint8_t*>(base) + i * es;
    const float v = float(omnigemm::test::decode(D(dt), p));
    omnigemm::test::encode(D(dt), p, v >= 0 ? v : slope * v);
  }
}

long long rotate_target_bytes(const Backend& be) {
  const long long l2 = be.device().limits.l2_bytes;
  // Unknown L2 (CPU backends report none): assume 32 MiB, the size of a large server L3 slice.
  return 2 * (l2 > 0 ? l2 : (32ll << 20));
}

int set_count(const Backend& be, size_t set_bytes) {
  const long long want = rotate_target_bytes(be) / std::max<long long>(1, (long long)set_bytes) + 1;
  long long sets = std::max<long long>(2, want);
  sets = std::min<long long>(sets, 64);
  // Never more than ~6 GiB of rotating buffers (but always 2 sets).
  sets = std::max<long long>(2, std::min<long long>(sets, (6ll << 30) / std::max<long long>(1, (long long)set_bytes)));
  return int(sets);
}

double flops(const Shape& s) { return 2.0 * double(s.m) * double(s.n) * double(s.k); }

// Runs OmniGEMM and the vendor GEMM of one backend on one problem; appends their rows.
void bench_one(BackendState& bs, HostProblem& hp, const Options& o, Row base, std::vector<Row>& rows) {
  Backend& be = *bs.be;
  const Shape& sh = hp.shape;
  const size_t mn = size_t(sh.m) * size_t(sh.n);
  auto bytes_of = [](og_dtype d, size_t elems) { return elems * size_t(omnigemm::test::dtype_size(D(d))); };

  // On the CPU the previous library's worker threads may still spin for a while after its last
  // call and steal cores from the next measurement: give them time to go to sleep first.
  auto settle = [&] {
    if (bs.kind == OG_BACKEND_CPU) std::this_thread::sleep_for(std::chrono::milliseconds(150));
  };
  settle();

  // ---- OmniGEMM
  Row r = base;
  r.impl = "omnigemm";
  r.label = "OmniGEMM" + std::string(hp.leaky ? " (fused leaky_relu)" : "");
  double omni_ms = NAN;
  {
    const auto& ab = hp.a_bytes(hp.dt.in);
    const auto& bb = hp.b_bytes(hp.dt.in);
    const size_t d_bytes = bytes_of(hp.dt.out, mn);
    DeviceBuffers buf{&be};
    const int sets = set_count(be, ab.size() + bb.size() + d_bytes);
    r.sets = sets;
    std::vector<og_gemm_desc> descs;
    Status s;
    for (int i = 0; i < sets && s; ++i) {
      og_memory a{}, b{}, d{};
      if ((s = buf.add(ab.size(), a)) && (s = buf.add(bb.size(), b)) && (s = buf.add(d_bytes, d)) &&
          (s = be.upload(a, ab.data(), ab.size())) && (s = be.upload(b, bb.data(), bb.size())))
        descs.push_back(make_desc(hp, hp.dt.in, hp.dt.in, hp.dt.out, a, b, d));
    }
    std::vector<Problem> problems(descs.size());
    Config cfg;
    for (size_t i = 0; i < descs.size() && s; ++i) {
      Config c;
      s = prepare(bs, descs[i], problems[i], c);
      if (i == 0) cfg = c;
    }
    if (!s) {
      r.status = s.code == StatusCode::unsupported ? "unsupported" : "error";
      r.check = r.status;
      r.note = s.message;
    } else {
      r.config = cfg.to_string();
      s = measure(be, [&](int i) { return be.run(problems[size_t(i)], cfg, nullptr); }, sets, o, r.t);
      if (s) s = be.synchronize(nullptr);
      if (!s) {
        r.status = "error";
        r.check = "error";
        r.note = s.message;
      } else {
        // The checked run goes through the public API once, on a poisoned output.
        auto poison = poison_bytes(hp.dt.out, mn);
        std::vector<uint8_t> out(d_bytes);
        s = be.upload(descs[0].d.mem, poison.data(), poison.size());
        if (s) s = omnigemm::Status::from_c(og_gemm(bs.ctx, &descs[0]));
        if (s) s = be.download(out.data(), descs[0].d.mem, out.size());
        if (!s) {
          r.status = "error";
          r.check = "error";
          r.note = "checked run: " + s.message;
        } else {
          // Self-test of the checker: OMNIGEMM_BENCH_CORRUPT=1 spoils one checked element.
          if (const char* e = std::getenv("OMNIGEMM_BENCH_CORRUPT"); e && *e == '1') {
            auto [ci, cj] = hp.check_at[0];
            const size_t at = size_t(ci * sh.n + cj) * size_t(omnigemm::test::dtype_size(D(hp.dt.out)));
            omnigemm::test::encode(D(hp.dt.out), &out[at], float(hp.ref[0] * 2.0 + 1.0));
          }
          Check c = check_output(hp, out, hp.dt.out);
          r.check = c.text();
          r.rel_error = c.rel_error;
          r.tol = c.tol;
          r.status = c.ok ? "ok" : "FAIL";
          omni_ms = r.t.median;
          r.tflops = flops(sh) / (r.t.median * 1e-3) / 1e12;
        }
      }
    }
  }

  // ---- vendor (+ separate activation pass)
  Row v = base;
  v.impl = "vendor";
  double vendor_ms = NAN;
  if (!o.vendor) {
    v.status = "skipped";
    v.check = "-";
    v.note = "--no-vendor";
  } else if (!bs.vendor) {
    v.status = "n/a";
    v.check = "-";
    v.note = bs.vendor_why;
  } else {
    VendorProblem vp{sh.m, sh.n, sh.k, hp.dt.in, hp.dt.in, hp.dt.out, hp.b_col_major};
    VendorPlan plan = bs.vendor->plan(vp);
    if (!plan.supported) {
      v.status = "n/a";
      v.check = "-";
      v.note = plan.why;
    } else {
      VendorProblem run_p = vp;
      run_p.a = plan.a;
      run_p.b = plan.b;
      run_p.d = plan.d;
      v.label = plan.label;
      const auto& ab = hp.a_bytes(plan.a);
      const auto& bb = hp.b_bytes(plan.b);
      const size_t d_bytes = bytes_of(plan.d, mn);
      DeviceBuffers buf{&be};
      const int sets = set_count(be, ab.size() + bb.size() + d_bytes);
      v.sets = sets;
      struct Set { og_memory a, b, d; og_gemm_desc act; Problem act_p; };
      std::vector<Set> vs;
      Status s;
      Config act_cfg;
      // How the separate activation pass runs: a host loop (CPU), a device kernel (CUDA), or
      // OmniGEMM's own K = 0 elementwise call (anywhere).
      std::string pass = o.activation_pass;
      std::string pass_note;
      if (hp.leaky && pass == "auto") {
        pass = bs.kind == OG_BACKEND_CPU ? "loop" : "omnigemm";
        if (bs.kind != OG_BACKEND_CPU) {
          if (!bs.act) pass_note = bs.act_why;
          else if (Status ps = bs.act->prepare(); !ps) pass_note = ps.message;
          else pass = "kernel";
        }
      }
      if (hp.leaky && pass == "loop" && bs.kind != OG_BACKEND_CPU) s = error_status("--activation-pass loop is CPU only");
      if (hp.leaky && pass == "kernel" && !(bs.act && bs.act->prepare()))
        s = error_status("no device activation kernel: " + (bs.act ? bs.act->prepare().message : bs.act_why));
      if (hp.leaky && s)
        v.label += pass == "loop"     ? " + separate leaky_relu loop"
                   : pass == "kernel" ? " + " + bs.act->label()
                                      : " + separate leaky_relu pass (OmniGEMM K=0 elementwise)";
      if (!pass_note.empty()) v.note = "activation kernel unavailable (" + pass_note + "), used OmniGEMM's K=0 pass";
      for (int i = 0; i < sets && s; ++i) {
        Set st{};
        if ((s = buf.add(ab.size(), st.a)) && (s = buf.add(bb.size(), st.b)) && (s = buf.add(d_bytes, st.d)) &&
            (s = be.upload(st.a, ab.data(), ab.size())) && (s = be.upload(st.b, bb.data(), bb.size()))) {
          if (hp.leaky && pass == "omnigemm") {
            st.act = make_activation_desc(hp, plan.d, st.d);
            Config c;
            s = prepare(bs, st.act, st.act_p, c);
            if (i == 0) act_cfg = c;
          }
          vs.push_back(st);
        }
      }
      auto launch = [&](int i) -> Status {
        Set& st = vs[size_t(i)];
        Status r2 = bs.vendor->run(run_p, st.a, st.b, st.d);
        if (!r2 || !hp.leaky) return r2;
        if (pass == "loop") { host_leaky_pass(st.d, plan.d, int64_t(mn), hp.slope); return {}; }
        if (pass == "kernel") return bs.act->leaky_relu(st.d, plan.d, int64_t(mn), hp.slope);
        return be.run(st.act_p, act_cfg, nullptr);
      };
      settle();
      if (s) s = measure(be, launch, sets, o, v.t);
      if (s) s = be.synchronize(nullptr);
      if (s) {
        auto poison = poison_bytes(plan.d, mn);
        std::vector<uint8_t> out(d_bytes);
        s = be.upload(vs[0].d, poison.data(), poison.size());
        if (s) s = launch(0);
        if (s) s = be.synchronize(nullptr);
        if (s) s = be.download(out.data(), vs[0].d, out.size());
        if (s) {
          Check c = check_output(hp, out, plan.d);
          v.check = c.text();
          v.rel_error = c.rel_error;
          v.tol = c.tol;
          v.status = c.ok ? "ok" : "FAIL";
          vendor_ms = v.t.median;
          v.tflops = flops(sh) / (v.t.median * 1e-3) / 1e12;
        }
      }
      if (!s) {
        v.status = s.code == StatusCode::unsupported ? "n/a" : "error";
        v.check = v.status;
        v.note = s.message;
      }
    }
  }
  if (std::isfinite(omni_ms) && std::isfinite(vendor_ms)) r.ratio = vendor_ms / omni_ms;
  const double slowest = std::max(std::isfinite(omni_ms) ? omni_ms : 0.0, std::isfinite(vendor_ms) ? vendor_ms : 0.0);
  if (slowest > 0) bs.rate_gflops = flops(sh) / (slowest * 1e-3) / 1e9;
  rows.push_back(r);
  if (v.status != "skipped") rows.push_back(v);
}

// ------------------------------------------------------------------------------------------
// Output

std::string perf_text(const Row& r) {
  if (!std::isfinite(r.tflops)) return "-";
  if (r.backend == "cpu" || r.tflops < 1.0) return fmt("%.1f GF/s", r.tflops * 1e3);
  return fmt("%.1f TF/s", r.tflops);
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-7s %-14s %-3s %-5s %6s %6s %6s %10s %12s %10s %12s %7s  %-8s %s\n", "backend", "dtype", "B", "epi", "M",
              "N", "K", "ms", "OmniGEMM", "vendor ms", "vendor", "ratio", "check", "vendor check / note");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.impl != "omnigemm") continue;
    const Row* v = (i + 1 < rows.size() && rows[i + 1].impl == "vendor") ? &rows[i + 1] : nullptr;
    std::string note = v ? (v->status == "ok" || v->status == "FAIL" ? v->check : v->status + ": " + v->note) : "-";
    if (r.status != "ok" && r.status != "FAIL") note = r.note;
    std::printf("%-7s %-14s %-3s %-5s %6lld %6lld %6lld %10s %12s %10s %12s %7s  %-8s %s\n", r.backend.c_str(),
                r.dt.name().c_str(), r.layout.c_str(), r.epilogue.c_str(), (long long)r.shape.m, (long long)r.shape.n,
                (long long)r.shape.k, std::isfinite(r.t.median) ? fmt("%.4f", r.t.median).c_str() : "-",
                perf_text(r).c_str(), v && std::isfinite(v->t.median) ? fmt("%.4f", v->t.median).c_str() : "-",
                v ? perf_text(*v).c_str() : "-", std::isfinite(r.ratio) ? fmt("%.2fx", r.ratio).c_str() : "-",
                r.status == "FAIL" ? r.check.c_str() : r.status.c_str(), note.c_str());
  }
  std::puts("ratio = vendor time / OmniGEMM time on the same device in the same run (> 1: OmniGEMM faster).");
}

const char* kCsvHeader =
    "sweep,x,backend,device,impl,label,dtype_in,dtype_out,b_layout,epilogue,M,N,K,ms_median,ms_q20,ms_q80,tflops,"
    "samples,inner,sets,ratio_vendor_over_omnigemm,status,check,rel_error,tolerance,config,note,host_us_per_launch";

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << kCsvHeader << "\n";
  for (const Row& r : rows) {
    f << r.sweep << "," << fmt("%g", r.x) << "," << r.backend << "," << csv_field(r.device) << "," << r.impl << ","
      << csv_field(r.label) << "," << og_dtype_name(r.dt.in) << "," << og_dtype_name(r.dt.out) << "," << r.layout << ","
      << r.epilogue << "," << r.shape.m << "," << r.shape.n << "," << r.shape.k << "," << fmt("%.6g", r.t.median)
      << "," << fmt("%.6g", r.t.q20) << "," << fmt("%.6g", r.t.q80) << "," << fmt("%.6g", r.tflops) << ","
      << r.t.samples << "," << r.t.inner << "," << r.sets << "," << fmt("%.4g", r.ratio) << "," << r.status << ","
      << csv_field(r.check) << "," << fmt("%.3g", r.rel_error) << "," << fmt("%.3g", r.tol) << "," << r.config
      << "," << csv_field(r.note) << "," << fmt("%.3g", r.t.host_us) << "\n";
  }
}

struct Header {
  std::string date, command, seed;
  std::vector<std::pair<std::string, std::string>> lines;  // key, value
};

void write_json(const std::string& path, const Header& h, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << "{\n  \"tool\": \"omnigemm-bench\",\n  \"date\": " << jstr(h.date) << ",\n  \"command\": " << jstr(h.command)
    << ",\n  \"seed\": " << jstr(h.seed) << ",\n  \"environment\": {";
  for (size_t i = 0; i < h.lines.size(); ++i)
    f << (i ? ", " : "") << jstr(h.lines[i].first) << ": " << jstr(h.lines[i].second);
  f << "},\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << "    {\"sweep\": " << jstr(r.sweep) << ", \"x\": " << jnum(r.x) << ", \"backend\": " << jstr(r.backend)
      << ", \"device\": " << jstr(r.device) << ", \"impl\": " << jstr(r.impl) << ", \"label\": " << jstr(r.label)
      << ", \"dtype_in\": " << jstr(og_dtype_name(r.dt.in)) << ", \"dtype_out\": " << jstr(og_dtype_name(r.dt.out))
      << ", \"b_layout\": " << jstr(r.layout) << ", \"epilogue\": " << jstr(r.epilogue) << ", \"M\": " << r.shape.m
      << ", \"N\": " << r.shape.n << ", \"K\": " << r.shape.k << ", \"ms_median\": " << jnum(r.t.median)
      << ", \"ms_q20\": " << jnum(r.t.q20) << ", \"ms_q80\": " << jnum(r.t.q80) << ", \"tflops\": " << jnum(r.tflops)
      << ", \"samples\": " << r.t.samples << ", \"inner\": " << r.t.inner << ", \"sets\": " << r.sets
      << ", \"ratio_vendor_over_omnigemm\": " << jnum(r.ratio) << ", \"status\": " << jstr(r.status)
      << ", \"check\": " << jstr(r.check) << ", \"rel_error\": " << jnum(r.rel_error)
      << ", \"tolerance\": " << jnum(r.tol) << ", \"config\": " << jstr(r.config) << ", \"note\": " << jstr(r.note)
      << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
}

// A plain SVG line chart of the successful rows (throughput against x), written without python
// when matplotlib is missing; plot.py makes the nicer PNG/SVG pair.
void write_basic_svg(const std::string& path, const std::vector<Row>& rows, const std::string& title) {
  std::map<std::string, std::vector<std::pair<double, double>>> series;
  bool cpu_only = true;  // or every rate below 1 TFLOP/s: plot GFLOP/s
  for (const Row& r : rows) cpu_only &= r.backend == "cpu" || !(r.tflops >= 1.0);
  const double scale = cpu_only ? 1e3 : 1.0;
  std::map<double, std::string> xlabels;
  for (const Row& r : rows) {
    if (r.status != "ok" || !std::isfinite(r.tflops)) continue;
    std::string vendor_name = r.label.substr(0, std::min(r.label.find(" ("), r.label.find(" on exact f32")));
    if (r.label.find(" on exact f32") != std::string::npos) vendor_name += " (f32 copies)";
    const std::string name = r.backend + ": " + (r.impl == "omnigemm" ? "OmniGEMM" : vendor_name) +
                             " " + r.dt.name() + (r.epilogue != "none" ? " +" + r.epilogue : "");
    series[name].push_back({r.x, r.tflops * scale});
    xlabels[r.x] = r.sweep == "square" ? std::to_string(r.shape.m) : r.sweep == "k" ? std::to_string(r.shape.k) : r.shape.label();
  }
  if (series.empty()) return;
  double xmin = 1e300, xmax = -1e300, ymax = 0;
  for (auto& [n, pts] : series) {
    std::sort(pts.begin(), pts.end());
    for (auto [x, y] : pts) xmin = std::min(xmin, x), xmax = std::max(xmax, x), ymax = std::max(ymax, y);
  }
  if (xmax == xmin) xmax = xmin + 1;
  ymax *= 1.1;
  const double W = 900, H = 540, L = 70, R = 330, T = 40, B = 70;
  auto px = [&](double x) { return L + (x - xmin) / (xmax - xmin) * (W - L - R); };
  auto py = [&](double y) { return H - B - y / ymax * (H - T - B); };
  std::ofstream f(path);
  f << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  f << "<text x=\"" << L << "\" y=\"20\" font-size=\"13\">" << html_escape(title) << "</text>\n";
  for (int i = 0; i <= 5; ++i) {
    const double y = ymax * i / 5;
    f << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << py(y) << "\" y2=\"" << py(y)
      << "\" stroke=\"#ddd\"/><text x=\"" << L - 5 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">"
      << fmt("%.0f", y) << "</text>\n";
  }
  for (auto& [x, label] : xlabels)
    f << "<text x=\"" << px(x) << "\" y=\"" << H - B + 14 << "\" text-anchor=\"end\" transform=\"rotate(-40 " << px(x)
      << " " << H - B + 14 << ")\">" << html_escape(label) << "</text>\n";
  f << "<text x=\"15\" y=\"" << (H - B + T) / 2 << "\" transform=\"rotate(-90 15 " << (H - B + T) / 2 << ")\">"
    << (cpu_only ? "GFLOP/s" : "TFLOP/s") << " (median)</text>\n";
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  int idx = 0;
  for (auto& [name, pts] : series) {
    const char* c = colors[idx % 8];
    const bool vendor = name.find("OmniGEMM") == std::string::npos;
    f << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\"" << (vendor ? " stroke-dasharray=\"6 4\"" : "")
      << " points=\"";
    for (auto [x, y] : pts) f << px(x) << "," << py(y) << " ";
    f << "\"/>\n<text x=\"" << W - R + 10 << "\" y=\"" << T + 16 * idx + 10 << "\" fill=\"" << c << "\">"
      << html_escape(name) << "</text>\n";
    ++idx;
  }
  f << "</svg>\n";
}

// The 1-minute load average: other work on the machine makes CPU timings meaningless; the header
// records it at the start and the end of the run.
std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string one;
  if (!(f >> one)) return "unknown";
  return one + " (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
}

std::string exe_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

std::string find_plot_script() {
  if (const char* e = std::getenv("OMNIGEMM_PLOT_SCRIPT"); e && *e && file_exists(e)) return e;
  const std::string dir = exe_dir();
  for (const std::string& p : {dir + "/plot.py", dir + "/../share/omnigemm/plot.py",
                               std::string(OMNIGEMM_BENCH_SOURCE_DIR) + "/plot.py"})
    if (file_exists(p)) return p;
  return {};
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err;
  if (!parse_args(argc, argv, o, err)) {
    std::fprintf(stderr, "omnigemm-bench: %s\n", err.c_str());
    return 2;
  }
  if (!o.seed_given) o.seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();

  Header h;
  h.date = utc_now();
  h.command = command_line(argc, argv);
  h.seed = std::to_string(o.seed);
  std::printf("omnigemm-bench  %s\ncommand: %s\nseed: %s\n", h.date.c_str(), h.command.c_str(), h.seed.c_str());
  h.lines.push_back({"load average at start", load_average()});
  std::printf("load average: %s\n", h.lines.back().second.c_str());
  // Environment that changes what is measured.
  for (const char* var : {"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMNIGEMM_CPU_KERNEL", "OMNIGEMM_TUNE_CACHE",
                          "OMNIGEMM_CUBLAS_DIR", "CUDA_VISIBLE_DEVICES"})
    if (const char* v = std::getenv(var)) {
      std::printf("env: %s=%s\n", var, v);
      h.lines.push_back({std::string("env ") + var, v});
    }

  // Backends: the requested ones, or every one compiled in that finds a device.
  std::vector<og_backend> wanted = o.backends;
  const bool explicit_backends = !wanted.empty();
  std::vector<std::string> skipped_backends;  // requested but unavailable: said again at the end
  if (wanted.empty()) wanted = {OG_BACKEND_CUDA, OG_BACKEND_HIP, OG_BACKEND_VULKAN, OG_BACKEND_CPU};
  std::vector<BackendState> backends;
  for (og_backend k : wanted) {
    og_context_options co;
    og_context_options_init(&co);
    co.backend = k;
    co.tune_mode = o.tune_mode;
    og_context* ctx = nullptr;
    if (og_context_create(&co, &ctx) != OG_OK) {
      const std::string why = og_last_error_message();
      std::printf("backend %-6s: not available (%s)\n", og_backend_name(k), why.c_str());
      h.lines.push_back({std::string(og_backend_name(k)) + " unavailable", why});
      if (explicit_backends) skipped_backends.push_back(std::string("SKIPPED ") + og_backend_name(k) + ": " + why);
      continue;
    }
    BackendState bs;
    bs.kind = k;
    bs.ctx = ctx;
    bs.be = &omnigemm::detail::context_backend(ctx);
    const auto& dev = bs.be->device();
    std::printf("backend %-6s: %s | driver %s | L2 %lld bytes\n", og_backend_name(k), dev.name.c_str(),
                dev.driver.c_str(), dev.limits.l2_bytes);
    h.lines.push_back({std::string(og_backend_name(k)) + " device", dev.name});
    h.lines.push_back({std::string(og_backend_name(k)) + " driver", dev.driver});
    if (o.vendor) {
      bs.vendor = load_vendor(k, *bs.be, bs.vendor_why);
      std::printf("  vendor baseline: %s\n", bs.vendor ? bs.vendor->library().c_str() : ("none: " + bs.vendor_why).c_str());
      h.lines.push_back({std::string(og_backend_name(k)) + " vendor", bs.vendor ? bs.vendor->library() : "none: " + bs.vendor_why});
    }
    if (o.epilogue_leaky) bs.act = load_activation_pass(k, bs.act_why);
    backends.push_back(std::move(bs));
  }
  std::fflush(stdout);
  if (backends.empty()) {
    std::fprintf(stderr, "omnigemm-bench: none of the requested backends is available\n");
    return 2;
  }

  std::vector<Row> rows;
  const size_t total = o.dtypes.size() * o.shapes.size() * backends.size();
  size_t done = 0;
  uint64_t problem_index = 0;
  const bool progress = isatty(2);  // a terminal: the progress line rewrites itself
  for (const DtypeSpec& dt : o.dtypes) {
    for (size_t si = 0; si < o.shapes.size(); ++si) {
      const Shape& sh = o.shapes[si];
      const bool fp8 = dt.in == OG_DTYPE_FP8_E4M3 || dt.in == OG_DTYPE_FP8_E5M2;
      HostProblem hp;
      hp.shape = sh;
      hp.dt = dt;
      hp.b_col_major = o.b_layout == "col" || (o.b_layout == "auto" && fp8);
      hp.leaky = o.epilogue_leaky;
      hp.slope = o.leaky_slope;
      hp.forced_config = o.forced_config;
      bool prepared = false;
      ++problem_index;
      for (BackendState& bs : backends) {
        ++done;
        Row base;
        base.sweep = o.sweep;
        base.x = o.sweep == "square" ? double(sh.m) : o.sweep == "k" ? double(sh.k) : double(si);
        base.backend = og_backend_name(bs.kind);
        base.device = bs.be->device().name;
        base.dt = dt;
        base.layout = hp.b_col_major ? "rc" : "rr";
        base.epilogue = hp.leaky ? "leaky" : "none";
        base.shape = sh;
        // One updating line on a terminal; one line per configuration in a log (shows where a run stopped).
        std::fprintf(stderr, progress ? "\r\033[K[%zu/%zu] %s %s %s ..." : "[%zu/%zu] %s %s %s\n", done, total,
                     base.backend.c_str(), dt.name().c_str(), sh.label().c_str());
        std::fflush(stderr);
        // Time budget: skip what the last measured rate says would take too long.
        // Before the first measurement, a CPU is assumed to reach 20 GFLOP/s per core (GPUs: no estimate).
        const double rate = bs.rate_gflops > 0 ? bs.rate_gflops
                            : bs.kind == OG_BACKEND_CPU ? 20.0 * std::max(1, bs.be->device().limits.compute_units) : 0;
        const double est_s = rate > 0 ? flops(sh) / (rate * 1e9) * (o.min_samples + 2) * 2 : 0;
        if (est_s > o.max_config_s) {
          Row r = base;
          r.impl = "omnigemm";
          r.status = "skipped";
          r.check = "skipped";
          r.note = "estimated " + fmt("%.0f", est_s) + " s > --max-config-seconds " + fmt("%g", o.max_config_s);
          rows.push_back(r);
          continue;
        }
        if (!prepared) {
          make_host_problem(hp, o.seed + problem_index * 1000003ull);
          prepared = true;
        }
        bench_one(bs, hp, o, base, rows);
      }
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  h.lines.push_back({"load average at end", load_average()});
  print_table(rows);
  std::printf("load average at the end: %s\n", h.lines.back().second.c_str());

  // Files.
  std::string out = o.out_dir;
  if (out.empty()) out = file_exists("bench") ? "bench/out" : "omnigemm-bench-out";
  std::string mk = "mkdir -p " + shell_quote(out);
  if (std::system(mk.c_str()) != 0) {
    std::fprintf(stderr, "omnigemm-bench: cannot create %s\n", out.c_str());
    return 2;
  }
  write_csv(out + "/results.csv", rows);
  write_json(out + "/results.json", h, rows);
  std::printf("wrote %s/results.csv and %s/results.json\n", out.c_str(), out.c_str());
  std::fflush(stdout);  // keep our lines before those of the plot script
  if (o.plot) {
    // The first interpreter with matplotlib (a pyenv/venv python3 may lack it; the system one may not).
    std::string python;
    std::vector<std::string> candidates = {"python3", "/usr/bin/python3", "/usr/local/bin/python3"};
    if (!o.python.empty()) candidates = {o.python};
    for (const std::string& py : candidates)
      if (py != "none" && std::system((shell_quote(py) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) {
        python = py;
        break;
      }
    const std::string script = find_plot_script();
    const std::string cmd = (python.empty() ? std::string("python3") : python) + " " +
                            shell_quote(script.empty() ? "bench/plot.py" : script) + " " +
                            shell_quote(out + "/results.json") + " " + shell_quote(out + "/plot");
    if (!script.empty() && !python.empty()) {
      if (std::system(cmd.c_str()) != 0) std::printf("plot failed; run: %s\n", cmd.c_str());
    } else {
      write_basic_svg(out + "/plot.svg", rows, "OmniGEMM vs vendor GEMM, " + o.sweep + " sweep, " + h.date);
      std::printf("no python3 with matplotlib found: wrote a basic %s/plot.svg; for the PNG/SVG pair run: %s\n",
                  out.c_str(), cmd.c_str());
    }
  }

  int failures = 0;
  for (const Row& r : rows) failures += r.status == "FAIL" || r.status == "error";
  for (BackendState& bs : backends) {
    bs.vendor.reset();
    bs.act.reset();
    og_context_destroy(bs.ctx);
  }
  for (const std::string& line : skipped_backends) std::printf("%s\n", line.c_str());
  if (failures) std::printf("%d row(s) FAILED or errored\n", failures);
  return failures ? 1 : 0;
}
