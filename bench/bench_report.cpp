#include "bench_report.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "bench_random.hpp"
#include "bench_summary.hpp"
#include "bench_util.hpp"

namespace omnigemm::bench {

static std::string perf_text(const Row& r) {
  if (!std::isfinite(r.tflops)) return "-";
  if (r.backend == "cpu" || r.tflops < 1.0) return fmt("%.1f GF/s", r.tflops * 1e3);
  return fmt("%.1f TF/s", r.tflops);
}

void print_table(const std::vector<Row>& rows) {
  // With epilogues: a wider epilogue column and each fused row's time over its plain GEMM's.
  bool fused = false;
  for (const Row& r : rows) fused |= r.epilogue != "none";
  const int epi_w = fused ? 14 : 5;
  std::printf("\n%-7s %-18s %-3s %-*s %6s %6s %6s %10s %12s %10s %12s %7s%s  %-8s %s\n", "backend", "dtype", "B", epi_w, "epi", "M",
              "N", "K", "ms", "OmniGEMM", "vendor ms", "vendor", "ratio", fused ? " vs plain" : "", "check",
              "vendor check / note");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.impl != "omnigemm") continue;
    const Row* v = (i + 1 < rows.size() && rows[i + 1].impl == "vendor") ? &rows[i + 1] : nullptr;
    std::string note = v ? (v->status == "ok" || v->status == "FAIL" ? v->check : v->status + ": " + v->note) : "-";
    if (r.status != "ok" && r.status != "FAIL") note = r.note;
    if (r.sweep == "random") {  // how the operands were stored
      Shape s = r.shape;
      s.storage = r.storage;
      note += "  [" + storage_text(s) + "]";
    }
    const std::string vs_plain = !fused ? "" : std::isfinite(r.vs_plain) ? fmt(" %8.3f", r.vs_plain) : std::string("        -");
    std::printf("%-7s %-18s %-3s %-*s %6lld %6lld %6lld %10s %12s %10s %12s %7s%s  %-8s %s\n", r.backend.c_str(),
                r.dt.name().c_str(), r.layout.c_str(), epi_w, r.epilogue.c_str(), (long long)r.shape.m, (long long)r.shape.n,
                (long long)r.shape.k, std::isfinite(r.t.median) ? fmt("%.4f", r.t.median).c_str() : "-",
                perf_text(r).c_str(), v && std::isfinite(v->t.median) ? fmt("%.4f", v->t.median).c_str() : "-",
                v ? perf_text(*v).c_str() : "-", std::isfinite(r.ratio) ? fmt("%.2fx", r.ratio).c_str() : "-",
                vs_plain.c_str(), r.status == "FAIL" ? r.check.c_str() : r.status.c_str(), note.c_str());
    // The vendor's implementation where it matters: fused epilogue or GEMM + separate pass.
    if (fused && r.epilogue != "none" && v && !v->label.empty())
      std::printf("%-7s %-18s   vendor: %s\n", "", "", v->label.c_str());
    // Further vendor rows of the same problem (block-scaled formats: the plain fp8 baseline).
    for (size_t j = i + 2; v && j < rows.size() && rows[j].impl == "vendor"; ++j) {
      const Row& w = rows[j];
      std::printf("%-7s %-18s   + vendor %s: %s %s, %s\n", "", "", w.label.c_str(),
                  std::isfinite(w.t.median) ? fmt("%.4f ms", w.t.median).c_str() : "-", perf_text(w).c_str(),
                  w.status == "ok" || w.status == "FAIL" ? w.check.c_str() : (w.status + ": " + w.note).c_str());
    }
  }
  std::puts("ratio = vendor time / OmniGEMM time on the same device in the same run (> 1: OmniGEMM faster).");
  if (fused)
    std::puts("vs plain = OmniGEMM's time with the epilogue / its time for the plain GEMM (epi none) of the same problem.");
}

static const char* kCsvHeader =
    "sweep,x,backend,device,impl,label,dtype_in,dtype_out,b_layout,epilogue,M,N,K,ms_median,ms_q20,ms_q80,tflops,"
    "samples,inner,sets,ratio_vendor_over_omnigemm,status,check,rel_error,tolerance,config,note,host_us_per_launch,"
    "fused_over_plain,lda,ldb,ldd,batch,b_broadcast,aligned";

