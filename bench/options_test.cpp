// Test bench_options_checks: --shapes with layouts and leading dimensions gives each shape its
// storage (and only those shapes), a plain shape keeps --b-layout's rule, and malformed shapes or
// leading dimensions below the dense ones are refused with the expected form in the message.
#include <cstdio>
#include <string>
#include <vector>

#include "bench_options.hpp"

using namespace omnigemm::bench;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::printf("FAILED: %s\n", what.c_str());
  }
}

bool parse(std::vector<std::string> words, Options& o, std::string& err) {
  words.insert(words.begin(), "omnigemm-bench");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return parse_args(int(argv.size()), argv.data(), o, err);
}

void shapes_with_storage() {
  Options o;
  std::string err;
  expect(parse({"--shapes", "37x29x19x3:cr:40:32:31,23x17x9,8x8x8x2", "--b-layout", "col"}, o, err), "parse: " + err);
  if (o.shapes.size() != 3) return expect(false, "three shapes");
  const Shape& s = o.shapes[0];
  expect(s.stored && s.m == 37 && s.n == 29 && s.k == 19, "first shape's dimensions and storage flag");
  expect(s.storage.a_col_major && !s.storage.b_col_major, "layouts cr: A column-major, B row-major");
  expect(s.storage.a_pad == 40 - 37 && s.storage.b_pad == 32 - 29 && s.storage.d_pad == 31 - 29, "pads from the leading dimensions");
  expect(s.storage.batch == 3, "batch 3");
  expect(!o.shapes[1].stored && o.shapes[1].storage.batch == 1, "a plain shape carries no storage (--b-layout decides)");
  expect(o.shapes[2].stored && o.shapes[2].storage.batch == 2 && !o.shapes[2].storage.a_col_major &&
             !o.shapes[2].storage.b_col_major && o.shapes[2].storage.a_pad == 0,
         "a batched shape without layouts: row-major, dense");
  expect(o.sweep == "list", "--shapes is the list sweep");
}

void bad_shapes_refused() {
  for (const char* bad : {"10x10", "10x10x10x0", "10x10x10:rx", "10x10x10:rr:5:10:10", "10x10x10:cr:10:9:10",
                          "10x10x10:rr:10:10:9", "10x10x10:rr:10:10", "10x10x-3", "10x10x10:rr:10:10:10:1"}) {
    Options o;
    std::string err;
    const bool ok = parse({"--shapes", bad}, o, err);
    expect(!ok && err.find("bad shape") != std::string::npos && err.find("MxNxK[xB]") != std::string::npos,
           std::string("refused: ") + bad + " (" + err + ")");
  }
}

}  // namespace

int main() {
  shapes_with_storage();
  bad_shapes_refused();
  if (failures) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("bench options: all passed\n");
  return 0;
}
