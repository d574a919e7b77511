#include "tuner.hpp"

#include <cmath>
#include <cstdlib>

namespace omnigemm::detail {

std::string default_tune_cache_path() {
  if (const char* p = std::getenv("OMNIGEMM_TUNE_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/omnigemm/tune.txt";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/omnigemm/tune.txt";
  return "omnigemm-tune.txt";
}

Tuner::Tuner(std::string cache_path, og_tune_mode mode) : cache_path_(std::move(cache_path)), mode_(mode) {}

std::string Tuner::problem_key(const Backend& be, const Problem& p) {
  auto layout = [](const Operand& o) { return o.row_contiguous() ? 'r' : (o.col_contiguous() ? 'c' : 's'); };
  std::string k = og_backend_name(be.kind());
  k += "|" + be.device().name + "|" + be.device().driver;
  k += "|m" + std::to_string(p.m) + "n" + std::to_string(p.n) + "k" + std::to_string(p.k) + "b" +
       std::to_string(p.batch);
  k += std::string("|") + og_dtype_name(p.a.dtype) + layout(p.a) + "," + og_dtype_name(p.b.dtype) + layout(p.b) +
       "," + og_dtype_name(p.d.dtype) + layout(p.d);
  k += "|act" + std::to_string(int(p.activation)) + "bias" + std::to_string(int(p.bias_mode)) +
       (p.c.present ? "c" : "");
  return k;
}

Config Tuner::heuristic(const Backend& be, const Problem& p, const std::vector<Config>& cands) {
  // Score = fraction of the machine busy across all waves x how well a tile amortises its loads
  // (arithmetic intensity of a BM x BN tile grows with BM*BN/(BM+BN)), preferring fewer wasted
  // (masked) rows/columns at the edges.
  const int units = be.device().limits.compute_units > 0 ? be.device().limits.compute_units : 1;
  double best_score = -1;
  Config best = cands.front();
  for (const Config& c : cands) {
    const double tm = std::ceil(double(p.m) / c.block_m), tn = std::ceil(double(p.n) / c.block_n);
    const double tiles = tm * tn * double(p.batch) * c.split_k;
    const double waves = std::ceil(tiles / units);
    const double occupancy = tiles / (waves * units);
    const double useful = double(p.m) * double(p.n) / (tm * c.block_m * tn * c.block_n);
    const double intensity = double(c.block_m) * c.block_n / double(c.block_m + c.block_n);
    const double score = occupancy * useful * std::log2(1.0 + intensity);
    if (score > best_score) { best_score = score; best = c; }
  }
  return best;
}

Status Tuner::choose(Backend& be, const Problem& p, Config& out) {
  if (p.forced_config) { out = *p.forced_config; return {}; }
  std::vector<Config> cands = be.candidates(p);
  if (cands.empty())
    return error(StatusCode::unsupported, std::string("backend ") + og_backend_name(be.kind()) +
                                              " has no config that fits this problem on " + be.device().name);
  out = heuristic(be, p, cands);
  return {};
}

Status Tuner::tune(Backend&, const Problem&, Config&, const TuneOptions&) {
  return error(StatusCode::unsupported, "tuning not implemented yet");
}

}  // namespace omnigemm::detail
