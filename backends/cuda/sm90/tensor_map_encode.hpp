// The Hopper kernels' operand tensor maps: a 3-D map (inner, outer, batch) over elements of `eb`
// bytes with the 128-byte swizzle the wgmma descriptors read, boxes of box_inner x box_outer x 1
// that read zeros out of bounds. Used by cuda.sm90_wgmma (A, B and the deferred epilogue's D) and
// cuda.sm90_blockscaled (fp8 A and B). Encoded maps are memoised by their arguments (`memo`).
#pragma once
#include <cuda.h>

#include "../cuda_device.hpp"
#include "tensor_map_memo.hpp"

namespace omnigemm::detail::sm90 {

// Strides in elements: `outer_stride` between outer rows, o.batch_stride between batches (with one
// batch, the matrix's size rounded up to 16 bytes, which TMA needs but never steps over).
inline CUresult encode_3d(const CudaDevice& dev, TensorMapMemo& memo, CUtensorMap& map, const Operand& o,
                          CUtensorMapDataType type, int eb, int64_t inner, int64_t outer, int64_t outer_stride,
                          int64_t batch, int box_inner, int box_outer, CUtensorMapL2promotion promotion) {
  const cuuint64_t dims[3] = {cuuint64_t(inner), cuuint64_t(outer), cuuint64_t(batch)};
  const cuuint64_t outer_bytes = cuuint64_t(outer_stride) * eb;
  const cuuint64_t batch_bytes = batch > 1 ? cuuint64_t(o.batch_stride) * eb : (outer_bytes * dims[1] + 15) / 16 * 16;
  const cuuint64_t strides[2] = {outer_bytes, batch_bytes};
  const cuuint32_t box[3] = {cuuint32_t(box_inner), cuuint32_t(box_outer), 1};
  const cuuint32_t unit[3] = {1, 1, 1};
  void* base = static_cast<char*>(o.mem.ptr) + o.mem.offset;
  TensorMapMemo::Key key;
  key.base = uint64_t(reinterpret_cast<uintptr_t>(base));
  for (int i = 0; i < 3; ++i) key.dims[i] = dims[i];
  key.strides[0] = strides[0];
  key.strides[1] = strides[1];
  key.box[0] = box[0];
  key.box[1] = box[1];
  key.type = int(type);
  key.promotion = int(promotion);
  if (memo.find(key, map)) return CUDA_SUCCESS;
  const CUresult r = dev.encode_tiled(&map, type, 3, base, dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == CUDA_SUCCESS) memo.put(key, map);
  return r;
}

}  // namespace omnigemm::detail::sm90
