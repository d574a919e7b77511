#include "conformance_cases.hpp"

#include <cmath>
#include <cstdlib>
#include <random>

namespace omnigemm::bench {

namespace {
Status invalid_format(const std::string& name) { return Status{StatusCode::invalid_argument, "unknown format " + name}; }
}  // namespace

std::vector<Case> build_cases() {
  const std::vector<DtypeCombo> combos = {
      {Dtype::f32, Dtype::f32, Dtype::f32},           {Dtype::f16, Dtype::f16, Dtype::f16},
      {Dtype::f16, Dtype::f16, Dtype::f32},           {Dtype::bf16, Dtype::bf16, Dtype::bf16},
      {Dtype::bf16, Dtype::bf16, Dtype::f32},         {Dtype::fp8_e4m3, Dtype::fp8_e4m3, Dtype::f16},
      {Dtype::fp8_e4m3, Dtype::fp8_e4m3, Dtype::bf16}, {Dtype::fp8_e5m2, Dtype::fp8_e5m2, Dtype::f16},
      {Dtype::fp8_e4m3, Dtype::fp8_e5m2, Dtype::f16},
  };
  struct S { int64_t m, n, k; };
  const std::vector<S> shapes = {{1, 1, 1},     {17, 17, 17},   {64, 64, 64},   {129, 65, 33},
                                 {1, 129, 64},  {129, 1, 17},   {100, 200, 300}, {256, 256, 256},
                                 {520, 1031, 777}};  // many tiles and K steps, no dimension a power of 2
  std::vector<Case> cases;
  auto add = [&](Case c) {
    c.index = int(cases.size());
    cases.push_back(c);
  };
  for (const DtypeCombo& dt : combos) {
    for (const S& s : shapes) {
      Case c;
      c.category = "shapes";
      c.dt = dt;
      c.m = s.m, c.n = s.n, c.k = s.k;
      add(c);
    }
    for (int l = 0; l < 16; ++l) {  // every A/B layout x transpose, with padded leading dimensions
      Case c;
      c.category = "layouts";
      c.dt = dt;
      c.m = 67, c.n = 45, c.k = 53;
      c.a_layout = (l & 1) ? Layout::col_major : Layout::row_major;
      c.b_layout = (l & 2) ? Layout::col_major : Layout::row_major;
      c.a_trans = (l & 4) != 0;
      c.b_trans = (l & 8) != 0;
      c.ld_pad = 3;
      add(c);
    }
    const std::vector<EpilogueSpec> epis = {
        {0.5f, 0.75f, Activation::none, 0.01f, BiasMode::none},
        {1.0f, 0.0f, Activation::relu, 0.01f, BiasMode::per_n},
        {1.25f, 0.0f, Activation::leaky_relu, 0.1f, BiasMode::per_m},
        {1.0f, 0.0f, Activation::gelu_tanh, 0.01f, BiasMode::none},
        {1.0f, -0.5f, Activation::silu, 0.01f, BiasMode::per_n},
    };
    for (const EpilogueSpec& e : epis) {
      Case c;
      c.category = "epilogues";
      c.dt = dt;
      c.m = 65, c.n = 47, c.k = 39;
      c.epi = e;
      add(c);
    }
    for (int b = 0; b < 3; ++b) {
      Case c;
      c.category = "batches";
      c.dt = dt;
      c.m = 33, c.n = 29, c.k = 31;
      c.batch = b == 0 ? 3 : b == 1 ? 4 : 2;
      c.broadcast_b = b == 1;
      if (b == 2) c.epi = {1.0f, 0.5f, Activation::relu, 0.01f, BiasMode::per_n};
      add(c);
    }
  }
  // Block-scaled formats (A M x K row-major, B held N x K, scales as bench_formats.hpp lays them
  // out): edge shapes (M, N off 128, K tails inside scale blocks), every output dtype, epilogues.
  for (const char* f : {"mxfp8", "mxfp8_e5m2", "mxfp4", "nvfp4", "fp8_block128"}) {
    const FormatDef* def = find_format(f);
    const std::vector<S> fshapes = {{1, 1, 1}, {17, 17, 17}, {129, 65, 300}, {130, 70, 257}, {64, 200, 1024}};
    const Dtype outs[] = {Dtype::f16, Dtype::f32, Dtype::bf16};
    for (size_t i = 0; i < fshapes.size(); ++i) {
      Case c;
      c.category = "formats";
      c.dt = {Dtype(def->a), Dtype(def->b), outs[i % 3], f};
      c.m = fshapes[i].m, c.n = fshapes[i].n, c.k = fshapes[i].k;
      c.b_layout = Layout::col_major;  // K x N column-major: the storage of B held N x K
      if (i == 3) c.epi = {0.5f, 0.75f, Activation::gelu_tanh, 0.01f, BiasMode::per_m};
      if (i == 4) c.epi = {1.0f, 0.0f, Activation::silu, 0.01f, BiasMode::per_n};
      add(c);
    }
  }
  return cases;
}

Status make_case_data(const Case& c, uint64_t seed, CaseData& cd) {
  uint64_t state = seed ^ (uint64_t(c.index) * 0x9e3779b97f4a7c15ull);
  std::mt19937_64 rng(splitmix64(state));  // one generator per case: inputs depend on (seed, index) only
  if (!c.dt.format.empty()) {  // quantised through the public API; a and b: the dequantised values
    const FormatDef* f = find_format(c.dt.format);
    if (!f) return invalid_format(c.dt.format);
    Status s = make_block_operand(*f, OG_OPERAND_A, c.m, c.k, rng(), cd.qa, cd.a);
    if (s) s = make_block_operand(*f, OG_OPERAND_B, c.n, c.k, rng(), cd.qb, cd.b);
    if (!s) return s;
  } else {
    const int64_t a_rows = c.a_trans ? c.k : c.m, a_cols = c.a_trans ? c.m : c.k;
    const int64_t b_rows = c.b_trans ? c.n : c.k, b_cols = c.b_trans ? c.k : c.n;
    cd.a = HostMatrix(a_rows, a_cols, c.dt.a, c.a_layout, c.ld_pad, c.batch, c.batch > 1 ? 5 : 0);
    cd.a.transposed = c.a_trans;
    cd.b = HostMatrix(b_rows, b_cols, c.dt.b, c.b_layout, c.ld_pad, c.broadcast_b ? 1 : c.batch,
                      c.batch > 1 && !c.broadcast_b ? 7 : 0);
    cd.b.transposed = c.b_trans;
    fill_uniform(cd.a, rng);
    fill_uniform(cd.b, rng);
  }
  const Dtype cd_dtype = c.dt.d;
  if (c.epi.beta != 0.0f) {
    cd.c = HostMatrix(c.m, c.n, cd_dtype, Layout::row_major, c.ld_pad, c.batch);
    fill_uniform(cd.c, rng);
  }
  cd.d = HostMatrix(c.m, c.n, cd_dtype, Layout::row_major, c.ld_pad, c.batch, c.batch > 1 ? 3 : 0);
  fill_uniform(cd.d, rng);  // padding gets values that must survive
  cd.bias.clear();
  if (c.epi.bias_mode != BiasMode::none) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    cd.bias.resize(size_t(c.epi.bias_mode == BiasMode::per_n ? c.n : c.m));
    for (float& v : cd.bias) v = u(rng);
  }
  cd.ref = reference_gemm(cd.a, cd.b, c.epi.beta != 0.0f ? &cd.c : nullptr, cd.bias.empty() ? nullptr : &cd.bias,
                          c.epi, c.batch);
  return {};
}

