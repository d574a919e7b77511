#include "bench_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>

#include "bench_random.hpp"
#include "bench_util.hpp"

namespace omnigemm::bench {

namespace {

struct Ratio {
  double value;
  std::string problem;
};

RatioSummary make(const std::string& backend, const std::string& dtype, const std::string& group, int problems,
                  std::vector<Ratio> ratios) {
  RatioSummary s{backend, dtype, group, problems, int(ratios.size())};
  if (ratios.empty()) return s;
  std::sort(ratios.begin(), ratios.end(), [](const Ratio& a, const Ratio& b) { return a.value < b.value; });
  double log_sum = 0;
  for (const Ratio& r : ratios) log_sum += std::log(r.value);
  s.geomean = std::exp(log_sum / double(ratios.size()));
  const size_t rank = size_t(std::ceil(0.1 * double(ratios.size())));  // nearest rank, 1-based
  s.p10 = ratios[std::max<size_t>(rank, 1) - 1].value;
  s.min = ratios.front().value;
  s.min_problem = ratios.front().problem;
  return s;
}

}  // namespace

std::vector<RatioSummary> summarize_ratios(const std::vector<Row>& rows) {
  // (backend, dtype, group) -> problems and ratios; dtype "all" and group "all" collect the others.
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<int, std::vector<Ratio>>> groups;
  std::vector<std::string> order;  // backends in the order they ran
  for (const Row& r : rows) {
    if (r.impl != "omnigemm") continue;
    if (std::find(order.begin(), order.end(), r.backend) == order.end()) order.push_back(r.backend);
    const bool has = r.status == "ok" && std::isfinite(r.ratio) && r.ratio > 0;
    Shape s = r.shape;
    s.storage = r.storage;
    const Ratio ratio{r.ratio, r.dt.name() + " " + r.shape.label() + " (" + storage_text(s) + ")"};
    for (const std::string& dtype : {r.dt.name(), std::string("all")})
      for (const std::string& group : {std::string("all"), std::string(r.aligned ? "aligned" : "unaligned")}) {
        auto& g = groups[{r.backend, dtype, group}];
        ++g.first;
        if (has) g.second.push_back(ratio);
      }
  }
  std::vector<RatioSummary> out;
  for (const std::string& backend : order)
    for (auto& [key, g] : groups)
      if (std::get<0>(key) == backend) out.push_back(make(backend, std::get<1>(key), std::get<2>(key), g.first, g.second));
  return out;
}

void print_summary(const std::vector<RatioSummary>& summary, uint64_t seed) {
  std::printf("\nrandom sweep, seed %llu: vendor time / OmniGEMM time (> 1: OmniGEMM faster)\n", (unsigned long long)seed);
  std::printf("%-7s %-18s %-9s %8s %8s %8s %8s %8s  %s\n", "backend", "dtype", "group", "problems", "ratios", "geomean",
              "p10", "min", "slowest relative to the vendor");
  for (const RatioSummary& s : summary) {
    auto num = [](double v) { return std::isfinite(v) ? fmt("%.3f", v) : std::string("-"); };
    std::printf("%-7s %-18s %-9s %8d %8d %8s %8s %8s  %s\n", s.backend.c_str(), s.dtype.c_str(), s.group.c_str(), s.problems,
                s.with_ratio, num(s.geomean).c_str(), num(s.p10).c_str(), num(s.min).c_str(), s.min_problem.c_str());
  }
}

void write_summary_csv(const std::string& path, const std::vector<RatioSummary>& summary) {
  std::ofstream f(path);
  f << "backend,dtype,group,problems,with_ratio,geomean,p10,min,min_problem\n";
  for (const RatioSummary& s : summary)
    f << s.backend << "," << s.dtype << "," << s.group << "," << s.problems << "," << s.with_ratio << ","
      << fmt("%.4g", s.geomean) << "," << fmt("%.4g", s.p10) << "," << fmt("%.4g", s.min) << "," << csv_field(s.min_problem)
      << "\n";
}

void write_summary_json(std::ostream& f, const std::vector<RatioSummary>& summary) {
  if (summary.empty()) return;
  f << ",\n  \"summary\": [\n";
  for (size_t i = 0; i < summary.size(); ++i) {
    const RatioSummary& s = summary[i];
    f << "    {\"backend\": " << jstr(s.backend) << ", \"dtype\": " << jstr(s.dtype) << ", \"group\": " << jstr(s.group)
      << ", \"problems\": " << s.problems << ", \"with_ratio\": " << s.with_ratio << ", \"geomean\": " << jnum(s.geomean)
      << ", \"p10\": " << jnum(s.p10) << ", \"min\": " << jnum(s.min) << ", \"min_problem\": " << jstr(s.min_problem) << "}"
      << (i + 1 < summary.size() ? "," : "") << "\n";
  }
  f << "  ]";
}

}  // namespace omnigemm::bench
