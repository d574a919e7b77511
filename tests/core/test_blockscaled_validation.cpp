// Validation of block-scaled problems and of the quantisation API: each inconsistent shape,
// scale-tensor size, layout, alignment, memory or aliasing gets invalid_argument with a message
// naming the operand and the rule, before anything runs (D stays poisoned); the valid baseline
// runs. Through the public C API on the CPU backend.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "blockscaled_check.hpp"
#include "omnigemm/blockscaled.h"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

constexpr uint32_t kPoison = 0x7fa5a5a5u;

// A valid mxfp8 GEMM: A 64 x 96 row-major, B held N x K = 40 x 96 row-major and transposed,
// scales row-major; D 64 x 40 f32.
struct Fixture {
  og_context* ctx = nullptr;
  BlockOperand a, b;
  std::vector<float> d;
  og_gemm_desc g;
  explicit Fixture(Dtype dtype = Dtype::mxfp8, ScaleMode am = ScaleMode::dtype_default,
                   ScaleMode bm = ScaleMode::dtype_default) {
    og_context_options o;
    og_context_options_init(&o);
    o.backend = OG_BACKEND_CPU;
    o.tune_mode = OG_TUNE_OFF;
    REQUIRE(og_context_create(&o, &ctx) == OG_OK);
    REQUIRE(make_block_operand(a, Operand::a, dtype, am, 64, 96, Layout::row_major, false, ScaleLayout::row_major).ok());
    REQUIRE(make_block_operand(b, Operand::b, dtype, bm, 40, 96, Layout::row_major, true, ScaleLayout::row_major).ok());
    d.assign(64 * 40, std::bit_cast<float>(kPoison));
    og_gemm_desc_init(&g);
    g.a = a.host_view().raw;
    g.b = b.host_view().raw;
    g.d = og_matrix_make(64, 40, OG_DTYPE_F32, OG_ROW_MAJOR);
    g.d.mem = og_memory_host(d.data());
  }
  ~Fixture() { og_context_destroy(ctx); }
  bool d_poisoned() const {
    for (float x : d)
      if (std::bit_cast<uint32_t>(x) != kPoison) return false;
    return true;
  }
  void expect(og_status code, std::initializer_list<const char*> parts) {
    const og_status s = og_gemm(ctx, &g);
    const std::string msg = og_last_error_message();
    CAPTURE(msg);
    CHECK(s == code);
    for (const char* p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks \"" << std::string(p) << "\"");
    CHECK(d_poisoned());
    og_explanation e;  // explain refuses alike
    CHECK(og_gemm_explain(ctx, &g, &e) == code);
  }
};

}  // namespace

TEST_CASE("block-scaled validation: the valid baseline runs on cpu.blockscaled") {
  for (const BlockFormat& f : block_formats()) {
    CAPTURE(std::string(f.name));
    Fixture x(f.a, f.a_mode, f.a_mode);
    BlockOperand b;
    REQUIRE(make_block_operand(b, Operand::b, f.b, f.b_mode, 40, 96, Layout::row_major, true, ScaleLayout::col_major).ok());
    x.b = std::move(b);
    x.g.b = x.b.host_view().raw;
    og_explanation e;
    REQUIRE(og_gemm_explain(x.ctx, &x.g, &e) == OG_OK);
    CHECK(std::string(e.family) == "cpu.blockscaled");
    REQUIRE(og_gemm(x.ctx, &x.g) == OG_OK);
    CHECK_FALSE(x.d_poisoned());
  }
}

