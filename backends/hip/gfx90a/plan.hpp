// The host side of one hip.gfx90a_mfma launch, without the HIP runtime: the family's table, which
// row and kernel variant runs a (problem, config), and the kernel's argument block. The family
// (family.cpp) launches what plan() builds; the host model (tests/hip/test_hip_model.cpp) runs
// the same argument block through the kernel's per-lane code on the host.
#pragma once
#include <span>

#include "backend.hpp"
#include "kernel_args.h"

namespace omnigemm::detail::gfx90a {

// One row of families/gfx90a_mfma.inc and the names of its kernels (symbols.h).
struct Row {
  int block_m, block_n, block_k, stages, waves, waves_per_eu;
  const char* symbols[2][2];  // [bf16][gather]
};
std::span<const Row> rows();
std::span<const Config> configs();  // the same rows as Configs, in table order

struct Plan {
  hip::KernelArgs args{};
  int row = -1;
  bool gather = false;  // the gathering kernel (any operand), else the dwordx4 one
  long long tiles = 0;  // grid x: output tiles per batch
  int batch = 1;
  int threads = 0, lds_bytes = 0, mfma = 32;
  const char* symbol() const { return rows()[row].symbols[args.bf16][gather ? 1 : 0]; }
};

// OK when the kernel runs `p` with `c` on a device with `limits`, else unsupported with the rule
// that refuses it. With `out`, also fills the launch (operand pointers as the Problem has them).
Status plan(const Problem& p, const Config& c, const DeviceLimits& limits, Plan* out);

}  // namespace omnigemm::detail::gfx90a
