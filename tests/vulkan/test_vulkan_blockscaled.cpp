// Block-scaled GEMMs on the Vulkan backend (vulkan.portable, dequantised on load): every format
// on ragged shapes, every scale layout, transposed views, batches with scale batch strides,
// every epilogue and output dtype, buffer offsets, against the float64 reference built from the
// dequantised operands (tests/common/blockscaled_check.hpp); the cooperative-matrix families
// refuse block-scaled operands by name; og_gemm on device memory with the scales in VkBuffers;
// device quantisation and dequantisation (shaders/block_quantize.comp) bit-exact with the host's.
// On lavapipe here, with the validation layer on when OMNIGEMM_VK_VALIDATION=1.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "backend_cases.hpp"
#include "blockscaled_check.hpp"
#include "vulkan_debug.hpp"
#include "families/vulkan_families.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

std::vector<ScaleLayout> layouts_for(ScaleMode mode, Dtype dtype) {
  if (one_byte_scales(mode, dtype)) return {ScaleLayout::packed, ScaleLayout::row_major, ScaleLayout::col_major};
  return {ScaleLayout::col_major, ScaleLayout::row_major};
}

}  // namespace

TEST_CASE("vulkan block-scaled: every format, ragged shapes, scale layouts, views, epilogues, batches") {
  auto ctx = backend_context(Backend::vulkan, "block-scaled formats");
  if (!ctx) return;
  const int64_t shapes[][4] = {{1, 1, 1, 1}, {33, 17, 100, 1}, {130, 70, 257, 2}, {65, 129, 160, 1}};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  const Activation acts[] = {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu};
  int variant = 0;
  for (const BlockFormat& f : block_formats())
    for (const auto& s : shapes) {
      const std::vector<ScaleLayout> la = layouts_for(f.a_mode, f.a), lb = layouts_for(f.b_mode, f.b);
      BlockCase c;
      c.format = f;
      c.m = s[0];
      c.n = s[1];
      c.k = s[2];
      c.batch = s[3];
      c.sa = la[size_t(variant) % la.size()];
      c.sb = lb[size_t(variant + 1) % lb.size()];
      c.scale_pad = variant % 2 ? 3 : 0;
      c.d = outs[variant % 3];
      c.ta = variant % 2 == 1;
      c.la = c.ta ? Layout::col_major : Layout::row_major;
      c.tb = variant % 3 != 2;
      c.lb = c.tb ? Layout::row_major : Layout::col_major;
      c.epi.act = acts[variant % 4];
      c.epi.alpha = variant % 2 ? 0.5f : 1.0f;
      c.epi.beta = variant % 3 == 1 ? 0.75f : 0.0f;
      c.epi.bias_mode = variant % 3 == 0 ? BiasMode::per_n : variant % 3 == 1 ? BiasMode::per_m : BiasMode::none;
      c.c = variant % 2 ? Dtype::bf16 : Dtype::f32;
      ++variant;
      run_block_case(*ctx, c);
    }
  CHECK(detail::vulkan_validation_message_count() == 0);
}

