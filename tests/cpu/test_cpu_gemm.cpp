// CPU backend: every dtype, layout, transpose, batch form, epilogue and edge shape against the
// float64 reference of gemm_check.hpp; each micro-kernel this CPU supports (selected with a
// forced config's form, "packed:...-scalar" / "-avx2" / "-avx512", or OMNIGEMM_CPU_KERNEL);
// multi-threaded runs and concurrent
// calls on one context.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "gemm_check.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

struct Case {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  Dtype a = Dtype::f32, b = Dtype::f32, c = Dtype::f32, d = Dtype::f32;
  Dtype bias = Dtype::f32;
  bool ta = false, tb = false;
  Layout la = Layout::row_major, lb = Layout::row_major, lc = Layout::row_major, ld_layout = Layout::row_major;
  bool broadcast_a = false, broadcast_b = false, broadcast_c = false;  // batch_stride 0
  bool in_place = false;                                                 // C is D
  EpilogueSpec epi;
  std::string config;  // forced config, empty: the heuristic's choice
  bool via_gemm_host = false;  // og_gemm_host instead of og_gemm (same host pointers)
};

// Rounds each bias value to `dtype` so the float64 reference sees exactly what is stored.
std::vector<uint8_t> encode_bias(std::vector<float>& values, Dtype dtype) {
  std::vector<uint8_t> bytes(values.size() * size_t(dtype_size(dtype)));
  for (size_t i = 0; i < values.size(); ++i) {
    encode(dtype, &bytes[i * size_t(dtype_size(dtype))], values[i]);
    values[i] = float(decode(dtype, &bytes[i * size_t(dtype_size(dtype))]));
  }
  return bytes;
}

void run_case(Context& ctx, const Case& c) {
  CAPTURE(c.m);
  CAPTURE(c.n);
  CAPTURE(c.k);
  CAPTURE(c.batch);
  CAPTURE(std::string(name(c.a)));
  CAPTURE(std::string(name(c.b)));
  CAPTURE(std::string(name(c.c)));
  CAPTURE(std::string(name(c.d)));
  CAPTURE(c.ta);
  CAPTURE(c.tb);
  CAPTURE(int(c.la));
  CAPTURE(int(c.lb));
  CAPTURE(int(c.ld_layout));
  CAPTURE(c.broadcast_a);
  CAPTURE(c.broadcast_b);
  CAPTURE(c.in_place);
  CAPTURE(int(c.epi.act));
  CAPTURE(int(c.epi.bias_mode));
  CAPTURE(c.epi.alpha);
  CAPTURE(c.epi.beta);
  CAPTURE(c.config);
  HostMatrix A(c.ta ? c.k : c.m, c.ta ? c.m : c.k, c.a, c.la, 3, c.broadcast_a ? 1 : c.batch, 5);
  HostMatrix B(c.tb ? c.n : c.k, c.tb ? c.k : c.n, c.b, c.lb, 1, c.broadcast_b ? 1 : c.batch, 0);
  A.transposed = c.ta;
  B.transposed = c.tb;
  HostMatrix D(c.m, c.n, c.d, c.ld_layout, 2, c.batch, 3);
  HostMatrix C = c.in_place ? D : HostMatrix(c.m, c.n, c.c, c.lc, 1, c.broadcast_c ? 1 : c.batch, 2);
  A.randomize();
  B.randomize();
  C.randomize();
  std::vector<float> bias(size_t(std::max<int64_t>(std::max(c.m, c.n), 1)));
  for (auto& x : bias) x = std::uniform_real_distribution<float>(-1, 1)(rng());
  const std::vector<uint8_t> bias_bytes = encode_bias(bias, c.bias);
  if (c.in_place) D = C;  // D starts as C's values, padding included
  else D.poison();
  const HostMatrix d_before = D;

  Gemm g;
  g.a = A.host_view();
  g.b = B.host_view();
  g.c = c.in_place ? D.host_view() : C.host_view();
  g.d = D.host_view();
  g.batch_count = c.batch;
  set_epilogue(g, c.epi, Memory::host(bias_bytes.data()), c.bias);
  g.config = c.config;
  Status s = c.via_gemm_host ? ctx.run_host(g) : ctx.run(g);  // host pointers go straight to the CPU backend
  REQUIRE_MESSAGE(s.ok(), s.message);

  auto ref = reference_gemm(A, B, &C, &bias, c.epi, c.batch);
  ErrorReport r = compare(D, ref, &d_before);
  CHECK(r.non_finite == 0);
  CHECK(r.padding_touched == 0);
  CHECK(r.rel_error <= tolerance(c.d, c.k, c.a, c.b));
}

