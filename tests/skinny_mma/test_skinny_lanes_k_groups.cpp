// A host model of skinny_lanes_k's four-element loads (backends/cuda/skinny/skinny_kernel.cuh) on
// the kernel's own index arithmetic (skinny/lanes_k_groups.h): for every shift of a column and
// slices of every length class, the chunk loop's groups (and the last chunk's extra group) read
// each K of the slice exactly once, only inside the slice, from a four-element aligned address,
// and meet the S value of the same K in the shifted copy they read. A deliberate fault (the
// groups unshifted, or no extra group) must break it. The GPU's run of the kernel is
// tests/cuda/test_cuda_skinny.cpp's.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "skinny/lanes_k_groups.h"

namespace sg = omnigemm::detail::skinny_groups;

namespace {

enum class Fault { none, unshifted, no_tail };

// Runs the kernel's schedule for one column whose first element has index `first` (any value:
// its shift is what matters) over the slice [kb, ke) of a K of `k`; returns false on the first
// broken rule, counting how often each K was read in `reads`.
bool schedule(uint64_t first, int k, int kb, int ke, Fault fault, std::vector<int>& reads) {
  reads.assign(size_t(k), 0);
  const int shift = fault == Fault::unshifted ? 0 : sg::column_shift(first);
  auto group = [&](int k0, int a, auto s_index) {
    if ((first + uint64_t(int64_t(a) + 4)) % 4 != 0) return false;  // the 8-byte load's alignment
    for (int e = 0; e < 4; ++e) {
      const int kk = a + e;
      if (kk < kb || kk >= ke) continue;  // never read (the load's range)
      ++reads[size_t(kk)];
      const int j = s_index(e);
      if (j < 0 || j >= sg::kCopyLen) return false;
      if (sg::copy_k(k0, j, shift) != kk) return false;  // the S value of another K
    }
    return true;
  };
  for (int k0 = kb; k0 < ke; k0 += sg::kChunk) {
    for (int step = 0; step < sg::kChunk / sg::kStep; ++step)
      for (int lane = 0; lane < 32; ++lane)
        if (!group(k0, sg::group_k(k0, step, lane, shift), [&](int e) { return sg::copy_index(step, lane, e); })) return false;
    if (fault != Fault::no_tail && shift > 0 && k0 + sg::kChunk >= ke)
      if (!group(k0, sg::tail_group_k(k0, shift), [&](int e) { return sg::tail_copy_index(e); })) return false;
  }
  for (int kk = 0; kk < k; ++kk)
    if (reads[size_t(kk)] != (kk >= kb && kk < ke ? 1 : 0)) return false;
  return true;
}

// Every shift, slices (of one split of K into chunk multiples, as the host plans them) whose
// lengths end on, just before and just past a chunk.
bool all_slices(Fault fault) {
  std::vector<int> reads;
  for (uint64_t first : {uint64_t(0), uint64_t(1), uint64_t(2), uint64_t(3), uint64_t(1001), uint64_t(6134)})
    for (int k : {1, 3, 4, 5, 255, 256, 257, 259, 512, 515, 766, 1001, 1114})
      for (int split : {1, 2, 4}) {
        const int chunks = (k + sg::kChunk - 1) / sg::kChunk;
        if (split > chunks) continue;
        const int slice_k = (chunks + split - 1) / split * sg::kChunk;
        for (int kb = 0; kb < k; kb += slice_k)
          if (!schedule(first, k, kb, kb + slice_k < k ? kb + slice_k : k, fault, reads)) return false;
      }
  return true;
}

}  // namespace

TEST_CASE("skinny lanes_k groups: every K of a slice read once, aligned, against its own S value, at every shift") {
  CHECK(all_slices(Fault::none));
  // The model can fail: unshifted groups misalign (or meet the wrong S), and without the extra
  // group a shifted column's last elements go unread.
  CHECK_FALSE(all_slices(Fault::unshifted));
  CHECK_FALSE(all_slices(Fault::no_tail));
}

TEST_CASE("skinny lanes_k groups: a warp's four columns, eight column strides apart, share one shift") {
  for (uint64_t first : {uint64_t(0), uint64_t(5), uint64_t(1234567)})
    for (int64_t stride : {1, 2, 3, 1003, 6134, 8423})
      for (int c = 1; c < 4; ++c)
        CHECK(sg::column_shift(first + uint64_t(8 * c * stride)) == sg::column_shift(first));
}