CaseResult run_case(Context& ctx, const Case& c, const CaseData& cd_in) {
  CaseResult r;
  if (Status s = ctx.check_dtypes(c.dt.a, c.dt.b, c.dt.d); !s) {
    r.status = s.code == StatusCode::unsupported ? "unsupported" : "error";
    r.message = s.message;
    return r;
  }
  CaseData cd = cd_in;  // D gets poisoned and overwritten; the next backend needs the original
  // Poison only the view: padding keeps its random bytes and must come back unchanged.
  for (int64_t b = 0; b < cd.d.batches; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) cd.d.set(b, i, j, NAN);
  const HostMatrix d_before = cd.d;
  Gemm g;
  g.a = cd.a.host_view();
  g.b = cd.b.host_view();
  if (!c.dt.format.empty()) {
    g.a.raw = cd.qa.view(OG_OPERAND_A, og_memory_host(cd.qa.elements.data()), og_memory_host(cd.qa.scales.data()));
    g.b.raw = cd.qb.view(OG_OPERAND_B, og_memory_host(cd.qb.elements.data()), og_memory_host(cd.qb.scales.data()));
  }
  if (c.epi.beta != 0.0f) g.c = cd.c.host_view();
  g.d = cd.d.host_view();
  g.epilogue.alpha = c.epi.alpha;
  g.epilogue.beta = c.epi.beta;
  g.epilogue.activation = c.epi.act;
  g.epilogue.leaky_slope = c.epi.slope;
  g.epilogue.bias_mode = c.epi.bias_mode;
  if (!cd.bias.empty()) g.epilogue.bias = Memory::host(cd.bias.data());
  g.batch_count = c.batch;
  Status s = ctx.run_host(g);
  if (!s) {
    r.status = s.code == StatusCode::unsupported ? "unsupported" : "error";
    r.message = s.message;
    return r;
  }
#ifdef OMNIGEMM_DEVELOPER
  // Self-test of the checker (developer builds): OMNIGEMM_CONFORMANCE_CORRUPT=1 spoils one output element.
  if (const char* env = std::getenv("OMNIGEMM_CONFORMANCE_CORRUPT"); env && *env == '1')
    cd.d.set(0, 0, 0, float(cd.ref.value[0] * 2.0 + 1.0));
#endif
  ErrorReport e = compare(cd.d, cd.ref, &d_before);
  r.rel_error = e.rel_error;
  r.tol = tolerance(c.dt.d, c.k, c.dt.a, c.dt.b);
  if (e.non_finite) r.message = std::to_string(e.non_finite) + " output elements not finite (unwritten or overflow)";
  if (e.padding_touched) r.message += (r.message.empty() ? "" : "; ") + std::to_string(e.padding_touched) +
                                      " padding elements outside the view changed";
  r.status = (e.non_finite == 0 && e.padding_touched == 0 && e.rel_error <= r.tol) ? "pass" : "FAIL";
  if (r.status == "FAIL" && r.message.empty())
    r.message = "relative error " + fmt("%.3e", e.rel_error) + " > tolerance " + fmt("%.3e", r.tol);
  return r;
}

}  // namespace omnigemm::bench
