// The repack copy: strided 1- or 2-byte matrices (any strides, any alignment) copied into dense
// views with one unit stride, in tiles through shared memory so that both the reads (along the
// source's smaller stride) and the writes (along the destination's unit stride) are coalesced.
// Used to give the Hopper TMA kernel 16-byte aligned, K-major copies of operands it cannot load.
#pragma once
#include <cuda_runtime.h>

namespace omnigemm::detail::repack {

// One matrix: element (i, j) of batch b is read at src + b * src_batch + i * src_row + j * src_col
// and written at dst + b * dst_batch + (dst_unit_cols ? i * dst_ld + j : i + j * dst_ld), all in
// elements. src_batch 0 replicates one source matrix into every batch of the copy.
struct Copy {
  const void* src = nullptr;
  long long src_row = 0, src_col = 0, src_batch = 0;
  void* dst = nullptr;
  long long dst_ld = 0, dst_batch = 0;
  int rows = 0, cols = 0, batches = 1;
  bool dst_unit_cols = true;
};

// Up to two matrices of `element_bytes` (1, 2 or 4) each, copied by one launch on `stream`.
struct Args {
  Copy copy[2];
  int count = 0;
  int element_bytes = 2;
};

cudaError_t launch(const Args& args, cudaStream_t stream);

}  // namespace omnigemm::detail::repack
