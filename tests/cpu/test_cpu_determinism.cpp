// Deterministic results on the CPU backend: the same call on the same context (and on a second
// context with the same options) gives bitwise-identical D, run after run, with several threads,
// several K blocks through the f32 partial-sum buffer, batches run one per thread and every dtype.
// Each output element is summed by one thread in K order, so no schedule changes its rounding.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gemm_check.hpp"

using namespace omnigemm;
using namespace omnigemm::test;

namespace {

// D's bytes after `runs` calls of one descriptor on `ctx`, each on a freshly poisoned D; the
// bytes of every run must equal the first run's.
std::vector<uint8_t> repeated(Context& ctx, const HostMatrix& A, const HostMatrix& B, HostMatrix D, int64_t batch,
                              const std::string& config, int runs) {
  std::vector<uint8_t> first;
  for (int r = 0; r < runs; ++r) {
    D.poison();
    Gemm g;
    g.a = A.host_view();
    g.b = B.host_view();
    g.d = D.host_view();
    g.batch_count = batch;
    g.config = config;
    g.epilogue.activation = Activation::gelu_tanh;
    const Status s = ctx.run(g);
    REQUIRE_MESSAGE(s.ok(), s.message);
    if (r == 0) first = D.bytes;
    else CHECK_MESSAGE(D.bytes == first, "run " << r << " differs from the first run");
  }
  return first;
}

}  // namespace

TEST_CASE("cpu: the same call gives bitwise-identical D run to run") {
  struct Shape {
    int64_t m, n, k, batch;
    Dtype in, out;
    const char* config;  // "" = the cost model's choice
  };
  const Shape shapes[] = {
      {203, 177, 1000, 1, Dtype::f32, Dtype::f32, "42x96x64-g1-s1-w1"},  // 16 K blocks through the partial sums
      {203, 177, 1000, 1, Dtype::bf16, Dtype::bf16, ""},
      {31, 45, 257, 7, Dtype::f16, Dtype::f16, ""},                      // batches one per thread
      {512, 300, 129, 2, Dtype::fp8_e4m3, Dtype::f32, "112x1024x32-g1-s1-w1"},
  };
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    auto ctx1 = Context::create({.backend = Backend::cpu, .cpu_threads = threads});
    auto ctx2 = Context::create({.backend = Backend::cpu, .cpu_threads = threads});
    REQUIRE(ctx1.ok());
    REQUIRE(ctx2.ok());
    for (const Shape& s : shapes) {
      CAPTURE(s.m);
      CAPTURE(s.n);
      CAPTURE(s.k);
      CAPTURE(s.config);
      HostMatrix A(s.m, s.k, s.in, Layout::row_major, 1, s.batch, 2);
      HostMatrix B(s.k, s.n, s.in, Layout::col_major, 3, s.batch, 1);
      HostMatrix D(s.m, s.n, s.out, Layout::row_major, 2, s.batch, 1);
      A.randomize();
      B.randomize();
      const auto one = repeated(*ctx1, A, B, D, s.batch, s.config, 4);
      const auto two = repeated(*ctx2, A, B, D, s.batch, s.config, 2);
      CHECK(one == two);
      // The bytes are a correct result, not merely a repeated one.
      HostMatrix out = D;
      out.bytes = one;
      EpilogueSpec e;
      e.act = Activation::gelu_tanh;
      const ErrorReport r = compare(out, reference_gemm(A, B, nullptr, nullptr, e, s.batch));
      CHECK(r.non_finite == 0);
      CHECK(r.rel_error <= tolerance(s.out, s.k, s.in, s.in));
    }
  }
}
