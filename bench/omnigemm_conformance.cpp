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
#include "conformance_cases.hpp"
#include "reference.hpp"

namespace {

using namespace omnigemm;
using namespace omnigemm::bench;

struct BackendReport {
  std::string backend, device, driver;
  std::vector<CaseResult> results;
};

const std::vector<std::string> kCategories = {"shapes", "layouts", "epilogues", "batches", "formats"};

// "8/8", "FAIL 2/8", "unsupported", "5/8 (3 unsup)" for the cases of one dtype combo x category
// ("-" where the matrix has none).
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
  if (total == 0) return "-";
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
    if (Status s = make_case_data(c, seed, cd); !s) {  // inputs that cannot be made: an error on every backend
      for (auto& br : reports) br.results[size_t(c.index)] = CaseResult{"error", NAN, NAN, "inputs: " + s.message};
      continue;
    }
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
