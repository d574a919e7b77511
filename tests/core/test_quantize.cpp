// Quantisation through the public API (omnigemm/blockscaled.h): hand-computed value tables for
// every format (scale choice, rounding, saturation, NaN / Inf / zero blocks, fp4 nibble order,
// the nvfp4 global factor), every element against an independent brute-force nearest-value
// reference on fresh random data (and every dequantised value against an independent decode),
// idempotence, scale-layout conversion, and the CPU backend's
// device quantisation against the host's, bit for bit.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "blockscaled_check.hpp"
#include "omnigemm/block_formats.h"
#include "omnigemm/blockscaled.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// A row-major rows x k operand A quantised from `src` (f32) into `dtype` / `mode`, scales in
// `layout` (ld 0), as host buffers.
struct Quantised {
  std::vector<uint8_t> elements, scales;
  float global = 1.0f;
  Matrix view;
};

Quantised quantise_a(const std::vector<float>& src, int64_t rows, int64_t k, Dtype dtype, ScaleMode mode,
                     ScaleLayout layout, float global = 1.0f, uint8_t fill = 0xab) {
  Quantised q;
  const bool fp4 = is_fp4(dtype);
  const int64_t ld = fp4 ? (k + 1) / 2 * 2 : k;
  q.elements.assign(size_t(fp4 ? rows * ld / 2 : rows * ld), fill);
  q.view = Matrix(rows, k, dtype, Memory::host(q.elements.data())).ld(ld);
  q.view.scale(Memory::host(nullptr), layout).scale_mode(mode).global_scale(global);
  auto info = scale_info(q.view, Operand::a);
  REQUIRE_MESSAGE(info.ok(), info.status().message);
  q.scales.assign(size_t(info->bytes), fill);
  q.view.scale(Memory::host(q.scales.data()), layout);
  Matrix s = Matrix::host(src.data(), rows, k, Dtype::f32);
  Status st = quantize_host(s, q.view, Operand::a);
  REQUIRE_MESSAGE(st.ok(), st.message);
  q.global = q.view.raw.scale.global;
  return q;
}

std::vector<float> dequantise(const Quantised& q, int64_t rows, int64_t k) {
  std::vector<float> out(size_t(rows * k), 12345.0f);
  Status st = dequantize_host(q.view, Matrix::host(out.data(), rows, k, Dtype::f32), Operand::a);
  REQUIRE_MESSAGE(st.ok(), st.message);
  return out;
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

}  // namespace

TEST_CASE("quantise: mxfp8 value table (OCP scale, clipping, NaN / Inf / zero blocks)") {
  std::vector<float> src(2 * 64, 0.25f);
  src[0] = 1.0f;
  src[1] = 1.9f;    // 1.9 * 2^8 = 486.4: past e4m3's 448, clipped (OCP's scale choice)
  src[2] = 0.001f;  // 0.256 -> 0.25
  src[3] = -0.5f;
  src[40] = NAN;    // row 0, block 1
  for (int k = 64; k < 96; ++k) src[size_t(k)] = 0.0f;  // row 1, block 0: all zero
  src[64 + 50] = INFINITY;                              // row 1, block 1
  Quantised q = quantise_a(src, 2, 64, Dtype::mxfp8, ScaleMode::dtype_default, ScaleLayout::row_major);
  CHECK(q.scales == std::vector<uint8_t>{119, 255, 0, 255});  // 2^-8, NaN, 2^-127, NaN
  CHECK(q.elements[0] == 0x78);  // 256
  CHECK(q.elements[1] == 0x7e);  // 448 (clipped)
  CHECK(q.elements[2] == 0x28);  // 0.25
  CHECK(q.elements[3] == 0xf0);  // -128
  CHECK(q.elements[4] == 0x68);  // 64
  for (int k = 32; k < 128; ++k) CHECK(q.elements[size_t(k)] == 0);  // NaN / zero / Inf blocks store zeros
  const std::vector<float> d = dequantise(q, 2, 64);
  CHECK(d[0] == 1.0f);
  CHECK(d[1] == 1.75f);
  CHECK(d[2] == 0.25f / 256.0f);
  CHECK(d[3] == -0.5f);
  CHECK(d[4] == 0.25f);
  // NaN blocks dequantise to the one NaN pattern 0x7fc00000 (og_bf_nan_canonical).
  const float qnan = std::bit_cast<float>(0x7fc00000u);
  for (int k = 32; k < 64; ++k) CHECK(same_bits(d[size_t(k)], qnan));
  for (int k = 64; k < 96; ++k) CHECK(same_bits(d[size_t(k)], 0.0f));
  for (int k = 96; k < 128; ++k) CHECK(same_bits(d[size_t(k)], qnan));
}

