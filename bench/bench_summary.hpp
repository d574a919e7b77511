// The random sweep's verdict: per backend and dtype, and over all dtypes, the geometric mean,
// the 10th percentile (nearest rank) and the minimum of the vendor/OmniGEMM time ratios, for all
// problems and separately for those whose leading dimensions and batch strides are all 16-byte
// aligned and those with some that are not. Only rows where both ran and passed their check
// have a ratio; the others are counted.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bench_run.hpp"

namespace omnigemm::bench {

struct RatioSummary {
  std::string backend, dtype, group;  // dtype "all" over every dtype; group all | aligned | unaligned
  int problems = 0;                   // OmniGEMM rows in the group
  int with_ratio = 0;                 // of which both implementations ran and passed
  double geomean = NAN, p10 = NAN, min = NAN;
  std::string min_problem;            // the slowest problem relative to the vendor: shape and storage
};

std::vector<RatioSummary> summarize_ratios(const std::vector<Row>& rows);
void print_summary(const std::vector<RatioSummary>& summary, uint64_t seed);
void write_summary_csv(const std::string& path, const std::vector<RatioSummary>& summary);
// The "summary" array of results.json (nothing when empty).
void write_summary_json(std::ostream& f, const std::vector<RatioSummary>& summary);

}  // namespace omnigemm::bench
