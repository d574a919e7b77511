// The CPU backend's block-scaled family (cpu.blockscaled), the reference semantics of
// omnigemm/blockscaled.h: every format on ragged shapes (K tails inside scale blocks, M and N
// off 128), every scale layout, transposed views, batches with scale batch strides, every
// epilogue and output dtype, K split across cache blocks in the middle of scale blocks, every
// micro-kernel, NaN blocks, and block-scaled x plain operands; against the float64 reference
// built from the dequantised operands.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "blockscaled_check.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

Context cpu_context(int threads = 0) {
  auto ctx = Context::create({.backend = Backend::cpu, .tune_mode = TuneMode::off, .cpu_threads = threads});
  REQUIRE(ctx.ok());
  return std::move(ctx.value());
}

// The scale layouts a format's operand can take.
std::vector<ScaleLayout> layouts_for(ScaleMode mode, Dtype dtype) {
  if (one_byte_scales(mode, dtype)) return {ScaleLayout::row_major, ScaleLayout::packed, ScaleLayout::col_major};
  return {ScaleLayout::col_major, ScaleLayout::row_major};
}

}  // namespace

TEST_CASE("cpu.blockscaled: every format, ragged shapes, scale layouts, views and output dtypes") {
  Context ctx = cpu_context();
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 17}, {33, 17, 100}, {130, 70, 257}, {129, 131, 160}};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  int variant = 0;
  for (const BlockFormat& f : block_formats())
    for (const auto& s : shapes) {
      const std::vector<ScaleLayout> la = layouts_for(f.a_mode, f.a), lb = layouts_for(f.b_mode, f.b);
      for (int v = 0; v < 2; ++v, ++variant) {
        BlockCase c;
        c.format = f;
        c.m = s[0];
        c.n = s[1];
        c.k = s[2];
        c.sa = la[size_t(variant) % la.size()];
        c.sb = lb[size_t(variant + 1) % lb.size()];
        c.scale_pad = variant % 3 == 0 ? 2 : 0;
        c.d = outs[variant % 3];
        // Views with K contiguous (what fp4 needs): A row-major or transposed column-major,
        // B transposed row-major or column-major; fp8 formats also take K-strided views.
        c.ta = v == 1;
        c.la = c.ta ? Layout::col_major : Layout::row_major;
        c.tb = v == 0;
        c.lb = c.tb ? Layout::row_major : Layout::col_major;
        if (!is_fp4(f.a) && variant % 4 == 3) c.la = c.ta ? Layout::row_major : Layout::col_major;
        if (!is_fp4(f.b) && variant % 4 == 1) c.lb = c.tb ? Layout::col_major : Layout::row_major;
        run_block_case(ctx, c);
      }
    }
}

TEST_CASE("cpu.blockscaled: every epilogue, batches with scale batch strides") {
  Context ctx = cpu_context();
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh,
                             Activation::silu};
  int i = 0;
  for (const BlockFormat& f : block_formats())
    for (Activation act : acts) {
      BlockCase c;
      c.format = f;
      c.m = 37;
      c.n = 29;
      c.k = 150;
      c.batch = 3;
      c.epi.act = act;
      c.epi.alpha = 0.75f;
      c.epi.beta = i % 2 ? 0.5f : 0.0f;
      c.epi.bias_mode = i % 3 == 0 ? BiasMode::none : i % 3 == 1 ? BiasMode::per_n : BiasMode::per_m;
      c.c = i % 2 ? Dtype::bf16 : Dtype::f16;
      c.d = i % 3 == 0 ? Dtype::f32 : Dtype::f16;
      c.sa = layouts_for(f.a_mode, f.a)[size_t(i) % 2];
      c.sb = layouts_for(f.b_mode, f.b)[size_t(i + 1) % 2];
      ++i;
      run_block_case(ctx, c);
    }
}