TEST_CASE("dequantise: every NaN (NaN scale, NaN element code of either sign) is the one pattern 0x7fc00000") {
  // x86 arithmetic keeps a NaN operand's sign and payload (0xffc00000 from the e4m3 code 0xff),
  // NVIDIA GPUs return 0x7fffffff: dequantisation stores neither, so host and devices agree.
  std::vector<float> src(2 * 64, 0.5f);
  src[70] = NAN;  // row 1, block 0: a NaN scale
  Quantised q = quantise_a(src, 2, 64, Dtype::mxfp8, ScaleMode::dtype_default, ScaleLayout::row_major);
  q.elements[0] = 0xff;  // -NaN in e4m3
  q.elements[1] = 0x7f;  // +NaN
  const std::vector<float> d = dequantise(q, 2, 64);
  const float qnan = std::bit_cast<float>(0x7fc00000u);
  CHECK(same_bits(d[0], qnan));
  CHECK(same_bits(d[1], qnan));
  CHECK(d[2] == 0.5f);
  for (int k = 64; k < 96; ++k) CHECK(same_bits(d[size_t(k)], qnan));
  // 16-bit outputs: bf16 0x7fc0, f16 0x7e00.
  std::vector<uint16_t> h(size_t(2 * 64), 0x1234);
  for (Dtype out : {Dtype::bf16, Dtype::f16}) {
    Status st = dequantize_host(q.view, Matrix::host(h.data(), 2, 64, out), Operand::a);
    REQUIRE_MESSAGE(st.ok(), st.message);
    const uint16_t want = out == Dtype::bf16 ? 0x7fc0 : 0x7e00;
    CHECK(h[0] == want);
    CHECK(h[1] == want);
    CHECK(h[64] == want);
  }
}

TEST_CASE("quantise: mxfp4 nibble order, partial last block and packed scales with zero padding") {
  const float cycle[8] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -6.0f};
  std::vector<float> src(35);
  for (int k = 0; k < 32; ++k) src[size_t(k)] = cycle[k % 8];
  src[32] = 1.0f;  // block 1 (3 elements): amax 3 -> scale 2^(1 - 2) = 0.5
  src[33] = 2.0f;
  src[34] = -3.0f;
  Quantised q = quantise_a(src, 1, 35, Dtype::mxfp4, ScaleMode::dtype_default, ScaleLayout::packed);
  // Codes 1..7 and 0xf (-6); the lower K index in the low nibble.
  const uint8_t want[4] = {0x21, 0x43, 0x65, 0xf7};
  for (int i = 0; i < 16; ++i) CHECK(q.elements[size_t(i)] == want[i % 4]);
  CHECK(q.elements[16] == 0x64);  // 1 / 0.5 = 2 (code 4) and 2 / 0.5 = 4 (code 6)
  CHECK(q.elements[17] == 0x0f);  // -3 / 0.5 = -6 (code 0xf), then a zero pad nibble (K is odd)
  REQUIRE(q.scales.size() == 512);  // one 128 x 4 tile
  CHECK(q.scales[0] == 127);        // block 0: amax 6 = 2^2 * 1.5 -> 2^(2 - 2)
  CHECK(q.scales[1] == 126);
  for (size_t i = 2; i < q.scales.size(); ++i) CHECK(q.scales[i] == 0);  // padding written as zero
  const std::vector<float> d = dequantise(q, 1, 35);
  for (int k = 0; k < 32; ++k) CHECK(d[size_t(k)] == cycle[k % 8]);
  CHECK(d[32] == 1.0f);
  CHECK(d[33] == 2.0f);
  CHECK(d[34] == -3.0f);
}

