// omnigemm-bench's command line: what to run (backends, dtypes, shapes, epilogue, config) and how
// long to measure it. The flags and their defaults are those earlier results and
// scripts/ab_bench.sh were made with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "omnigemm/omnigemm.h"

namespace omnigemm::bench {

// How one problem's operands are stored. The random sweep draws it per problem; the other sweeps
// use the defaults (packed, A and D row-major, one batch) with B's layout from --b-layout.
struct Storage {
  bool a_col_major = false;  // A (M x K) stored column-major (M-major); row-major is K-major
  bool b_col_major = false;  // B (K x N) stored column-major (K-major); row-major is N-major
  int64_t a_pad = 0, b_pad = 0, d_pad = 0;  // elements added to each leading dimension
  int64_t batch = 1;
  int64_t a_gap = 0, b_gap = 0, d_gap = 0;  // elements between batches beyond one matrix
  bool b_broadcast = false;                 // one B for every batch (batch stride 0)
};

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  bool drawn = false;  // from --random: `storage` and `dtype` (an index into Options::dtypes) apply
  bool stored = false; // from --shapes with layouts (M x N x K[x B]:AB[:LDA:LDB:LDD]): `storage` applies
  int64_t draw = -1;   // from --random: its index in the seed's draw (the x column), kept by --random-pick
  Storage storage;
  int dtype = 0;
  std::string label() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};

struct DtypeSpec {
  og_dtype in = OG_DTYPE_F16, out = OG_DTYPE_F16;
  std::string format;  // a block-scaled format (--format; bench_formats.hpp); `in` is then its A dtype
  bool tf32 = false;   // --dtype tf32: f32 inputs with compute_mode OG_COMPUTE_TF32 (vendor: its TF32 math)
  std::string in_name() const { return tf32 ? "tf32" : format.empty() ? og_dtype_name(in) : format; }
  std::string name() const { return in_name() + "->" + og_dtype_name(out); }
};

// One epilogue of --epilogue: D = act(alpha * A B + beta * C + bias), bias per N (f32 for
// OmniGEMM; the vendor's own bias type, D's, for cuBLASLt) and beta 0.5 with C of D's dtype.
// Names: none | [beta_][bias_]act | beta[_bias] | bias, act one of relu, leaky_relu, gelu (the
// tanh form), silu; e.g. bias_gelu, beta_bias_relu.
struct EpilogueChoice {
  bool beta = false, bias = false;
  og_activation act = OG_ACT_NONE;
  bool plain() const { return !beta && !bias && act == OG_ACT_NONE; }
  std::string name() const;
};
// The choice named `s`, or false.
bool parse_epilogue(const std::string& s, EpilogueChoice& out);

struct Options {
  std::vector<og_backend> backends;  // empty: every available one
  std::vector<DtypeSpec> dtypes{{OG_DTYPE_F16, OG_DTYPE_F16}};
  std::vector<Shape> shapes;
  std::string sweep = "square";   // square | k | list | llm | random: the x axis of the plot
  int random_count = 0;           // --random N: N problems drawn from the seed (bench_random.hpp)
  std::vector<int64_t> random_pick;  // --random-pick: only these indices of the draw (rerun a row)
  int64_t random_max_dim = 16384;
  double random_max_flops = 1099511627776.0;  // 2^40 per problem
  bool budget_given = false;
  std::string out_dir;
  std::string b_layout = "auto";  // auto (row-major; column-major for fp8) | row | col
  std::vector<EpilogueChoice> epilogues{EpilogueChoice{}};  // --epilogue; default: the plain GEMM only
  float leaky_slope = 0.1f;
  bool fused() const { return epilogues.size() > 1 || !epilogues[0].plain(); }
  double budget_ms = 400;         // timed samples per implementation and configuration
  double max_config_s = 20;       // skip a configuration estimated to take longer (per backend)
  int min_samples = 5, max_samples = 100;
  double warmup_ms = 30;
  uint64_t seed = 0;
  bool seed_given = false;
  bool plot = true;
  bool vendor = true;
  bool explain = false;           // print og_gemm_explain's report of every OmniGEMM row
  std::string forced_config;      // --config: run OmniGEMM with this config instead of the tuner's
  og_tune_mode tune_mode = OG_TUNE_CACHE_ONLY;
  std::string activation_pass = "auto";  // vendor + separate pass: loop (host, CPU only) | kernel | omnigemm | auto
  std::string python;  // interpreter for plot.py; empty: the first python3 with matplotlib; "none": no python
};

void print_usage();

// Fills `o` from the arguments; false with the reason in `err` for a bad command line.
// --help prints the usage and exits with status 0.
bool parse_args(int argc, char** argv, Options& o, std::string& err);

}  // namespace omnigemm::bench
