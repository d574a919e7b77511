// Host-side entry to the Blackwell kernel family: one launch description and one launcher per
// input width (each in its own translation unit, so the instantiations build in parallel). The
// launchers dispatch over the rows of families/sm100_tcgen05.inc (launch_impl.cuh).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "../epilogue.cuh"
#include "layout.h"

namespace omnigemm::detail::sm100 {

struct Launch {
  // A and B (K-major, 128-byte swizzle), their packed scales (block-scaled kinds) and D (TMA
  // stores, when tma_store).
  CUtensorMap map_a, map_b, map_sfa, map_sfb, map_d;
  Kind kind;
  int block_n, cta_group, stages, group_m;
  int m, n, k, batch;
  uint32_t idesc;
  bool b_mn_major;  // B N-contiguous (kind::f16 only)
  bool tma_store;
  int max_clusters;  // persistent clusters (programs / cta_group); the launcher may use fewer
  size_t max_shared;
  cuda::EpilogueArgs ep;
  cudaStream_t stream;
};

// Every launcher returns cudaErrorInvalidValue for a kind / tile no table row instantiates.
cudaError_t launch_16bit(const Launch& l);  // kind::f16
cudaError_t launch_8bit(const Launch& l);   // kind::f8f6f4, kind::mxf8f6f4
cudaError_t launch_4bit(const Launch& l);   // kind::mxf4, kind::mxf4nvf4

// The form named in a config: "single" (or none) one CTA per tile, "pair" two (cta_group::2).
constexpr int parse_cta_group(const char* s) {
  auto eq = [](const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
  };
  if (!*s || eq(s, "single")) return 1;
  if (eq(s, "pair")) return 2;
  return 0;
}

}  // namespace omnigemm::detail::sm100
