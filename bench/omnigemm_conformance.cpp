// omnigemm-conformance: one matrix of GEMM cases (dtypes x layouts/transposes x shapes with edges
// x epilogues x batches) run on every available backend through the public API (og_gemm_host),
// each output poisoned with NaN first and every element compared with the float64 reference of
// bench/reference.hpp under its per-dtype tolerance; padding outside the output view
// must stay untouched. Inputs depend only on --seed and the case index, so the same seed gives
// the same inputs on every backend and machine. Prints a pass/fail matrix per backend, writes
// JSON and a static HTML report, exits non-zero on any failure. Combinations a backend does
// not support are reported as "unsupported" with its message, not as failures.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "reference.hpp"

namespace {

using namespace omnigemm;
using namespace omnigemm::bench;

struct DtypeCombo {
  Dtype a, b, d;
  std::string name() const {
    std::string s = omnigemm::name(a);
    if (b != a) s += std::string("x") + omnigemm::name(b);
    return s + "->" + omnigemm::name(d);
  }
};

struct Case {
  int index = 0;
  std::string category;  // shapes | layouts | epilogues | batches
  DtypeCombo dt;
  int64_t m = 1, n = 1, k = 1;
  Layout a_layout = Layout::row_major, b_layout = Layout::row_major;
  bool a_trans = false, b_trans = false;
  int64_t ld_pad = 0;
  EpilogueSpec epi;
  int64_t batch = 1;
  bool broadcast_b = false;  // B batch stride 0
  std::string describe() const {
    std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    s += std::string(" A") + (a_layout == Layout::row_major ? "r" : "c") + (a_trans ? "T" : "");
    s += std::string(" B") + (b_layout == Layout::row_major ? "r" : "c") + (b_trans ? "T" : "");
    if (ld_pad) s += " ld+" + std::to_string(ld_pad);
    if (epi.alpha != 1.0f) s += " alpha=" + fmt("%g", epi.alpha);
    if (epi.beta != 0.0f) s += " beta=" + fmt("%g", epi.beta);
    if (epi.act != Activation::none) s += std::string(" act=") + activation_name(epi.act);
    if (epi.bias_mode == BiasMode::per_n) s += " bias/N";
    if (epi.bias_mode == BiasMode::per_m) s += " bias/M";
    if (batch > 1) s += " batch=" + std::to_string(batch) + (broadcast_b ? " (B broadcast)" : "");
    return s;
  }
  static const char* activation_name(Activation a) {
    switch (a) {
      case Activation::relu: return "relu";
      case Activation::leaky_relu: return "leaky_relu";
      case Activation::gelu_tanh: return "gelu_tanh";
      case Activation::silu: return "silu";
      default: return "none";
    }
  }
};

std::vector<Case> build_cases() {
  const std::vector<DtypeCombo> combos = {
      {Dtype::f32, Dtype::f32, Dtype::f32},           {Dtype::f16, Dtype::f16, Dtype::f16},
      {Dtype::f16, Dtype::f16, Dtype::f32},           {Dtype::bf16, Dtype::bf16, Dtype::bf16},
      {Dtype::bf16, Dtype::bf16, Dtype::f32},         {Dtype::fp8_e4m3, Dtype::fp8_e4m3, Dtype::f16},
      {Dtype::fp8_e4m3, Dtype::fp8_e4m3, Dtype::bf16}, {Dtype::fp8_e5m2, Dtype::fp8_e5m2, Dtype::f16},
      {Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::f16},
  };
  struct S { int64_t m, n, k; };
  const std::vector<S> shapes = {{1, 1, 1},     {17, 17, 17},   {64, 64, 64},   {129, 65, 33},
                                 {1, 129, 64},  {129, 1, 17},   {100, 200, 300}, {256, 256, 256},
                                 {520, 1031, 777}};  // many tiles and K steps, no dimension a power of 2
  std::vector<Case> cases;
  auto add = [&](Case c) {
    c.index = int(cases.size());
    cases.push_back(c);
  };
  for (const DtypeCombo& dt : combos) {
    for (const S& s : shapes) {
      Case c;
      c.category = "shapes";
      c.dt = dt;
      c.m = s.m, c.n = s.n, c.k = s.k;
      add(c);
    }
    for (int l = 0; l < 16; ++l) {  // every A/B layout x transpose, with padded leading dimensions
      Case c;
      c.category = "layouts";
      c.dt = dt;
      c.m = 67, c.n = 45, c.k = 53;
      c.a_layout = (l & 1) ? Layout::col_major : Layout::row_major;
      c.b_layout = (l & 2) ? Layout::col_major : Layout::row_major;
      c.a_trans = (l & 4) != 0;
      c.b_trans = (l & 8) != 0;
      c.ld_pad = 3;
      add(c);
    }
    const std::vector<EpilogueSpec> epis = {
        {0.5f, 0.75f, Activation::none, 0.01f, BiasMode::none},
        {1.0f, 0.0f, Activation::relu, 0.01f, BiasMode::per_n},
        {1.25f, 0.0f, Activation::leaky_relu, 0.1f, BiasMode::per_m},
        {1.0f, 0.0f, Activation::gelu_tanh, 0.01f, BiasMode::none},
        {1.0f, -0.5f, Activation::silu, 0.01f, BiasMode::per_n},
    };
    for (const EpilogueSpec& e : epis) {
      Case c;
      c.category = "epilogues";
      c.dt = dt;
      c.m = 65, c.n = 47, c.k = 39;
      c.epi = e;
      add(c);
    }
    for (int b = 0; b < 3; ++b) {
      Case c;
      c.category = "batches";
      c.dt = dt;
      c.m = 33, c.n = 29, c.k = 31;
      c.batch = b == 0 ? 3 : b == 1 ? 4 : 2;
      c.broadcast_b = b == 1;
      if (b == 2) c.epi = {1.0f, 0.5f, Activation::relu, 0.01f, BiasMode::per_n};
      add(c);
    }
  }
  return cases;
}

// Host operands of one case, generated from the seed and the case index only.
struct CaseData {
  HostMatrix a, b, c, d;
  std::vector<float> bias;
  Reference ref;  // with the epilogue magnitudes compare() needs
};

void make_case_data(const Case& c, uint64_t seed, CaseData& cd) {
  uint64_t state = seed ^ (uint64_t(c.index) * 0x9e3779b97f4a7c15ull);
  std::mt19937_64 rng(splitmix64(state));  // one generator per case: inputs depend on (seed, index) only
  const int64_t a_rows = c.a_trans ? c.k : c.m, a_cols = c.a_trans ? c.m : c.k;
  const int64_t b_rows = c.b_trans ? c.n : c.k, b_cols = c.b_trans ? c.k : c.n;
  cd.a = HostMatrix(a_rows, a_cols, c.dt.a, c.a_layout, c.ld_pad, c.batch, c.batch > 1 ? 5 : 0);
  cd.a.transposed = c.a_trans;
  cd.b = HostMatrix(b_rows, b_cols, c.dt.b, c.b_layout, c.ld_pad, c.broadcast_b ? 1 : c.batch,
                    c.batch > 1 && !c.broadcast_b ? 7 : 0);
  cd.b.transposed = c.b_trans;
  fill_uniform(cd.a, rng);
  fill_uniform(cd.b, rng);
  const Dtype cd_dtype = c.dt.d;
  if (c.epi.beta != 0.0f) {
    cd.c = HostMatrix(c.m, c.n, cd_dtype, Layout::row_major, c.ld_pad, c.batch);
    fill_uniform(cd.c, rng);
  }
  cd.d = HostMatrix(c.m, c.n, cd_dtype, Layout::row_major, c.ld_pad, c.batch, c.batch > 1 ? 3 : 0);
  fill_uniform(cd.d, rng);  // padding gets values that must survive
  cd.bias.clear();
  if (c.epi.bias_mode != BiasMode::none) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    cd.bias.resize(size_t(c.epi.bias_mode == BiasMode::per_n ? c.n : c.m));
    for (float& v : cd.bias) v = u(rng);
  }
  cd.ref = reference_gemm(cd.a, cd.b, c.epi.beta != 0.0f ? &cd.c : nullptr, cd.bias.empty() ? nullptr : &cd.bias,
                          c.epi, c.batch);
}