TEST_CASE("quantise: nvfp4 global factor (chosen and given) and e4m3 block scales") {
  std::vector<float> src(32, 1.0f);
  src[5] = 2688.0f;  // block 0: amax 2688 = 448 * 6
  src[16] = 3.0f;    // block 1: amax 3
  Quantised q = quantise_a(src, 1, 32, Dtype::nvfp4, ScaleMode::dtype_default, ScaleLayout::row_major, 0.0f);
  CHECK(q.global == 1.0f);                 // amax / 2688, written back
  CHECK(q.scales == std::vector<uint8_t>{0x7e, 0x30});  // 448, 0.5
  CHECK((q.elements[2] >> 4) == 0x7);      // element 5: 2688 / 448 = 6
  CHECK((q.elements[2] & 15) == 0x0);      // element 4: 1 / 448 -> 0 (below 0.25)
  CHECK((q.elements[8] & 15) == 0x7);      // element 16: 3 / 0.5 = 6
  CHECK((q.elements[8] >> 4) == 0x4);      // element 17: 1 / 0.5 = 2
  // A given global factor: scales amax / (6 * 2), elements x / (scale * 2).
  Quantised g = quantise_a(src, 1, 32, Dtype::nvfp4, ScaleMode::vec16_ue4m3, ScaleLayout::row_major, 2.0f);
  CHECK(g.global == 2.0f);
  CHECK(g.scales == std::vector<uint8_t>{0x76, 0x28});  // 224, 0.25
  CHECK((g.elements[2] >> 4) == 0x7);
  const std::vector<float> d = dequantise(g, 1, 32);
  CHECK(d[5] == 2688.0f);
  CHECK(d[16] == 3.0f);
  CHECK(d[17] == 1.0f);
}

TEST_CASE("quantise: 128-blockwise fp8 (1 x 128 of A, 128 x 128 of B)") {
  std::vector<float> a(2 * 256, 0.5f);
  a[7] = 448.0f;   // row 0, block 0: scale 1
  a[200] = 1.0f;   // row 0, block 1: amax 1 -> scale 1/448
  for (int k = 128; k < 256; ++k)
    if (k != 200) a[size_t(k)] = 0.25f;
  Quantised q = quantise_a(a, 2, 256, Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleLayout::col_major);
  std::vector<float> s(4);
  std::memcpy(s.data(), q.scales.data(), 16);
  // Column-major: (r, c) at c * 2 + r.
  CHECK(s[0] == 1.0f);
  CHECK(s[2] == float(1.0L / 448.0L));
  CHECK(s[1] == float(0.5L / 448.0L));  // row 1, block 0: amax 0.5
  CHECK(s[3] == float(0.5L / 448.0L));
  CHECK(q.elements[7] == 0x7e);
  CHECK(q.elements[200] == 0x7e);       // 1 / (1/448) rounds to 448
  CHECK(q.elements[0] == 0x30);         // 0.5 / 1
  // B (op(B) = K x N = 256 x 130) stored N x K row-major and transposed: 2 x 2 blocks of 128 x 128.
  const int64_t N = 130, K = 256;
  std::vector<float> b(size_t(N * K), 0.125f);
  b[size_t(129 * K + 3)] = 896.0f;      // n = 129, k = 3: block (1, 0) -> scale 2
  b[size_t(5 * K + 255)] = -44.8f;      // n = 5, k = 255: block (0, 1) -> scale 0.1
  std::vector<uint8_t> e(size_t(N * K)), sc(16, 0xab);
  Matrix bq = Matrix(N, K, Dtype::fp8_e4m3, Memory::host(e.data())).transposed();
  bq.scale(Memory::host(sc.data()), ScaleLayout::row_major).scale_mode(ScaleMode::blk128x128_f32);
  Matrix bs = Matrix::host(b.data(), N, K, Dtype::f32).transposed();
  Status st = quantize_host(bs, bq, Operand::b);
  REQUIRE_MESSAGE(st.ok(), st.message);
  float bsc[4];
  std::memcpy(bsc, sc.data(), 16);
  CHECK(bsc[0] == float(0.125L / 448.0L));
  CHECK(bsc[1] == float(44.8L / 448.0L));
  CHECK(bsc[2] == 2.0f);
  CHECK(bsc[3] == float(0.125L / 448.0L));
  CHECK(e[size_t(129 * K + 3)] == 0x7e);
  CHECK(e[size_t(5 * K + 255)] == 0xfe);
}

