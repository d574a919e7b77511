#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "gemm_check.hpp"

int main(int argc, char** argv) {
  omnigemm::test::test_seed();  // print the seed first
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  return ctx.run();
}
