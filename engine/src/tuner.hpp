// Config choice: a versioned on-disk cache of timed results, the timing loop that fills it, and a
// wave-quantisation-aware heuristic for problems without a cache entry.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "backend.hpp"

namespace omnigemm::detail {

struct TuneOptions {
  int warmup = 3;
  int repeats = 10;                // median of these
  long long rotate_bytes = 0;      // rotating input sets until their size exceeds this (0: 2 x L2)
};

class Tuner {
 public:
  Tuner(std::string cache_path, og_tune_mode mode);

  // The config to run `p` with: the forced one, else the cache entry, else (in on-miss mode) a
  // fresh tuning run, else the heuristic.
  Status choose(Backend& backend, const Problem& p, Config& out);

  // Time every candidate on scratch buffers and store the best in the cache.
  Status tune(Backend& backend, const Problem& p, Config& best, const TuneOptions& opt = {});

  // Problem key: backend, device name + driver, M, N, K, batch, dtypes, layouts, epilogue.
  static std::string problem_key(const Backend& backend, const Problem& p);
  static Config heuristic(const Backend& backend, const Problem& p, const std::vector<Config>& candidates);

  const std::string& cache_path() const { return cache_path_; }

 private:
  std::string cache_path_;
  og_tune_mode mode_;
  std::mutex mutex_;
};

// Default cache path: $OMNIGEMM_TUNE_CACHE, else $XDG_CACHE_HOME/omnigemm/tune.txt, else
// ~/.cache/omnigemm/tune.txt.
std::string default_tune_cache_path();

}  // namespace omnigemm::detail
