#include "tuner.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "omnigemm/numeric.hpp"

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
  // Block-scaled operands add their scale mode and layout (fp8 with 128-blockwise scales is not
  // plain fp8; packed scales load differently from linear ones).
  auto scales = [](const Operand& o) {
    if (!o.scale.present()) return std::string();
    return std::string("/") + og_scale_mode_name(o.scale.mode) + "rcp"[o.scale.layout];
  };
  k += std::string("|") + og_dtype_name(p.a.dtype) + scales(p.a) + layout(p.a) + "," + og_dtype_name(p.b.dtype) +
       scales(p.b) + layout(p.b) + "," + og_dtype_name(p.d.dtype) + layout(p.d);
  k += "|act" + std::to_string(int(p.activation)) + "bias" + std::to_string(int(p.bias_mode)) +
       (p.c.present ? "c" : "");
  if (p.compute_mode == OG_COMPUTE_TF32) k += "|tf32";
  return k;
}

const char* choice_source_name(ChoiceSource s) {
  switch (s) {
    case ChoiceSource::heuristic: return "cost model";
    case ChoiceSource::tune_cache: return "tune cache";
    case ChoiceSource::tuned: return "tuned now";
    case ChoiceSource::forced: return "forced by the descriptor";
  }
  return "?";
}

namespace {

// One scratch copy of a problem's operands in the backend's memory, released on destruction.
class ScratchBuffers {
 public:
  explicit ScratchBuffers(Backend& be) : be_(be) {}
  ~ScratchBuffers() { for (const og_memory& m : owned_) be_.release(m); }
  ScratchBuffers(const ScratchBuffers&) = delete;
  ScratchBuffers& operator=(const ScratchBuffers&) = delete;

  // Allocates `elements` of `dtype` filled with random non-zero values in [-1, 1].
  Status make(int64_t elements, og_dtype dtype, og_memory& out) {
    const size_t bytes = size_t(std::max<int64_t>(elements, 1)) * size_t(dtype_bytes(dtype));
    Status s = be_.allocate(bytes, out);
    if (!s) return s;
    owned_.push_back(out);
    std::vector<uint8_t> host(bytes);
    std::uniform_real_distribution<float> mag(0.05f, 1.0f);
    for (size_t i = 0; i < bytes; i += size_t(dtype_bytes(dtype))) {
      const float v = (rng_() & 1) ? mag(rng_) : -mag(rng_);
      switch (dtype) {
        case OG_DTYPE_F32: std::memcpy(&host[i], &v, 4); break;
        case OG_DTYPE_F16: { uint16_t h = numeric::f32_to_f16(v); std::memcpy(&host[i], &h, 2); break; }
        case OG_DTYPE_BF16: { uint16_t h = numeric::f32_to_bf16(v); std::memcpy(&host[i], &h, 2); break; }
        case OG_DTYPE_FP8_E4M3: host[i] = numeric::f32_to_e4m3(v); break;
        case OG_DTYPE_FP8_E5M2: host[i] = numeric::f32_to_e5m2(v); break;
        default: host[i] = uint8_t(rng_()); break;
      }
    }
    return be_.upload(out, host.data(), bytes);
  }

  // A scale tensor for `b` over `batches` batches, every scale 1 (E8M0 127, e4m3 0x38, f32 1.0):
  // timings do not depend on the values, and no block turns into NaNs or infinities.
  Status make_scales(const BlockScale& b, int64_t batches, og_memory& out) {
    const size_t count = size_t(std::max<int64_t>((batches - 1) * b.batch_stride + b.extent(), 1));
    const size_t bytes = count * size_t(b.bytes);
    Status s = be_.allocate(bytes, out);
    if (!s) return s;
    owned_.push_back(out);
    std::vector<uint8_t> host(bytes);
    const float one = 1.0f;
    for (size_t i = 0; i < count; ++i) {
      if (b.bytes == 4) std::memcpy(&host[i * 4], &one, 4);
      else host[i] = b.mode == OG_SCALE_MODE_VEC16_UE4M3 ? 0x38 : 127;
    }
    return be_.upload(out, host.data(), bytes);
  }

