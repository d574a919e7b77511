// Block-scaled formats on the CUDA backend: device quantisation and dequantisation
// (backends/cuda/block_quantize.cu) bit-exact with the host's; 128-blockwise fp8 GEMMs through
// cuda.sm90_blockscaled on sm_90 (random ragged shapes, both fp8 element types, A's scales per
// 1 x 128 or 128 x 128, row- and column-major scale tensors with padded leading dimensions,
// every epilogue and output dtype, every tile) against the float64 reference built from the
// dequantised operands; mxfp8, mxfp4 and nvfp4 through cuda.sm90_dequant (every scale layout,
// transposed views, batches); what no family runs refused. Reported as SKIPPED without a CUDA
// device (the GEMM cases without an sm_90 one). Without a GPU: the families' choices on a
// modelled H100.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "blockscaled_check.hpp"
#include "cuda_device_support.hpp"
#include "cuda_model_device.hpp"
#include "dispatch.hpp"
#include "families.hpp"
#include "tuner.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// Whether the context's device runs cuda.sm90_blockscaled (an sm_90 GPU).
bool hopper(Context& ctx) {
  og_capabilities caps{};
  return og_context_capabilities(ctx.c_handle(), &caps) == OG_OK &&
         std::string(caps.driver_version).find("sm_90") != std::string::npos;
}

bool block128(const BlockFormat& f) { return f.b_mode == ScaleMode::blk128x128_f32 || f.b_mode == ScaleMode::vec128_f32; }

}  // namespace

TEST_CASE("cuda block-scaled: device quantisation and dequantisation equal the host's bit for bit") {
  auto ctx = backend_context(Backend::cuda, "block-scaled device quantisation");
  if (!ctx) return;
  check_device_quantization(*ctx);
}

namespace {

// Random ragged 128-blockwise fp8 GEMMs (A's scales per 1 x 128 or 128 x 128, B's per 128 x 128;
// e4m3 and e5m2), scale layouts with padded leading dimensions, every epilogue and output dtype,
// cycling through `configs` ("" for the engine's choice).
void check_block128(Context& ctx, const std::vector<std::string>& configs, int random_shapes) {
  const BlockFormat formats[] = {
      {"fp8_block128", Dtype::fp8_e4m3, Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleMode::blk128x128_f32},
      {"fp8_block128 e5m2 x e4m3", Dtype::fp8_e5m2, Dtype::fp8_e4m3, ScaleMode::vec128_f32, ScaleMode::blk128x128_f32},
      {"fp8_block128 A 128x128", Dtype::fp8_e4m3, Dtype::fp8_e5m2, ScaleMode::blk128x128_f32, ScaleMode::blk128x128_f32},
  };
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  const Activation acts[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh, Activation::silu};
  std::mt19937 g(std::random_device{}());
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  // Fixed edges first (one element; exactly one tile; K of one partial block; an odd count of
  // tile rows), then random shapes.
  std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 16}, {128, 128, 128}, {129, 65, 48}, {300, 200, 1040}, {256, 384, 512}};
  for (int i = 0; i < random_shapes; ++i) shapes.push_back({draw(1, 400), draw(1, 400), 16 * draw(1, 48)});
  int variant = 0;
  for (const auto& s : shapes) {
    const BlockFormat& f = formats[size_t(variant) % 3];
    BlockCase c;
    c.format = f;
    c.m = s[0];
    c.n = s[1];
    c.k = s[2];
    // fp8 wgmma reads K-major operands through TMA: A row-major, B held N x K, rows 16-byte aligned.
    c.ta = false, c.la = Layout::row_major;
    c.tb = true, c.lb = Layout::row_major;
    c.ld_pad = 16 * (variant % 2);
    c.sa = variant % 2 ? ScaleLayout::col_major : ScaleLayout::row_major;
    c.sb = variant % 3 ? ScaleLayout::row_major : ScaleLayout::col_major;
    c.scale_pad = variant % 4 == 1 ? 3 : 0;
    c.d = outs[variant % 3];
    c.c = variant % 2 ? Dtype::bf16 : Dtype::f32;
    c.epi.act = acts[variant % 5];
    c.epi.alpha = variant % 2 ? 0.5f : 1.0f;
    c.epi.beta = variant % 3 == 1 ? 0.75f : 0.0f;
    c.epi.bias_mode = variant % 3 == 0 ? BiasMode::per_n : variant % 3 == 1 ? BiasMode::per_m : BiasMode::none;
    c.config = configs[size_t(variant) % configs.size()];
    c.fp8_accumulation = true;
    ++variant;
    run_block_case(ctx, c);
  }
}

}  // namespace

TEST_CASE("cuda block-scaled: 128-blockwise fp8 on sm90_blockscaled, random ragged shapes, every epilogue") {
  auto ctx = sm90_context("128-blockwise fp8 GEMMs on cuda.sm90_blockscaled");
  if (!ctx) return;
  check_block128(*ctx,
                 {"", "sm90_blockscaled:128x256x128-g16-s4-w12-coop", "sm90_blockscaled:128x128x128-g8-s6-w12-coop",
                  "sm90_blockscaled:128x64x128-g8-s8-w12-coop"},
                 12);
}

