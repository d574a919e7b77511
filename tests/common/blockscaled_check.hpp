// Test support for block-scaled operands (omnigemm/blockscaled.h), shared by every backend's
// tests: an operand quantised from fresh random f32 values through the public host quantiser,
// its scale tensor in any layout, and the same operand dequantised to f32 (og_dequantize_host)
// as a HostMatrix that reference_gemm takes: the "reference built from the dequantised
// operands" every block-scaled family is checked against.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gemm_check.hpp"
#include "omnigemm/blockscaled.hpp"

namespace omnigemm::test {

// One block-scaled format as the benchmark names it: A's and B's dtype and scale mode.
struct BlockFormat {
  const char* name;
  Dtype a, b;
  ScaleMode a_mode, b_mode;
};
inline const std::vector<BlockFormat>& block_formats() {
  static const std::vector<BlockFormat> f = {
      {"mxfp8", Dtype::mxfp8, Dtype::mxfp8, ScaleMode::dtype_default, ScaleMode::dtype_default},
      {"mxfp8_e5m2", Dtype::mxfp8_e5m2, Dtype::mxfp8, ScaleMode::vec32_ue8m0, ScaleMode::vec32_ue8m0},
      {"mxfp4", Dtype::mxfp4, Dtype::mxfp4, ScaleMode::dtype_default, ScaleMode::dtype_default},
      {"nvfp4", Dtype::nvfp4, Dtype::nvfp4, ScaleMode::vec16_ue4m3, ScaleMode::dtype_default},
      {"fp8_block128", Dtype::fp8_e4m3, Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleMode::blk128x128_f32},
      {"fp8_block128_swapped", Dtype::fp8_e5m2, Dtype::fp8_e4m3, ScaleMode::blk128x128_f32, ScaleMode::vec128_f32},
  };
  return f;
}

inline bool is_fp4(Dtype d) { return d == Dtype::mxfp4 || d == Dtype::nvfp4; }
inline bool one_byte_scales(ScaleMode m, Dtype d) {
  return !(m == ScaleMode::vec128_f32 || m == ScaleMode::blk128x128_f32) && d != Dtype::fp8_e4m3 && d != Dtype::fp8_e5m2;
}

// A GEMM operand (A: op() is M x K; B: K x N) of a block-scaled format, in host memory.
struct BlockOperand {
  Operand which = Operand::a;
  Dtype dtype = Dtype::mxfp8;
  ScaleMode mode = ScaleMode::dtype_default;
  ScaleLayout scale_layout = ScaleLayout::row_major;
  int64_t scale_ld = 0;          // as given to the view (0: the smallest)
  int64_t scale_batch_stride = 0;
  HostMatrix src;                // the f32 values it was quantised from (same geometry)
  HostMatrix deq;                // the dequantised operand (f32, same geometry)
  std::vector<uint8_t> elements; // the quantised elements, in src's geometry (fp4: 2 per byte)
  std::vector<uint8_t> scales;
  float global = 1.0f;           // per batch the same factor (nvfp4: chosen from batch 0)