TEST_CASE("block-scaled validation: scale modes against dtypes") {
  { Fixture f; f.g.a.scale.mode = OG_SCALE_MODE_VEC128_F32; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "mxfp8", "VEC32_UE8M0"}); }
  { Fixture f; f.g.b.scale.mode = OG_SCALE_MODE_VEC32_UE8M0; f.g.b.dtype = OG_DTYPE_NVFP4; f.expect(OG_ERROR_INVALID_ARGUMENT, {"B", "nvfp4", "VEC16_UE4M3"}); }
  { Fixture f; f.g.a.dtype = OG_DTYPE_FP8_E4M3; f.g.a.scale.mode = OG_SCALE_MODE_VEC32_UE8M0; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "fp8_e4m3", "mxfp8"}); }
  { Fixture f; f.g.a.dtype = OG_DTYPE_F16; f.g.a.scale.mode = OG_SCALE_MODE_VEC32_UE8M0; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "f16", "no block scales"}); }
  { Fixture f; f.g.b.scale.mode = og_scale_mode(99); f.expect(OG_ERROR_INVALID_ARGUMENT, {"B", "unknown scale mode 99"}); }
}

TEST_CASE("block-scaled validation: scale tensor layout, ld, sizes, global factor") {
  { Fixture f; f.g.a.scale.layout = og_scale_layout(7); f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "unknown layout"}); }
  {
    Fixture f(Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleMode::blk128x128_f32);
    f.g.a.scale.layout = OG_SCALE_PACKED;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "packed", "1-byte"});
  }
  { Fixture f; f.g.a.scale.ld = 2; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "ld 2", "smaller than 3"}); }
  {
    Fixture f;
    f.g.b.scale.layout = OG_SCALE_COL_MAJOR;
    f.g.b.scale.ld = 39;  // N = 40 scale rows
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "ld 39", "smaller than 40"});
  }
  { Fixture f; f.g.a.scale.ld = -1; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "negative ld"}); }
  { Fixture f; f.g.a.scale.batch_stride = -4; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "negative batch stride"}); }
  { Fixture f; f.g.a.scale.ld = int64_t(1) << 31; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "2^31"}); }
  { Fixture f; f.g.b.scale.global = 0.0f; f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "global factor", "positive and finite"}); }
  { Fixture f; f.g.b.scale.global = NAN; f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "global factor"}); }
  { Fixture f; f.g.b.scale.global = -1.0f; f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "global factor"}); }
}

TEST_CASE("block-scaled validation: scale memory, alignment, kinds and aliasing") {
  { Fixture f; f.g.a.scale.mem = og_memory{OG_MEMORY_NONE, nullptr, 0, 0}; f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "no memory"}); }
  { Fixture f; f.g.b.scale.mem.ptr = nullptr; f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "null pointer"}); }
  { Fixture f; f.g.b.scale.mem.kind = og_memory_kind(9); f.expect(OG_ERROR_INVALID_ARGUMENT, {"B scales", "unknown memory kind"}); }
  {
    Fixture f(Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleMode::blk128x128_f32);
    f.g.a.scale.mem.offset = 2;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"A scales", "aligned", "4-byte"});
  }
  {
    Fixture f;
    f.g.a.scale.mem = og_memory{OG_MEMORY_VULKAN, nullptr, 0x1234, 0};
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"different kinds of memory"});
  }
  {
    Fixture f;  // D's first bytes are A's scales
    f.g.a.scale.mem = og_memory_host(f.d.data());
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"D overlaps A's scales"});
  }
  {
    Fixture f;
    f.g.b.scale.mem = og_memory_host(f.d.data() + 100);
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"D overlaps B's scales"});
  }
}

TEST_CASE("block-scaled validation: fp4 element layout and shapes") {
  {
    Fixture f(Dtype::mxfp4);
    f.g.a.ld = 97;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "fp4", "leading dimension must be even"});
  }
  {
    Fixture f(Dtype::nvfp4);
    og_matrix b = og_matrix_make(96, 40, OG_DTYPE_NVFP4, OG_ROW_MAJOR);  // op(B) = K x N, N contiguous
    b.mem = f.g.b.mem;
    b.scale = f.g.b.scale;
    f.g.b = b;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"B", "fp4", "K must be the contiguous dimension"});
  }
  {
    Fixture f(Dtype::mxfp4);
    f.g.batch_count = 2;
    f.g.a.batch_stride = 64 * 96 + 1;
    f.expect(OG_ERROR_INVALID_ARGUMENT, {"A", "fp4", "batch stride must be even"});
  }
  { Fixture f; f.g.b.cols = 95; f.expect(OG_ERROR_INVALID_ARGUMENT, {"shape mismatch"}); }
}

