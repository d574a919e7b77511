// Prints the PTX of omnigemm-bench's CUDA activation pass (activation_pass.cpp), for the test
// bench_activation_ptx, which assembles it with ptxas where the CUDA toolkit exists.
#include <cstdio>

#include "vendor.hpp"

int main() {
  std::fputs(omnigemm::bench::activation_pass_ptx().c_str(), stdout);
  return 0;
}
