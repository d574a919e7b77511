// The Blackwell family's index arithmetic on the CPU (no GPU needed): the host model of the
// kernel (sm100_model.hpp, on the kernel's own sm100/layout.h) runs every table row's geometry for
// every MMA kind the row serves, on random and ragged shapes, and its D is checked element by
// element against the float64 reference (tests/common: reference_gemm over the operands, or over
// the dequantised operands for the block-scaled kinds, which the CPU backend's blockscaled family
// matches exactly). Also: the descriptors' bit fields against hand-encoded values, the table's
// shared and tensor memory within a compute capability 10.x SM's, and faults that must break it.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "blockscaled_check.hpp"
#include "gemm_check.hpp"
#include "sm100_model.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
namespace m = omnigemm::test::sm100_model;
using m::Kind;

namespace {

struct Row {
  int bm, bn, bk, gm, stages;
  const char* form;
};
constexpr Row kRows[] = {
#define OG_CUDA_SM100_TCGEN05(bm, bn, bk, gm, st, form) Row{bm, bn, bk, gm, st, #form},
#include "families/sm100_tcgen05.inc"
#undef OG_CUDA_SM100_TCGEN05
};

std::vector<Kind> kinds_of(int bk) {
  std::vector<Kind> k;
  for (int i = 0; i < m::kKinds; ++i)
    if (m::block_k(Kind(i)) == bk) k.push_back(Kind(i));
  return k;
}
const char* kind_name(Kind k) {
  static const char* names[] = {"kind::f16", "kind::f8f6f4", "kind::mxf8f6f4.block_scale.scale_vec::1X",
                                "kind::mxf4.block_scale.scale_vec::2X", "kind::mxf4nvf4.block_scale.scale_vec::4X"};
  return names[int(k)];
}
m::Geometry geometry(const Row& r, Kind k) { return {k, r.bn, r.bm / 128, r.stages}; }

int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// One GEMM through the model: random operands of `kind` (K-major: A row-major M x K, B stored
// N x K), ragged M, N, K, `batch` batches, D in `out`; every element checked.
void check_case(const m::Geometry& g, int M, int N, int K, int batch, Dtype out, int variant,
                m::Fault fault = m::Fault::none) {
  CAPTURE(std::string(kind_name(g.kind)));
  CAPTURE(g.block_n);
  CAPTURE(g.cta_group);
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(batch);
  m::Problem p;
  p.kind = g.kind, p.m = M, p.n = N, p.k = K, p.batch = batch;
  HostMatrix A, B;      // dense operands, or the dequantised block-scaled ones (the reference's)
  BlockOperand qa, qb;  // block-scaled operands
  if (!m::block_scaled(g.kind)) {
    const Dtype t =
        g.kind == Kind::f16 ? (variant % 2 ? Dtype::bf16 : Dtype::f16) : (variant % 2 ? Dtype::fp8_e5m2 : Dtype::fp8_e4m3);
    const Dtype tb = g.kind == Kind::f16 ? t : (variant % 3 ? Dtype::fp8_e4m3 : Dtype::fp8_e5m2);
    // ld padded by 16 bytes, batches with a 64-byte gap: strides TMA accepts.
    const int eb = dtype_size(t);
    A = HostMatrix(M, K, t, Layout::row_major, 16 / eb, batch, 64 / eb);
    if (g.b_mn) {  // B row-major K x N: N-major
      B = HostMatrix(K, N, tb, Layout::row_major, 16 / eb, batch, 64 / eb);
    } else {  // B stored N x K: K-major
      B = HostMatrix(N, K, tb, Layout::row_major, 16 / eb, batch, 64 / eb);
      B.transposed = true;
    }
    A.randomize();
    B.randomize();
    auto fmt = [&](Dtype d) {
      return d == Dtype::bf16       ? m::kFormatBF16
             : d == Dtype::fp8_e5m2 ? m::kFormatE5M2
             : d == Dtype::f16      ? m::kFormatF16
                                    : m::kFormatE4M3;
    };
    p.a = {A.bytes.data(), A.ld * eb, A.batch_stride * eb, M, fmt(t)};
    p.b = {B.bytes.data(), B.ld * eb, B.batch_stride * eb, N, fmt(tb)};
    p.b.mn_major = g.b_mn;
  } else {
    const Dtype t = g.kind == Kind::mxf8f6f4 ? (variant % 2 ? Dtype::mxfp8_e5m2 : Dtype::mxfp8)
                    : g.kind == Kind::mxf4   ? Dtype::mxfp4
                                             : Dtype::nvfp4;
    const ScaleMode mode = g.kind == Kind::mxf4nvf4 ? ScaleMode::vec16_ue4m3 : ScaleMode::vec32_ue8m0;
    Status s = make_block_operand(qa, Operand::a, t, mode, M, K, Layout::row_major, false, ScaleLayout::packed, 32, batch);
    REQUIRE_MESSAGE(s.ok(), s.message);
    s = make_block_operand(qb, Operand::b, Dtype::mxfp8 == t ? Dtype::mxfp8 : t, mode, N, K, Layout::row_major, true,
                           ScaleLayout::packed, 32, batch);
    REQUIRE_MESSAGE(s.ok(), s.message);
    const bool fp4 = m::elem_bits(g.kind) == 4;
    auto global = [&](const BlockOperand& o, int rows) {
      Matrix v = o.host_view();
      auto info = scale_info(v, o.which);
      REQUIRE(bool(info));
      m::GlobalOperand go;
      go.bytes = o.elements.data();
      go.row_bytes = fp4 ? o.src.ld / 2 : o.src.ld;
      go.batch_bytes = fp4 ? o.src.batch_stride / 2 : o.src.batch_stride;
      go.rows = rows;
      go.format = fp4 ? m::kFormatE2M1 : o.dtype == Dtype::mxfp8_e5m2 ? m::kFormatE5M2 : m::kFormatE4M3;
      go.scales = o.scales.data();
      go.scale_batch_bytes = o.scale_batch_stride;
      go.scale_rows = int(info->stored_rows);
      go.scale_cols = int(info->stored_cols);
      return go;
    };
    p.a = global(qa, M);
    p.b = global(qb, N);
    p.alpha = qa.global * qb.global;
    A = qa.deq;
    B = qb.deq;
  }
  HostMatrix D(M, N, out, Layout::row_major, 3, batch, 5);
  D.poison();
  const HostMatrix d_before = D;
  // Three persistent clusters (so that each walks several work items with its ring carried over).
  p.d_bytes = dtype_size(out);
  p.d_bf16 = out == Dtype::bf16;
  p.tma_store = (variant / 2) % 2 == 0;
  m::Model model(p, g, 3, fault);
  for (int cluster = 0; cluster < 3; ++cluster)
    model.run_cluster(cluster, [&](int b, int i, int j, const uint8_t* bytes) {
      std::memcpy(&D.bytes[size_t(D.offset(b, i, j) * p.d_bytes)], bytes, size_t(p.d_bytes));
    });
  const int tiles = (M + m::block_m(g) - 1) / m::block_m(g) * ((N + g.block_n - 1) / g.block_n) * batch;
  CHECK(model.items() == tiles);
  Reference ref = reference_gemm(A, B, nullptr, nullptr, EpilogueSpec{}, batch);
  // Errors relative to the terms' magnitude sum_k |a_ik b_kj|: the block-scaled MMA scales whole
  // products exactly while the reference sums products of the dequantised (f32-rounded) values,
  // so a dot product that cancels to ~0 differs by the dequantisation's rounding of its terms.
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double mag = 0;
        for (int k = 0; k < K; ++k) mag += std::fabs(A.op_get(b, i, k) * B.op_get(b, k, j));
        ref.magnitude[size_t((int64_t(b) * M + i) * N + j)] = mag;
      }
  const ErrorReport r = compare(D, ref, &d_before);
  if (fault != m::Fault::none) {
    CHECK_MESSAGE(!(r.rel_error <= tolerance(out, K)), "a fault the model should have exposed");
    return;
  }
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(out, K));
}

}  // namespace

