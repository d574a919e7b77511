// Dispatch: from a validated problem to the (family, config) pairs a backend can run it with,
// ranked by the cost model, and from a chosen config to its family's launch.
#pragma once

#include <string>
#include <vector>

#include "backend.hpp"
#include "cost_model.hpp"

namespace omnigemm::detail {

struct Candidate {
  KernelFamily* family = nullptr;
  Config config;
  CostHints hints;
  CostTerms cost;
};

// Every config of every family of `be` that can run `p` and that its family offers for it (hint
// factor > 0), fastest predicted first; ties keep the families' order and their table order.
std::vector<Candidate> rank_candidates(const Backend& be, const Problem& p);

// The family that runs `cfg`: the one it names, or for a config that names none the first family
// (fastest first) that can implement it, whose name is then filled in. The refusal says, per
// family, why it cannot run the config, and lists the backend's families.
Status resolve_family(const Backend& be, const Problem& p, Config& cfg, KernelFamily*& out);

// Runs `p` with `cfg` (family resolved as above).
Status run_config(const Backend& be, const Problem& p, const Config& cfg, void* stream);

// The family of `be` called `name`, or nullptr.
KernelFamily* find_family(const Backend& be, const ShortName& name);

// Runs `p` with `cfg` on `family` (already chosen); a refusal says which config and device, as
// resolve_family's does.
Status run_on(const Backend& be, KernelFamily& family, const Problem& p, const Config& cfg, void* stream);

// "cuda: sm90_wgmma, sm80_mma, simt" for messages.
std::string family_list(const Backend& be);

}  // namespace omnigemm::detail
