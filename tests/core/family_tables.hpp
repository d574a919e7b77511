// The config tables of the kernel families, read from their .inc files as the backends read
// them, so that the engine's tests check every row whether or not its backend is built here.
// (The Vulkan families' tables are checked by the Vulkan tests.)
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "config_space.hpp"

namespace omnigemm::test {

using detail::Config;

inline std::vector<std::pair<std::string, std::vector<Config>>> family_tables() {
  return {
      {"cpu.packed",
       {
#define OG_CPU_PACKED(bm, bn, bk) Config{"packed", bm, bn, bk, 1, 1, 1, 0, 1, {}},
#include "../../backends/cpu/families/packed.inc"
#undef OG_CPU_PACKED
       }},
      {"cuda.simt",
       {
#define OG_CUDA_SIMT(bm, bn, bk, gm, st, wa) Config{"simt", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "../../backends/cuda/families/simt.inc"
#undef OG_CUDA_SIMT
       }},
      {"cuda.sm80_mma",
       {
#define OG_CUDA_SM80_MMA(bm, bn, bk, gm, st, wa, ga) Config{"sm80_mma", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "../../backends/cuda/families/sm80_mma.inc"
#undef OG_CUDA_SM80_MMA
       }},
      {"cuda.sgemm",
       {
#define OG_CUDA_SGEMM(bm, bn, bk, gm, st, wa, eff) Config{"sgemm", bm, bn, bk, gm, st, wa, 0, 1, {}},
#include "../../backends/cuda/families/sgemm.inc"
#undef OG_CUDA_SGEMM
       }},
      {"cuda.sm90_wgmma",
       {
#define OG_CUDA_SM90_WGMMA(bm, bn, bk, gm, st, sk, form) Config{"sm90_wgmma", bm, bn, bk, gm, st, 12, 0, sk, #form},
#include "../../backends/cuda/families/sm90_wgmma.inc"
#undef OG_CUDA_SM90_WGMMA
       }},
      {"cuda.sm90_blockscaled",
       {
#define OG_CUDA_SM90_BLOCKSCALED(bm, bn, bk, gm, st, form) Config{"sm90_blockscaled", bm, bn, bk, gm, st, 12, 0, 1, #form},
#include "../../backends/cuda/families/sm90_blockscaled.inc"
#undef OG_CUDA_SM90_BLOCKSCALED
       }},
      {"hip.gfx90a_mfma",
       {
#define OG_HIP_GFX90A_MFMA(bm, bn, bk, gm, st, wa, wpe) Config{"gfx90a_mfma", bm, bn, bk, gm, st, wa, wpe, 1, {}},
#include "../../backends/hip/families/gfx90a_mfma.inc"
#undef OG_HIP_GFX90A_MFMA
       }},
  };
}

inline std::vector<Config> family_table(const std::string& qualified) {
  for (auto& [name, rows] : family_tables())
    if (name == qualified) return rows;
  return {};
}

}  // namespace omnigemm::test
