// omnigemm-bench: OmniGEMM against the vendor GEMM of the same device, in the same run, through
// the public API only.
//
// For every problem (shape x dtype x epilogue) and every backend: inputs are random (never
// zero), uploaded into several rotating buffer sets whose total exceeds twice the device's L2;
// each implementation is warmed up, then timed with og_context_time (CUDA events / Vulkan
// timestamps on the device's default queue, a host clock on the CPU) over many samples, and its
// result is checked ONCE against a float64 reference (every element for small problems, 256
// sampled elements otherwise). A wrong result marks the row FAIL. Run with --help for options.
//
// The parts: bench_options (command line), bench_measure (memory, timing, rotation, warm-up),
// bench_check (inputs and the check), bench_run (one problem on one backend), bench_report
// (table, explain reports, CSV/JSON, plot), bench_random (--random's problems), bench_summary
// (its ratio statistics), vendor (the vendor baselines).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_check.hpp"
#include "bench_measure.hpp"
#include "bench_options.hpp"
#include "bench_random.hpp"
#include "bench_report.hpp"
#include "bench_run.hpp"
#include "bench_summary.hpp"
#include "bench_util.hpp"
#include "vendor.hpp"

using namespace omnigemm::bench;
using omnigemm::Status;

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
    if (Status s = device_info(ctx, bs.dev); !s) {
      std::printf("backend %-6s: no capabilities (%s)\n", og_backend_name(k), s.message.c_str());
      h.lines.push_back({std::string(og_backend_name(k)) + " unavailable", s.message});
      if (explicit_backends) skipped_backends.push_back(std::string("SKIPPED ") + og_backend_name(k) + ": " + s.message);
      og_context_destroy(ctx);
      continue;
    }
    const DeviceInfo& dev = bs.dev;
    std::printf("backend %-6s: %s | driver %s | L2 %lld bytes\n", og_backend_name(k), dev.name.c_str(),
                dev.driver.c_str(), dev.l2_bytes);
    h.lines.push_back({std::string(og_backend_name(k)) + " device", dev.name});
    h.lines.push_back({std::string(og_backend_name(k)) + " driver", dev.driver});
    if (o.vendor) {
      bs.vendor = load_vendor(k, bs.ctx, bs.vendor_why);
      std::printf("  vendor baseline: %s\n", bs.vendor ? bs.vendor->library().c_str() : ("none: " + bs.vendor_why).c_str());
      h.lines.push_back({std::string(og_backend_name(k)) + " vendor", bs.vendor ? bs.vendor->library() : "none: " + bs.vendor_why});
    }
    if (o.fused()) {
      bs.act = load_activation_pass(k, bs.act_why);
      bool gelu = false;
      for (const EpilogueChoice& e : o.epilogues) gelu |= e.act == OG_ACT_GELU_TANH;
      if (gelu && bs.vendor)
        if (std::string probe = bs.vendor->probe_gelu(); !probe.empty()) {
          std::printf("  %s\n", probe.c_str());
          h.lines.push_back({std::string(og_backend_name(k)) + " vendor gelu", probe});
        }
    }
    backends.push_back(std::move(bs));
  }
  std::fflush(stdout);
  if (backends.empty()) {
    std::fprintf(stderr, "omnigemm-bench: none of the requested backends is available\n");
    return 2;
  }

  // The problems: every dtype x every shape, or (--random) each drawn shape with its own dtype.
  struct Planned {
    DtypeSpec dt;
    size_t si;
  };
  std::vector<Planned> planned;
  if (o.sweep == "random") {
    for (size_t si = 0; si < o.shapes.size(); ++si) planned.push_back({o.dtypes[size_t(o.shapes[si].dtype)], si});
  } else {
    for (const DtypeSpec& dt : o.dtypes)
      for (size_t si = 0; si < o.shapes.size(); ++si) planned.push_back({dt, si});
  }
  std::vector<Row> rows;
  const size_t total = planned.size() * backends.size();
  size_t done = 0;
  uint64_t problem_index = 0;
  const bool progress = isatty(2);  // a terminal: the progress line rewrites itself
  {
    for (const Planned& pp : planned) {
      const DtypeSpec& dt = pp.dt;
      const size_t si = pp.si;
      const Shape& sh = o.shapes[si];
      const bool fp8 = dt.in == OG_DTYPE_FP8_E4M3 || dt.in == OG_DTYPE_FP8_E5M2;
      HostProblem hp;
      hp.shape = sh;
      hp.dt = dt;
      if (sh.drawn || sh.stored) hp.st = sh.storage;
      else hp.st.b_col_major = o.b_layout == "col" || (o.b_layout == "auto" && fp8) || !dt.format.empty();
      hp.slope = o.leaky_slope;
      hp.forced_config = o.forced_config;
      bool prepared = false;
      ++problem_index;
      for (BackendState& bs : backends) {
        ++done;
        Row base;
        base.sweep = o.sweep;
        base.x = o.sweep == "square" ? double(sh.m) : o.sweep == "k" ? double(sh.k) : sh.draw >= 0 ? double(sh.draw) : double(si);
        base.backend = og_backend_name(bs.kind);
        base.device = bs.dev.name;
        base.dt = dt;
        base.layout = std::string(hp.st.a_col_major ? "c" : "r") + (hp.st.b_col_major ? "c" : "r");
        base.storage = hp.st;
        Shape stored = sh;
        stored.storage = hp.st;
        base.aligned = storage_aligned(stored, dt.in, dt.out);
        base.epilogue = "none";
        base.shape = sh;
        // One updating line on a terminal; one line per configuration in a log (shows where a run stopped).
        std::fprintf(stderr, progress ? "\r\033[K[%zu/%zu] %s %s %s ..." : "[%zu/%zu] %s %s %s\n", done, total,
                     base.backend.c_str(), dt.name().c_str(), sh.label().c_str());
        std::fflush(stderr);
        // Time budget: skip what the best measured rate says would take too long. Before the first
        // measurement a CPU is assumed to reach 20 GFLOP/s per core; on a GPU a rate measured only on
        // problems over 100x smaller (launch-bound) says nothing about this one, which then runs.
        const bool cpu = bs.kind == OG_BACKEND_CPU;
        const double gflop = flops(sh, hp.st) / 1e9;
        const double rate = cpu ? (bs.rate_gflops > 0 ? bs.rate_gflops : 20.0 * bs.dev.compute_units)
                            : gflop <= 100 * bs.largest_gflop ? bs.rate_gflops : 0;
        const double est_s = rate > 0 ? gflop / rate * (o.min_samples + 2) * 2 : 0;
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
          if (Status ps = make_host_problem(hp, o.seed + problem_index * 1000003ull); !ps) {
            Row r = base;
            r.impl = "omnigemm";
            r.status = r.check = "error";
            r.note = "inputs: " + ps.message;
            rows.push_back(r);
            continue;
          }
          prepared = true;
        }
        // Every epilogue of --epilogue on this problem; the plain GEMM's row (the first) is what
        // the fused rows' vs_plain compares with.
        const uint64_t problem_seed = o.seed + problem_index * 1000003ull;
        const size_t first_row = rows.size();
        for (const EpilogueChoice& e : o.epilogues) {
          set_epilogue(hp, e, problem_seed);
          Row eb = base;
          eb.epilogue = e.name();
          bench_one(bs, hp, o, eb, rows);
        }
        const Row* plain = nullptr;
        for (size_t i = first_row; i < rows.size(); ++i)
          if (rows[i].impl == "omnigemm" && rows[i].epilogue == "none") plain = &rows[i];
        for (size_t i = first_row; plain && i < rows.size(); ++i)
          if (rows[i].impl == "omnigemm" && rows[i].epilogue != "none" && rows[i].status == "ok" && plain->status == "ok")
            rows[i].vs_plain = rows[i].t.median / plain->t.median;
      }
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  h.lines.push_back({"load average at end", load_average()});
  if (o.explain) print_explanations(rows);
  print_table(rows);
  const std::vector<RatioSummary> summary = o.sweep == "random" ? summarize_ratios(rows) : std::vector<RatioSummary>{};
  if (o.sweep == "random") print_summary(summary, o.seed);
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
  write_json(out + "/results.json", h, rows, summary);
  std::printf("wrote %s/results.csv and %s/results.json\n", out.c_str(), out.c_str());
  if (o.sweep == "random") {
    write_summary_csv(out + "/summary.csv", summary);
    std::printf("wrote %s/summary.csv\n", out.c_str());
  }
  std::fflush(stdout);  // keep our lines before those of the plot script
  if (o.plot && o.sweep != "random") write_plot(out, rows, o, h);

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
