// The cost model that ranks (family, config) pairs for a problem: a predicted time from the
// device's limits (compute units, peak rates) and the family's hints. It ranks; it does not
// promise times (the tuner measures them where the caller asks for tuning).
#pragma once

#include "config_space.hpp"
#include "kernel_family.hpp"
#include "problem.hpp"

namespace omnigemm::detail {

// The terms of one prediction, for explain.
struct CostTerms {
  double waves = 0;       // waves of work items over the compute units
  double occupancy = 0;   // busy units across those waves
  double useful = 0;      // share of the tiles' area inside the output (edge tiles are padded)
  double split = 1;       // K-steps worth of work against K-steps paid, split-K's fixed price included
  double intensity = 0;   // the tile's arithmetic intensity term, relative to a 128x256 tile
  double memory_ms = 0;   // A, B, C and D each through memory once, at the family's memory efficiency
  double extra_ms = 0;    // the family's work besides its main loop (CostHints extra_bytes, extra_us)
  double latency_ms = 0;  // the family's latency-bound least time (CostHints latency_us; 0: none)
  double rate_tflops = 0; // the predicted rate of the main loop
  bool absolute = false;  // false: the device reports no peak rate, so rate and time are relative
  double ms = 0;          // the predicted time (relative units when the device's peak is unknown)
};

// The dense peak rate (TFLOP/s) of the device for p's inputs; 1 when unknown.
double peak_tflops(const DeviceLimits& limits, const Problem& p);

// Predicted time of p with c: FLOPs over (peak x family efficiency x factor x the tile terms) or
// the operands' and D's bytes over the family's share of the memory bandwidth, whichever is longer, plus a tenth of the shorter (they overlap imperfectly; it also
// keeps the order of configs that differ in one term), plus the family's extra bytes over the
// memory bandwidth and its extra fixed time; a family's latency floor, where it has one, joins
// that main-loop time as the larger plus a tenth of the smaller. Where the
// device reports no memory bandwidth, the extra bytes are priced at 100 FLOPs per byte of its
// peak rate (a typical GPU's balance). A hint factor of 0 (not offered) predicts an infinite time.
CostTerms predict(const Problem& p, const Config& c, const CostHints& hints, const DeviceLimits& limits);

}  // namespace omnigemm::detail
