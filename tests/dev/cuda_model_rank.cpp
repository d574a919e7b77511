// Developer tool (built with OMNIGEMM_DEVELOPER and the CUDA backend): the CUDA cost model's
// ranking of every offered config for problems named on the command line, on a modelled Hopper
// part (tests/cuda/cuda_model_device.hpp), without a GPU. What a model change moves is read here
// before any device time is spent on it; the device measures, this only predicts.
//
//   omnigemm_cuda_model_rank [--device h100|h200] [--top N] [--terms] [--in f16|bf16|fp8|f32]
//                            PROBLEM...
//   PROBLEM: MxNxK[xBATCH][:AB[:LDA:LDB:LDD]]  AB: A's and B's layouts, r or c (D row-major);
//            leading dimensions in elements (0 or absent: packed), batches one after another
//            (the random sweep's results.csv has every field: M N K batch b_layout lda ldb ldd)
//   omnigemm_cuda_model_rank [--device h100|h200] --results FILE [--run RUN]
//
// Prints per problem the configs fastest first with the predicted time in us and, with --terms,
// the cost model's terms. With --results: for every OmniGEMM row of a random sweep's results.csv
// (bench/results/<device>/results.csv, the rows of run RUN; or an omnigemm-bench --out folder's),
// the measured time, the model's time for the config that ran, and the model's own choice where
// it differs; then per family the median of measured / predicted (how a family's calibration
// drifts). Batches are approximated as packed one after another (the bench's strides may differ).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_model_device.hpp"
#include "dispatch.hpp"

using namespace omnigemm::detail;

namespace {

struct Spec {
  long long m = 0, n = 0, k = 0, batch = 1, lda = 0, ldb = 0, ldd = 0;
  char ab[3] = "rr";
};

bool parse(const std::string& text, Spec& s) {
  const size_t colon = text.find(':');
  const std::string dims = text.substr(0, colon);
  const int got = std::sscanf(dims.c_str(), "%lldx%lldx%lldx%lld", &s.m, &s.n, &s.k, &s.batch);
  if (got < 3 || s.m < 1 || s.n < 1 || s.k < 1 || s.batch < 1) return false;
  if (colon != std::string::npos &&
      std::sscanf(text.substr(colon + 1).c_str(), "%2[rc]:%lld:%lld:%lld", s.ab, &s.lda, &s.ldb, &s.ldd) < 1)
    return false;
  // Packed where absent: the contiguous extent of each operand.
  if (s.lda <= 0) s.lda = s.ab[0] == 'c' ? s.m : s.k;
  if (s.ldb <= 0) s.ldb = s.ab[1] == 'c' ? s.k : s.n;
  if (s.ldd <= 0) s.ldd = s.n;
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: omnigemm_cuda_model_rank [--device h100|h200] [--top N] [--terms] [--in f16|bf16|fp8|f32] "
               "MxNxK[xBATCH][:AB[:LDA:LDB:LDD]]...\n"
               "       omnigemm_cuda_model_rank [--device h100|h200] --results FILE [--run RUN]\n");
  return 2;
}

// A plain dtype by its og_dtype_name (the bench's column text), or "fp8" for e4m3.
bool dtype_named(const std::string& t, og_dtype& out) {
  for (int d = OG_DTYPE_F32; d <= OG_DTYPE_FP8_E5M2; ++d)
    if (t == og_dtype_name(og_dtype(d))) {
      out = og_dtype(d);
      return true;
    }
  if (t != "fp8") return false;
  out = OG_DTYPE_FP8_E4M3;
  return true;
}

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');) out.push_back(f);
  return out;
}