 private:
  Backend& be_;
  std::vector<og_memory> owned_;
  std::mt19937 rng_{12345};
};

std::string cache_warning_prefix(const std::string& path) { return "omnigemm: tune cache " + path + ": "; }

// Exclusive advisory lock on "<path>.lock" for the lifetime of the object (no-op if the lock
// file cannot be created: then the directory is not writable and nothing will be written).
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

bool parse_tune_cache(const std::string& text, std::map<std::string, Tuner::Entry>& out, std::string& why) {
  out.clear();
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kTuneCacheHeader) {
    why = "not an OmniGEMM tune cache of this version (first line must be \"" + std::string(kTuneCacheHeader) + "\")";
    return false;
  }
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
      fields.push_back(line.substr(start, tab - start));
    fields.push_back(line.substr(start));
    Tuner::Entry e;
    auto cfg = fields.size() == 4 ? Config::parse(fields[1]) : std::nullopt;
    char* end = nullptr;
    if (cfg) e.median_ms = std::strtod(fields[2].c_str(), &end);
    const bool ms_ok = cfg && end && *end == '\0' && std::isfinite(e.median_ms) && e.median_ms >= 0;
    if (ms_ok) e.unix_time = std::strtoll(fields[3].c_str(), &end, 10);
    if (!ms_ok || fields[0].empty() || *end != '\0' || fields[3].empty()) {
      why = "line " + std::to_string(line_no) + " is malformed";
      out.clear();
      return false;
    }
    e.config = *cfg;
    out[fields[0]] = e;
  }
  if (!text.empty() && text.back() != '\n') {  // a writer never leaves a partial last line
    why = "truncated (no newline at the end)";
    out.clear();
    return false;
  }
  return true;
}

std::string format_tune_cache(const std::map<std::string, Tuner::Entry>& entries) {
  std::string s = std::string(kTuneCacheHeader) + "\n";
  char ms[64];
  for (const auto& [key, e] : entries) {
    std::snprintf(ms, sizeof ms, "%.6g", e.median_ms);
    s += key + "\t" + e.config.to_string() + "\t" + ms + "\t" + std::to_string(e.unix_time) + "\n";
  }
  return s;
}

void Tuner::load_locked() {
  if (loaded_) return;
  loaded_ = true;
  std::string text, why;
  if (!read_file(cache_path_, text)) return;  // no cache yet
  if (!parse_tune_cache(text, entries_, why))
    std::fprintf(stderr, "%s%s; ignoring it\n", cache_warning_prefix(cache_path_).c_str(), why.c_str());
}

std::optional<Config> Tuner::lookup(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  load_locked();
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.config;
}

Status Tuner::record(const std::string& key, const Config& config, double median_ms) {
  if (key.find_first_of("\t\n") != std::string::npos)
    return error(StatusCode::invalid_argument, "tune cache keys cannot contain tabs or newlines");
  std::lock_guard<std::mutex> lock(mutex_);
  load_locked();
  const Entry entry{config, median_ms, (long long)std::time(nullptr)};
  entries_[key] = entry;
  {
    std::lock_guard<std::mutex> memo_lock(choices_mutex_);
    choices_.clear();  // a remembered choice may predate this entry
  }

  auto warn_once = [&](const std::string& what) {
    if (!warned_write_)
      std::fprintf(stderr, "%s%s; results are kept in memory only\n", cache_warning_prefix(cache_path_).c_str(),
                   what.c_str());
    warned_write_ = true;
    return Status{};  // the GEMM goes on without a persistent cache
  };
  std::error_code ec;
  const std::filesystem::path path(cache_path_);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  FileLock file_lock(cache_path_);
  if (!file_lock.held()) return warn_once("cannot create its lock file (" + std::string(std::strerror(errno)) + ")");

  // Merge with what other processes wrote since we loaded, then replace the file atomically.
  std::map<std::string, Entry> on_disk;
  std::string text, why;
  if (read_file(cache_path_, text) && !parse_tune_cache(text, on_disk, why)) {
    std::fprintf(stderr, "%s%s; rewriting it\n", cache_warning_prefix(cache_path_).c_str(), why.c_str());
    on_disk.clear();
  }
  on_disk[key] = entry;
  for (const auto& [k, e] : on_disk) entries_.emplace(k, e);  // learn other writers' entries

  const std::string tmp = cache_path_ + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << format_tune_cache(on_disk);
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return warn_once("cannot write " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), cache_path_.c_str()) != 0) {
    std::remove(tmp.c_str());
    return warn_once("cannot rename the new cache into place (" + std::string(std::strerror(errno)) + ")");
  }
  return {};
}

size_t Tuner::SignatureHash::operator()(const Signature& s) const {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : s) h = (h ^ uint64_t(v)) * 1099511628211ull;
  return size_t(h ^ (h >> 29));
}

