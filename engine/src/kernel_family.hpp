// The kernel-family contract every backend implements. A family is one kernel design (e.g. the
// Hopper TMA/wgmma kernel, the Vulkan cooperative-matrix shader) with ONE table of configs as data
// (backends/<name>/families/<family>.inc) from which its instantiations and its launch dispatch
// are generated. The engine asks each family whether it can run a problem with a config, ranks
// the (family, config) pairs with its cost model fed by the family's hints, and runs the chosen
// pair; it never interprets a family's forms or tiles itself.
#pragma once

#include <span>
#include <string>

#include "config_space.hpp"
#include "omnigemm/omnigemm.hpp"
#include "problem.hpp"

namespace omnigemm::detail {

// What a family tells the cost model about one (problem, config) beyond what the engine derives
// from the tile itself (waves, edge waste, split-K slices, tile intensity).
struct CostHints {
  // Fraction of the device's peak rate for these inputs that the family's main loop reaches on
  // full tiles. It ranks families against each other (a tensor-core kernel over a SIMT one).
  double efficiency = 1.0;
  // A modelled effect of this config on this problem that the tile counts do not see, as a
  // factor on the rate (1: none; 0: the family does not offer the config for this problem,
  // though a forced config still runs). `note` says what it models, for explain.
  double factor = 1.0;
  const char* note = nullptr;
  // The fixed price of splitting K, in K-steps of a 128x64x64 tile (partials through memory and
  // one more epilogue per tile); the model scales it by the bytes a step of this tile loads.
  double split_fixed_steps = 24;
  // Work the family does besides its kernel's main loop, added to the predicted time: bytes it
  // moves through device memory (e.g. copying misaligned operands into an aligned workspace, read
  // and written), priced at the device's memory bandwidth, and a fixed time in microseconds (e.g.
  // one more launch on the stream).
  double extra_bytes = 0;
  double extra_us = 0;
  // Share of the device's memory bandwidth the main loop reaches where streaming the operands
  // and D (each once) bounds it rather than its FLOPs: skinny and short-K problems.
  double memory_efficiency = 0.75;
  // Work items per compute unit the main loop needs in flight to reach that share (0: any number;
  // fewer items stream proportionally slower).
  double memory_items_per_unit = 0;
  // The least time the family's kernel takes on this problem where latency, not throughput,
  // bounds it (e.g. a fixed time per K-step and per output tile for each wave of resident
  // blocks), in microseconds: the prediction is at least this (0: no floor).
  double latency_us = 0;
};

// The launch one (problem, config) gets, as planned once per call: what explain reports.
struct PlanSummary {
  long long grid[3] = {1, 1, 1};
  int cluster = 1;             // workgroups per cluster (1: none)
  int threads = 0;             // per workgroup
  long long shared_bytes = 0;  // per workgroup
  long long workspace_bytes = 0;  // device workspace of the call (what a caller's workspace must hold)
  std::string notes;           // e.g. "runs D^T = B^T A^T", "epilogue through TMA stores"
};

class KernelFamily {
 public:
  virtual ~KernelFamily() = default;

  // The family's name, the prefix of its configs' text form ("sm90_wgmma:128x256x64-...").
  virtual const char* name() const = 0;
  // Its config table; every row names this family.
  virtual std::span<const Config> configs() const = 0;

  // OK when this family runs `p` with `c` on this device, else a status whose message says why
  // not (the message names the family's rule, not the family itself: explain prefixes it).
  // Cheap: no launch is built.
  virtual Status can_implement(const Problem& p, const Config& c) const = 0;
  // The cost model's inputs from this family (only asked for configs it can implement).
  virtual CostHints hints(const Problem&, const Config&) const { return {}; }
  // Plans the launch and summarises it, without launching.
  virtual Status describe(const Problem& p, const Config& c, PlanSummary& out) const = 0;
  // Plans the launch once and enqueues it as planned on `stream` (nullptr: the backend's own
  // queue). A config this family cannot run is refused with can_implement's message.
  virtual Status run(const Problem& p, const Config& c, void* stream) = 0;
  // Makes now what a later run() of (p, c) would otherwise make on its first call (e.g. a
  // compiled pipeline) and keeps it; runs nothing. Families with nothing to make only plan.
  virtual Status prepare(const Problem& p, const Config& c) {
    PlanSummary unused;
    return describe(p, c, unused);
  }
};

// The usual shape of a family: a typed launch built once by plan() and launched as is.
template <class Launch>
class PlannedFamily : public KernelFamily {
 public:
  Status describe(const Problem& p, const Config& c, PlanSummary& out) const final {
    Launch l{};
    Status s = plan(p, c, l);
    if (!s) return s;
    summarize(l, out);
    return {};
  }
  Status run(const Problem& p, const Config& c, void* stream) final {
    Launch l{};
    Status s = plan(p, c, l);
    if (!s) return s;
    return launch(l, stream);
  }
  Status prepare(const Problem& p, const Config& c) final {
    Launch l{};
    Status s = plan(p, c, l);
    if (!s) return s;
    return warm(l);
  }

 protected:
  // Everything can_implement checks plus the launch itself (grid, shared memory, arguments,
  // workspace); a refusal carries can_implement's message.
  virtual Status plan(const Problem& p, const Config& c, Launch& out) const = 0;
  virtual Status launch(Launch& l, void* stream) = 0;
  // What prepare() makes for a planned launch (nothing by default).
  virtual Status warm(Launch&) { return {}; }
  virtual void summarize(const Launch& l, PlanSummary& out) const = 0;
};

}  // namespace omnigemm::detail