// A test case of its own (the forms offered only when forced): a cluster or a pipeline that never
// completed would hang only this one.
TEST_CASE("cuda block-scaled: 128-blockwise fp8, the mcast and pipe forms") {
  auto ctx = sm90_context("128-blockwise fp8 GEMMs, sm90_blockscaled mcast and pipe");
  if (!ctx) return;
  check_block128(*ctx,
                 {"sm90_blockscaled:128x256x128-g8-s4-w12-mcast", "sm90_blockscaled:128x128x128-g8-s6-w12-mcast",
                  "sm90_blockscaled:128x128x128-g8-s6-w12-pipe"},
                 9);
}

TEST_CASE("cuda block-scaled: mxfp8, mxfp4, nvfp4 on sm90_dequant, every scale layout, views, epilogues, batches") {
  auto ctx = sm90_context("one-byte-scale formats on cuda.sm90_dequant");
  if (!ctx) return;
  const int64_t shapes[][4] = {{1, 1, 1, 1}, {33, 17, 100, 1}, {130, 70, 257, 2}, {65, 129, 160, 1}, {200, 300, 520, 1}};
  const Dtype outs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
  const Activation acts[] = {Activation::none, Activation::relu, Activation::gelu_tanh, Activation::silu};
  const ScaleLayout layouts[] = {ScaleLayout::packed, ScaleLayout::row_major, ScaleLayout::col_major};
  int variant = 0;
  for (const BlockFormat& f : block_formats()) {
    if (block128(f)) continue;
    for (const auto& s : shapes) {
      BlockCase c;
      c.format = f;
      c.m = s[0];
      c.n = s[1];
      c.k = s[2];
      c.batch = s[3];
      c.sa = layouts[size_t(variant) % 3];
      c.sb = layouts[size_t(variant + 1) % 3];
      c.scale_pad = variant % 2 && c.sa != ScaleLayout::packed && c.sb != ScaleLayout::packed ? 3 : 0;
      c.d = outs[variant % 3];
      // fp4 needs K contiguous: A row-major (or transposed column-major), B held N x K.
      c.ta = variant % 2 == 1;
      c.la = c.ta ? Layout::col_major : Layout::row_major;
      c.tb = variant % 3 != 2 || is_fp4(f.b);
      c.lb = c.tb ? Layout::row_major : Layout::col_major;
      c.epi.act = acts[variant % 4];
      c.epi.alpha = variant % 2 ? 0.5f : 1.0f;
      c.epi.beta = variant % 3 == 1 ? 0.75f : 0.0f;
      c.epi.bias_mode = variant % 3 == 0 ? BiasMode::per_n : variant % 3 == 1 ? BiasMode::per_m : BiasMode::none;
      c.c = variant % 2 ? Dtype::bf16 : Dtype::f32;
      ++variant;
      run_block_case(*ctx, c);
    }
  }
}

TEST_CASE("cuda block-scaled: what no CUDA family runs is refused (unsupported), saying why") {
  auto ctx = backend_context(Backend::cuda, "block-scaled GEMM refusal");
  if (!ctx) return;
  const bool sm90 = hopper(*ctx);
  for (const BlockFormat& f : block_formats()) {
    // On sm_90 only 128-blockwise fp8 with B's scales per 1 x 128 (the swapped format) is refused:
    // sm90_blockscaled takes B per 128 x 128 only, and f32 scales do not dequantise exactly to bf16.
    if (sm90 && !(block128(f) && f.b_mode == ScaleMode::vec128_f32)) continue;
    CAPTURE(std::string(f.name));
    BlockOperand A, B;
    REQUIRE(make_block_operand(A, Operand::a, f.a, f.a_mode, 64, 64, Layout::row_major, false, ScaleLayout::row_major, 0).ok());
    REQUIRE(make_block_operand(B, Operand::b, f.b, f.b_mode, 64, 64, Layout::row_major, true, ScaleLayout::row_major, 0).ok());
    HostMatrix D(64, 64, Dtype::f32);
    Gemm g;
    g.a = A.host_view();
    g.b = B.host_view();
    g.d = D.host_view();
    const Status s = ctx->run_host(g);
    CAPTURE(s.message);
    CHECK(s.code == StatusCode::unsupported);
    CHECK_FALSE(s.message.empty());
  }
}

// ---- The families' choices on a modelled H100 (no GPU needed) ----------------------------------

