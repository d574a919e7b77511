// omnigemm-bench's reports: the terminal table, the explain reports, results.csv, results.json
// (their columns are what earlier results and scripts/ab_bench.sh read) and the plot (plot.py
// with matplotlib, else a basic SVG written here).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench_options.hpp"
#include "bench_run.hpp"
#include "bench_summary.hpp"

namespace omnigemm::bench {

// The run's header: date, command, seed and the environment lines (devices, drivers, vendor
// libraries, load average, relevant environment variables).
struct Header {
  std::string date, command, seed;
  std::vector<std::pair<std::string, std::string>> lines;  // key, value
};

void print_table(const std::vector<Row>& rows);
// og_gemm_explain's report of every OmniGEMM row that has one (--explain), under a line naming the row.
void print_explanations(const std::vector<Row>& rows);
void write_csv(const std::string& path, const std::vector<Row>& rows);
// results.json: the header, every row and (--random) the ratio summary.
void write_json(const std::string& path, const Header& h, const std::vector<Row>& rows,
                const std::vector<RatioSummary>& summary = {});
// plot.py on out/results.json with the first python3 that has matplotlib; without one, a basic
// out/plot.svg and the command to run later.
void write_plot(const std::string& out, const std::vector<Row>& rows, const Options& o, const Header& h);

// The 1-minute load average and the hardware thread count: other work on the machine makes CPU
// timings meaningless, so the header records it at the start and the end of the run.
std::string load_average();
bool file_exists(const std::string& path);
std::string shell_quote(const std::string& s);

}  // namespace omnigemm::bench
