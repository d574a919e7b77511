// omnigemm-bench's inputs and result check: random host operands (never 0) made from the seed,
// the float64 reference at the checked output elements (every element up to 2^24 multiply-adds,
// else 256 sampled ones including the four corners of the first and last batch) and the
// relative-error check of one downloaded output against it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_formats.hpp"
#include "bench_options.hpp"
#include "reference.hpp"

namespace omnigemm::bench {

inline Dtype D(og_dtype d) { return static_cast<Dtype>(d); }

struct HostProblem {
  Shape shape;
  DtypeSpec dt;
  Storage st;  // layouts, leading-dimension pads, batches (shape.storage for --random)
  // The epilogue (set_epilogue): alpha, beta with C (D's dtype and storage), a bias per N (f32
  // values exact in bf16 and f16, so the vendor's 16-bit bias holds the same numbers) and the
  // activation (leaky_relu with `slope`).
  EpilogueChoice epi;
  float slope = 0.1f;
  float alpha = 1.0f, beta = 0.5f;
  HostMatrix c;
  std::vector<float> bias;
  std::string forced_config;
  // Block-scaled formats (dt.format set): the quantised operands (B held N x K), while a and b
  // hold their dequantised f32 values for the reference; `plain` is a plain fp8 e4m3 problem of
  // the same shape for the vendor's plain-fp8 baseline, made when first needed.
  const FormatDef* format = nullptr;
  BlockOperand qa, qb;
  std::unique_ptr<HostProblem> plain;
  HostMatrix a, b;
  // D (M x N row-major per batch): leading dimension, batch stride and storage, in elements.
  int64_t d_ld = 0, d_batch_stride = 0, d_elements = 0;
  // Checked output elements (batch, row, col) and their float64 reference values.
  struct At {
    int64_t b, i, j;
  };
  std::vector<At> check_at;
  std::vector<double> ref;
  std::vector<double> ref_abs;  // sum over k of |a_ik b_kj| at the checked elements (the dot product's scale)
  std::vector<double> acc;      // the products A B alone at the checked elements
  bool full_check = false;

  // A and B as bytes of dtype `d`: the inputs' own bytes, or exact conversions to a wider dtype
  // (a vendor library may need f32 copies of f16 inputs). Made once per dtype.
  const std::vector<uint8_t>& a_bytes(og_dtype d) { return converted(d).first; }
  const std::vector<uint8_t>& b_bytes(og_dtype d) { return converted(d).second; }

 private:
  std::map<og_dtype, std::pair<std::vector<uint8_t>, std::vector<uint8_t>>> converted_;
  std::pair<std::vector<uint8_t>, std::vector<uint8_t>>& converted(og_dtype d);
};

// Lays A, B and D out as hp.st says, draws A and B from `seed` (block-scaled formats: quantises
// them and keeps the dequantised values in a and b) and computes the reference at the checked
// elements.
Status make_host_problem(HostProblem& hp, uint64_t seed);

// Makes `e` hp's epilogue: alpha (1 for the plain GEMM, else the power of two nearest 4 / sqrt(K),
// so that the activations see values of order 1, not of order sqrt(K)), C and the bias vector
// drawn from `seed` when first needed, and the reference at the checked elements.
void set_epilogue(HostProblem& hp, const EpilogueChoice& e, uint64_t seed);

struct Check {
  bool ok = false;
  double rel_error = NAN, tol = NAN;
  int64_t non_finite = 0;
  int64_t not_close = 0;  // block-scaled formats: elements outside the tutorial's allclose + accumulation term
  int64_t strict_outside = 0, checked = 0;  // ... and outside the tutorial's allclose alone (reported, not failed)
  std::string text() const;  // "ok", "FAIL (3 not finite)", "FAIL (err 1.2e-02 > 9.8e-04)"
};

// D (hp's D storage of dtype d, downloaded) against the reference at the checked elements:
// ||out - ref|| / ||ref|| under tolerance(d, K, input dtype, input dtype). Block-scaled formats
// with an f32 or f16 D must also pass the block-scaled tutorial's check, every checked element
// within |out - ref| <= 1e-3 + 1e-3 |ref| + 2^-14 sum_k |a_ik b_kj| (bf16's own rounding, 2^-9
// relative, exceeds the first two terms). The last term is the accumulation of 8-bit products on
// tensor cores, which keep about 14 significant bits within a scale block (Hopper's fp8 wgmma,
// cuBLASLt's kernels and ours alike; the reason the block-scaled kernels promote per block): where
// a dot product cancels, |ref| is far below the magnitudes summed and the tutorial's relative
// term alone does not cover that rounding (H100: about 1 in 12 checked elements of 8192^3, for
// cuBLASLt as for OmniGEMM). An exact f32 accumulation (the CPU and Vulkan families) stays far
// inside it.
Check check_output(const HostProblem& hp, const std::vector<uint8_t>& d_bytes, og_dtype d);

// `elements` NaNs of dtype d (outputs are poisoned before the checked run).
std::vector<uint8_t> poison_bytes(og_dtype d, size_t elements);

#ifdef OMNIGEMM_DEVELOPER
// Self-test of the checker (developer builds only): with OMNIGEMM_BENCH_CORRUPT=1 in the
// environment, spoils the first checked element of `out`, so that every row must FAIL.
void corrupt_for_self_test(const HostProblem& hp, std::vector<uint8_t>& out, og_dtype d);
#endif

}  // namespace omnigemm::bench