Context make_context(int threads = 0) {
  auto ctx = Context::create({.backend = Backend::cpu, .cpu_threads = threads});
  REQUIRE_MESSAGE(ctx.ok(), ctx.status().message);
  return std::move(*ctx);
}

const Dtype kInputs[] = {Dtype::f32, Dtype::f16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
const Dtype kOutputs[] = {Dtype::f32, Dtype::f16, Dtype::bf16};
const Activation kActs[] = {Activation::none, Activation::relu, Activation::leaky_relu, Activation::gelu_tanh,
                            Activation::silu};

int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }
float uniform_f(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng()); }
Layout any_layout() { return uniform(0, 1) ? Layout::row_major : Layout::col_major; }

// A random epilogue: alpha in [-2, 2], beta 0 or in [-1, 1], any activation and bias mode.
EpilogueSpec random_epilogue() {
  EpilogueSpec e;
  e.alpha = uniform_f(-2, 2);
  e.beta = uniform(0, 2) == 0 ? 0.0f : uniform_f(-1, 1);
  e.act = kActs[uniform(0, 4)];
  e.slope = 0.1f;
  e.bias_mode = BiasMode(uniform(0, 2));
  return e;
}

// The micro-kernels, their names (a forced config's form) and tile shapes (MR x NR, from
// backends/cpu/cpu_kernels.hpp).
struct KernelInfo {
  const char* name;
  int mr, nr;
};
const KernelInfo kKernels[] = {{"scalar", 4, 8}, {"avx2", 6, 16}, {"avx512", 14, 32}};

bool cpu_supports(const KernelInfo& k) {
  const std::string name = k.name;
#if defined(__x86_64__) || defined(__i386__)
  if (name == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (name == "avx512") return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return true;
#else
  return name == "scalar";
#endif
}

// Sets an environment variable for the lifetime of this object.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("cpu: random shapes, dtypes, layouts, transposes, batches and epilogues match float64") {
  Context ctx = make_context();
  for (int trial = 0; trial < 60; ++trial) {
    Case c;
    c.m = uniform(1, 97); c.n = uniform(1, 97); c.k = uniform(1, 97); c.batch = uniform(1, 3);
    c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)];
    c.c = kOutputs[uniform(0, 2)]; c.d = kOutputs[uniform(0, 2)];
    c.bias = kOutputs[uniform(0, 2)];
    c.ta = uniform(0, 1); c.tb = uniform(0, 1);
    c.la = any_layout(); c.lb = any_layout(); c.lc = any_layout(); c.ld_layout = any_layout();
    c.broadcast_a = c.batch > 1 && uniform(0, 3) == 0;
    c.broadcast_b = c.batch > 1 && uniform(0, 3) == 0;
    c.broadcast_c = c.batch > 1 && uniform(0, 3) == 0;
    c.epi = random_epilogue();
    c.via_gemm_host = trial % 2;
    run_case(ctx, c);
  }
}

TEST_CASE("cpu: every input dtype pair x every output dtype") {
  Context ctx = make_context();
  for (Dtype a : kInputs)
    for (Dtype b : kInputs)
      for (Dtype d : kOutputs) {
        Case c;
        c.m = uniform(20, 50); c.n = uniform(20, 70); c.k = uniform(20, 80);
        c.a = a; c.b = b; c.c = d; c.d = d;
        c.epi.alpha = uniform_f(0.5f, 1.5f);
        c.epi.beta = uniform_f(-1, 1);
        run_case(ctx, c);
      }
}