TEST_CASE("sm100 model: descriptor bit fields") {
  // kind::f16, f32 D, f16 x f16, K-major, M 128, N 256: D format 1 at bit 4, N >> 3 = 32 at bit
  // 17, M >> 4 = 8 at bit 24 (PTX ISA, tcgen05 instruction descriptor).
  CHECK(m::idesc_dense(m::kFormatF16, m::kFormatF16, 128, 256) == 0x08400010u);
  // bf16 x bf16 (format 1 at bits 7 and 10), M 256, N 128.
  CHECK(m::idesc_dense(m::kFormatBF16, m::kFormatBF16, 256, 128) ==
        ((1u << 4) | (1u << 7) | (1u << 10) | (16u << 17) | (16u << 24)));
  // mxf4 E8M0 scales (bit 23), e2m1 = 1, scale-factor ids 2 (A, bit 29) and 2 (B, bit 4).
  const uint32_t bs = m::idesc_with_sf_ids(m::idesc_block_scaled(m::kFormatE2M1, m::kFormatE2M1, true, 128, 128), 2, 2);
  CHECK(bs == ((2u << 4) | (1u << 7) | (1u << 10) | (16u << 17) | (1u << 23) | (8u << 24) | (2u << 29)));
  CHECK(m::idesc_sfa_id(bs) == 2);
  CHECK(m::idesc_sfb_id(bs) == 2);
  CHECK(m::idesc_m(bs) == 128);
  CHECK(m::idesc_n(bs) == 128);
  // 128-byte swizzled K-major descriptor at 0x10400: address >> 4, stride 1024 >> 4 at bit 32,
  // version 1 at bit 46, layout 2 at bit 61.
  CHECK(m::smem_desc_sw128(0x10400) == (0x1040ull | (1ull << 16) | (64ull << 32) | (1ull << 46) | (2ull << 61)));
  CHECK(m::smem_desc_sf(0x2000) == (0x200ull | (8ull << 32) | (1ull << 46)));
  // Scale-factor ids per MMA: 1X walks the four bytes, 2X takes bytes 0 and 2, 4X all four at once.
  for (int kk = 0; kk < 4; ++kk) {
    CHECK(m::mma_sf_id(Kind::mxf8f6f4, kk) == kk);
    CHECK(m::mma_sf_id(Kind::mxf4, kk) == 2 * (kk % 2));
    CHECK(m::mma_sf_id(Kind::mxf4nvf4, kk) == 0);
  }
  // The packed scale tile a stage loads is block_formats.h's: its first byte is scale (row0, column).
  CHECK(m::sf_global_offset(Kind::mxf4nvf4, 1000, 256, 1, 2) ==
        og_sf_packed_offset(256, (1 * 4 + 2) * 4, og_sf_padded_cols(63)));
}

