// Whether the batches of a strided matrix view share an element. Batch b's element (i, j) sits at
//   b * batch_stride + i * stride_row + j * stride_col
// and two batches b != b' collide exactly when some non-zero (db, di, dj) with |db| < batches,
// |di| < rows, |dj| < cols solves db * batch_stride + di * stride_row + dj * stride_col = 0. Views
// whose batches interleave without sharing an element (heads written side by side: ld = heads x N,
// batch stride N) are therefore valid outputs, which a rule on extents alone would refuse.
#pragma once

#include <cstdint>

namespace omnigemm::detail {

struct StridedView {
  int64_t rows = 0, cols = 0;
  int64_t stride_row = 0, stride_col = 0;  // elements, >= 0
  int64_t batch_stride = 0;                // elements, >= 0
};

// Exact where one stride is 1 and the other at least the unit-stride extent (every validated
// matrix view: row-major ld >= cols, column-major ld >= rows), in O(log) steps of Euclid's
// algorithm. Other views are decided exactly by enumeration while that takes at most
// kOverlapEnumerationLimit steps, and beyond it conservatively: their batches count as
// overlapping unless their element ranges are disjoint.
bool batches_overlap(const StridedView& v, int64_t batches);

// The smallest x >= 0 with lo <= (a * x) mod m <= hi, or -1 when there is none
// (0 <= lo <= hi < m, a >= 0, m >= 1). Exposed for the tests.
int64_t min_multiple_in_range(int64_t a, int64_t m, int64_t lo, int64_t hi);

constexpr int64_t kOverlapEnumerationLimit = int64_t(1) << 22;

}  // namespace omnigemm::detail