namespace {

// Independent references, in long double, by brute force over each format's finite codes.
uint32_t nearest_code(long double q, int element, bool e4m3_scale = false) {
  const bool neg = std::signbit(q);
  const long double a = std::fabs(q);
  const uint32_t max_code = e4m3_scale || element == OG_BF_ELEM_E4M3 ? 0x7e : element == OG_BF_ELEM_E5M2 ? 0x7b : 0x7;
  auto val = [&](uint32_t c) -> long double {
    if (e4m3_scale || element == OG_BF_ELEM_E4M3) return omnigemm::numeric::e4m3_to_f32(uint8_t(c));
    if (element == OG_BF_ELEM_E5M2) return omnigemm::numeric::e5m2_to_f32(uint8_t(c));
    const float t[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    return t[c];
  };
  uint32_t best = 0;
  long double best_d = INFINITY;
  for (uint32_t c = 0; c <= max_code; ++c) {
    const long double d = std::fabs(val(c) - a);
    if (d < best_d || (d == best_d && c % 2 == 0)) { best = c; best_d = d; }
  }
  const uint32_t sign = element == OG_BF_ELEM_E2M1 && !e4m3_scale ? 0x8u : 0x80u;
  return neg && !e4m3_scale ? best | sign : best;
}

}  // namespace

TEST_CASE("quantise: every scale and element equals an independent nearest-value reference (random data)") {
  for (const BlockFormat& f : block_formats()) {
    for (Operand which : {Operand::a, Operand::b}) {
      const Dtype dtype = which == Operand::a ? f.a : f.b;
      const ScaleMode mode = which == Operand::a ? f.a_mode : f.b_mode;
      CAPTURE(std::string(f.name));
      CAPTURE(int(which));
      // A: 150 x 300 row-major; B: op(B) 300 x 150 held as N x K row-major, transposed.
      BlockOperand o;
      const bool b = which == Operand::b;
      Status st = make_block_operand(o, which, dtype, mode, 150, 300, Layout::row_major, b, ScaleLayout::row_major);
      REQUIRE_MESSAGE(st.ok(), st.message);
      auto info = scale_info(o.host_view(), which);
      REQUIRE(info.ok());
      const int elem = dtype == Dtype::fp8_e5m2 || dtype == Dtype::mxfp8_e5m2 ? OG_BF_ELEM_E5M2
                       : is_fp4(dtype)                                       ? OG_BF_ELEM_E2M1
                                                                             : OG_BF_ELEM_E4M3;
      const long double g = o.global;
      int64_t bad_scales = 0, bad_elements = 0, bad_dequantised = 0;
      for (int64_t sr = 0; sr < info->rows; ++sr)
        for (int64_t scol = 0; scol < info->cols; ++scol) {
          // The block's elements: rows [sr * br, +br) of the stored 150 x 300, K [scol * bk, +bk).
          long double amax = 0;
          for (int64_t r = sr * info->block_rows; r < std::min<int64_t>(150, (sr + 1) * info->block_rows); ++r)
            for (int64_t k = scol * info->block_k; k < std::min<int64_t>(300, (scol + 1) * info->block_k); ++k)
              amax = std::max(amax, std::fabs((long double)o.src.get(0, r, k)));
          long double scale;
          const uint8_t* sp = &o.scales[size_t((sr * info->ld + scol) * info->scale_bytes)];
          if (mode == ScaleMode::vec128_f32 || mode == ScaleMode::blk128x128_f32) {
            const float want = float(amax / (elem == OG_BF_ELEM_E5M2 ? 57344.0L : 448.0L));
            float got;
            std::memcpy(&got, sp, 4);
            bad_scales += got != want;
            scale = got;
          } else if (dtype == Dtype::nvfp4) {
            const uint32_t want = nearest_code(amax / (6 * g), 0, true);
            bad_scales += *sp != want;
            scale = omnigemm::numeric::e4m3_to_f32(*sp) * g;
          } else {
            int e;
            std::frexp(double(amax), &e);
            const int emax = elem == OG_BF_ELEM_E4M3 ? 8 : elem == OG_BF_ELEM_E5M2 ? 15 : 2;
            const int want = std::clamp(e - 1 - emax, -127, 127) + 127;
            bad_scales += *sp != want;
            scale = std::ldexp(1.0L, int(*sp) - 127);
          }
          for (int64_t r = sr * info->block_rows; r < std::min<int64_t>(150, (sr + 1) * info->block_rows); ++r)
            for (int64_t k = scol * info->block_k; k < std::min<int64_t>(300, (scol + 1) * info->block_k); ++k) {
              const uint32_t want = scale == 0 ? 0 : nearest_code((long double)o.src.get(0, r, k) / scale, elem);
              const int64_t i = r * o.src.ld + k;
              const uint32_t got = is_fp4(dtype) ? (o.elements[size_t(i / 2)] >> (4 * (i % 2))) & 15u : o.elements[size_t(i)];
              bad_elements += got != want;
              // The dequantised value: f32(f32(element * scale) * global), decoded independently.
              const float e4m3_or_e5m2 = elem == OG_BF_ELEM_E5M2 ? omnigemm::numeric::e5m2_to_f32(uint8_t(got))
                                                                 : omnigemm::numeric::e4m3_to_f32(uint8_t(got));
              const float t[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
              const float ev = elem == OG_BF_ELEM_E2M1 ? (got & 8 ? -t[got & 7] : t[got & 7]) : e4m3_or_e5m2;
              const float block_scale = dtype == Dtype::nvfp4 ? omnigemm::numeric::e4m3_to_f32(*sp) : float(scale);
              const float deq = (ev * block_scale) * float(g);
              bad_dequantised += std::bit_cast<uint32_t>(deq) != std::bit_cast<uint32_t>(float(o.deq.get(0, r, k)));
            }
        }
      CHECK(bad_scales == 0);
      CHECK(bad_elements == 0);
      CHECK(bad_dequantised == 0);
    }
  }
}

TEST_CASE("quantise: mx formats are idempotent (dequantised values quantise to the same codes)") {
  for (Dtype dtype : {Dtype::mxfp8, Dtype::mxfp8_e5m2, Dtype::mxfp4}) {
    CAPTURE(std::string(name(dtype)));
    BlockOperand o;
    Status st = make_block_operand(o, Operand::a, dtype, ScaleMode::dtype_default, 40, 200, Layout::row_major, false,
                                   ScaleLayout::row_major);
    REQUIRE_MESSAGE(st.ok(), st.message);
    std::vector<uint8_t> e2(o.elements), s2(o.scales.size(), 0x22);  // bytes outside the view kept as they are
    Matrix again = o.view(Memory::host(e2.data()), Memory::host(s2.data()));
    REQUIRE(quantize_host(o.deq.host_view(), again, Operand::a).ok());
    CHECK(e2 == o.elements);
    CHECK(s2 == o.scales);
  }
}

TEST_CASE("scale layouts: row-major <-> packed <-> column-major conversions round-trip; packed padding is zero") {
  for (const BlockFormat& f : block_formats()) {
    CAPTURE(std::string(f.name));
    // A: 150 x 200 (scale rows 150, or 2 for BLK128x128), scales row-major with 3 scales of ld padding.
    BlockOperand o;
    Status st = make_block_operand(o, Operand::a, f.a, f.a_mode, 150, 200, Layout::row_major, false,
                                   ScaleLayout::row_major, 0, 1, 3);
    REQUIRE_MESSAGE(st.ok(), st.message);
    const Matrix row = o.host_view();
    auto info = scale_info(row, Operand::a);
    REQUIRE(info.ok());
    Matrix col = row;
    std::vector<uint8_t> col_s(size_t((info->cols * (info->rows + 5)) * info->scale_bytes), 0x5a);
    col.scale(Memory::host(col_s.data()), ScaleLayout::col_major, info->rows + 5);
    REQUIRE(convert_scales_host(row, col, Operand::a).ok());
    std::vector<uint8_t> back(o.scales.size(), 0x77);
    Matrix row2 = row;
    row2.scale(Memory::host(back.data()), ScaleLayout::row_major, info->ld);
    REQUIRE(convert_scales_host(col, row2, Operand::a).ok());
    REQUIRE(back.size() == size_t(info->bytes));  // the last row ends at its last real scale
    for (size_t i = 0; i < back.size(); ++i)        // every real scale back; the ld padding untouched
      CHECK(back[i] == (int64_t(i) / info->scale_bytes % info->ld < info->cols ? o.scales[i] : 0x77));
    if (info->scale_bytes == 4) {  // f32 scales have no packed layout
      Matrix packed = row;
      packed.scale(Memory::host(col_s.data()), ScaleLayout::packed);
      CHECK(convert_scales_host(row, packed, Operand::a).code == StatusCode::invalid_argument);
      continue;
    }
    Matrix packed = row;
    packed.scale(Memory::host(nullptr), ScaleLayout::packed);
    auto pinfo = scale_info(packed, Operand::a);
    REQUIRE(pinfo.ok());
    CHECK(pinfo->stored_rows == 256);
    CHECK(pinfo->stored_cols == (info->cols + 3) / 4 * 4);
    CHECK(pinfo->bytes == 256 * pinfo->stored_cols);
    std::vector<uint8_t> p1(size_t(pinfo->bytes), 0xee), p2(size_t(pinfo->bytes), 0xdd);
    packed.scale(Memory::host(p1.data()), ScaleLayout::packed);
    REQUIRE(convert_scales_host(col, packed, Operand::a).ok());
    for (int64_t r = 0; r < pinfo->stored_rows; ++r)
      for (int64_t c = 0; c < pinfo->stored_cols; ++c) {
        const uint8_t got = p1[size_t(og_sf_packed_offset(int(r), int(c), int(pinfo->stored_cols)))];
        const bool real = r < info->rows && c < info->cols;
        CHECK(got == (real ? o.scales[size_t(r * info->ld + c)] : 0));
      }
    // Quantising straight into the packed layout gives the same bytes.
    std::vector<uint8_t> e2(o.elements);
    std::fill(e2.begin(), e2.begin() + 64, 0x99);  // rewritten by the quantiser
    Matrix direct = o.view(Memory::host(e2.data()), Memory::host(p2.data()));
    direct.scale(Memory::host(p2.data()), ScaleLayout::packed);
    REQUIRE(quantize_host(o.src.host_view(), direct, Operand::a).ok());
    CHECK(p2 == p1);
    CHECK(e2 == o.elements);
  }
}

TEST_CASE("device quantisation on the CPU backend equals the host quantiser bit for bit") {
  auto ctx = Context::create({.backend = Backend::cpu, .cpu_threads = 3});
  REQUIRE(ctx.ok());
  for (const BlockFormat& f : block_formats())
    for (Dtype src_dtype : {Dtype::f32, Dtype::f16, Dtype::bf16}) {
      CAPTURE(std::string(f.name));
      CAPTURE(std::string(name(src_dtype)));
      // B: op(B) = 333 x 260 (K x N) held N x K and transposed; packed scales where they fit.
      HostMatrix src(260, 333, src_dtype, Layout::row_major, 3);
      src.transposed = true;
      randomize_blocky(src);
      BlockOperand shape;
      const ScaleLayout layout = one_byte_scales(f.b_mode, f.b) ? ScaleLayout::packed : ScaleLayout::col_major;
      REQUIRE(make_block_operand(shape, Operand::b, f.b, f.b_mode, 260, 333, Layout::row_major, true, layout).ok());
      std::vector<uint8_t> he(shape.elements.size(), 1), hs(shape.scales.size(), 2), de(he), ds(hs);
      Matrix host_dst = shape.view(Memory::host(he.data()), Memory::host(hs.data()));
      Matrix dev_dst = shape.view(Memory::host(de.data()), Memory::host(ds.data()));
      host_dst.global_scale(f.b == Dtype::nvfp4 ? 0.0f : 1.0f);
      dev_dst.global_scale(f.b == Dtype::nvfp4 ? 0.0f : 1.0f);
      Matrix sv = src.host_view();
      REQUIRE(quantize_host(sv, host_dst, Operand::b).ok());
      Status st = quantize(*ctx, sv, dev_dst, Operand::b);
      REQUIRE_MESSAGE(st.ok(), st.message);
      CHECK(he == de);
      CHECK(hs == ds);
      CHECK(host_dst.raw.scale.global == dev_dst.raw.scale.global);
      for (Dtype out : {Dtype::f32, Dtype::bf16}) {
        HostMatrix h(260, 333, out, Layout::col_major, 1), d(260, 333, out, Layout::col_major, 1);
        h.transposed = d.transposed = true;
        h.poison();
        d.poison();
        REQUIRE(dequantize_host(host_dst, h.host_view(), Operand::b).ok());
        REQUIRE(dequantize(*ctx, dev_dst, d.host_view(), Operand::b).ok());
        CHECK(h.bytes == d.bytes);
        int64_t nan = 0;
        for (int64_t r = 0; r < 260; ++r)
          for (int64_t c = 0; c < 333; ++c) nan += std::isnan(h.get(0, r, c));
        CHECK(nan == 0);
      }
    }
}

TEST_CASE("device quantisation on the CPU backend: operands at buffer offsets, from og_memory_alloc") {
  auto ctx = Context::create({.backend = Backend::cpu, .cpu_threads = 2});
  REQUIRE(ctx.ok());
  check_device_quantization(*ctx);
}

TEST_CASE("og_scale_info_get: geometry per format and layout") {
  struct Row { Dtype dtype; ScaleMode mode; ScaleLayout layout; int64_t m, k; int block_k, block_rows, bytes;
               int64_t rows, cols, stored_rows, stored_cols, ld, total; };
  const Row rows[] = {
      {Dtype::mxfp8, ScaleMode::dtype_default, ScaleLayout::row_major, 130, 100, 32, 1, 1, 130, 4, 130, 4, 4, 520},
      {Dtype::mxfp8, ScaleMode::dtype_default, ScaleLayout::packed, 130, 100, 32, 1, 1, 130, 4, 256, 4, 0, 1024},
      {Dtype::nvfp4, ScaleMode::dtype_default, ScaleLayout::packed, 1, 100, 16, 1, 1, 1, 7, 128, 8, 0, 1024},
      {Dtype::nvfp4, ScaleMode::dtype_default, ScaleLayout::col_major, 3, 100, 16, 1, 1, 3, 7, 3, 7, 3, 21},
      {Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleLayout::col_major, 300, 1000, 128, 1, 4, 300, 8, 300, 8, 300, 9600},
      {Dtype::fp8_e5m2, ScaleMode::blk128x128_f32, ScaleLayout::row_major, 300, 1000, 128, 128, 4, 3, 8, 3, 8, 8, 96},
  };
  for (const Row& r : rows) {
    CAPTURE(std::string(name(r.dtype)));
    Matrix m(r.m, r.k, r.dtype, Memory::host(nullptr));
    m.ld(is_fp4(r.dtype) ? (r.k + 1) / 2 * 2 : r.k);
    m.scale(Memory::host(nullptr), r.layout).scale_mode(r.mode);
    auto i = scale_info(m, Operand::a);
    REQUIRE_MESSAGE(i.ok(), i.status().message);
    CHECK(i->block_k == r.block_k);
    CHECK(i->block_rows == r.block_rows);
    CHECK(i->scale_bytes == r.bytes);
    CHECK(i->rows == r.rows);
    CHECK(i->cols == r.cols);
    CHECK(i->stored_rows == r.stored_rows);
    CHECK(i->stored_cols == r.stored_cols);
    CHECK(i->ld == r.ld);
    CHECK(i->bytes == r.total);
  }
  // The same view as B: the scale rows are op(B)'s columns (N).
  Matrix b(100, 130, Dtype::mxfp8, Memory::host(nullptr));  // op(B) = 100 x 130: K = 100, N = 130
  auto ib = scale_info(b, Operand::b);
  REQUIRE(ib.ok());
  CHECK(ib->rows == 130);
  CHECK(ib->cols == 4);
}
