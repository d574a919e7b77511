// ctest "cpp_contract": what omnigemm.hpp promises, through the public headers and the shared
// library only, compiled with -Wall -Wextra -Werror (so designated initializers that name a
// subset of the option fields, as the README's examples do, must stay warning-free):
//   - Result::value() / operator-> / operator* on a failed result print the status and message
//     to stderr and abort (checked in a child process), and give the value on success;
//   - Context::create({.backend = ...}) and Gemm's designated initializers compile cleanly and
//     run: a GEMM with a column-major B and a per-N bias checked element by element against a
//     double loop (random inputs, D poisoned with NaN first).
#include <omnigemm/omnigemm.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace omnigemm;

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "cpp_contract: FAILED: %s\n", what.c_str());
  }
}

// Runs `body` in a child process with stderr captured; returns the child's stderr and whether it
// was killed by SIGABRT.
template <class F>
std::string run_child(F body, bool& aborted) {
  int fds[2];
  aborted = false;
  if (pipe(fds) != 0) return "pipe failed";
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    body();
    std::_Exit(0);  // reached only if body() did not abort
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return out;
}

void result_on_failure() {
  // Backend 99 is refused with invalid_argument and the message "unknown backend 99".
  const char* expected = "omnigemm: Result::value() on a failed result: invalid_argument: unknown backend 99";
  const auto bad = [] { return Context::create({.backend = static_cast<Backend>(99)}); };
  auto r = bad();
  expect(!r && r.status().code == StatusCode::invalid_argument, "backend 99 refused: " + r.status().message);

  bool aborted = false;
  std::string err = run_child([&] { auto x = bad(); (void)x.value().backend(); }, aborted);
  expect(aborted && err.find(expected) != std::string::npos, "value() on failure aborts with the message; got: " + err);
  err = run_child([&] { auto x = bad(); (void)x->backend(); }, aborted);
  expect(aborted && err.find(expected) != std::string::npos, "operator-> on failure aborts; got: " + err);
  err = run_child([&] { const auto x = bad(); (void)(*x).backend(); }, aborted);
  expect(aborted && err.find(expected) != std::string::npos, "const operator* on failure aborts; got: " + err);
  // The child mechanism itself: a good result does not abort.
  err = run_child([] { auto x = Context::create({.backend = Backend::cpu}); (void)x.value().backend(); }, aborted);
  expect(!aborted && err.empty(), "value() on success runs on; got: " + err);
}

void designated_initializers_run() {
  auto ctx = Context::create({.backend = Backend::cpu, .tune_mode = TuneMode::off});
  expect(ctx.ok() && ctx.status().ok(), "CPU context: " + ctx.status().message);
  if (!ctx) return;
  expect(ctx.value().backend() == Backend::cpu, "backend() is cpu");

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> val(-1, 1);
  const int M = 37, N = 29, K = 41;
  std::vector<float> a(size_t(M * K)), b(size_t(K * N)), bias(static_cast<size_t>(N)), d(size_t(M * N), NAN);
  for (auto* v : {&a, &b, &bias})
    for (float& x : *v) x = val(rng);
  Gemm g{.a = Matrix::host(a.data(), M, K, Dtype::f32),
         .b = Matrix::host(b.data(), K, N, Dtype::f32, Layout::col_major),  // b[k + j * K]
         .d = Matrix::host(d.data(), M, N, Dtype::f32),
         .epilogue = {.alpha = 0.5f, .bias_mode = BiasMode::per_n, .bias = Memory::host(bias.data())}};
  const Status s = ctx->run_host(g);
  expect(s.ok(), "run_host: " + s.message);
  double num = 0, den = 0;
  int unwritten = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0;
      for (int k = 0; k < K; ++k) acc += double(a[size_t(i * K + k)]) * b[size_t(k + j * K)];
      const double ref = 0.5 * acc + bias[size_t(j)], out = d[size_t(i * N + j)];
      if (std::isnan(out)) ++unwritten;
      num += (out - ref) * (out - ref);
      den += ref * ref;
    }
  // f32 accumulation over K = 41 terms below 1 in magnitude: rounding stays near K * 2^-24.
  const double err = std::sqrt(num / den);
  expect(unwritten == 0 && err < 1e-5, "GEMM error " + std::to_string(err) + ", " + std::to_string(unwritten) + " NaN");
  std::printf("cpp_contract: %dx%dx%d f32 GEMM (column-major B, bias per N): relative error %.3g\n", M, N, K, err);
}

}  // namespace

int main() {
  result_on_failure();
  designated_initializers_run();
  std::printf("cpp_contract: %s (%d failed)\n", failures ? "FAILED" : "all checks passed", failures);
  return failures ? 1 : 0;
}
