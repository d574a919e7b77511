// omnigemm-conformance's case matrix: dtype combinations x {shapes with edges, every A/B layout
// and transpose with padded leading dimensions, epilogues, batch forms}, the host operands of each
// case (a function of the seed and the case index only) with their float64 reference, and one
// case's run on one context through og_gemm_host with its check.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_formats.hpp"
#include "bench_util.hpp"
#include "reference.hpp"

namespace omnigemm::bench {

struct DtypeCombo {
  Dtype a, b, d;
  std::string format;  // a block-scaled format (bench_formats.hpp): a and b are then its dtypes
  std::string name() const {
    if (!format.empty()) return format + "->" + omnigemm::name(d);
    std::string s = omnigemm::name(a);
    if (b != a) s += std::string("x") + omnigemm::name(b);
    return s + "->" + omnigemm::name(d);
  }
};

struct Case {
  int index = 0;
  std::string category;  // shapes | layouts | epilogues | batches | formats
  DtypeCombo dt;
  int64_t m = 1, n = 1, k = 1;
  Layout a_layout = Layout::row_major, b_layout = Layout::row_major;
  bool a_trans = false, b_trans = false;
  int64_t ld_pad = 0;
  EpilogueSpec epi;
  int64_t batch = 1;
  bool broadcast_b = false;  // B batch stride 0
  std::string describe() const {
    std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    s += std::string(" A") + (a_layout == Layout::row_major ? "r" : "c") + (a_trans ? "T" : "");
    s += std::string(" B") + (b_layout == Layout::row_major ? "r" : "c") + (b_trans ? "T" : "");
    if (ld_pad) s += " ld+" + std::to_string(ld_pad);
    if (epi.alpha != 1.0f) s += " alpha=" + fmt("%g", epi.alpha);
    if (epi.beta != 0.0f) s += " beta=" + fmt("%g", epi.beta);
    if (epi.act != Activation::none) s += std::string(" act=") + activation_name(epi.act);
    if (epi.bias_mode == BiasMode::per_n) s += " bias/N";
    if (epi.bias_mode == BiasMode::per_m) s += " bias/M";
    if (batch > 1) s += " batch=" + std::to_string(batch) + (broadcast_b ? " (B broadcast)" : "");
    return s;
  }
  static const char* activation_name(Activation a) {
    switch (a) {
      case Activation::relu: return "relu";
      case Activation::leaky_relu: return "leaky_relu";
      case Activation::gelu_tanh: return "gelu_tanh";
      case Activation::silu: return "silu";
      default: return "none";
    }
  }
};

// The whole matrix, each case's index its position.
std::vector<Case> build_cases();

// Host operands of one case, generated from the seed and the case index only.
struct CaseData {
  HostMatrix a, b, c, d;  // block-scaled formats: a and b hold the dequantised operands
  BlockOperand qa, qb;    // block-scaled formats: the quantised operands (B held N x K)
  std::vector<float> bias;
  Reference ref;  // with the epilogue magnitudes compare() needs
};

Status make_case_data(const Case& c, uint64_t seed, CaseData& cd);

struct CaseResult {
  std::string status;  // pass | FAIL | unsupported | error
  double rel_error = NAN, tol = NAN;
  std::string message;
};

// Runs the case on `ctx` with D NaN-poisoned (padding kept) and checks every element of D against
// the reference under tolerance(), and the padding byte for byte. Refusals are "unsupported".
CaseResult run_case(Context& ctx, const Case& c, const CaseData& cd);

}  // namespace omnigemm::bench