struct CaseResult {
  std::string status;  // pass | FAIL | unsupported | error
  double rel_error = NAN, tol = NAN;
  std::string message;
};

CaseResult run_case(Context& ctx, const Case& c, const CaseData& cd_in) {
  CaseResult r;
  if (Status s = ctx.check_dtypes(c.dt.a, c.dt.b, c.dt.d); !s) {
    r.status = s.code == StatusCode::unsupported ? "unsupported" : "error";
    r.message = s.message;
    return r;
  }
  CaseData cd = cd_in;  // D gets poisoned and overwritten; the next backend needs the original
  // Poison only the view: padding keeps its random bytes and must come back unchanged.
  for (int64_t b = 0; b < cd.d.batches; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) cd.d.set(b, i, j, NAN);
  const HostMatrix d_before = cd.d;
  Gemm g;
  g.a = cd.a.host_view();
  g.b = cd.b.host_view();
  if (c.epi.beta != 0.0f) g.c = cd.c.host_view();
  g.d = cd.d.host_view();
  g.epilogue.alpha = c.epi.alpha;
  g.epilogue.beta = c.epi.beta;
  g.epilogue.activation = c.epi.act;
  g.epilogue.leaky_slope = c.epi.slope;
  g.epilogue.bias_mode = c.epi.bias_mode;
  if (!cd.bias.empty()) g.epilogue.bias = Memory::host(cd.bias.data());
  g.batch_count = c.batch;
  Status s = ctx.run_host(g);
  if (!s) {
    r.status = s.code == StatusCode::unsupported ? "unsupported" : "error";
    r.message = s.message;
    return r;
  }
#ifdef OMNIGEMM_DEVELOPER
  // Self-test of the checker (developer builds): OMNIGEMM_CONFORMANCE_CORRUPT=1 spoils one output element.
  if (const char* env = std::getenv("OMNIGEMM_CONFORMANCE_CORRUPT"); env && *env == '1')
    cd.d.set(0, 0, 0, float(cd.ref.value[0] * 2.0 + 1.0));
#endif
  ErrorReport e = compare(cd.d, cd.ref, &d_before);
  r.rel_error = e.rel_error;
  r.tol = tolerance(c.dt.d, c.k, c.dt.a, c.dt.b);
  if (e.non_finite) r.message = std::to_string(e.non_finite) + " output elements not finite (unwritten or overflow)";
  if (e.padding_touched) r.message += (r.message.empty() ? "" : "; ") + std::to_string(e.padding_touched) +
                                      " padding elements outside the view changed";
  r.status = (e.non_finite == 0 && e.padding_touched == 0 && e.rel_error <= r.tol) ? "pass" : "FAIL";
  if (r.status == "FAIL" && r.message.empty())
    r.message = "relative error " + fmt("%.3e", e.rel_error) + " > tolerance " + fmt("%.3e", r.tol);
  return r;
}

