// Developer tool (built with OMNIGEMM_DEVELOPER and the Vulkan backend): the Vulkan cost model's
// ranking of every offered config for problems named on the command line, on one of the recorded
// property sets (tests/vulkan/recorded_devices.hpp), without a GPU. What a model change moves is
// read here before any device time is spent on it; the device measures, this only predicts.
//
//   omnigemm_vulkan_model_rank [--device PREFIX] [--top N] [--terms] [--in f16|bf16] [--out f16|f32]
//                              PROBLEM...
//   PROBLEM: MxNxK[xBATCH][:AB[:LDA:LDB:LDD]]  AB: A's and B's layouts, r or c (D row-major);
//            leading dimensions in elements (0 or absent: packed), batches packed
//
// Prints per problem the configs fastest first with the predicted time (us where the device
// reports its peak rate) and, with --terms, the cost model's terms and the family's hints.
#define DOCTEST_CONFIG_DISABLE  // recorded_devices.hpp reports through doctest only inside tests
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dispatch.hpp"
#include "recorded_devices.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_family_support.hpp"

using namespace omnigemm;

namespace {

struct Spec {
  int64_t m = 0, n = 0, k = 0, batch = 1, lda = 0, ldb = 0, ldd = 0;
  Layout la = Layout::row_major, lb = Layout::row_major;
};

bool parse(const std::string& text, Spec& s) {
  long long m = 0, n = 0, k = 0, b = 1, lda = 0, ldb = 0, ldd = 0;
  char ab[3] = "rr";
  const size_t colon = text.find(':');
  const std::string dims = text.substr(0, colon);
  const int got = std::sscanf(dims.c_str(), "%lldx%lldx%lldx%lld", &m, &n, &k, &b);
  if (got < 3 || m < 0 || n < 0 || k < 0 || b < 1) return false;
  if (colon != std::string::npos) {
    const std::string rest = text.substr(colon + 1);
    if (std::sscanf(rest.c_str(), "%2[rc]:%lld:%lld:%lld", ab, &lda, &ldb, &ldd) < 1) return false;
  }
  s = {m, n, k, b, lda, ldb, ldd, ab[0] == 'c' ? Layout::col_major : Layout::row_major,
       ab[1] == 'c' ? Layout::col_major : Layout::row_major};
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: omnigemm_vulkan_model_rank [--device PREFIX] [--top N] [--terms] [--in f16|bf16] "
               "[--out f16|f32] MxNxK[xBATCH][:AB[:LDA:LDB:LDD]]...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "NVIDIA Hopper";
  int top = 5;
  bool terms = false;
  Dtype in = Dtype::f16, out = Dtype::f16;
  std::vector<Spec> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--device" && has_value) device = argv[++i];
    else if (a == "--top" && has_value) top = std::atoi(argv[++i]);
    else if (a == "--terms") terms = true;
    else if (a == "--in" && has_value) in = std::string(argv[++i]) == "bf16" ? Dtype::bf16 : Dtype::f16;
    else if (a == "--out" && has_value) out = std::string(argv[++i]) == "f32" ? Dtype::f32 : Dtype::f16;
    else if (Spec s; parse(a, s)) specs.push_back(s);
    else return usage();
  }
  if (specs.empty()) return usage();
  const test::recorded::Recorded* rec = test::recorded::find_record(device);
  if (!rec) {
    std::fprintf(stderr, "no recorded device starts with \"%s\"; recorded:\n", device.c_str());
    for (const test::recorded::Recorded& r : test::recorded::devices()) std::fprintf(stderr, "  %s\n", r.label);
    return 2;
  }
  detail::vulkan::VulkanBackend be;
  be.init_modelled(rec->props);
  std::printf("device: %s (%s)\n", rec->label, rec->executed ? "executed here" : "modelled");
  for (const Spec& s : specs) {
    detail::Problem p;
    if (Status st = test::placeholder_problem(in, in, out, s.m, s.n, s.k, s.batch, s.la, s.lb, s.lda, s.ldb, s.ldd, p); !st) {
      std::printf("%lldx%lldx%lld: invalid: %s\n", (long long)s.m, (long long)s.n, (long long)s.k, st.message.c_str());
      continue;
    }
    const auto ranked = detail::rank_candidates(be, p);
    std::printf("%lldx%lldx%lld batch %lld, A %c B %c, ld %lld %lld %lld (0: packed): %zu configs\n", (long long)s.m,
                (long long)s.n, (long long)s.k, (long long)s.batch, s.la == Layout::row_major ? 'r' : 'c',
                s.lb == Layout::row_major ? 'r' : 'c', (long long)s.lda, (long long)s.ldb, (long long)s.ldd, ranked.size());
    for (int i = 0; i < top && i < int(ranked.size()); ++i) {
      const detail::Candidate& c = ranked[size_t(i)];
      const std::string text = c.config.to_string();
      std::printf("  %-16s %-36s %10.2f\n", c.family->name(), text.substr(text.find(':') + 1).c_str(), c.cost.ms * 1000);
      if (terms)
        std::printf("    waves %.0f occupancy %.2f useful %.2f split %.2f intensity %.2f efficiency %.3f factor %.3f memory %.2f "
                    "extra %.2f latency %.2f\n",
                    c.cost.waves, c.cost.occupancy, c.cost.useful, c.cost.split, c.cost.intensity, c.hints.efficiency,
                    c.hints.factor, c.cost.memory_ms * 1000, c.cost.extra_ms * 1000, c.cost.latency_ms * 1000);
    }
  }
  return 0;
}