TEST_CASE("sm100 model: every table row fits a compute capability 10.x SM") {
  std::printf("%-22s %-42s %9s %6s %6s %5s\n", "row", "kind", "smem", "tmem", "accbuf", "sf/st");
  for (const Row& r : kRows) {
    const auto kinds = kinds_of(r.bk);
    REQUIRE(!kinds.empty());
    for (Kind k : kinds) {
      const m::Geometry g = geometry(r, k);
      char name[64];
      std::snprintf(name, sizeof name, "%dx%dx%d-s%d-%s", r.bm, r.bn, r.bk, r.stages, r.form);
      std::printf("%-22s %-42s %9u %6d %6d %5d\n", name, kind_name(k), m::shared_bytes(g), m::tmem_columns(g),
                  m::acc_stages(g), m::sf_tiles_per_stage(k));
      CAPTURE(name);
      CAPTURE(std::string(kind_name(k)));
      CHECK(m::shared_bytes(g) <= m::kMaxSharedBytes);
      CHECK(m::tmem_columns(g) <= 512);
      CHECK(m::block_m(g) == r.bm);
      CHECK(m::staging_offset(g) % 1024 == 0);  // the swizzled staging boxes
      CHECK(m::b_offset(g, 0) % 1024 == 0);     // every operand tile on the swizzle period
      CHECK(m::b_tile_bytes(g) % 1024 == 0);
      CHECK(m::sf_offset(g, 0) % 128 == 0);  // TMA boxes: 128-byte aligned destinations
    }
  }
}