struct BackendReport {
  std::string backend, device, driver;
  std::vector<CaseResult> results;
};

const std::vector<std::string> kCategories = {"shapes", "layouts", "epilogues", "batches"};

// "8/8", "FAIL 2/8", "unsupported", "5/8 (3 unsup)" for the cases of one dtype combo x category.
std::string cell(const std::vector<Case>& cases, const BackendReport& br, const std::string& combo,
                 const std::string& cat, bool& failed) {
  int total = 0, pass = 0, fail = 0, unsup = 0;
  for (const Case& c : cases) {
    if (c.dt.name() != combo || c.category != cat) continue;
    ++total;
    const std::string& st = br.results[size_t(c.index)].status;
    if (st == "pass") ++pass;
    else if (st == "unsupported") ++unsup;
    else ++fail;
  }
  failed = fail > 0;
  if (unsup == total) return "unsupported";
  std::string s = fail ? "FAIL " + std::to_string(fail) + "/" + std::to_string(total)
                       : std::to_string(pass) + "/" + std::to_string(total);
  if (unsup) s += " (" + std::to_string(unsup) + " unsup)";
  return s;
}

std::vector<std::string> combo_names(const std::vector<Case>& cases) {
  std::vector<std::string> names;
  for (const Case& c : cases)
    if (std::find(names.begin(), names.end(), c.dt.name()) == names.end()) names.push_back(c.dt.name());
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<og_backend> wanted;
  std::string out_dir;
  uint64_t seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--seed" || a == "--out" || a == "--backend") && i + 1 >= argc) {
      std::fprintf(stderr, "omnigemm-conformance: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--seed") seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--out") out_dir = argv[++i];
    else if (a == "--backend") {
      for (const auto& b : split(argv[++i], ',')) {
        og_backend k = b == "cpu" ? OG_BACKEND_CPU : b == "vulkan" ? OG_BACKEND_VULKAN : b == "cuda" ? OG_BACKEND_CUDA
                     : b == "hip" ? OG_BACKEND_HIP : OG_BACKEND_AUTO;
        if (k == OG_BACKEND_AUTO) { std::fprintf(stderr, "unknown backend '%s'\n", b.c_str()); return 2; }
        wanted.push_back(k);
      }
    } else if (a == "--help" || a == "-h") {
      std::puts("omnigemm-conformance [--backend cpu,vulkan,cuda] [--seed N] [--out DIR]\n"
                "Runs the case matrix on every available backend (default) against the float64 reference.\n"
                "Exit status: 0 all supported cases pass, 1 a failure, 2 bad arguments / no backend.");
      return 0;
    } else {
      std::fprintf(stderr, "omnigemm-conformance: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  const bool explicit_backends = !wanted.empty();
  std::vector<std::string> skipped_backends;  // requested but unavailable: said again at the end
  if (wanted.empty()) wanted = {OG_BACKEND_CUDA, OG_BACKEND_HIP, OG_BACKEND_VULKAN, OG_BACKEND_CPU};
  const std::string date = utc_now(), command = command_line(argc, argv);
  std::printf("omnigemm-conformance  %s\ncommand: %s\nseed: %llu (same seed -> same inputs everywhere)\n",
              date.c_str(), command.c_str(), (unsigned long long)seed);

  std::vector<Context> contexts;
  std::vector<BackendReport> reports;
  for (og_backend k : wanted) {
    auto ctx = Context::create({.backend = static_cast<omnigemm::Backend>(k)});
    if (!ctx) {
      std::printf("backend %-6s: not available (%s)\n", og_backend_name(k), ctx.status().message.c_str());
      if (explicit_backends)
        skipped_backends.push_back(std::string("SKIPPED ") + og_backend_name(k) + ": " + ctx.status().message);
      continue;
    }
    auto caps = ctx->capabilities();
    BackendReport br;
    br.backend = og_backend_name(k);
    br.device = caps ? caps->raw.device_name : "?";
    br.driver = caps ? caps->raw.driver_version : "?";
    std::printf("backend %-6s: %s | driver %s\n", br.backend.c_str(), br.device.c_str(), br.driver.c_str());
    reports.push_back(br);
    contexts.push_back(std::move(*ctx));
  }
  if (contexts.empty()) {
    std::fprintf(stderr, "no backend available\n");
    return 2;
  }

  const std::vector<Case> cases = build_cases();
  for (auto& br : reports) br.results.resize(cases.size());
  for (const Case& c : cases) {
    CaseData cd;
    make_case_data(c, seed, cd);
    for (size_t b = 0; b < contexts.size(); ++b) reports[b].results[size_t(c.index)] = run_case(contexts[b], c, cd);
  }

  // Terminal matrix per backend.
  int failures = 0;
  const auto combos = combo_names(cases);
  for (const BackendReport& br : reports) {
    std::printf("\n%s on %s (driver %s)\n%-22s", br.backend.c_str(), br.device.c_str(), br.driver.c_str(), "dtype");
    for (const auto& cat : kCategories) std::printf(" %-18s", cat.c_str());
    std::printf("\n");
    for (const auto& combo : combos) {
      std::printf("%-22s", combo.c_str());
      for (const auto& cat : kCategories) {
        bool failed = false;
        std::printf(" %-18s", cell(cases, br, combo, cat, failed).c_str());
      }
      std::printf("\n");
    }
    for (const Case& c : cases) {
      const CaseResult& r = br.results[size_t(c.index)];
      if (r.status == "FAIL" || r.status == "error") {
        ++failures;
        std::printf("  %s case %d %s %s: %s\n", r.status.c_str(), c.index, c.dt.name().c_str(), c.describe().c_str(),
                    r.message.c_str());
      }
    }
    std::map<std::string, int> unsup;
    for (const Case& c : cases)
      if (br.results[size_t(c.index)].status == "unsupported") ++unsup[br.results[size_t(c.index)].message];
    for (const auto& [msg, n] : unsup) std::printf("  unsupported (%d cases): %s\n", n, msg.c_str());
  }

  // JSON + HTML.
  if (out_dir.empty()) out_dir = "omnigemm-conformance-out";
  if (std::system(("mkdir -p '" + out_dir + "'").c_str()) != 0) {
    std::fprintf(stderr, "cannot create %s\n", out_dir.c_str());
    return 2;
  }
  {
    std::ofstream f(out_dir + "/conformance.json");
    f << "{\n  \"tool\": \"omnigemm-conformance\",\n  \"date\": " << jstr(date) << ",\n  \"command\": " << jstr(command)
      << ",\n  \"seed\": " << jstr(std::to_string(seed)) << ",\n  \"skipped_backends\": [";
    for (size_t i = 0; i < skipped_backends.size(); ++i) f << (i ? ", " : "") << jstr(skipped_backends[i]);
    f << "],\n  \"backends\": [\n";
    for (size_t b = 0; b < reports.size(); ++b) {
      const BackendReport& br = reports[b];
      f << "    {\"backend\": " << jstr(br.backend) << ", \"device\": " << jstr(br.device)
        << ", \"driver\": " << jstr(br.driver) << ", \"cases\": [\n";
      for (const Case& c : cases) {
        const CaseResult& r = br.results[size_t(c.index)];
        f << "      {\"index\": " << c.index << ", \"category\": " << jstr(c.category) << ", \"dtype\": "
          << jstr(c.dt.name()) << ", \"case\": " << jstr(c.describe()) << ", \"status\": " << jstr(r.status)
          << ", \"rel_error\": " << jnum(r.rel_error) << ", \"tolerance\": " << jnum(r.tol)
          << ", \"message\": " << jstr(r.message) << "}" << (c.index + 1 < int(cases.size()) ? "," : "") << "\n";
      }
      f << "    ]}" << (b + 1 < reports.size() ? "," : "") << "\n";
    }
    f << "  ]\n}\n";
  }
  {
    std::ofstream f(out_dir + "/conformance.html");
    f << "<!doctype html><html><head><meta charset=\"utf-8\"><title>OmniGEMM conformance</title><style>"
         "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #999;padding:3px 8px;font-size:13px}.pass{background:#c8f0c8}"
         ".fail{background:#f4b0b0}.unsup{background:#e0e0e0}</style></head><body>\n"
      << "<h1>OmniGEMM conformance</h1><p>" << html_escape(date) << "<br>command: <code>" << html_escape(command)
      << "</code><br>seed: " << seed << " (same seed &rarr; same inputs on every backend and machine)<br>"
      << cases.size() << " cases per backend, every output element against a float64 reference "
      << "(tolerances of bench/reference.cpp), outputs NaN-poisoned, padding checked.</p>\n";
    for (const std::string& line : skipped_backends) f << "<p><b>" << html_escape(line) << "</b></p>\n";
    for (const BackendReport& br : reports) {
      f << "<h2>" << html_escape(br.backend) << ": " << html_escape(br.device) << " (driver "
        << html_escape(br.driver) << ")</h2><table><tr><th>dtype</th>";
      for (const auto& cat : kCategories) f << "<th>" << cat << "</th>";
      f << "</tr>\n";
      for (const auto& combo : combos) {
        f << "<tr><td>" << html_escape(combo) << "</td>";
        for (const auto& cat : kCategories) {
          bool failed = false;
          const std::string t = cell(cases, br, combo, cat, failed);
          f << "<td class=\"" << (failed ? "fail" : t == "unsupported" ? "unsup" : "pass") << "\">"
            << html_escape(t) << "</td>";
        }
        f << "</tr>\n";
      }
      f << "</table><details><summary>all cases</summary><table><tr><th>#</th><th>category</th><th>dtype</th>"
           "<th>case</th><th>status</th><th>rel. error</th><th>tolerance</th><th>message</th></tr>\n";
      for (const Case& c : cases) {
        const CaseResult& r = br.results[size_t(c.index)];
        const char* cls = r.status == "pass" ? "pass" : r.status == "unsupported" ? "unsup" : "fail";
        f << "<tr class=\"" << cls << "\"><td>" << c.index << "</td><td>" << c.category << "</td><td>"
          << html_escape(c.dt.name()) << "</td><td>" << html_escape(c.describe()) << "</td><td>" << r.status
          << "</td><td>" << (std::isfinite(r.rel_error) ? fmt("%.2e", r.rel_error) : "-") << "</td><td>"
          << (std::isfinite(r.tol) ? fmt("%.2e", r.tol) : "-") << "</td><td>" << html_escape(r.message)
          << "</td></tr>\n";
      }
      f << "</table></details>\n";
    }
    f << "</body></html>\n";
  }
  std::printf("\nwrote %s/conformance.json and %s/conformance.html\n", out_dir.c_str(), out_dir.c_str());
  for (const std::string& line : skipped_backends) std::printf("%s\n", line.c_str());
  if (failures) std::printf("%d case run(s) FAILED\n", failures);
  else std::printf("all supported cases passed on every backend that ran\n");
  return failures ? 1 : 0;
}