TEST_CASE("cpu: all layouts and transposes of A, B, C and D") {
  Context ctx = make_context();
  for (int mask = 0; mask < 64; ++mask) {
    Case c;
    c.m = uniform(30, 60); c.n = uniform(30, 60); c.k = uniform(30, 60);
    c.ta = mask & 1; c.tb = mask & 2;
    c.la = mask & 4 ? Layout::col_major : Layout::row_major;
    c.lb = mask & 8 ? Layout::col_major : Layout::row_major;
    c.lc = mask & 16 ? Layout::col_major : Layout::row_major;
    c.ld_layout = mask & 32 ? Layout::col_major : Layout::row_major;
    c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)]; c.d = kOutputs[uniform(0, 2)];
    c.epi.beta = 0.5f;
    run_case(ctx, c);
  }
}

TEST_CASE("cpu: every activation with bias per N and per M, alpha and beta") {
  Context ctx = make_context();
  for (Activation act : kActs)
    for (BiasMode bm : {BiasMode::none, BiasMode::per_n, BiasMode::per_m})
      for (float beta : {0.0f, 0.75f}) {
        Case c;
        c.m = uniform(10, 40); c.n = uniform(10, 40); c.k = uniform(10, 40);
        c.d = kOutputs[uniform(0, 2)];
        c.bias = kOutputs[uniform(0, 2)];
        c.epi.alpha = -1.25f;
        c.epi.beta = beta;
        c.epi.act = act;
        c.epi.slope = 0.2f;
        c.epi.bias_mode = bm;
        run_case(ctx, c);
      }
}

TEST_CASE("cpu: batches, including A, B or C broadcast with batch stride 0") {
  Context ctx = make_context();
  for (int mask = 0; mask < 8; ++mask)
    for (int64_t batch : {2, 5, 13}) {  // 13 small batches take the one-batch-per-thread path
      Case c;
      c.m = uniform(5, 40); c.n = uniform(5, 40); c.k = uniform(5, 40); c.batch = batch;
      c.broadcast_a = mask & 1; c.broadcast_b = mask & 2; c.broadcast_c = mask & 4;
      c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)]; c.d = kOutputs[uniform(0, 2)];
      c.epi = random_epilogue();
      c.epi.beta = 0.5f;
      run_case(ctx, c);
    }
  // Large enough per batch for the whole team to work on each batch in turn.
  Case c;
  c.m = 150; c.n = 140; c.k = 130; c.batch = 3; c.broadcast_b = true;
  c.epi.beta = -0.5f;
  run_case(ctx, c);
}

TEST_CASE("cpu: per-batch bias vectors (bias_batch_stride)") {
  Context ctx = make_context();
  for (BiasMode bm : {BiasMode::per_n, BiasMode::per_m}) {
    const int64_t m = 23, n = 31, k = 17, batch = 3;
    const int64_t len = bm == BiasMode::per_n ? n : m, stride = len + 4;
    HostMatrix A(m, k, Dtype::f32, Layout::row_major, 0, batch), B(k, n, Dtype::bf16, Layout::col_major, 0, batch);
    HostMatrix D(m, n, Dtype::f32, Layout::row_major, 1, batch);
    A.randomize();
    B.randomize();
    D.poison();
    std::vector<float> bias(size_t(stride * batch));
    for (auto& x : bias) x = uniform_f(-1, 1);
    Gemm g;
    g.a = A.host_view();
    g.b = B.host_view();
    g.d = D.host_view();
    g.batch_count = batch;
    g.epilogue.bias_mode = bm;
    g.epilogue.bias = Memory::host(bias.data());
    g.epilogue.bias_batch_stride = stride;
    Status s = ctx.run(g);
    REQUIRE_MESSAGE(s.ok(), s.message);
    EpilogueSpec none;
    auto ref = reference_gemm(A, B, nullptr, nullptr, none, batch);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ref[size_t((b * m + i) * n + j)] += bias[size_t(b * stride + (bm == BiasMode::per_n ? j : i))];
    ErrorReport r = compare(D, ref);
    CHECK(r.non_finite == 0);
    CHECK(r.rel_error <= tolerance(Dtype::f32, k));
  }
}