TEST_CASE("vulkan block-scaled: explain picks the portable family; cooperative-matrix families refuse by name") {
  auto ctx = backend_context(Backend::vulkan, "block-scaled families");
  if (!ctx) return;
  for (const BlockFormat& f : block_formats()) {
    CAPTURE(std::string(f.name));
    BlockOperand A, B;
    REQUIRE(make_block_operand(A, Operand::a, f.a, f.a_mode, 64, 64, Layout::row_major, false, ScaleLayout::row_major).ok());
    REQUIRE(make_block_operand(B, Operand::b, f.b, f.b_mode, 64, 64, Layout::row_major, true, ScaleLayout::row_major).ok());
    HostMatrix D(64, 64, Dtype::f32);
    Gemm g;  // explain on placeholder buffers (it runs nothing), then the forced configs on host memory
    g.a = A.view(Memory::vulkan(0x1000), Memory::vulkan(0x2000));
    g.b = B.view(Memory::vulkan(0x3000), Memory::vulkan(0x4000));
    g.d = D.view(Memory::vulkan(0x5000));
    auto e = ctx->explain(g);
    REQUIRE_MESSAGE(e.ok(), e.status().message);
    CHECK(e->family() == "vulkan.portable");
    CHECK(e->report().find("dequantised on load") != std::string::npos);
    g.a = A.host_view();
    g.b = B.host_view();
    g.d = D.host_view();
    // The cooperative-matrix families' operand rule refuses block-scaled operands, naming the
    // family that takes them (checked on the validated problem, whether or not the device has
    // cooperative matrices) ...
    detail::Problem p;
    const og_gemm_desc desc = g.to_c();
    REQUIRE(detail::validate(desc, p).ok());
    CHECK(detail::vulkan::coopmat_mul_type(p) < 0);
    CHECK(detail::vulkan::coopmat_dtype_refusal(p).message.find("run on the portable family, dequantised on load") !=
          std::string::npos);
    // ... and each one the device runs refuses its first config with that message.
    detail::Backend& be = detail::context_backend(ctx->c_handle());
    for (const char* name : {"coopmat", "coopmat2"}) {
      detail::KernelFamily* fam = vulkan_family(be, name);
      if (!fam || !detail::vulkan_family_usable(be, fam)) {
        if (&f == &block_formats().front())
          MESSAGE("SKIPPED vulkan: " << std::string(name) << " run of block-scaled operands: " << missing_family_reason(be, name));
        continue;
      }
      g.config = fam->configs()[0].to_string();
      const Status s = ctx->run_host(g);
      CAPTURE(s.message);
      CHECK(s.code == StatusCode::unsupported);
      CHECK(s.message.find("run on the portable family, dequantised on load") != std::string::npos);
    }
  }
}

TEST_CASE("vulkan block-scaled: og_gemm on device memory, operands and scales at buffer offsets") {
  auto ctx = backend_context(Backend::vulkan, "block-scaled device memory");
  if (!ctx) return;
  og_context* c = ctx->c_handle();
  for (const BlockFormat& f : block_formats()) {
    CAPTURE(std::string(f.name));
    BlockOperand A, B;
    REQUIRE(make_block_operand(A, Operand::a, f.a, f.a_mode, 70, 96, Layout::row_major, false, ScaleLayout::col_major).ok());
    REQUIRE(make_block_operand(B, Operand::b, f.b, f.b_mode, 50, 96, Layout::row_major, true,
                               one_byte_scales(f.b_mode, f.b) ? ScaleLayout::packed : ScaleLayout::row_major).ok());
    HostMatrix D(70, 50, Dtype::f32);
    D.poison();
    // One buffer for everything: A, B, their scales and D at 16-byte-aligned offsets.
    const uint64_t a_at = 16, b_at = a_at + (A.elements.size() + 15) / 16 * 16, as_at = b_at + (B.elements.size() + 15) / 16 * 16;
    const uint64_t bs_at = as_at + (A.scales.size() + 15) / 16 * 16, d_at = bs_at + (B.scales.size() + 15) / 16 * 16;
    og_memory buf;
    REQUIRE(og_memory_alloc(c, size_t(d_at + D.bytes.size()), &buf) == OG_OK);
    auto at = [&](uint64_t off) { og_memory m = buf; m.offset = off; return m; };
    REQUIRE(og_memory_upload(c, at(a_at), A.elements.data(), A.elements.size()) == OG_OK);
    REQUIRE(og_memory_upload(c, at(b_at), B.elements.data(), B.elements.size()) == OG_OK);
    REQUIRE(og_memory_upload(c, at(as_at), A.scales.data(), A.scales.size()) == OG_OK);
    REQUIRE(og_memory_upload(c, at(bs_at), B.scales.data(), B.scales.size()) == OG_OK);
    REQUIRE(og_memory_upload(c, at(d_at), D.bytes.data(), D.bytes.size()) == OG_OK);
    Gemm g;
    g.a = A.view(Memory{at(a_at)}, Memory{at(as_at)});
    g.b = B.view(Memory{at(b_at)}, Memory{at(bs_at)});
    g.d = D.view(Memory{at(d_at)});
    const Status s = ctx->run(g);
    REQUIRE_MESSAGE(s.ok(), s.message);
    REQUIRE(og_memory_download(c, D.bytes.data(), at(d_at), D.bytes.size()) == OG_OK);
    REQUIRE(og_memory_free(c, buf) == OG_OK);
    const ErrorReport r = compare(D, reference_gemm(A.deq, B.deq, nullptr, nullptr, {}, 1));
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 96));
  }
  CHECK(detail::vulkan_validation_message_count() == 0);
}