// Leading dimensions as stored (packed when the row has no pads).
static int64_t ld_of(const Row& r, char which) {
  const Storage& st = r.storage;
  if (which == 'a') return std::max<int64_t>(st.a_col_major ? r.shape.m : r.shape.k, 1) + st.a_pad;
  if (which == 'b') return std::max<int64_t>(st.b_col_major ? r.shape.k : r.shape.n, 1) + st.b_pad;
  return std::max<int64_t>(r.shape.n, 1) + st.d_pad;
}

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << kCsvHeader << "\n";
  for (const Row& r : rows) {
    f << r.sweep << "," << fmt("%g", r.x) << "," << r.backend << "," << csv_field(r.device) << "," << r.impl << ","
      << csv_field(r.label) << "," << r.dt.in_name() << "," << og_dtype_name(r.dt.out) << "," << r.layout << ","
      << r.epilogue << "," << r.shape.m << "," << r.shape.n << "," << r.shape.k << "," << fmt("%.6g", r.t.median)
      << "," << fmt("%.6g", r.t.q20) << "," << fmt("%.6g", r.t.q80) << "," << fmt("%.6g", r.tflops) << ","
      << r.t.samples << "," << r.t.inner << "," << r.sets << "," << fmt("%.4g", r.ratio) << "," << r.status << ","
      << csv_field(r.check) << "," << fmt("%.3g", r.rel_error) << "," << fmt("%.3g", r.tol) << "," << r.config
      << "," << csv_field(r.note) << "," << fmt("%.3g", r.t.host_us) << "," << fmt("%.4g", r.vs_plain) << "," << ld_of(r, 'a') << "," << ld_of(r, 'b') << ","
      << ld_of(r, 'd') << "," << r.storage.batch << "," << (r.storage.b_broadcast ? 1 : 0) << "," << (r.aligned ? 1 : 0)
      << "\n";
  }
}


void write_json(const std::string& path, const Header& h, const std::vector<Row>& rows,
                const std::vector<RatioSummary>& summary) {
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
      << ", \"dtype_in\": " << jstr(r.dt.in_name()) << ", \"dtype_out\": " << jstr(og_dtype_name(r.dt.out))
      << ", \"b_layout\": " << jstr(r.layout) << ", \"epilogue\": " << jstr(r.epilogue) << ", \"M\": " << r.shape.m
      << ", \"N\": " << r.shape.n << ", \"K\": " << r.shape.k << ", \"ms_median\": " << jnum(r.t.median)
      << ", \"ms_q20\": " << jnum(r.t.q20) << ", \"ms_q80\": " << jnum(r.t.q80) << ", \"tflops\": " << jnum(r.tflops)
      << ", \"samples\": " << r.t.samples << ", \"inner\": " << r.t.inner << ", \"sets\": " << r.sets
      << ", \"ratio_vendor_over_omnigemm\": " << jnum(r.ratio) << ", \"status\": " << jstr(r.status)
      << ", \"check\": " << jstr(r.check) << ", \"rel_error\": " << jnum(r.rel_error)
      << ", \"tolerance\": " << jnum(r.tol) << ", \"config\": " << jstr(r.config) << ", \"note\": " << jstr(r.note)
      << ", \"lda\": " << ld_of(r, 'a') << ", \"ldb\": " << ld_of(r, 'b') << ", \"ldd\": " << ld_of(r, 'd')
      << ", \"batch\": " << r.storage.batch << ", \"b_broadcast\": " << (r.storage.b_broadcast ? "true" : "false")
      << ", \"aligned\": " << (r.aligned ? "true" : "false") << ", \"fused_over_plain\": " << jnum(r.vs_plain) << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]";
  write_summary_json(f, summary);
  f << "\n}\n";
}

// A plain SVG line chart of the successful rows (throughput against x), written without python
// when matplotlib is missing; plot.py makes the nicer PNG/SVG pair.
static void write_basic_svg(const std::string& path, const std::vector<Row>& rows, const std::string& title) {
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

static std::string exe_dir() {
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

static std::string find_plot_script() {
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

void write_plot(const std::string& out, const std::vector<Row>& rows, const Options& o, const Header& h) {
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

void print_explanations(const std::vector<Row>& rows) {
  for (const Row& r : rows) {
    if (r.impl != "omnigemm" || r.explanation.empty()) continue;
    std::printf("\n== explain: %s %s %s %s %s: %s\n", r.backend.c_str(), r.dt.name().c_str(), r.layout.c_str(),
                r.epilogue.c_str(), r.shape.label().c_str(), r.config.c_str());
    // The report's lines, indented under the row they explain.
    size_t start = 0;
    while (start < r.explanation.size()) {
      size_t end = r.explanation.find('\n', start);
      if (end == std::string::npos) end = r.explanation.size();
      std::printf("   %s\n", r.explanation.substr(start, end - start).c_str());
      start = end + 1;
    }
  }
}

}  // namespace omnigemm::bench
