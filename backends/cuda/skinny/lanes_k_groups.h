// The index arithmetic of skinny_lanes_k's four-element loads (skinny_kernel.cuh), written once
// for the kernel and for the host model that checks it (tests/skinny_mma/test_skinny_lanes_k_groups.cpp):
// where a lane's aligned group of four K of a column of L starts, and where the S values its
// elements meet lie in the shifted copies of S's chunk. Compiles as C++ (host) and CUDA.
//
// A column whose first element lies `shift` elements past a four-element boundary is read in
// groups that start `shift` before the chunk's K; copy `shift` of S holds S at K k0 + j - shift in
// its element j, so a group's four S values are one aligned float4 of that copy. A chunk's 64
// groups end `shift` elements before the next chunk's K, so in a slice's last chunk one more
// group (lane 0's) takes the slice's last `shift` elements.
#pragma once
#include <stdint.h>

#if defined(__CUDACC__)
#define OG_LANES_K_FN __host__ __device__ constexpr inline
#else
#define OG_LANES_K_FN constexpr inline
#endif

namespace omnigemm::detail::skinny_groups {

constexpr int kChunk = 256;           // K per chunk of S
constexpr int kStep = 128;            // K per step of a chunk: 32 lanes x 4
constexpr int kCopies = 4;            // copies of S, one per shift
constexpr int kCopyLen = kChunk + 4;  // a copy holds the chunk and the group after it

// A column's shift, from the element index of its first element (its address / element size).
OG_LANES_K_FN int column_shift(uint64_t first_element) { return int(first_element & 3u); }
// The K of the first element of the group lane `lane` loads in step `step` of the chunk from k0.
OG_LANES_K_FN int group_k(int k0, int step, int lane, int shift) { return k0 + kStep * step + 4 * lane - shift; }
// Its element e meets S at element copy_index(step, lane, e) of copy `shift`.
OG_LANES_K_FN int copy_index(int step, int lane, int e) { return kStep * step + 4 * lane + e; }
// The group after the chunk's 64 (lane 0, in a slice's last chunk) and its S elements.
OG_LANES_K_FN int tail_group_k(int k0, int shift) { return k0 + kChunk - shift; }
OG_LANES_K_FN int tail_copy_index(int e) { return kChunk + e; }
// What element j of copy m holds: S at this K (zero outside the slice).
OG_LANES_K_FN int copy_k(int k0, int j, int m) { return k0 + j - m; }

}  // namespace omnigemm::detail::skinny_groups
