// The repack copy: strided 1-, 2- or 4-byte matrices (any strides, any alignment) copied into
// dense views with one unit stride, in tiles through shared memory so that both the reads (along
// the source's smaller stride) and the writes (along the destination's unit stride) are coalesced,
// converting each element exactly on the way where asked (convert.hpp: fp8 to f16 or bf16, f16 or
// bf16 to f32). Used to give the Hopper TMA kernel 16-byte aligned, K-major copies of operands it
// cannot load, and operands of one type its wgmma takes where the inputs' types differ.
#pragma once
#include <cuda_runtime.h>

#include "convert.hpp"
#include "omnigemm/omnigemm.h"

namespace omnigemm::detail::repack {

// One matrix: element (i, j) of batch b is read at src + b * src_batch + i * src_row + j * src_col
// and written at dst + b * dst_batch + (dst_unit_cols ? i * dst_ld + j : i + j * dst_ld), all in
// elements of the source's and the destination's type. src_batch 0 replicates one source matrix
// into every batch of the copy.
struct Copy {
  const void* src = nullptr;
  long long src_row = 0, src_col = 0, src_batch = 0;
  void* dst = nullptr;
  long long dst_ld = 0, dst_batch = 0;
  int rows = 0, cols = 0, batches = 1;
  bool dst_unit_cols = true;
  Convert convert = Convert::none;
  int src_bytes = 2, dst_bytes = 2;  // element sizes: 1, 2 or 4, as `convert` implies
};

// The conversion from `from` to `to` in `c` (convert and element sizes); false where the pair is
// not one convert.hpp converts exactly (the same dtype is copied as it is).
bool set_conversion(og_dtype from, og_dtype to, Copy& c);

// Up to two matrices copied on `stream`: one launch, or one per copy where their element sizes differ.
struct Args {
  Copy copy[2];
  int count = 0;
};

// The launches `args` takes (1 or 2).
int launches(const Args& args);

// dependent: launched programmatically dependent (dependent_launch.cuh; sm_90 devices only).
cudaError_t launch(const Args& args, bool dependent, cudaStream_t stream);

}  // namespace omnigemm::detail::repack