  // The operand's view on memory `e` (elements) and `s` (scales).
  Matrix view(Memory e, Memory s) const {
    Matrix m(src.rows, src.cols, dtype, e, src.layout);
    m.ld(src.ld).batch_stride(src.batches > 1 ? src.batch_stride : 0).transposed(src.transposed);
    m.scale(s, scale_layout, scale_ld).scale_mode(mode).global_scale(global).scale_batch_stride(scale_batch_stride);
    return m;
  }
  Matrix host_view() const { return view(Memory::host(elements.data()), Memory::host(scales.data())); }
};

// Fills src with fresh random values whose magnitude varies by 2^[-2, 2] from one 16 x 16 patch
// to the next, so that neighbouring blocks get different scales (and products stay in f16's
// normal range, where the tolerance's rounding bound holds); never zero.
inline void randomize_blocky(HostMatrix& m) {
  m.randomize();
  std::uniform_int_distribution<int> e(-2, 2);
  std::vector<int> patch(size_t((m.rows / 16 + 1) * (m.cols / 16 + 1) * m.batches));
  for (int& p : patch) p = e(rng());
  for (int64_t b = 0; b < m.batches; ++b)
    for (int64_t r = 0; r < m.rows; ++r)
      for (int64_t c = 0; c < m.cols; ++c)
        m.set(b, r, c,
              float(std::ldexp(m.get(b, r, c), patch[size_t((b * (m.rows / 16 + 1) + r / 16) * (m.cols / 16 + 1) + c / 16)])));
}

// Builds a quantised operand: stored rows x cols (the view before op(): transposed views are
// how fp4 B gets K contiguous), `batches` copies, elements with `ld_pad` extra elements per
// leading dimension (made even for fp4), scales in `scale_layout` with `scale_ld_pad` extra
// scales per leading dimension. Returns the first failed status of the public calls.
inline Status make_block_operand(BlockOperand& o, Operand which, Dtype dtype, ScaleMode mode, int64_t rows,
                                 int64_t cols, Layout layout, bool transposed, ScaleLayout scale_layout,
                                 int64_t ld_pad = 0, int64_t batches = 1, int64_t scale_ld_pad = 0) {
  o = BlockOperand{};
  o.which = which;
  o.dtype = dtype;
  o.mode = mode;
  o.scale_layout = scale_layout;
  // fp4 needs an even ld and batch stride.
  const int64_t inner = layout == Layout::row_major ? cols : rows;
  const int64_t pad = is_fp4(dtype) && (inner + ld_pad) % 2 ? ld_pad + 1 : ld_pad;
  o.src = HostMatrix(rows, cols, Dtype::f32, layout, pad, batches, is_fp4(dtype) ? 2 : 1);
  o.src.transposed = transposed;
  randomize_blocky(o.src);
  o.deq = o.src;
  o.deq.poison();
  o.elements.assign(size_t(is_fp4(dtype) ? (o.src.bytes.size() / 4 + 1) / 2 : o.src.bytes.size() / 4), 0xcd);

  // Scale geometry from one matrix's view (ld resolved from scale_ld_pad).
  Matrix probe = o.view(Memory::host(o.elements.data()), Memory::host(nullptr));
  probe.raw.batch_stride = 0;
  auto info = scale_info(probe, which);
  if (!info) return info.status();
  if (scale_layout != ScaleLayout::packed && scale_ld_pad) {
    o.scale_ld = info->ld + scale_ld_pad;
    probe.scale(Memory::host(nullptr), scale_layout, o.scale_ld);
    info = scale_info(probe, which);
    if (!info) return info.status();
  }
  o.scale_batch_stride = batches > 1 ? info->bytes / info->scale_bytes + 3 : 0;
  o.scales.assign(size_t(std::max<int64_t>(1, (batches - 1) * o.scale_batch_stride * info->scale_bytes + info->bytes)), 0xab);

  // Quantise and dequantise each batch through the public host API.
  const int64_t elem_batch_bytes = is_fp4(dtype) ? o.src.batch_stride / 2 : o.src.batch_stride;
  float global = dtype == Dtype::nvfp4 ? 0.0f : 1.0f;
  for (int64_t b = 0; b < batches; ++b) {
    Matrix src = o.src.view(Memory::host(o.src.bytes.data() + b * o.src.batch_stride * 4));
    src.raw.batch_stride = 0;
    Matrix dst(o.src.rows, o.src.cols, dtype, Memory::host(o.elements.data() + b * elem_batch_bytes), o.src.layout);
    dst.ld(o.src.ld).transposed(transposed);
    dst.scale(Memory::host(o.scales.data() + b * o.scale_batch_stride * info->scale_bytes), scale_layout, o.scale_ld)
        .scale_mode(mode)
        .global_scale(global);
    Status s = quantize_host(src, dst, which);
    if (!s) return s;
    global = dst.raw.scale.global;  // nvfp4: batch 0 chooses, the others reuse it
    Matrix deq = o.deq.view(Memory::host(o.deq.bytes.data() + b * o.deq.batch_stride * 4));
    deq.raw.batch_stride = 0;
    if (!(s = dequantize_host(dst, deq, which))) return s;
  }
  o.global = global;
  return {};
}

// One block-scaled GEMM case: A and B quantised in `format` (A stored K x M when ta, B stored
// N x K when tb: the K-contiguous forms fp4 needs are ta with column-major A and tb with
// row-major B, or neither transposed with row-major A / column-major B), scales in sa / sb
// with scale_pad extra scales per leading dimension, batches with gaps, the full epilogue.
struct BlockCase {
  BlockFormat format;
  int64_t m = 1, n = 1, k = 1, batch = 1;
  bool ta = false, tb = true;
  Layout la = Layout::row_major, lb = Layout::row_major;
  ScaleLayout sa = ScaleLayout::row_major, sb = ScaleLayout::row_major;
  int64_t scale_pad = 0;
  Dtype c = Dtype::f32, d = Dtype::f32;
  EpilogueSpec epi;
  std::string config;  // forced config (empty: the backend's choice)
  int64_t ld_pad = 1;  // extra elements per leading dimension of A and B (made even for fp4)
  // The family multiplies fp8 elements on fp8 tensor cores, whose accumulation within a scale
  // block is of reduced precision: gemm_check.hpp's fp8 tolerance.
  bool fp8_accumulation = false;
};

// Runs `c` through og_gemm_host (the operands staged to the backend with their scales) on a
// poisoned D and checks every element against the float64 reference built from the
// dequantised operands (og_dequantize_host): the dequantised values are exact f32 numbers both
// sides use, so the tolerance is gemm_check.hpp's f32-accumulation bound for D's dtype.
inline void run_block_case(Context& ctx, const BlockCase& c) {
  CAPTURE(std::string(c.format.name));
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.batch);
  CAPTURE(c.ta);
  CAPTURE(c.tb);
  CAPTURE(int(c.sa));
  CAPTURE(int(c.sb));
  CAPTURE(std::string(name(c.d)));
  CAPTURE(int(c.epi.act));
  CAPTURE(int(c.epi.bias_mode));
  CAPTURE(c.epi.beta);
  CAPTURE(c.config);
  const BlockFormat& f = c.format;
  BlockOperand A, B;
  Status s = make_block_operand(A, Operand::a, f.a, f.a_mode, c.ta ? c.k : c.m, c.ta ? c.m : c.k, c.la, c.ta, c.sa,
                                c.ld_pad, c.batch, c.scale_pad);
  REQUIRE_MESSAGE(s.ok(), s.message);
  s = make_block_operand(B, Operand::b, f.b, f.b_mode, c.tb ? c.n : c.k, c.tb ? c.k : c.n, c.lb, c.tb, c.sb, c.ld_pad,
                         c.batch, c.scale_pad);
  REQUIRE_MESSAGE(s.ok(), s.message);
  HostMatrix D(c.m, c.n, c.d, Layout::row_major, 2, c.batch, 3);
  HostMatrix C(c.m, c.n, c.c, Layout::col_major, 1, c.batch, 2);
  C.randomize();
  D.poison();
  const HostMatrix d_before = D;
  std::vector<float> bias(size_t(std::max(c.m, c.n)));
  for (float& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.c = C.host_view();
  g.d = D.host_view();
  g.batch_count = c.batch;
  g.config = c.config;
  set_epilogue(g, c.epi, Memory::host(bias.data()));
  s = ctx.run_host(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  const Reference ref = reference_gemm(A.deq, B.deq, &C, &bias, c.epi, c.batch);
  const ErrorReport r = compare(D, ref, &d_before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= (c.fp8_accumulation ? tolerance(c.d, c.k, Dtype::fp8_e4m3, Dtype::fp8_e4m3) : tolerance(c.d, c.k)));
}

// Elements along K per scale of a format's operand.
inline int64_t block_k(ScaleMode m, Dtype d) {
  if (m == ScaleMode::vec128_f32 || m == ScaleMode::blk128x128_f32) return 128;
  return d == Dtype::nvfp4 || m == ScaleMode::vec16_ue4m3 ? 16 : 32;
}

// Checks that two byte buffers are equal; where they are not, says how many bytes differ, in
// how many distinct places (`where(i)` names byte i: element, K block, scale) the first 8 lie.
template <class Where>
inline void report_differences(const char* what, const std::vector<uint8_t>& host, const std::vector<uint8_t>& device,
                               Where where) {
  REQUIRE(host.size() == device.size());
  int64_t differ = 0;
  std::string first;
  for (size_t i = 0; i < host.size(); ++i)
    if (host[i] != device[i]) {
      if (differ < 8) first += "\n  " + std::string(what) + " " + std::to_string(i) + ": " + where(i);
      ++differ;
    }
  CHECK_MESSAGE(differ == 0, differ, " ", what, "s differ (host vs device); the first:", first);
}

// Device quantisation (og_quantize / og_dequantize) on `ctx` against the host functions, bit for
// bit: every format, f32 / f16 / bf16 sources, scale layouts, a NaN block, odd K (a partial
// block and an fp4 pad nibble), operands at buffer offsets, f32 and bf16 dequantised outputs.
inline void check_device_quantization(Context& ctx) {
  og_context* c = ctx.c_handle();
  int variant = 0;
  for (const BlockFormat& f : block_formats())
    for (Dtype src_dtype : {Dtype::f32, Dtype::f16, Dtype::bf16}) {
      CAPTURE(std::string(f.name));
      CAPTURE(std::string(name(src_dtype)));
      // B: op(B) = 301 x 150 (K x N) held N x K and transposed, odd K (a partial block, an fp4 pad nibble).
      const ScaleLayout layout = one_byte_scales(f.b_mode, f.b) ? (variant % 2 ? ScaleLayout::packed : ScaleLayout::row_major)
                                                                : (variant % 2 ? ScaleLayout::col_major : ScaleLayout::row_major);
      ++variant;
      BlockOperand shape;
      REQUIRE(make_block_operand(shape, Operand::b, f.b, f.b_mode, 150, 301, Layout::row_major, true, layout).ok());
      HostMatrix src(150, 301, src_dtype, Layout::row_major, 3);
      src.transposed = true;
      randomize_blocky(src);
      src.set(0, 7, 40, NAN);  // a NaN block
      const float global = f.b == Dtype::nvfp4 ? 0.0f : 1.0f;
      // Host reference.
      std::vector<uint8_t> he(shape.elements.size(), 0x5c), hs(shape.scales.size(), 0x3d);
      Matrix host_dst = shape.view(Memory::host(he.data()), Memory::host(hs.data()));
      host_dst.global_scale(global);
      REQUIRE(quantize_host(src.host_view(), host_dst, Operand::b).ok());
      // Device: src, elements and scales in one buffer at offsets, with the same starting bytes.
      const uint64_t src_at = 32, e_at = src_at + (src.bytes.size() + 63) / 64 * 64, s_at = e_at + (he.size() + 63) / 64 * 64;
      og_memory buf;
      REQUIRE(og_memory_alloc(c, size_t(s_at + hs.size()), &buf) == OG_OK);
      auto at = [&](uint64_t off) { og_memory m = buf; m.offset = off; return m; };
      std::vector<uint8_t> de(he.size(), 0x5c), ds(hs.size(), 0x3d);
      REQUIRE(og_memory_upload(c, at(src_at), src.bytes.data(), src.bytes.size()) == OG_OK);
      REQUIRE(og_memory_upload(c, at(e_at), de.data(), de.size()) == OG_OK);
      REQUIRE(og_memory_upload(c, at(s_at), ds.data(), ds.size()) == OG_OK);
      Matrix dev_dst = shape.view(Memory{at(e_at)}, Memory{at(s_at)});
      dev_dst.global_scale(global);
      const Status st = quantize(ctx, src.view(Memory{at(src_at)}), dev_dst, Operand::b);
      REQUIRE_MESSAGE(st.ok(), st.message);
      REQUIRE(og_memory_download(c, de.data(), at(e_at), de.size()) == OG_OK);
      REQUIRE(og_memory_download(c, ds.data(), at(s_at), ds.size()) == OG_OK);
      // Element bytes: stored N x K (ld = shape's), 2 per byte for fp4; scale bytes in `layout`.
      const int64_t e_ld = shape.src.ld, k_per_byte = is_fp4(f.b) ? 2 : 1;
      report_differences("element byte", he, de, [&](size_t i) {
        const int64_t e = int64_t(i) * k_per_byte, n = e / e_ld, k = e % e_ld;
        return "n " + std::to_string(n) + ", k " + std::to_string(k) + " (K block " + std::to_string(k / block_k(f.b_mode, f.b)) + ")";
      });
      report_differences("scale byte", hs, ds, [&](size_t i) { return "offset " + std::to_string(i) + " in the scale tensor"; });
      CHECK(dev_dst.raw.scale.global == host_dst.raw.scale.global);
      // Dequantised on the device into f32 and bf16 D (K x N column-major, the same storage as
      // N x K), against the host's dequantisation.
      for (Dtype out : {Dtype::f32, Dtype::bf16}) {
        HostMatrix h(301, 150, out, Layout::col_major, 2), d(301, 150, out, Layout::col_major, 2);
        h.poison();
        d.poison();
        REQUIRE(dequantize_host(host_dst, h.host_view(), Operand::b).ok());
        og_memory dbuf;
        REQUIRE(og_memory_alloc(c, d.bytes.size(), &dbuf) == OG_OK);
        REQUIRE(og_memory_upload(c, dbuf, d.bytes.data(), d.bytes.size()) == OG_OK);
        const Status ds_st = dequantize(ctx, dev_dst, d.view(Memory{dbuf}), Operand::b);
        REQUIRE_MESSAGE(ds_st.ok(), ds_st.message);
        REQUIRE(og_memory_download(c, d.bytes.data(), dbuf, d.bytes.size()) == OG_OK);
        REQUIRE(og_memory_free(c, dbuf) == OG_OK);
        CAPTURE(std::string(name(out)));
        const int64_t eb = out == Dtype::f32 ? 4 : 2, d_ld = h.ld;
        report_differences("dequantised byte", h.bytes, d.bytes, [&](size_t i) {  // K x N column-major
          const int64_t e = int64_t(i) / eb, n = e / d_ld, k = e % d_ld;
          std::string bits;
          for (int64_t j = 0; j < eb; ++j) {
            char x[8];
            std::snprintf(x, sizeof x, "%02x/%02x ", h.bytes[size_t(e * eb + j)], d.bytes[size_t(e * eb + j)]);
            bits += x;
          }
          return "n " + std::to_string(n) + ", k " + std::to_string(k) + " (K block " + std::to_string(k / block_k(f.b_mode, f.b)) +
                 "), bytes host/device from the lowest: " + bits;
        });
      }
      REQUIRE(og_memory_free(c, buf) == OG_OK);
    }
}

}  // namespace omnigemm::test