TEST_CASE("cpu: K = 0 gives act(beta * C + bias)") {
  Context ctx = make_context();
  for (int trial = 0; trial < 12; ++trial) {
    Case c;
    c.m = uniform(1, 40); c.n = uniform(1, 40); c.k = 0; c.batch = uniform(1, 3);
    c.c = kOutputs[uniform(0, 2)]; c.d = kOutputs[uniform(0, 2)];
    c.lc = any_layout(); c.ld_layout = any_layout();
    c.epi = random_epilogue();
    c.epi.beta = trial % 3 == 0 ? 0.0f : uniform_f(-1, 1);
    run_case(ctx, c);
  }
}

TEST_CASE("cpu: in place, C is D") {
  Context ctx = make_context();
  for (int trial = 0; trial < 12; ++trial) {
    Case c;
    c.m = uniform(1, 60); c.n = uniform(1, 60); c.k = trial < 2 ? 0 : uniform(1, 300); c.batch = uniform(1, 3);
    c.d = kOutputs[uniform(0, 2)];
    c.ld_layout = any_layout();
    c.in_place = true;
    c.epi = random_epilogue();
    c.epi.beta = uniform_f(0.25f, 1.0f);
    c.config = trial % 2 ? "28x64x16-g1-s1-w1" : "";  // several K blocks through the partial-sum buffer
    run_case(ctx, c);
  }
}

TEST_CASE("cpu: each micro-kernel on edge shapes around MR, NR and KC (forced config packed:...-<kernel>)") {
  Context ctx = make_context();
  for (const KernelInfo& kern : kKernels) {
    if (!cpu_supports(kern)) {
      MESSAGE("SKIPPED cpu " << std::string(kern.name) << " micro-kernel: this CPU does not support it");
      continue;
    }
    CAPTURE(std::string(kern.name));
    // Small blocks so that M > MC, N > NC and K > KC happen on small problems.
    const int kc = 16;
    const std::string config = "packed:" + std::to_string(2 * kern.mr) + "x" + std::to_string(2 * kern.nr) + "x" +
                               std::to_string(kc) + "-g1-s1-w1-" + kern.name;
    const int64_t ms[] = {1, kern.mr - 1, kern.mr, kern.mr + 1, 2 * kern.mr + 3, 5 * kern.mr - 1};
    const int64_t ns[] = {1, kern.nr - 1, kern.nr + 1, 2 * kern.nr, 3 * kern.nr + 5};
    const int64_t ks[] = {1, kc - 1, kc, kc + 1, 3 * kc + 7};
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks) {
          Case c;
          c.m = std::max<int64_t>(m, 1); c.n = std::max<int64_t>(n, 1); c.k = k;
          c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)]; c.d = kOutputs[uniform(0, 2)];
          c.ta = uniform(0, 1); c.tb = uniform(0, 1);
          c.la = any_layout(); c.lb = any_layout(); c.ld_layout = any_layout();
          c.epi = random_epilogue();
          c.config = config;
          run_case(ctx, c);
        }
    // And with the table's blocking (one K block up to 512, then the partial-sum buffer).
    for (int64_t k : {200, 700}) {
      Case c;
      c.m = 3 * kern.mr + 1; c.n = 2 * kern.nr + 3; c.k = k;
      c.epi.beta = 1.0f;
      c.config = std::string("packed:224x2048x512-g1-s1-w1-") + kern.name;
      run_case(ctx, c);
    }
  }
}

