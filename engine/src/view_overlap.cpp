#include "view_overlap.hpp"

#include <algorithm>
#include <numeric>

namespace omnigemm::detail {

namespace {

using i128 = __int128;

// The conservative answer: overlapping unless one batch's element range ends before the next begins.
bool ranges_overlap(const StridedView& v) {
  const i128 extent = i128(v.rows - 1) * v.stride_row + i128(v.cols - 1) * v.stride_col + 1;
  return i128(v.batch_stride) < extent;
}

// Exact by enumeration over batch distance x and row distance di (the column distance then
// follows), or -1 when that would take more than kOverlapEnumerationLimit steps.
int enumerate_overlap(const StridedView& v, int64_t batches) {
  // Enumerate the shorter of the two dimensions.
  int64_t n_enum = v.rows, s_enum = v.stride_row, n_free = v.cols, s_free = v.stride_col;
  if (v.cols < v.rows) std::swap(n_enum, n_free), std::swap(s_enum, s_free);
  const i128 steps = i128(batches - 1) * (2 * i128(n_enum) - 1);
  if (steps > kOverlapEnumerationLimit) return -1;
  for (int64_t x = 1; x < batches; ++x)
    for (int64_t d = -(n_enum - 1); d <= n_enum - 1; ++d) {
      const i128 rest = i128(x) * v.batch_stride + i128(d) * s_enum;  // must equal -dj * s_free
      if (s_free == 0) {
        if (rest == 0) return 1;
        continue;
      }
      if (rest % s_free != 0) continue;
      const i128 dj = rest / s_free;
      if (dj <= n_free - 1 && dj >= -(n_free - 1)) return 1;
    }
  return 0;
}

}  // namespace

int64_t min_multiple_in_range(int64_t a, int64_t m, int64_t lo, int64_t hi) {
  if (lo == 0) return 0;
  a %= m;
  if (a == 0) return -1;
  // Without wrapping around m: the first multiple of a at or above lo.
  const int64_t x = lo / a + (lo % a != 0);
  if (i128(a) * x <= hi) return x;
  // Otherwise a * x = m * y + r with y >= 1 and r in [lo, hi]: then m * y + r is a multiple of a,
  // i.e. (m * y) mod a lies in [(-hi) mod a, (-lo) mod a]. No multiple of a lies in [lo, hi], so
  // that interval does not wrap and excludes 0; the smallest such y gives the smallest x.
  // (a, m) -> (m mod a, a) is Euclid's step: the recursion is logarithmic.
  const int64_t y = min_multiple_in_range(m % a, a, a - hi % a, a - lo % a);
  if (y < 0) return -1;
  const i128 first = (i128(m) * y + lo + a - 1) / a;
  return first > i128(INT64_MAX) ? -1 : int64_t(first);
}

bool batches_overlap(const StridedView& in, int64_t batches) {
  if (batches <= 1 || in.rows <= 0 || in.cols <= 0) return false;
  if (in.batch_stride == 0) return true;
  StridedView v = in;
  // A dimension of extent 1 has no steps: its stride is irrelevant.
  if (v.rows == 1) v.stride_row = 0;
  if (v.cols == 1) v.stride_col = 0;
  // The unit-stride (inner) dimension and the other (outer) one.
  int64_t n_in = 0, n_out = 0, c = 0;
  if (v.stride_col == 1 || v.cols == 1) {
    n_in = v.cols, n_out = v.rows, c = v.stride_row;
  } else if (v.stride_row == 1 || v.rows == 1) {
    n_in = v.rows, n_out = v.cols, c = v.stride_col;
  }
  const int64_t z = n_in - 1, y_max = n_out - 1;
  if (n_out == 1) c = n_in;  // no outer steps: any stride above the inner extent
  if (n_in == 0 || c <= z) {
    const int r = enumerate_overlap(v, batches);
    return r < 0 ? ranges_overlap(v) : r == 1;
  }
  // Batches x >= 1 apart share an element iff x * a + y * c = -dj has a solution with
  // 0 <= y <= y_max and |dj| <= z, where a is the batch stride (x * a >= 0, so the row distance
  // y runs against it). As c > z, that is: (x * a) mod c is in [0, z] with floor(x a / c) <= y_max
  // (the element lies y rows on, dj columns left), or in [c - z, c - 1] with ceil(x a / c) <= y_max.
  const int64_t a = v.batch_stride, x_max = batches - 1;
  auto cap = [&](i128 bound) { return int64_t(std::min<i128>(x_max, bound / a)); };
  const int64_t x_low = cap(i128(y_max + 1) * c - 1);  // floor(x a / c) <= y_max
  const int64_t x_high = cap(i128(y_max) * c);         // ceil(x a / c) <= y_max
  // Residue 0 first appears at x = c / gcd(a, c); residues 1..z and c-z..c-1 by Euclid.
  const int64_t x_zero = c / std::gcd(a, c);
  if (x_zero <= x_low) return true;
  if (z >= 1) {
    const int64_t x1 = min_multiple_in_range(a, c, 1, z);
    if (x1 >= 1 && x1 <= x_low) return true;
    const int64_t x2 = min_multiple_in_range(a, c, c - z, c - 1);
    if (x2 >= 1 && x2 <= x_high) return true;
  }
  return false;
}

}  // namespace omnigemm::detail
