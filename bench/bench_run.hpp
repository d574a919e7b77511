// One problem on one backend: OmniGEMM (through og_gemm_async with the config og_gemm_explain
// names) and the vendor GEMM (+ a separate activation pass for a fused-epilogue comparison), each
// measured on rotating buffer sets, then checked once on a NaN-poisoned output.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench_check.hpp"
#include "bench_measure.hpp"
#include "bench_options.hpp"
#include "vendor.hpp"

namespace omnigemm::bench {

// One line of the results: one implementation on one problem and backend.
struct Row {
  std::string sweep;
  double x = 0;
  std::string backend, device, impl, label;  // impl: "omnigemm" | "vendor"
  DtypeSpec dt{};
  std::string layout, epilogue;  // layout: A's then B's storage, r(ow) or c(olumn)-major
  Shape shape{};
  Storage storage{};
  bool aligned = true;  // every leading dimension and batch stride a multiple of 16 bytes
  Timing t;
  double tflops = NAN, ratio = NAN;  // ratio: vendor ms / omnigemm ms (> 1: OmniGEMM faster)
  double vs_plain = NAN;  // OmniGEMM rows with an epilogue: ms / the same problem's plain-GEMM ms
  std::string check, status, config, note;
  double rel_error = NAN, tol = NAN;
  int sets = 0;
  std::string explanation;  // og_gemm_explain's report (OmniGEMM rows, with --explain)
};

// A context and what the bench keeps next to it.
struct BackendState {
  og_backend kind = OG_BACKEND_AUTO;
  og_context* ctx = nullptr;
  DeviceInfo dev;
  std::unique_ptr<Vendor> vendor;
  std::string vendor_why;
  std::unique_ptr<ActivationPass> act;  // device kernels for the unfused-epilogue baseline
  std::string act_why;
  double rate_gflops = 0;  // best measured so far (slowest implementation per problem), for the time budget
  double largest_gflop = 0;  // the largest problem measured so far (GFLOP): rates extrapolate only so far
};

inline double flops(const Shape& s, const Storage& st) { return 2.0 * double(s.m) * double(s.n) * double(s.k) * double(st.batch); }

// Measures OmniGEMM and the vendor GEMM of one backend on one problem; appends their rows
// (`base` holds the fields they share).
void bench_one(BackendState& bs, HostProblem& hp, const Options& o, const Row& base, std::vector<Row>& rows);

}  // namespace omnigemm::bench