Tuner::Signature Tuner::signature(const Problem& p) {
  // Per operand: dtype, which stride is 1, whether base, strides and batch stride are
  // multiples of 16 bytes (what the families' loaders test) and the strides of 32 and 128 bytes
  // (the pitches at which lines straddle sectors or not: what the choice between loading in
  // place and copying depends on), in one integer.
  auto operand = [&](const Operand& o) -> int64_t {
    if (!o.present) return -1;
    const int64_t eb = dtype_bytes(o.dtype);
    const uintptr_t base = reinterpret_cast<uintptr_t>(o.mem.ptr) + uintptr_t(o.mem.offset);
    int64_t bits = int64_t(o.dtype);
    bits = bits * 2 + (o.stride_row == 1);
    bits = bits * 2 + (o.stride_col == 1);
    bits = bits * 2 + (base % 16 == 0);
    bits = bits * 2 + ((o.stride_row * eb) % 16 == 0);
    bits = bits * 2 + ((o.stride_col * eb) % 16 == 0);
    bits = bits * 2 + ((o.stride_row * eb) % 32 == 0);
    bits = bits * 2 + ((o.stride_col * eb) % 32 == 0);
    bits = bits * 2 + ((o.stride_row * eb) % 128 == 0);
    bits = bits * 2 + ((o.stride_col * eb) % 128 == 0);
    bits = bits * 2 + ((o.batch_stride * eb) % 16 == 0);
    bits = bits * 2 + (o.batch_stride > 0);
    bits = bits * 8 + int64_t(o.scale.mode);
    bits = bits * 4 + (o.scale.present() ? int64_t(o.scale.layout) : 0);
    return bits * 8 + int64_t(o.mem.kind);
  };
  const int64_t epilogue = ((int64_t(p.activation) * 4 + int64_t(p.bias_mode)) * 8 + int64_t(p.bias_dtype)) * 2 + (p.beta != 0.0f);
  return {p.m, p.n, p.k, p.batch, operand(p.a), operand(p.b), operand(p.c), operand(p.d), epilogue, 0, 0, 0};
}

Status Tuner::choose(Backend& be, const Problem& p, Config& out, ChoiceSource* source, bool allow_tuning,
                     KernelFamily** family) {
  auto from = [&](ChoiceSource s) {
    if (source) *source = s;
    return Status{};
  };
  if (!p.forced_config) {
    std::lock_guard<std::mutex> lock(choices_mutex_);
    if (auto it = choices_.find(signature(p)); it != choices_.end()) {
      out = it->second.config;
      if (family) *family = it->second.family;
      return from(it->second.source);
    }
  }
  ChoiceSource got = ChoiceSource::heuristic;
  KernelFamily* chosen = nullptr;
  Status s = choose_uncached(be, p, out, &got, allow_tuning, &chosen);
  if (family) *family = chosen;
  if (source) *source = got;
  // Remember it, unless it was forced or the cost model's pick stands in for a tuning run that
  // has not happened (explain) or failed (the next call tries again).
  const bool tuning_pending = mode_ == OG_TUNE_ON_MISS && got == ChoiceSource::heuristic;
  if (s && !p.forced_config && !tuning_pending) {
    std::lock_guard<std::mutex> lock(choices_mutex_);
    if (choices_.size() >= kMaxRemembered) choices_.clear();
    choices_[signature(p)] = Remembered{out, got, chosen};
  }
  return s;
}

Status Tuner::choose_uncached(Backend& be, const Problem& p, Config& out, ChoiceSource* source, bool allow_tuning,
                              KernelFamily** family) {
  auto from = [&](ChoiceSource s) {
    if (source) *source = s;
    return Status{};
  };
  if (p.forced_config) {
    out = *p.forced_config;
    if (!out.family.empty()) {  // checked by the family's plan when it runs
      *family = find_family(be, out.family);
      if (*family) return from(ChoiceSource::forced);
    }
    Status s = resolve_family(be, p, out, *family);
    if (!s) return s;
    return from(ChoiceSource::forced);
  }
  const std::vector<Candidate> ranked = rank_candidates(be, p);
  if (ranked.empty())
    return error(StatusCode::unsupported, std::string("backend ") + og_backend_name(be.kind()) +
                                              " has no kernel family and config that run this problem on " + be.device().name +
                                              " (families of " + family_list(be) + ")");
  if (mode_ != OG_TUNE_OFF) {
    const std::string key = problem_key(be, p);
    if (auto cached = lookup(key)) {
      // A cached config the backend no longer offers (or cannot run here) is ignored.
      for (const Candidate& c : ranked)
        if (c.config == *cached) {
          out = *cached;
          *family = c.family;
          return from(ChoiceSource::tune_cache);
        }
    }
    if (mode_ == OG_TUNE_ON_MISS && allow_tuning) {
      Status s = tune(be, p, out);
      if (s) {
        *family = find_family(be, out.family);
        return from(ChoiceSource::tuned);
      }
      std::fprintf(stderr, "omnigemm: tuning failed (%s); using the cost model's choice\n", s.message.c_str());
    }
  }
  out = ranked.front().config;
  *family = ranked.front().family;
  return from(ChoiceSource::heuristic);
}

