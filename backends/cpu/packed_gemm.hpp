// The CPU backend's packed GEMM driver: a BLIS/GotoBLAS-style blocked GEMM over the packed
// panels of packing.hpp, the micro-kernels of cpu_kernels.hpp and the epilogue of
// cpu_epilogue.hpp, spread over a ThreadPool. See cpu_backend.cpp for the algorithm.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend.hpp"
#include "kernel_registry.hpp"
#include "problem.hpp"
#include "thread_pool.hpp"

namespace omnigemm::detail::cpu {

// A grow-only 64-byte-aligned f32 buffer.
class FloatBuffer {
 public:
  FloatBuffer() = default;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  ~FloatBuffer();
  bool reserve(size_t n);  // false: out of memory (the old contents are kept)
  float* data() const { return data_; }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};

// One thread's buffers.
struct Workspace {
  FloatBuffer a_pack;  // MC x KC, this thread's A block
  FloatBuffer b_pack;  // KC x NC (used by the team leader's copy only, or per thread for batch-parallel runs)
  FloatBuffer partial; // W: rows x NC partial sums when K > KC
  FloatBuffer bias;    // f32 copy of the current batch's bias vector
  FloatBuffer tile;    // one MR x NR tile when K <= KC
};

// The blocking of one problem: a config's block sizes fitted to the micro-kernel and the problem.
struct Plan {
  MicroKernel kernel;
  int64_t mc = 0, nc = 0, kc = 0;  // MC multiple of MR, NC multiple of NR
  int64_t partial_rows = 0;        // rows of W per chunk (0: K fits one block, no W)
  size_t a_floats = 0, b_floats = 0, partial_floats = 0, bias_floats = 0, tile_floats = 0;
};

// block_m / block_n / block_k of `cfg` as MC / NC / KC for micro-kernel `k`.
Plan make_plan(const Problem& p, const Config& cfg, const MicroKernel& k);

// Runs every batch of `p` (not empty) on `pool`; workspaces[t] serves pool member t.
Status run_packed_gemm(const Problem& p, const Plan& pl, ThreadPool& pool, Workspace* workspaces);

}  // namespace omnigemm::detail::cpu