TEST_CASE("sm100 model: every row and kind on random ragged shapes, against the float64 reference") {
  int variant = 0;
  for (const Row& r : kRows)
    for (Kind k : kinds_of(r.bk)) {
      m::Geometry g = geometry(r, k);
      g.b_mn = k == Kind::f16 && variant % 2 == 1;  // B N-major (16-bit only), every other row
      const bool fp4 = m::elem_bits(k) == 4;
      // M across a 2-SM pair's halves and the tile edge, N across B's halves, K with a partial
      // last stage (and a partial last MMA), one or two batches.
      const int M = uniform(1, 2 * r.bm + 40), N = uniform(1, r.bn + 70);
      int K = uniform(1, 3 * r.bk + 50);
      if (fp4) K += K % 2;
      const Dtype out = variant % 3 == 0 ? Dtype::f32 : variant % 3 == 1 ? Dtype::bf16 : Dtype::f16;
      check_case(g, M, N, K, 1 + variant % 2, out, variant);
      ++variant;
    }
}

TEST_CASE("sm100 model: edges (one row, one column, K below one MMA, exact tiles)") {
  for (const Row& r : kRows)
    for (Kind k : kinds_of(r.bk)) {
      const m::Geometry g = geometry(r, k);
      const int kmin = m::elem_bits(k) == 4 ? 2 : 1;
      check_case(g, 1, 1, kmin, 1, Dtype::f32, 0);
      check_case(g, r.bm, r.bn, r.bk, 1, Dtype::f32, 1);
      check_case(g, r.bm + 1, r.bn - 1, m::mma_k(k) + kmin, 1, Dtype::f32, 2);
      if (k == Kind::f16) {
        m::Geometry mn = g;
        mn.b_mn = true;
        check_case(mn, r.bm + 1, r.bn - 1, 2 * r.bk + 3, 2, Dtype::bf16, 3);
      }
    }
}

TEST_CASE("sm100 model: faults in the arithmetic are exposed") {
  const Row pair{256, 256, 256, 8, 5, "pair"};
  check_case(geometry(pair, Kind::mxf4), 200, 250, 512, 1, Dtype::f32, 0, m::Fault::no_swizzle);
  check_case(geometry(pair, Kind::mxf4), 200, 250, 512, 1, Dtype::f32, 0, m::Fault::sf_id_zero);
  check_case(geometry(pair, Kind::mxf4nvf4), 256, 256, 256, 1, Dtype::f32, 0, m::Fault::pair_b_halves_swapped);
  const Row single{128, 128, 64, 8, 6, "single"};
  check_case(geometry(single, Kind::f16), 130, 120, 200, 1, Dtype::f32, 0, m::Fault::no_swizzle);
  m::Geometry mn = geometry(single, Kind::f16);
  mn.b_mn = true;
  check_case(mn, 130, 120, 200, 1, Dtype::f32, 0, m::Fault::no_swizzle);
  // Staging off the 1024-byte swizzle period: the TMA store reads other bytes than were written.
  check_case(geometry(single, Kind::f16), 130, 120, 200, 1, Dtype::bf16, 0, m::Fault::staging_off_period);
}