TEST_CASE("cpu: OMNIGEMM_CPU_KERNEL selects the micro-kernel at context creation") {
  for (const KernelInfo& kern : kKernels) {
    ScopedEnv env("OMNIGEMM_CPU_KERNEL", kern.name);
    auto ctx = Context::create({.backend = Backend::cpu});
    if (!cpu_supports(kern)) {
      CHECK(!ctx.ok());
      if (!ctx.ok()) CHECK(ctx.status().message.find(kern.name) != std::string::npos);
      MESSAGE("SKIPPED cpu " << std::string(kern.name) << " micro-kernel run: this CPU does not support it "
                                             "(creation correctly refused)");
      continue;
    }
    REQUIRE_MESSAGE(ctx.ok(), ctx.status().message);
    auto caps = ctx->capabilities();
    REQUIRE(caps.ok());
    CHECK(std::string(caps->raw.device_name).find(std::string(kern.name) + " kernel") != std::string::npos);
    for (int trial = 0; trial < 4; ++trial) {
      Case c;
      c.m = uniform(1, 3 * kern.mr + 2); c.n = uniform(1, 3 * kern.nr + 2); c.k = uniform(1, 600);
      c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)]; c.d = kOutputs[uniform(0, 2)];
      c.epi = random_epilogue();
      run_case(*ctx, c);
    }
  }
  ScopedEnv bad("OMNIGEMM_CPU_KERNEL", "sse9");
  auto ctx = Context::create({.backend = Backend::cpu});
  REQUIRE(!ctx.ok());
  CHECK(ctx.status().code == StatusCode::invalid_argument);
  CHECK(ctx.status().message.find("OMNIGEMM_CPU_KERNEL") != std::string::npos);
}

TEST_CASE("cpu: forced configs the backend cannot run are refused by name") {
  Context ctx = make_context();
  Status s = run_probe(ctx, Dtype::f32, "packed:32x32x32-g1-s1-w1-sse9");
  CHECK(s.code == StatusCode::unsupported);
  CHECK(s.message.find("micro-kernel") != std::string::npos);
  for (const KernelInfo& kern : kKernels) {
    if (cpu_supports(kern)) continue;
    s = run_probe(ctx, Dtype::f32, std::string("packed:32x32x32-g1-s1-w1-") + kern.name);
    CHECK(s.code == StatusCode::unsupported);
    CHECK(s.message.find(kern.name) != std::string::npos);
  }
}

TEST_CASE("cpu: multi-threaded teams (2 and 3 threads), several K blocks and a chunked partial-sum buffer") {
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    Context ctx = make_context(threads);
    for (int trial = 0; trial < 4; ++trial) {
      Case c;
      c.m = uniform(100, 260); c.n = uniform(100, 260); c.k = uniform(100, 700);
      c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)]; c.d = kOutputs[uniform(0, 2)];
      c.ta = uniform(0, 1); c.tb = uniform(0, 1); c.ld_layout = any_layout();
      c.epi = random_epilogue();
      c.config = trial % 2 ? "42x96x64-g1-s1-w1" : "";
      run_case(ctx, c);
    }
    // Few rows, many columns: the team splits N instead of M.
    Case wide;
    wide.m = 5; wide.n = 1500; wide.k = 300;
    run_case(ctx, wide);
  }
  // M x N above the 4 Mi-float cap of the partial-sum buffer: rows are processed in chunks.
  Context ctx = make_context(2);
  Case big;
  big.m = 2100; big.n = 2050; big.k = 20;
  big.epi.beta = 0.5f;
  big.config = "224x2048x8-g1-s1-w1";
  run_case(ctx, big);
}

