// Where the Hopper kernel's TMA loads of an operand crawl: an MN-major operand's boxes are 64
// elements of M or N by BLOCK_K lines, and where the matrix's lines (its M or N elements) fill
// 16 to 48 bytes of each, TMA fetches the box line by line and the K steps wait on it
// (bench/results/h200, runs p44 and p45; lines under 16 bytes, which need a padded leading
// dimension to be loaded in place at all, waited on some problems and not on others). The cost
// model prices it (Sm90WgmmaFamily::hints) and sm90_repack offers such an operand copied K-major.
// Host code only.
#pragma once
#include <cstdint>

namespace omnigemm::detail::sm90 {

constexpr bool narrow_mn_lines(int64_t mn, int element_bytes) { return mn * element_bytes >= 16 && mn * element_bytes < 64; }

}  // namespace omnigemm::detail::sm90
