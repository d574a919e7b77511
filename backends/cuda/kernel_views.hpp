// The kernels' argument views of a Problem (epilogue.cuh's types), for the families' launches.
#pragma once
#include <utility>

#include "cuda_device.hpp"
#include "epilogue.cuh"

namespace omnigemm::detail {

// The kernels' views of a Problem's operands and epilogue.
cuda::OperandArgs operand_args(const Operand& o);
cuda::EpilogueArgs epilogue_args(const Problem& p);
// The same views turned into those of D^T = B^T A^T: A' = B^T, B' = A^T, D and C transposed, a
// bias per N now per row of D^T (and per M per column).
inline void transpose_views(cuda::OperandArgs& a, cuda::OperandArgs& b, cuda::EpilogueArgs& ep) {
  std::swap(a, b);
  std::swap(a.sr, a.sc);
  std::swap(b.sr, b.sc);
  std::swap(ep.d.sr, ep.d.sc);
  std::swap(ep.c.sr, ep.c.sc);
  if (ep.bias_mode == OG_BIAS_PER_N) ep.bias_mode = OG_BIAS_PER_M;
  else if (ep.bias_mode == OG_BIAS_PER_M) ep.bias_mode = OG_BIAS_PER_N;
}

// The alignment in bytes (16, 8, 4, 2 or 1) every line of D starts at, a line being D's row or
// column of unit stride (0 where D has no unit stride): base, line stride and batch stride.
inline int d_line_alignment(const Problem& p) {
  const int eb = dtype_bytes(p.d.dtype);
  const int64_t line_stride = p.d.stride_col == 1 ? p.d.stride_row : p.d.stride_row == 1 ? p.d.stride_col : -1;
  if (line_stride < 0) return 0;
  const uint64_t where = uint64_t(reinterpret_cast<uintptr_t>(p.d.mem.ptr) + uintptr_t(p.d.mem.offset)) | uint64_t(line_stride * eb) |
                         uint64_t(p.batch > 1 ? p.d.batch_stride * eb : 0) | 16u;
  return int(where & (~where + 1));
}

}  // namespace omnigemm::detail
