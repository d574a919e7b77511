// Block-scaled formats on the CUDA backend: device quantisation and dequantisation
// (backends/cuda/block_quantize.cu) bit-exact with the host's; block-scaled GEMMs refused by name
// until the Hopper block-scaled family exists. Reported as SKIPPED without a CUDA device.
#include <doctest/doctest.h>

#include "backend_cases.hpp"
#include "blockscaled_check.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

TEST_CASE("cuda block-scaled: device quantisation and dequantisation equal the host's bit for bit") {
  auto ctx = backend_context(Backend::cuda, "block-scaled device quantisation");
  if (!ctx) return;
  check_device_quantization(*ctx);
}

TEST_CASE("cuda block-scaled: GEMMs are refused (unsupported) naming the block-scale modes the backend runs") {
  auto ctx = backend_context(Backend::cuda, "block-scaled GEMM refusal");
  if (!ctx) return;
  for (const BlockFormat& f : block_formats()) {
    CAPTURE(std::string(f.name));
    BlockOperand A, B;
    REQUIRE(make_block_operand(A, Operand::a, f.a, f.a_mode, 64, 64, Layout::row_major, false, ScaleLayout::row_major).ok());
    REQUIRE(make_block_operand(B, Operand::b, f.b, f.b_mode, 64, 64, Layout::row_major, true, ScaleLayout::row_major).ok());
    HostMatrix D(64, 64, Dtype::f32);
    Gemm g;
    g.a = A.host_view();
    g.b = B.host_view();
    g.d = D.host_view();
    const Status s = ctx->run_host(g);
    CAPTURE(s.message);
    CHECK(s.code == StatusCode::unsupported);
  }
}