namespace {

using namespace omnigemm::detail;
namespace model = omnigemm::detail::test;

// The CUDA backend's families over a modelled H100 (test_cuda_model.cpp has the same device for
// the plain dtypes' choices).
class BlockscaledModelledH100 final : public model::ModelledCudaBackend {
 public:
  BlockscaledModelledH100() {
    model::hopper_limits(model::HopperPart::h100, dev_.info);
    dev_.encode_tiled = &model::no_tensor_maps;
    input_dtypes_ = 0x1ff;
    auto wgmma = make_sm90_wgmma_family(dev_);
    owned_.push_back(make_sm90_blockscaled_family(dev_));
    owned_.push_back(make_sm90_dequant_family(dev_, *wgmma));
    owned_.push_back(make_sm90_repack_family(dev_, *wgmma));
    owned_.insert(owned_.end() - 1, std::move(wgmma));
    owned_.push_back(make_sm80_mma_family(dev_));
    owned_.push_back(make_simt_family(dev_));
    adopt_families();
  }
};

// A block-scaled problem on aligned device addresses: A M x K row-major, B K x N column-major (N x
// K stored), D f16; scales row-major (one-byte scales packed), resolved as validation resolves them.
Problem scaled_problem(int64_t m, int64_t n, int64_t k, og_dtype a, og_dtype b, og_scale_mode ma, og_scale_mode mb) {
  Problem p;
  p.m = m, p.n = n, p.k = k;
  uintptr_t next = 0x100000;
  auto operand = [&](int64_t rows, int64_t cols, og_dtype t, bool col_major) {
    omnigemm::detail::Operand o;
    o.present = true, o.dtype = t, o.rows = rows, o.cols = cols;
    o.stride_row = col_major ? 1 : cols;
    o.stride_col = col_major ? rows : 1;
    o.mem = og_memory{OG_MEMORY_CUDA, reinterpret_cast<void*>(next), 0, 0};
    next += 0x10000000;
    return o;
  };
  p.a = operand(m, k, a, false);
  p.b = operand(k, n, b, true);
  p.d = operand(m, n, OG_DTYPE_F16, false);
  auto scales = [&](omnigemm::detail::Operand& o, og_dtype t, og_scale_mode mode, int64_t rows_mn) {
    og_scales s{};
    s.mem = og_memory{OG_MEMORY_CUDA, reinterpret_cast<void*>(next), 0, 0};
    next += 0x10000000;
    s.mode = mode;
    s.layout = mode == OG_SCALE_MODE_VEC128_F32 || mode == OG_SCALE_MODE_BLK128x128_F32 ? OG_SCALE_ROW_MAJOR : OG_SCALE_PACKED;
    s.global = 1.0f;
    const Status st = resolve_block_scale(s, t, rows_mn, k, "operand", o.scale);
    REQUIRE_MESSAGE(st.ok(), st.message);
  };
  scales(p.a, a, ma, m);
  scales(p.b, b, mb, n);
  return p;
}

std::string chosen(const omnigemm::detail::Backend& be, const Problem& p) {
  const auto ranked = rank_candidates(be, p);
  return ranked.empty() ? "none" : Tuner::heuristic(ranked).to_string();
}

}  // namespace

TEST_CASE("cuda block-scaled model: sm90_blockscaled takes 128-blockwise fp8, sm90_dequant the one-byte-scale formats") {
  BlockscaledModelledH100 be;
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{4096, 4096, 7168}, {8192, 8192, 8192}, {200, 300, 528}}) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    const std::string block128 = chosen(be, scaled_problem(m, n, k, OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E4M3, OG_SCALE_MODE_VEC128_F32,
                                                          OG_SCALE_MODE_BLK128x128_F32));
    CHECK(block128.rfind("sm90_blockscaled:", 0) == 0);
    CHECK(block128.find("mcast") == std::string::npos);  // forced only until measured
    CHECK(block128.find("pipe") == std::string::npos);
    const std::string a_blk = chosen(be, scaled_problem(m, n, k, OG_DTYPE_FP8_E5M2, OG_DTYPE_FP8_E4M3,
                                                        OG_SCALE_MODE_BLK128x128_F32, OG_SCALE_MODE_BLK128x128_F32));
    CHECK(a_blk.rfind("sm90_blockscaled:", 0) == 0);
    for (og_dtype t : {OG_DTYPE_MXFP8, OG_DTYPE_MXFP8_E5M2, OG_DTYPE_MXFP4, OG_DTYPE_NVFP4}) {
      CAPTURE(og_dtype_name(t));
      const og_scale_mode mode = t == OG_DTYPE_NVFP4 ? OG_SCALE_MODE_VEC16_UE4M3 : OG_SCALE_MODE_VEC32_UE8M0;
      CHECK(chosen(be, scaled_problem(m, n, k, t, t, mode, mode)).rfind("sm90_dequant:", 0) == 0);
    }
    // fp8 rows of 16-byte multiples only (TMA); B's scales per 1 x 128: no CUDA family (f32 scales
    // do not dequantise exactly to bf16).
    CHECK(chosen(be, scaled_problem(m, n, k + 8, OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E4M3, OG_SCALE_MODE_VEC128_F32,
                                    OG_SCALE_MODE_BLK128x128_F32)) == "none");
    CHECK(chosen(be, scaled_problem(m, n, k, OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E4M3, OG_SCALE_MODE_BLK128x128_F32,
                                    OG_SCALE_MODE_VEC128_F32)) == "none");
  }
}