TEST_CASE("vulkan block-scaled: device quantisation and dequantisation equal the host's bit for bit") {
  auto ctx = backend_context(Backend::vulkan, "block-scaled device quantisation");
  if (!ctx) return;
  check_device_quantization(*ctx);
  og_context* c = ctx->c_handle();
  // An nvfp4 quantisation choosing its global factor reads it back: not into a caller's command buffer.
  BlockOperand shape;
  REQUIRE(make_block_operand(shape, Operand::a, Dtype::nvfp4, ScaleMode::dtype_default, 16, 64, Layout::row_major, false,
                             ScaleLayout::row_major).ok());
  og_memory buf;
  REQUIRE(og_memory_alloc(c, 8192, &buf) == OG_OK);
  auto at = [&](uint64_t off) { og_memory m = buf; m.offset = off; return m; };
  HostMatrix src(16, 64, Dtype::f32);
  Matrix dst = shape.view(Memory{at(4096)}, Memory{at(6144)});
  dst.global_scale(0.0f);
  int not_a_command_buffer = 0;  // refused before anything is recorded into it
  const Status st = quantize(*ctx, src.view(Memory{at(0)}), dst, Operand::a, &not_a_command_buffer);
  CHECK(st.code == StatusCode::invalid_argument);
  CHECK(st.message.find("stream NULL") != std::string::npos);
  REQUIRE(og_memory_free(c, buf) == OG_OK);
  CHECK(detail::vulkan_validation_message_count() == 0);
}

TEST_CASE("vulkan block-scaled: on-miss tuning through og_gemm_host times on device scratch scales") {
  const std::string cache = "/tmp/omnigemm_test_vk_blockscaled_tune_" + std::to_string(test_seed()) + ".txt";
  std::remove(cache.c_str());
  auto created = Context::create({.backend = Backend::vulkan, .tune_mode = TuneMode::on_miss, .tune_cache_path = cache});
  if (!created) {
    MESSAGE("SKIPPED vulkan: block-scaled tuning: " << created.status().message);
    return;
  }
  for (const BlockFormat& f : {block_formats()[2], block_formats()[4]}) {  // mxfp4 (packed 1-byte), fp8_block128 (f32)
    BlockCase c;
    c.format = f;
    c.m = 40;
    c.n = 36;
    c.k = 160;
    c.sa = one_byte_scales(f.a_mode, f.a) ? ScaleLayout::packed : ScaleLayout::col_major;
    run_block_case(*created, c);  // the scales are host memory: tuning must not read them on the device
  }
  std::remove(cache.c_str());
  CHECK(detail::vulkan_validation_message_count() == 0);
}

TEST_CASE("vulkan block-scaled: a block-scaled operand times a plain one, either side") {
  auto ctx = backend_context(Backend::vulkan, "block-scaled x plain");
  if (!ctx) return;
  for (int which = 0; which < 2; ++which) {
    BlockOperand Q;
    HostMatrix P(which ? 70 : 96, which ? 96 : 50, which ? Dtype::bf16 : Dtype::f16);
    P.randomize();
    if (which == 0)
      REQUIRE(make_block_operand(Q, Operand::a, Dtype::mxfp4, ScaleMode::dtype_default, 70, 96, Layout::row_major, false,
                                 ScaleLayout::packed).ok());
    else
      REQUIRE(make_block_operand(Q, Operand::b, Dtype::fp8_e5m2, ScaleMode::vec128_f32, 50, 96, Layout::row_major, true,
                                 ScaleLayout::col_major).ok());
    HostMatrix D(70, 50, Dtype::f32);
    D.poison();
    Gemm g;
    g.a = which == 0 ? Q.host_view() : P.host_view();
    g.b = which == 0 ? P.host_view() : Q.host_view();
    g.d = D.host_view();
    const Status s = ctx->run_host(g);
    REQUIRE_MESSAGE(s.ok(), s.message);
    const Reference ref = which == 0 ? reference_gemm(Q.deq, P, nullptr, nullptr, {}, 1) : reference_gemm(P, Q.deq, nullptr, nullptr, {}, 1);
    const ErrorReport r = compare(D, ref);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, 96));
  }
  CHECK(detail::vulkan_validation_message_count() == 0);
}
