// The Blackwell family cuda.sm100_tcgen05: where the engine picks it (modelled devices, no GPU
// needed) and what it computes on a compute capability 10.x device (forced configs on every table
// row and MMA kind, ragged shapes, both epilogues), reported as SKIPPED by name elsewhere. The
// family has not run on Blackwell hardware here: these device cases are what a B200 runs
// (`test_cuda -tc="*sm100*"`).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend_cases.hpp"
#include "blockscaled_check.hpp"
#include "cuda_model_device.hpp"
#include "dispatch.hpp"
#include "families.hpp"
#include "tuner.hpp"

using namespace omnigemm;
using namespace omnigemm::test;
using omnigemm::detail::CudaDevice;
using omnigemm::detail::KernelFamily;
using omnigemm::detail::Problem;

namespace {

namespace model = omnigemm::detail::test;

// A backend over a CudaDevice with an H100 SXM's (arch 90) or a B200's (arch 100) properties and
// the CUDA backend's families in its order, with or without sm100_tcgen05.
class ModelledDevice final : public model::ModelledCudaBackend {
 public:
  ModelledDevice(int arch, bool with_sm100) {
    const bool b200 = arch == 100;
    if (!b200) {
      model::hopper_limits(model::HopperPart::h100, dev_.info);
    } else {
      dev_.info.name = "modelled NVIDIA B200";
      dev_.info.driver = "model, sm_100";
      detail::DeviceLimits& l = dev_.info.limits;
      l.max_shared_bytes = 232448;
      l.max_threads_per_group = 1024;
      l.warp_size = 32;
      l.max_registers_per_thread = 255;
      l.compute_units = 148;
      l.l2_bytes = 126 << 20;
      l.arch = 100;
      const double sm_ghz = 1.965 * l.compute_units;
      l.peak_tflops_f32 = 256 * sm_ghz * 1e-3;
      l.peak_tflops_16bit = 8192 * sm_ghz * 1e-3;
      l.peak_tflops_8bit = 2 * l.peak_tflops_16bit;
      l.memory_gbps = 8000;
    }
    dev_.encode_tiled = &model::no_tensor_maps;
    input_dtypes_ = b200 ? 0x1ffu : 0x1fu;
    if (with_sm100) owned_.push_back(detail::make_sm100_tcgen05_family(dev_));
    owned_.push_back(detail::make_sm90_wgmma_family(dev_));
    owned_.push_back(detail::make_sm90_repack_family(dev_, *owned_.back()));
    owned_.push_back(detail::make_sm80_mma_family(dev_));
    owned_.push_back(detail::make_simt_family(dev_));
    adopt_families();
  }
  KernelFamily& family(const char* name) const {
    for (KernelFamily* f : families())
      if (std::string(f->name()) == name) return *f;
    FAIL("no family " << name);
    return *families()[0];
  }
};

// Device pointers at 256-byte aligned addresses: A (M x K) row-major, B (K x N) K-major
// (column-major) unless b_row_major, D (M x N) row-major.
Problem problem(int64_t m, int64_t n, int64_t k, og_dtype in, og_dtype out, bool b_row_major = false) {
  Problem p;
  p.m = m, p.n = n, p.k = k;
  uintptr_t next = 0x100000;
  auto operand = [&](int64_t rows, int64_t cols, og_dtype t, bool col_major) {
    detail::Operand o;
    o.present = true, o.dtype = t, o.rows = rows, o.cols = cols;
    o.stride_row = col_major ? 1 : cols;
    o.stride_col = col_major ? rows : 1;
    o.mem.kind = OG_MEMORY_CUDA;
    o.mem.ptr = reinterpret_cast<void*>(next);
    next += 0x10000000;
    return o;
  };
  p.a = operand(m, k, in, false);
  p.b = operand(k, n, in, !b_row_major);
  p.d = operand(m, n, out, false);
  return p;
}

// The same with block-scaled inputs and packed scales (E8M0 per 32, or nvfp4's e4m3 per 16).
Problem scaled_problem(int64_t m, int64_t n, int64_t k, og_dtype in) {
  Problem p = problem(m, n, k, in, OG_DTYPE_BF16);
  const bool nv = in == OG_DTYPE_NVFP4;
  uintptr_t next = 0x80000000;
  for (detail::Operand* o : {&p.a, &p.b}) {
    detail::BlockScale& s = o->scale;
    s.mode = nv ? OG_SCALE_MODE_VEC16_UE4M3 : OG_SCALE_MODE_VEC32_UE8M0;
    s.layout = OG_SCALE_PACKED;
    s.mem.kind = OG_MEMORY_CUDA;
    s.mem.ptr = reinterpret_cast<void*>(next);
    next += 0x1000000;
  }
  return p;
}

std::string choice(const detail::Backend& be, const Problem& p) {
  const auto ranked = detail::rank_candidates(be, p);
  return ranked.empty() ? "none" : detail::Tuner::heuristic(ranked).to_string();
}

// A CUDA context on a compute capability 10.x device, or a SKIPPED line naming the test.
std::optional<Context> sm100_context(const char* test_name) {
  auto ctx = backend_context(omnigemm::Backend::cuda, test_name);
  if (!ctx) return ctx;
  og_capabilities caps{};
  REQUIRE(og_context_capabilities(ctx->c_handle(), &caps) == OG_OK);
  if (std::string(caps.driver_version).find("sm_10") == std::string::npos) {
    MESSAGE("SKIPPED cuda: " << test_name << ": " << caps.device_name << " (" << caps.driver_version
                             << ") is not a compute capability 10.x device");
    return std::nullopt;
  }
  return ctx;
}

struct Row {
  int bm, bn, bk;
  std::string config;
};
std::vector<Row> rows() {
  std::vector<Row> r;
#define OG_CUDA_SM100_TCGEN05(bm, bn, bk, gm, st, form) \
  r.push_back({bm, bn, bk, "sm100_tcgen05:" #bm "x" #bn "x" #bk "-g" #gm "-s" #st "-w6-" #form});
#include "families/sm100_tcgen05.inc"
#undef OG_CUDA_SM100_TCGEN05
  return r;
}

}  // namespace

TEST_CASE("cuda sm100 model: on an H100 the family refuses by name and the engine's choices do not change") {
  ModelledDevice with(90, true), without(90, false);
  const std::vector<Problem> problems = {
      problem(512, 512, 512, OG_DTYPE_F16, OG_DTYPE_F16, true),
      problem(4096, 4096, 4096, OG_DTYPE_BF16, OG_DTYPE_BF16, true),
      problem(4096, 4096, 4096, OG_DTYPE_BF16, OG_DTYPE_BF16),
      problem(8192, 8192, 8192, OG_DTYPE_FP8_E4M3, OG_DTYPE_F16),
      problem(16, 4096, 4096, OG_DTYPE_F16, OG_DTYPE_F16, true),
      problem(128, 14336, 4096, OG_DTYPE_BF16, OG_DTYPE_BF16, true),
      problem(3072, 3072, 3072, OG_DTYPE_F16, OG_DTYPE_F16, true),
      problem(300, 300, 300, OG_DTYPE_F32, OG_DTYPE_F32),
  };
  KernelFamily& f = with.family("sm100_tcgen05");
  for (const Problem& p : problems) {
    CAPTURE(p.m);
    CAPTURE(p.n);
    CAPTURE(p.k);
    CHECK(choice(with, p) == choice(without, p));
    const Status s = f.can_implement(p, f.configs()[0]);
    CHECK(s.code == StatusCode::unsupported);
    CHECK(s.message.find("compute capability 10.x") != std::string::npos);
  }
}

TEST_CASE("cuda sm100 model: on a B200 the engine picks sm100_tcgen05 for K-major tensor-core problems") {
  ModelledDevice be(100, true);
  for (og_dtype in : {OG_DTYPE_F16, OG_DTYPE_BF16, OG_DTYPE_FP8_E4M3, OG_DTYPE_FP8_E5M2}) {
    CAPTURE(int(in));
    for (int64_t s : {int64_t(1008), int64_t(4096), int64_t(8192)})
      CHECK(choice(be, problem(s, s, s, in, OG_DTYPE_BF16)).rfind("sm100_tcgen05:", 0) == 0);
  }
  // Rows of 1000 fp8 bytes are no TMA rows: refused, naming the rule; another family runs it.
  {
    const Problem odd = problem(1000, 1000, 1000, OG_DTYPE_FP8_E4M3, OG_DTYPE_BF16);
    KernelFamily& f = be.family("sm100_tcgen05");
    for (const detail::Config& c : f.configs())
      if (c.block_k == 128) CHECK(f.can_implement(odd, c).message.find("16 bytes") != std::string::npos);
    CHECK(choice(be, odd) != "none");
    CHECK(choice(be, odd).rfind("sm100_tcgen05:", 0) != 0);
  }
  for (og_dtype in : {OG_DTYPE_MXFP8, OG_DTYPE_MXFP4, OG_DTYPE_NVFP4}) {
    CAPTURE(int(in));
    CHECK(choice(be, scaled_problem(4096, 4096, 4096, in)).rfind("sm100_tcgen05:", 0) == 0);
  }
  // A row-major (N-major) B: the 16-bit kinds take it (the descriptor's major bit), fp8 does not
  // and says so; the Hopper families refuse a 10.x device, so sm80_mma runs that one.
  KernelFamily& f = be.family("sm100_tcgen05");
  CHECK(choice(be, problem(4096, 4096, 4096, OG_DTYPE_BF16, OG_DTYPE_BF16, true)).rfind("sm100_tcgen05:", 0) == 0);
  const Problem mn8 = problem(4096, 4096, 4096, OG_DTYPE_FP8_E4M3, OG_DTYPE_BF16, true);
  for (const detail::Config& cfg : f.configs())
    if (cfg.block_k == 128) CHECK(f.can_implement(mn8, cfg).message.find("K-major B") != std::string::npos);
  CHECK(choice(be, mn8).rfind("sm80_mma:", 0) == 0);
  // A config of the wrong width, an unknown form, row-major scales: refused with the rule.
  Problem bf = problem(1024, 1024, 1024, OG_DTYPE_BF16, OG_DTYPE_BF16);
  detail::Config c = f.configs()[0];
  c.block_k = 128;
  CHECK(f.can_implement(bf, c).message.find("BLOCK_K") != std::string::npos);
  c = f.configs()[0];
  c.form = detail::ShortName("coop");
  CHECK(f.can_implement(bf, c).message.find("single or pair") != std::string::npos);
  Problem rm = scaled_problem(1024, 1024, 1024, OG_DTYPE_MXFP8);
  rm.a.scale.layout = OG_SCALE_ROW_MAJOR;
  for (const detail::Config& cfg : f.configs())
    if (cfg.block_k == 128) CHECK(f.can_implement(rm, cfg).message.find("packed") != std::string::npos);
  // ... and no other family takes block-scaled inputs (they would ignore the scales).
  CHECK(choice(be, rm) == "none");
  // Every row is well-formed and names the family.
  for (const detail::Config& cfg : f.configs()) {
    CAPTURE(cfg.to_string());
    CHECK(cfg.family == f.name());
    CHECK(detail::Config::parse(cfg.to_string()) == cfg);
  }
}

TEST_CASE("cuda sm100: the tcgen05 kernel, forced, on every row and dense kind, ragged shapes, both epilogues") {
  auto ctx = sm100_context("sm100_tcgen05 dense kinds on a 10.x device");
  if (!ctx) return;
  for (const Row& r : rows()) {
    std::vector<std::pair<Dtype, Dtype>> inputs;
    if (r.bk == 64) inputs = {{Dtype::f16, Dtype::f16}, {Dtype::bf16, Dtype::bf16}};
    if (r.bk == 128) inputs = {{Dtype::fp8_e4m3, Dtype::fp8_e4m3}, {Dtype::fp8_e5m2, Dtype::fp8_e4m3}};
    for (auto [a, b] : inputs)
      for (int variant = 0; variant < 3; ++variant) {
        // Ragged M across tiles and a 2-SM pair's halves, K with a partial stage, two batches;
        // N a multiple of 8 (the plain epilogue through TMA stores), then ragged (element
        // stores), then with C, bias and an activation.
        const int64_t n = variant == 0 ? 2 * r.bn - 40 : r.bn + 19 + 40 * variant;
        Case c{r.bm * 2 + 37 - 50 * variant, n, 3 * r.bk + 8 * (variant + 1), 1 + variant % 2};
        c.a = a, c.b = b;
        c.d = variant == 0 ? Dtype::bf16 : variant == 1 ? Dtype::f32 : Dtype::f16;
        c.tb = !(r.bk == 64 && variant == 1);  // B stored N x K (K-major), or K x N (N-major, 16-bit)
        c.tma_aligned = c.d_aligned = true;
        if (variant == 2) {
          c.epi.beta = 0.5f;
          c.epi.act = Activation::gelu_tanh;
          c.epi.bias_mode = BiasMode::per_n;
          c.d_aligned = false;
        }
        c.config = r.config;
        run_case(*ctx, c);
      }
  }
}

// One block-scaled GEMM with TMA-aligned operands: A row-major M x K, B stored N x K (both
// K-contiguous), packed scales, rows padded to a multiple of 16 bytes plus 16, two batches, poisoned
// D, every element against the float64 reference over the dequantised operands.
void run_aligned_block_case(Context& ctx, const BlockFormat& f, int64_t M, int64_t N, int64_t K, const std::string& config) {
  CAPTURE(std::string(f.name));
  CAPTURE(M);
  CAPTURE(N);
  CAPTURE(K);
  CAPTURE(config);
  const bool fp4 = f.a == Dtype::mxfp4 || f.a == Dtype::nvfp4;
  const int64_t per16 = fp4 ? 32 : 16, pad = (K + per16 - 1) / per16 * per16 - K + per16;
  const int64_t batch = 2;
  BlockOperand A, B;
  Status s =
      make_block_operand(A, Operand::a, f.a, f.a_mode, M, K, Layout::row_major, false, ScaleLayout::packed, pad, batch);
  REQUIRE_MESSAGE(s.ok(), s.message);
  s = make_block_operand(B, Operand::b, f.b, f.b_mode, N, K, Layout::row_major, true, ScaleLayout::packed, pad, batch);
  REQUIRE_MESSAGE(s.ok(), s.message);
  HostMatrix D(M, N, Dtype::bf16, Layout::row_major, 8, batch, 8);
  D.poison();
  const HostMatrix d_before = D;
  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.d = D.host_view();
  g.batch_count = batch;
  g.config = config;
  s = ctx.run_host(g);
  REQUIRE_MESSAGE(s.ok(), s.message);
  const Reference ref = reference_gemm(A.deq, B.deq, nullptr, nullptr, EpilogueSpec{}, batch);
  const ErrorReport r = compare(D, ref, &d_before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(Dtype::bf16, K));
}

TEST_CASE("cuda sm100: the tcgen05 kernel, forced, on every row and block-scaled kind (packed scales)") {
  auto ctx = sm100_context("sm100_tcgen05 block-scaled kinds on a 10.x device");
  if (!ctx) return;
  for (const Row& r : rows())
    for (const BlockFormat& f : block_formats()) {
      const bool fp4 = f.a == Dtype::mxfp4 || f.a == Dtype::nvfp4;
      const bool mx8 = f.a == Dtype::mxfp8 || f.a == Dtype::mxfp8_e5m2;
      if (!(fp4 && r.bk == 256) && !(mx8 && r.bk == 128)) continue;
      run_aligned_block_case(*ctx, f, r.bm + 45, r.bn * 2 - 30, 2 * r.bk + 64, r.config);
      run_aligned_block_case(*ctx, f, 7, 9, fp4 ? 34 : 40, r.config);  // K within one stage, a partial scale tile
    }
}