TEST_CASE("quantisation API: bad arguments get invalid_argument naming the rule") {
  std::vector<float> src(64 * 96, 0.5f);
  std::vector<uint8_t> el(64 * 96), sc(64 * 3);
  auto expect = [](og_status s, std::initializer_list<const char*> parts) {
    const std::string msg = og_last_error_message();
    CAPTURE(msg);
    CHECK(s == OG_ERROR_INVALID_ARGUMENT);
    for (const char* p : parts) CHECK_MESSAGE(msg.find(p) != std::string::npos, "message lacks \"" << std::string(p) << "\"");
  };
  og_matrix s = og_matrix_make(64, 96, OG_DTYPE_F32, OG_ROW_MAJOR);
  s.mem = og_memory_host(src.data());
  og_matrix q = og_matrix_make(64, 96, OG_DTYPE_MXFP8, OG_ROW_MAJOR);
  q.mem = og_memory_host(el.data());
  q.scale.mem = og_memory_host(sc.data());
  REQUIRE(og_quantize_host(&s, &q, OG_OPERAND_A) == OG_OK);
  expect(og_quantize_host(nullptr, &q, OG_OPERAND_A), {"null"});
  expect(og_quantize_host(&s, &q, og_operand(3)), {"OG_OPERAND_A or OG_OPERAND_B"});
  {
    og_matrix bad = s;
    bad.dtype = OG_DTYPE_FP8_E4M3;
    expect(og_quantize_host(&bad, &q, OG_OPERAND_A), {"src", "f32, f16 or bf16"});
  }
  {
    og_matrix bad = q;
    bad.dtype = OG_DTYPE_F16;
    expect(og_quantize_host(&s, &bad, OG_OPERAND_A), {"dst", "not block-scaled"});
  }
  {
    og_matrix bad = q;
    bad.cols = 95;
    bad.ld = 95;
    expect(og_quantize_host(&s, &bad, OG_OPERAND_A), {"shape mismatch"});
  }
  {
    og_matrix bad = q;
    bad.scale.global = 2.0f;
    expect(og_quantize_host(&s, &bad, OG_OPERAND_A), {"global factor 1"});
  }
  {
    og_matrix bad = q;
    bad.mem = og_memory_host(src.data() + 8);  // the quantised elements would land on src
    expect(og_quantize_host(&s, &bad, OG_OPERAND_A), {"overlaps"});
  }
  {
    og_matrix bad = q;
    bad.scale.mem = og_memory_host(el.data() + 5);  // scales on top of the elements
    expect(og_quantize_host(&s, &bad, OG_OPERAND_A), {"overlaps"});
  }
  {
    og_matrix f32 = s;
    og_matrix bad = q;
    bad.scale.ld = 1;
    expect(og_dequantize_host(&bad, &f32, OG_OPERAND_A), {"src scales", "ld 1"});
  }
  {
    og_matrix to = q;
    to.dtype = OG_DTYPE_MXFP4;
    expect(og_convert_scales_host(&q, &to, OG_OPERAND_A), {"same operand"});
    og_matrix same = q;  // converting onto itself overlaps
    expect(og_convert_scales_host(&q, &same, OG_OPERAND_A), {"overlap"});
  }
  CHECK(og_quantize(nullptr, &s, &q, OG_OPERAND_A, nullptr) == OG_ERROR_INVALID_ARGUMENT);
  og_scale_info info;
  expect(og_scale_info_get(&s, OG_OPERAND_A, &info), {"not block-scaled"});
}
