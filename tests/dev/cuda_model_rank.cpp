// Developer tool (built with OMNIGEMM_DEVELOPER and the CUDA backend): the CUDA cost model's
// ranking of every offered config for problems named on the command line, on a modelled Hopper
// part (tests/cuda/cuda_model_device.hpp), without a GPU. What a model change moves is read here
// before any device time is spent on it; the device measures, this only predicts.
//
//   omnigemm_cuda_model_rank [--device h100|h200] [--top N] [--terms] [--in f16|bf16|fp8|f32]
//                            PROBLEM...
//   PROBLEM: MxNxK[xBATCH][:AB[:LDA:LDB:LDD]]  AB: A's and B's layouts, r or c (D row-major);
//            leading dimensions in elements (0 or absent: packed), batches one after another
//            (the random sweep's results.csv has every field: M N K batch b_layout lda ldb ldd)
//
// Prints per problem the configs fastest first with the predicted time in us and, with --terms,
// the cost model's terms.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_model_device.hpp"
#include "dispatch.hpp"

using namespace omnigemm::detail;

namespace {

struct Spec {
  long long m = 0, n = 0, k = 0, batch = 1, lda = 0, ldb = 0, ldd = 0;
  char ab[3] = "rr";
};

bool parse(const std::string& text, Spec& s) {
  const size_t colon = text.find(':');
  const std::string dims = text.substr(0, colon);
  const int got = std::sscanf(dims.c_str(), "%lldx%lldx%lldx%lld", &s.m, &s.n, &s.k, &s.batch);
  if (got < 3 || s.m < 1 || s.n < 1 || s.k < 1 || s.batch < 1) return false;
  if (colon != std::string::npos &&
      std::sscanf(text.substr(colon + 1).c_str(), "%2[rc]:%lld:%lld:%lld", s.ab, &s.lda, &s.ldb, &s.ldd) < 1)
    return false;
  // Packed where absent: the contiguous extent of each operand.
  if (s.lda <= 0) s.lda = s.ab[0] == 'c' ? s.m : s.k;
  if (s.ldb <= 0) s.ldb = s.ab[1] == 'c' ? s.k : s.n;
  if (s.ldd <= 0) s.ldd = s.n;
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: omnigemm_cuda_model_rank [--device h100|h200] [--top N] [--terms] [--in f16|bf16|fp8|f32] "
               "MxNxK[xBATCH][:AB[:LDA:LDB:LDD]]...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  test::HopperPart part = test::HopperPart::h200;
  int top = 5;
  bool terms = false;
  og_dtype in = OG_DTYPE_F16;
  std::vector<Spec> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--device" && has_value) {
      const std::string d = argv[++i];
      if (d != "h100" && d != "h200") return usage();
      part = d == "h100" ? test::HopperPart::h100 : test::HopperPart::h200;
    } else if (a == "--top" && has_value) {
      top = std::atoi(argv[++i]);
    } else if (a == "--terms") {
      terms = true;
    } else if (a == "--in" && has_value) {
      const std::string t = argv[++i];
      if (t == "f16") in = OG_DTYPE_F16;
      else if (t == "bf16") in = OG_DTYPE_BF16;
      else if (t == "fp8") in = OG_DTYPE_FP8_E4M3;
      else if (t == "f32") in = OG_DTYPE_F32;
      else return usage();
    } else if (Spec s; parse(a, s)) {
      specs.push_back(s);
    } else {
      return usage();
    }
  }
  if (specs.empty()) return usage();
  test::ModelledHopper be(false, part);
  std::printf("device: %s\n", be.device().name.c_str());
  for (const Spec& s : specs) {
    // Outputs as the bench's rule: f32 stays f32, fp8 gives f16, 16-bit keeps its type.
    Problem p = test::strided_problem(s.m, s.n, s.k, s.batch, s.ab, s.lda, s.ldb, s.ldd, in);
    p.d.dtype = in == OG_DTYPE_FP8_E4M3 ? OG_DTYPE_F16 : in;
    const auto ranked = rank_candidates(be, p);
    std::printf("%lldx%lldx%lld batch %lld, A %c B %c, ld %lld %lld %lld: %zu configs\n", s.m, s.n, s.k, s.batch, s.ab[0],
                s.ab[1], s.lda, s.ldb, s.ldd, ranked.size());
    for (int i = 0; i < top && i < int(ranked.size()); ++i) {
      const Candidate& c = ranked[size_t(i)];
      std::printf("  %-48s %10.2f\n", c.config.to_string().c_str(), c.cost.ms * 1000);
      if (terms)
        std::printf("    waves %.0f occupancy %.2f useful %.2f split %.2f efficiency %.3f factor %.3f memory %.2f extra %.2f "
                    "latency %.2f\n",
                    c.cost.waves, c.cost.occupancy, c.cost.useful, c.cost.split, c.hints.efficiency, c.hints.factor,
                    c.cost.memory_ms * 1000, c.cost.extra_ms * 1000, c.cost.latency_ms * 1000);
    }
  }
  return 0;
}
