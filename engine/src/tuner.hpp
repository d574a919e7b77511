// Config choice: a versioned on-disk cache of timed results, the timing loop that fills it, and the
// cost model's ranking (dispatch.hpp) for problems without a cache entry.
#pragma once

#include <array>
#include <map>
#include <unordered_map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dispatch.hpp"

namespace omnigemm::detail {

struct TuneOptions {
  int warmup = 3;
  int repeats = 10;                // median of these
  long long rotate_bytes = 0;      // rotating input sets until their size exceeds this (0: 2 x L2)
  // Candidates timed: those the cost model predicts within this factor of its best.
  double window = 3.0;
};

// Where a chosen config came from.
enum class ChoiceSource { heuristic, tune_cache, tuned, forced };
const char* choice_source_name(ChoiceSource s);

class Tuner {
 public:
  Tuner(std::string cache_path, og_tune_mode mode);

  // The config to run `p` with (its family named): the forced one, else the cache entry, else
  // (in on-miss mode, unless `allow_tuning` is false) a fresh tuning run, else the cost model's
  // first choice. `source` (optional) says which.
  // `family` (optional) receives the family that runs it. A forced config that names its family
  // is not checked here: the family's plan refuses it with the same message when it runs.
  Status choose(Backend& backend, const Problem& p, Config& out, ChoiceSource* source = nullptr,
                bool allow_tuning = true, KernelFamily** family = nullptr);

  // choose() without the memo of earlier choices (see signature()).
  Status choose_uncached(Backend& backend, const Problem& p, Config& out, ChoiceSource* source, bool allow_tuning,
                         KernelFamily** family);

  // Time the candidates on scratch buffers and store the best in the cache.
  Status tune(Backend& backend, const Problem& p, Config& best, const TuneOptions& opt = {});

  // Problem key: backend, device name + driver, M, N, K, batch, dtypes, layouts, epilogue.
  static std::string problem_key(const Backend& backend, const Problem& p);
  // The cost model's first choice among `ranked` (rank_candidates' order): its first entry.
  static Config heuristic(const std::vector<Candidate>& ranked) { return ranked.front().config; }

  // The cache, by problem key. lookup() loads the file on first use; record() merges one entry
  // into the file under an exclusive lock and replaces it atomically (temp file + rename), so
  // concurrent threads and processes neither corrupt it nor lose each other's entries.
  std::optional<Config> lookup(const std::string& key);
  Status record(const std::string& key, const Config& config, double median_ms);

  const std::string& cache_path() const { return cache_path_; }
  og_tune_mode mode() const { return mode_; }

  struct Entry {
    Config config;
    double median_ms = 0;
    long long unix_time = 0;
  };

 private:
  void load_locked();  // mutex_ held

  // What a choice depends on, in a few integers: sizes, dtypes, layouts, 16-byte alignment of
  // every operand's base and strides, their strides' multiples of 32 and 128 bytes, the
  // epilogue. Two problems with the same signature get the same choice, so repeated calls skip
  // the ranking.
  using Signature = std::array<int64_t, 12>;
  struct SignatureHash {
    size_t operator()(const Signature& s) const;
  };
  static Signature signature(const Problem& p);
  struct Remembered {
    Config config;
    ChoiceSource source;
    KernelFamily* family;
  };
  static constexpr size_t kMaxRemembered = 4096;  // then the memo starts over: memory stays bounded
  std::mutex choices_mutex_;
  std::unordered_map<Signature, Remembered, SignatureHash> choices_;

  std::string cache_path_;
  og_tune_mode mode_;
  std::mutex mutex_;
  bool loaded_ = false;
  bool warned_write_ = false;
  std::map<std::string, Entry> entries_;
};

// Cache file text <-> entries. parse returns false (and why) for a foreign, corrupt or
// truncated file: such a file is ignored as a whole, never used in part.
// v2: configs name their kernel family ("sm90_wgmma:128x256x64-..."); a v1 file is ignored with a
// warning and rewritten on the next record.
inline constexpr const char* kTuneCacheHeader = "omnigemm-tune-cache v2";
bool parse_tune_cache(const std::string& text, std::map<std::string, Tuner::Entry>& out, std::string& why);
std::string format_tune_cache(const std::map<std::string, Tuner::Entry>& entries);

// Default cache path: $OMNIGEMM_TUNE_CACHE, else $XDG_CACHE_HOME/omnigemm/tune.txt, else
// ~/.cache/omnigemm/tune.txt.
std::string default_tune_cache_path();

}  // namespace omnigemm::detail
