#include "dispatch.hpp"

#include <algorithm>

namespace omnigemm::detail {

std::vector<Candidate> rank_candidates(const Backend& be, const Problem& p) {
  std::vector<Candidate> out;
  for (KernelFamily* f : be.families()) {
    for (const Config& c : f->configs()) {
      if (!f->can_implement(p, c)) continue;
      Candidate cand{f, c, f->hints(p, c), {}};
      if (!(cand.hints.factor > 0)) continue;
      cand.cost = predict(p, c, cand.hints, be.device().limits);
      out.push_back(cand);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.cost.ms < b.cost.ms; });
  return out;
}

std::string family_list(const Backend& be) {
  std::string s = std::string(og_backend_name(be.kind())) + ":";
  bool first = true;
  for (const KernelFamily* f : be.families()) {
    s += (first ? " " : ", ") + std::string(f->name());
    first = false;
  }
  return s;
}

Status resolve_family(const Backend& be, const Problem& p, Config& cfg, KernelFamily*& out) {
  out = nullptr;
  const std::string backend = og_backend_name(be.kind());
  if (!cfg.family.empty()) {
    for (KernelFamily* f : be.families())
      if (cfg.family == f->name()) {
        Status s = f->can_implement(p, cfg);
        if (!s)
          return error(StatusCode::unsupported,
                       backend + ": config " + cfg.to_string() + " cannot run this problem on " + be.device().name + ": " + s.message);
        out = f;
        return {};
      }
    return error(StatusCode::unsupported, backend + ": config " + cfg.to_string() + " names no kernel family of this backend on " +
                                              be.device().name + " (families of " + family_list(be) + ")");
  }
  std::string reasons;
  for (KernelFamily* f : be.families()) {
    Config named = cfg;
    named.family = f->name();
    Status s = f->can_implement(p, named);
    if (s) {
      cfg = named;
      out = f;
      return {};
    }
    reasons += std::string(reasons.empty() ? "" : "; ") + f->name() + ": " + s.message;
  }
  return error(StatusCode::unsupported, backend + ": no kernel family runs config " + cfg.to_string() + " for this problem on " +
                                            be.device().name + " (" + reasons + ")");
}

KernelFamily* find_family(const Backend& be, const ShortName& name) {
  for (KernelFamily* f : be.families())
    if (name == f->name()) return f;
  return nullptr;
}

Status run_on(const Backend& be, KernelFamily& family, const Problem& p, const Config& cfg, void* stream) {
  Status s = family.run(p, cfg, stream);
  if (!s && s.code == StatusCode::unsupported && s.message.rfind(og_backend_name(be.kind()), 0) != 0)
    return error(s.code, std::string(og_backend_name(be.kind())) + ": config " + cfg.to_string() + " cannot run this problem on " +
                             be.device().name + ": " + s.message);
  return s;
}

Status run_config(const Backend& be, const Problem& p, const Config& cfg, void* stream) {
  Config named = cfg;
  KernelFamily* f = nullptr;
  Status s = resolve_family(be, p, named, f);
  if (!s) return s;
  return f->run(p, named, stream);
}

}  // namespace omnigemm::detail