TEST_CASE("cpu: two threads calling one context concurrently") {
  Context ctx = make_context(2);
  std::vector<Case> cases[2];
  for (auto& list : cases)
    for (int trial = 0; trial < 10; ++trial) {
      Case c;
      c.m = uniform(1, 200); c.n = uniform(1, 200); c.k = uniform(1, 600); c.batch = uniform(1, 3);
      c.a = kInputs[uniform(0, 4)]; c.b = kInputs[uniform(0, 4)]; c.d = kOutputs[uniform(0, 2)];
      c.epi = random_epilogue();
      list.push_back(c);
    }
  // doctest assertions are not thread-safe: each thread records its results, checked afterwards.
  struct Outcome { std::string error; ErrorReport report; double tol = 0; };
  std::vector<Outcome> outcomes[2];
  auto worker = [&](int w) {
    for (const Case& c : cases[w]) {
      HostMatrix A(c.m, c.k, c.a), B(c.k, c.n, c.b), D(c.m, c.n, c.d, Layout::row_major, 1, c.batch);
      HostMatrix C(c.m, c.n, c.c, Layout::row_major, 0, c.batch);
      std::vector<float> bias(size_t(std::max(c.m, c.n)));
      Outcome o;
      Gemm g;
      g.a = A.host_view();
      g.b = B.host_view();
      g.c = C.host_view();
      g.d = D.host_view();
      g.batch_count = c.batch;
      set_epilogue(g, c.epi, Memory::host(bias.data()));
      // The shared rng() is not thread-safe: each thread draws from its own generator,
      // seeded from the (printed) test seed.
      std::mt19937_64 local(uint64_t(w) * 7919 + uint64_t(c.m * 131 + c.n) + test_seed());
      for (float& x : bias) x = std::uniform_real_distribution<float>(-1.0f, 1.0f)(local);
      for (HostMatrix* x : {&A, &B, &C}) {
        std::uniform_real_distribution<float> u(0.05f, 1.0f);
        const int es = dtype_size(x->dtype);
        for (size_t i = 0; i + es <= x->bytes.size(); i += size_t(es))
          encode(x->dtype, &x->bytes[i], (local() & 1) ? -u(local) : u(local));
      }
      D.poison();
      const HostMatrix before = D;
      Status s = ctx.run(g);
      if (!s.ok()) { o.error = s.message; outcomes[w].push_back(o); continue; }
      o.report = compare(D, reference_gemm(A, B, &C, &bias, c.epi, c.batch), &before);
      o.tol = tolerance(c.d, c.k, c.a, c.b);
      outcomes[w].push_back(o);
    }
  };
  (void)rng();  // the seed is printed before the threads start
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  for (int w = 0; w < 2; ++w) {
    REQUIRE(outcomes[w].size() == cases[w].size());
    for (const Outcome& o : outcomes[w]) {
      CHECK_MESSAGE(o.error.empty(), o.error);
      CHECK(o.report.non_finite == 0);
      CHECK(o.report.padding_touched == 0);
      CHECK(o.report.rel_error <= o.tol);
    }
  }
}