TEST_CASE("cpu.blockscaled: K split across cache blocks inside scale blocks, every micro-kernel, many threads") {
  for (const char* kernel : {"scalar", "avx2", "avx512"}) {
    Context ctx = cpu_context(3);
    // KC = 48 and 200: K blocks start in the middle of 16-, 32- and 128-element scale blocks.
    for (const char* tiles : {"blockscaled:16x64x48-g1-s1-w1", "blockscaled:64x256x200-g1-s1-w1"}) {
      const std::string config = std::string(tiles) + "-" + kernel;
      Status probe = run_probe(ctx, Dtype::f32, "packed:16x64x48-g1-s1-w1-" + std::string(kernel));
      if (!probe) {
        MESSAGE("SKIPPED cpu: " << kernel << " micro-kernel: " << probe.message);
        break;
      }
      for (const BlockFormat& f : block_formats()) {
        BlockCase c;
        c.format = f;
        c.m = 150;
        c.n = 140;
        c.k = 301;
        c.config = config;
        c.epi.beta = 0.5f;
        c.d = Dtype::bf16;
        run_block_case(ctx, c);
      }
    }
  }
}

TEST_CASE("cpu.blockscaled: a NaN block makes exactly its rows NaN; block-scaled x plain operands") {
  Context ctx = cpu_context();
  BlockOperand A, B;
  REQUIRE(make_block_operand(A, Operand::a, Dtype::mxfp8, ScaleMode::dtype_default, 40, 96, Layout::row_major, false,
                             ScaleLayout::row_major).ok());
  REQUIRE(make_block_operand(B, Operand::b, Dtype::nvfp4, ScaleMode::dtype_default, 24, 96, Layout::row_major, true,
                             ScaleLayout::packed).ok());
  A.scales[size_t(7 * 3 + 1)] = 0xff;  // row 7, K block 1: E8M0 NaN
  HostMatrix D(40, 24, Dtype::f32);
  D.poison();
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  REQUIRE(ctx.run_host(g).ok());
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 24; ++j) {
      CAPTURE(i);
      CHECK(std::isnan(D.get(0, i, j)) == (i == 7));
    }
  // mxfp8 A x plain bf16 B, and plain f16 A x nvfp4 B.
  for (int which = 0; which < 2; ++which) {
    HostMatrix P(which ? 40 : 96, which ? 96 : 24, which ? Dtype::f16 : Dtype::bf16);
    P.randomize();
    BlockOperand Q = B;  // which 1: nvfp4 B
    if (which == 0)
      REQUIRE(make_block_operand(Q, Operand::a, Dtype::mxfp8, ScaleMode::dtype_default, 40, 96, Layout::row_major, false,
                                 ScaleLayout::row_major).ok());
    HostMatrix E(40, 24, Dtype::f32);
    E.poison();
    Gemm h;
    h.a = which == 0 ? Q.host_view() : P.host_view();
    h.b = which == 0 ? P.host_view() : Q.host_view();
    h.d = E.host_view();
    REQUIRE(ctx.run_host(h).ok());
    const Reference ref = which == 0 ? reference_gemm(Q.deq, P, nullptr, nullptr, {}, 1)
                                     : reference_gemm(P, Q.deq, nullptr, nullptr, {}, 1);
    const ErrorReport r = compare(E, ref);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 96));
  }
}

TEST_CASE("cpu.blockscaled: on-miss tuning times block-scaled problems and keys them by scale mode and layout") {
  const std::string cache = "/tmp/omnigemm_test_blockscaled_tune_" + std::to_string(test_seed()) + ".txt";
  std::remove(cache.c_str());
  auto ctx = Context::create({.backend = Backend::cpu, .tune_mode = TuneMode::on_miss, .tune_cache_path = cache});
  REQUIRE(ctx.ok());
  for (const BlockFormat& f : {block_formats()[0], block_formats()[4]}) {
    BlockCase c;
    c.format = f;
    c.m = 96;
    c.n = 80;
    c.k = 256;
    run_block_case(*ctx, c);  // tunes on this first call, then runs and is checked
  }
  std::FILE* fp = std::fopen(cache.c_str(), "r");
  REQUIRE(fp != nullptr);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, fp)) > 0;) text.append(buf, n);
  std::fclose(fp);
  std::remove(cache.c_str());
  CAPTURE(text);
  CHECK(text.find("mxfp8/VEC32_UE8M0r") != std::string::npos);   // row-major scales
  CHECK(text.find("fp8_e4m3/VEC128_F32r") != std::string::npos);  // 128-blockwise: not plain fp8
  CHECK(text.find("blockscaled:") != std::string::npos);
}