// The results mode: measured against predicted, row by row, then per family.
int compare_results(const Backend& be, const std::string& file, const std::string& run) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return 2;
  }
  std::map<std::string, size_t> col;
  const std::vector<std::string> header = csv_fields(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"impl", "dtype_in", "dtype_out", "b_layout", "M", "N", "K", "ms_median", "config", "lda", "ldb", "ldd", "batch"})
    if (!col.count(need)) {
      std::fprintf(stderr, "%s has no column %s (not a random sweep's results.csv)\n", file.c_str(), need);
      return 2;
    }
  std::map<std::string, std::vector<double>> ratios;  // family -> measured / predicted
  int rows = 0, same = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = csv_fields(line);
    if (f.size() < header.size() || f[col["impl"]] != "omnigemm" || f[col["config"]].empty()) continue;
    if (col.count("run") && !run.empty() && f[col["run"]] != run) continue;
    og_dtype tin, tout;
    if (!dtype_named(f[col["dtype_in"]], tin) || !dtype_named(f[col["dtype_out"]], tout)) continue;
    const std::string ab = f[col["b_layout"]];
    Problem p = test::strided_problem(std::atoll(f[col["M"]].c_str()), std::atoll(f[col["N"]].c_str()),
                                      std::atoll(f[col["K"]].c_str()), std::max(1LL, std::atoll(f[col["batch"]].c_str())),
                                      ab.c_str(), std::atoll(f[col["lda"]].c_str()), std::atoll(f[col["ldb"]].c_str()),
                                      std::atoll(f[col["ldd"]].c_str()), tin);
    p.d.dtype = tout;
    const auto ranked = rank_candidates(be, p);
    const std::string ran = f[col["config"]];
    const double measured = std::atof(f[col["ms_median"]].c_str()) * 1000;
    double predicted = 0;
    for (const Candidate& c : ranked)
      if (c.config.to_string() == ran) predicted = c.cost.ms * 1000;
    const std::string pick = ranked.empty() ? "none" : ranked.front().config.to_string();
    ++rows;
    same += pick == ran;
    std::printf("%sx%sx%s b%s %s ld %s/%s/%s %-5s  ran %-46s %8.1f us  predicted %8.1f", f[col["M"]].c_str(), f[col["N"]].c_str(),
                f[col["K"]].c_str(), f[col["batch"]].c_str(), ab.c_str(), f[col["lda"]].c_str(), f[col["ldb"]].c_str(),
                f[col["ldd"]].c_str(), f[col["dtype_in"]].c_str(), ran.c_str(), measured, predicted);
    if (pick != ran) std::printf("  model's choice %s", pick.c_str());
    std::printf("\n");
    if (predicted > 0 && measured > 0) ratios[ran.substr(0, ran.find(':'))].push_back(measured / predicted);
  }
  std::printf("%d rows, %d of them the model's own choice on this part\n", rows, same);
  for (auto& [family, r] : ratios) {
    std::sort(r.begin(), r.end());
    std::printf("  %-14s %4zu rows  measured / predicted: median %.2f, 10th %.2f, 90th %.2f\n", family.c_str(), r.size(),
                r[r.size() / 2], r[r.size() / 10], r[r.size() * 9 / 10]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  test::HopperPart part = test::HopperPart::h200;
  int top = 5;
  bool terms = false;
  og_dtype in = OG_DTYPE_F16;
  std::string results, run;
  std::vector<Spec> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--device" && has_value) {
      const std::string d = argv[++i];
      if (d != "h100" && d != "h200") return usage();
      part = d == "h100" ? test::HopperPart::h100 : test::HopperPart::h200;
    } else if (a == "--top" && has_value) {
      top = std::atoi(argv[++i]);
    } else if (a == "--terms") {
      terms = true;
    } else if (a == "--results" && has_value) {
      results = argv[++i];
    } else if (a == "--run" && has_value) {
      run = argv[++i];
    } else if (a == "--in" && has_value) {
      if (!dtype_named(argv[++i], in) || in == OG_DTYPE_FP8_E5M2) return usage();
    } else if (Spec s; parse(a, s)) {
      specs.push_back(s);
    } else {
      return usage();
    }
  }
  test::ModelledHopper be(false, part);
  if (!results.empty()) return specs.empty() ? compare_results(be, results, run) : usage();
  if (specs.empty()) return usage();
  std::printf("device: %s\n", be.device().name.c_str());
  for (const Spec& s : specs) {
    // Outputs as the bench's rule: f32 stays f32, fp8 gives f16, 16-bit keeps its type.
    Problem p = test::strided_problem(s.m, s.n, s.k, s.batch, s.ab, s.lda, s.ldb, s.ldd, in);
    p.d.dtype = in == OG_DTYPE_FP8_E4M3 ? OG_DTYPE_F16 : in;
    const auto ranked = rank_candidates(be, p);
    std::printf("%lldx%lldx%lld batch %lld, A %c B %c, ld %lld %lld %lld: %zu configs\n", s.m, s.n, s.k, s.batch, s.ab[0],
                s.ab[1], s.lda, s.ldb, s.ldd, ranked.size());
    for (int i = 0; i < top && i < int(ranked.size()); ++i) {
      const Candidate& c = ranked[size_t(i)];
      std::printf("  %-48s %10.2f\n", c.config.to_string().c_str(), c.cost.ms * 1000);
      if (terms)
        std::printf("    waves %.0f occupancy %.2f useful %.2f split %.2f efficiency %.3f factor %.3f memory %.2f extra %.2f "
                    "latency %.2f\n",
                    c.cost.waves, c.cost.occupancy, c.cost.useful, c.cost.split, c.hints.efficiency, c.hints.factor,
                    c.cost.memory_ms * 1000, c.cost.extra_ms * 1000, c.cost.latency_ms * 1000);
    }
  }
  return 0;
}