TEST_CASE("cpu: every f16, bf16, fp8 bit pattern is decoded exactly as numeric.hpp, through A and through B") {
  Context ctx = make_context();
  for (Dtype dt : {Dtype::f16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2}) {
    CAPTURE(name(dt));
    const int64_t count = dtype_size(dt) == 2 ? 65536 : 256;
    std::vector<uint8_t> patterns(size_t(count * dtype_size(dt)));
    for (int64_t p = 0; p < count; ++p) std::memcpy(&patterns[size_t(p * dtype_size(dt))], &p, size_t(dtype_size(dt)));
    auto decoded = [&](int64_t p) { return decode(dt, &patterns[size_t(p * dtype_size(dt))]); };

    // Finite patterns: D = X * I (or I * X) with K = 16 is exactly X; every packing path is
    // taken (rows or columns contiguous, on the A and on the B side).
    const int64_t K = 16, R = count / K;
    std::vector<uint8_t> finite = patterns;
    for (int64_t p = 0; p < count; ++p)
      if (!std::isfinite(decoded(p))) std::memset(&finite[size_t(p * dtype_size(dt))], 0, size_t(dtype_size(dt)));
    std::vector<float> identity(size_t(K * K), 0.0f);
    for (int64_t i = 0; i < K; ++i) identity[size_t(i * K + i)] = 1.0f;
    for (bool on_a : {true, false})
      for (Layout layout : {Layout::row_major, Layout::col_major}) {
        CAPTURE(on_a);
        CAPTURE(int(layout));
        // The pattern matrix is stored so that element p sits at logical (p / K, p % K) of an
        // R x K matrix for A, or at (p % K, p / K) of a K x R matrix for B.
        const int64_t rows = on_a ? R : K, cols = on_a ? K : R;
        std::vector<uint8_t> stored(finite.size());
        for (int64_t p = 0; p < count; ++p) {
          const int64_t r = on_a ? p / K : p % K, c = on_a ? p % K : p / K;
          const int64_t at = layout == Layout::row_major ? r * cols + c : r + c * rows;
          std::memcpy(&stored[size_t(at * dtype_size(dt))], &finite[size_t(p * dtype_size(dt))], size_t(dtype_size(dt)));
        }
        std::vector<float> d(size_t(on_a ? R * K : K * R), NAN);
        Gemm g;
        const Matrix x = Matrix::host(stored.data(), rows, cols, dt, layout);
        const Matrix eye = Matrix::host(identity.data(), K, K, Dtype::f32);
        g.a = on_a ? x : eye;
        g.b = on_a ? eye : x;
        g.d = Matrix::host(d.data(), on_a ? R : K, on_a ? K : R, Dtype::f32);
        Status s = ctx.run(g);
        REQUIRE_MESSAGE(s.ok(), s.message);
        int64_t wrong = 0;
        for (int64_t p = 0; p < count; ++p) {
          const int64_t r = on_a ? p / K : p % K, c = on_a ? p % K : p / K;
          const double want = decode(dt, &finite[size_t(p * dtype_size(dt))]);
          if (double(d[size_t(r * (on_a ? K : R) + c)]) != want) ++wrong;
        }
        CHECK(wrong == 0);
      }

    // Every pattern, NaN and infinities included: K = 1 and a factor 1, so D = X exactly.
    std::vector<float> one{1.0f}, d(size_t(count), 0.0f);
    Gemm g;
    g.a = Matrix::host(patterns.data(), count, 1, dt);
    g.b = Matrix::host(one.data(), 1, 1, Dtype::f32);
    g.d = Matrix::host(d.data(), count, 1, Dtype::f32);
    Status s = ctx.run(g);
    REQUIRE_MESSAGE(s.ok(), s.message);
    int64_t wrong = 0;
    for (int64_t p = 0; p < count; ++p) {
      const double want = decoded(p), got = d[size_t(p)];
      if (std::isnan(want) ? !std::isnan(got) : got != want) ++wrong;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("cpu: f16 and bf16 outputs are rounded exactly as numeric.hpp (ties, subnormals, overflow, NaN)") {
  Context ctx = make_context();
  // K = 1 and B = 1: D = round(A) bit for bit. Values span the whole f16/bf16 range and beyond,
  // plus exact ties between neighbouring outputs.
  std::vector<float> a;
  for (int i = 0; i < 4000; ++i) {
    const float mag = std::ldexp(uniform_f(1.0f, 2.0f), uniform(-30, 20));
    a.push_back(uniform(0, 1) ? -mag : mag);
  }
  for (uint32_t h : {0x0001u, 0x03ffu, 0x0400u, 0x3c00u, 0x3c01u, 0x7bfeu})  // exact midpoints above f16 values
    a.push_back((numeric::f16_to_f32(uint16_t(h)) + numeric::f16_to_f32(uint16_t(h + 1))) / 2);
  for (float v : {65504.0f, 65520.0f, 65536.0f, 1e30f, -1e30f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3.4e38f})
    a.push_back(v);
  const int64_t m = int64_t(a.size());
  std::vector<float> one{1.0f};
  for (Dtype out : {Dtype::f16, Dtype::bf16}) {
    CAPTURE(name(out));
    std::vector<uint16_t> d(size_t(m), 0xffff);
    Gemm g;
    g.a = Matrix::host(a.data(), m, 1, Dtype::f32);
    g.b = Matrix::host(one.data(), 1, 1, Dtype::f32);
    g.d = Matrix::host(d.data(), m, 1, out);
    Status s = ctx.run(g);
    REQUIRE_MESSAGE(s.ok(), s.message);
    int64_t wrong = 0;
    for (int64_t i = 0; i < m; ++i) {
      // 0 + a * 1 in f32 is a, except that -0 becomes +0 (the accumulator starts at +0).
      const float acc = 0.0f + a[size_t(i)] * 1.0f;
      const uint16_t want = out == Dtype::f16 ? numeric::f32_to_f16(acc) : numeric::f32_to_bf16(acc);
      const bool nan = std::isnan(acc);
      if (nan ? !std::isnan(decode(out, reinterpret_cast<const uint8_t*>(&d[size_t(i)]))) : d[size_t(i)] != want) ++wrong;
    }
    CHECK(wrong == 0);
  }
}