Status Tuner::tune(Backend& be, const Problem& p, Config& best, const TuneOptions& opt) {
  // The candidates the cost model predicts within opt.window of its best (ranked fastest first).
  std::vector<Config> cands;
  const std::vector<Candidate> ranked = rank_candidates(be, p);
  for (const Candidate& c : ranked)
    if (c.cost.ms <= opt.window * ranked.front().cost.ms) cands.push_back(c.config);
  if (cands.empty())
    return error(StatusCode::unsupported, std::string("backend ") + og_backend_name(be.kind()) +
                                              " has no config that fits this problem");
  // Scratch operands: never the caller's buffers (an in-place C == D would be destroyed).
  // Inputs rotate over several sets so that repeated runs do not measure a warm cache.
  ScratchBuffers scratch(be);
  const int64_t a_elems = p.a.present ? p.a.extent_elements(p.batch) : 0;
  const int64_t b_elems = p.b.present ? p.b.extent_elements(p.batch) : 0;
  const long long set_bytes = a_elems * dtype_bytes(p.a.dtype) + b_elems * dtype_bytes(p.b.dtype);
  const long long rotate = opt.rotate_bytes > 0 ? opt.rotate_bytes : 2 * be.device().limits.l2_bytes;
  const long long max_bytes = 1ll << 30;
  int sets = set_bytes > 0 ? int(std::clamp<long long>((rotate + set_bytes - 1) / set_bytes, 1, 16)) : 1;
  while (sets > 1 && sets * set_bytes > max_bytes) --sets;

  Problem base = p;
  base.forced_config.reset();
  // Candidates run on the engine's own workspace: the caller's may be sized for one config only.
  base.workspace = og_memory{};
  base.workspace_bytes = 0;
  Status s;
  if (!(s = scratch.make(p.d.extent_elements(p.batch), p.d.dtype, base.d.mem))) return s;
  if (p.c.present) {
    const bool in_place = p.c.mem.kind == p.d.mem.kind && p.c.mem.ptr == p.d.mem.ptr &&
                          p.c.mem.vk_buffer == p.d.mem.vk_buffer && p.c.mem.offset == p.d.mem.offset;
    if (in_place) base.c.mem = base.d.mem;
    else if (!(s = scratch.make(p.c.extent_elements(p.batch), p.c.dtype, base.c.mem))) return s;
  }
  if (p.bias_mode != OG_BIAS_NONE) {
    const int64_t len = (p.bias_mode == OG_BIAS_PER_N ? p.n : p.m) + (p.batch - 1) * p.bias_batch_stride;
    if (!(s = scratch.make(len, p.bias_dtype, base.bias))) return s;
  }
  // Block scales: scratch too (the caller's may be host memory the engine has not staged yet).
  for (Operand* o : {&base.a, &base.b})
    if (o->present && o->scale.present() && !(s = scratch.make_scales(o->scale, p.batch, o->scale.mem))) return s;
  std::vector<Problem> rotation(size_t(sets), base);
  for (Problem& q : rotation) {
    if (p.a.present && !(s = scratch.make(a_elems, p.a.dtype, q.a.mem))) return s;
    if (p.b.present && !(s = scratch.make(b_elems, p.b.dtype, q.b.mem))) return s;
  }

  double best_ms = INFINITY;
  std::string failures;
  size_t next = 0;
  // Bring the clocks up first (the first candidate, for as long as the backend asks), so that
  // the first candidates are not timed at idle clocks.
  const auto ramp_start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - ramp_start).count() < be.clock_ramp_ms()) {
    double ms = 0;
    if (!be.time_ms([&] { return run_config(be, rotation[next++ % rotation.size()], cands.front(), nullptr); }, ms)) break;
  }
  for (const Config& c : cands) {
    auto launch = [&] { return run_config(be, rotation[next++ % rotation.size()], c, nullptr); };
    Status r;
    for (int w = 0; w < opt.warmup && r; ++w) r = launch();
    if (r) r = be.synchronize(nullptr);
    std::vector<double> times;
    for (int i = 0; i < opt.repeats && r; ++i) {
      double ms = 0;
      r = be.time_ms(launch, ms);
      times.push_back(ms);
    }
    if (!r) {  // e.g. a config the device rejects at run time: skip it, say why if all fail
      failures += (failures.empty() ? "" : "; ") + c.to_string() + ": " + r.message;
      continue;
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    const double median = times[times.size() / 2];
    if (median < best_ms) { best_ms = median; best = c; }
  }
  if (!std::isfinite(best_ms))
    return error(StatusCode::backend_failure, "every candidate config failed: " + failures);
  return record(problem_key(be, p), best, best_ms);
}

}  // namespace omnigemm::detail
