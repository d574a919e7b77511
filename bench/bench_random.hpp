// omnigemm-bench --random: problems drawn from the seed, as a user brings them. M, N and K are
// log-uniform over [1, --random-max-dim] (a quarter of the problems skinny: M or N in [1, 64];
// a sixth small: all three in [1, 256]); A and B each in either layout; leading dimensions and
// batch strides 16-byte aligned on half of the problems and not on the other half; a fifth
// batched (2 to 16), a quarter of those with one B broadcast to every batch. fp8 problems keep
// what cuBLASLt's fp8 GEMM needs (A row-major, B column-major, 16-byte aligned leading
// dimensions, K and N multiples of 16, one batch). Each problem is bounded: while its FLOPs exceed --random-max-flops or
// its operands 2^27 elements, its batch count, then its largest dimension, is halved.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_options.hpp"

namespace omnigemm::bench {

constexpr double kRandomMaxElements = double(int64_t(1) << 27);

// o.random_count problems from o.seed over o.dtypes (each problem one of them, drawn too).
std::vector<Shape> random_shapes(const Options& o);

// Whether every leading dimension and batch stride of the problem is a multiple of 16 bytes.
bool storage_aligned(const Shape& s, og_dtype in, og_dtype out);

// "A r ld 4100, B c ld 4096, D ld 4100, batch 3 (B broadcast)" for tables and notes.
std::string storage_text(const Shape& s);

}  // namespace omnigemm::bench
