#include "bench_options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>

#include "bench_formats.hpp"
#include "bench_random.hpp"
#include "bench_util.hpp"

namespace omnigemm::bench {

namespace {

std::optional<og_dtype> parse_dtype(const std::string& s) {
  for (int d = 0; d < OG_DTYPE_COUNT; ++d)
    if (s == og_dtype_name(og_dtype(d))) return og_dtype(d);
  if (s == "e4m3" || s == "fp8") return OG_DTYPE_FP8_E4M3;
  if (s == "e5m2") return OG_DTYPE_FP8_E5M2;
  return std::nullopt;
}

og_dtype default_output(og_dtype in) {
  switch (in) {
    case OG_DTYPE_F32: return OG_DTYPE_F32;
    case OG_DTYPE_BF16: return OG_DTYPE_BF16;
    default: return OG_DTYPE_F16;  // f16, and fp8 -> f16 as cuBLASLt's fp8 GEMM writes
  }
}

}  // namespace

std::string EpilogueChoice::name() const {
  if (plain()) return "none";
  std::string s = beta ? "beta" : "";
  if (bias) s += std::string(s.empty() ? "" : "_") + "bias";
  const char* a = act == OG_ACT_RELU         ? "relu"
                  : act == OG_ACT_LEAKY_RELU ? "leaky_relu"
                  : act == OG_ACT_GELU_TANH  ? "gelu"
                  : act == OG_ACT_SILU       ? "silu"
                                             : "";
  if (*a) s += std::string(s.empty() ? "" : "_") + a;
  return s;
}

bool parse_epilogue(const std::string& s, EpilogueChoice& out) {
  out = {};
  if (s == "none") return true;
  std::string rest = s;
  auto take = [&](const std::string& word) {
    if (rest.compare(0, word.size(), word) != 0) return false;
    if (rest.size() > word.size() && rest[word.size()] != '_') return false;
    rest.erase(0, std::min(rest.size(), word.size() + 1));
    return true;
  };
  out.beta = take("beta");
  out.bias = take("bias");
  if (rest == "relu") out.act = OG_ACT_RELU;
  else if (rest == "leaky_relu") out.act = OG_ACT_LEAKY_RELU;
  else if (rest == "gelu" || rest == "gelu_tanh") out.act = OG_ACT_GELU_TANH;
  else if (rest == "silu") out.act = OG_ACT_SILU;
  else if (!rest.empty()) return false;
  return !out.plain() && out.name().size() > 0;
}

void print_usage() {
  std::puts(
      "omnigemm-bench [options]\n"
      "  --backend cpu,vulkan,cuda,hip backends to run (default: every available one)\n"
      "  --dtype f16,bf16,f32,tf32,fp8_e4m3,fp8_e5m2[:out]  input dtypes; output dtype rule: f32->f32,\n"
      "                                f16->f16, bf16->bf16, fp8->f16; 'in:out' overrides (e.g. f16:f32);\n"
      "                                tf32: f32 inputs in compute_mode TF32 (cuBLAS: its TF32 compute type)\n"
      "  --format mxfp8|mxfp8_e5m2|mxfp4|nvfp4|fp8_block128[:out]  block-scaled formats instead of --dtype\n"
      "                                (output f16 unless ':out'); K sweeps default to M = N = 8192 (the\n"
      "                                block-scaled tutorial's); without a sweep: 8192 x 8192 x 8192\n"
      "  (sweeps; default: the Triton tutorial's square series M=N=K=128*i, i=2..32)\n"
      "  --quick                       square sizes 256, 512, 768, 1024, 1536, 2048\n"
      "  --sizes 512,1024              square sizes\n"
      "  --shapes MxNxK[xB][:AB[:LDA:LDB:LDD]],...  explicit shapes; with B a batch, with AB the layouts of A\n"
      "                                and B (r or c each: row- or column-major; D is row-major; overrides\n"
      "                                --b-layout) and their leading dimensions and D's (at least the dense ones)\n"
      "  --llm                         M in {16,128,4096} x (N,K) in {(4096,4096),(14336,4096),(4096,14336)}\n"
      "  --K_range A B --K_step S --MN X   K sweep with M=N=X (default X=4096)\n"
      "  --random N                    N problems drawn from --seed: M, N, K log-uniform in [1, 16384] (a share\n"
      "                                skinny or small), A and B in either layout, leading dimensions and batch\n"
      "                                strides 16-byte aligned or not, some batched (B broadcast on some), the\n"
      "                                dtype of each from --dtype; each problem at most 2^40 FLOPs and 2^27\n"
      "                                elements (its largest dimension halved until it fits); --budget-ms\n"
      "                                defaults to 100. Prints and writes (summary.csv, results.json) the\n"
      "                                geometric mean, 10th percentile and minimum of the vendor/OmniGEMM ratios\n"
      "  --random-pick I,J,...         only these problems of the draw (its x column): reruns rows of a sweep\n"
      "  --random-max-dim D            largest M, N, K the random sweep draws (default 16384)\n"
      "  --random-max-flops F          FLOPs cap per random problem (default 2^40)\n"
      "  --epilogue E,...              fused epilogues, each a row against OmniGEMM's plain GEMM (fused/plain\n"
      "                                time) and the vendor: none, relu, leaky_relu, gelu (tanh form), silu,\n"
      "                                bias (per N), beta (C with beta 0.5) and [beta_][bias_]act, e.g.\n"
      "                                bias_gelu. CUDA: cuBLASLt's own epilogue (RELU, GELU, BIAS, RELU_BIAS,\n"
      "                                GELU_BIAS; beta through its C) where it has one, else cuBLAS(Lt) + a\n"
      "                                separate activation pass; alpha 2^round(log2(4 / sqrt(K))) so that\n"
      "                                the activations see values of order 1\n"
      "  --activation-pass auto|loop|kernel|omnigemm   the vendor's separate activation pass: a host loop\n"
      "                                (CPU only; CPU default), a PTX kernel (CUDA only; CUDA default) or\n"
      "                                OmniGEMM's K=0 elementwise call (elsewhere, or when the kernel cannot load)\n"
      "  --config TEXT                 force OmniGEMM's config, family:BMxBNxBK-gG-sS-wW[...] (e.g.\n"
      "                                sm90_wgmma:128x256x64-g16-s4-w12-coop; default: the tuner's choice)\n"
      "  --explain                     print og_gemm_explain's report for every OmniGEMM row (backend,\n"
      "                                kernel family, config, why, launch plan, other families)\n"
      "  --tune-mode cache_only|on_miss|off   the context's tune mode (default cache_only, as og_gemm)\n"
      "  --b-layout auto|row|col       B storage (auto: row-major, column-major for fp8 as cuBLASLt needs)\n"
      "  --budget-ms X                 timing budget per implementation and configuration (default 400)\n"
      "  --warmup-ms X                 device time run before timing each implementation (default 30 ms,\n"
      "                                at least what the backend needs to bring its clocks up: 1.5 s on Vulkan)\n"
      "  --max-config-seconds X        skip configurations estimated to take longer (default 20)\n"
      "  --seed N                      input seed, and the random sweep's shapes (default: fresh, printed)\n"
      "  --no-vendor                   skip vendor baselines\n"
      "  --out DIR                     CSV/JSON/plots (default bench/out if it exists, else ./omnigemm-bench-out)\n"
      "  --no-plot                     no plot\n"
      "  --python PATH|none            interpreter for plot.py (default: the first python3 with matplotlib;\n"
      "                                none, or none found: a basic plot.svg written by the bench itself)\n"
      "Environment: OMNIGEMM_CUBLAS_DIR, OMNIGEMM_ROCBLAS_DIR, OMNIGEMM_OPENBLAS_DIR (folders of the vendor libraries).");
}


// One --shapes entry: MxNxK[xB][:AB[:LDA:LDB:LDD]]. Leading dimensions below the dense ones are refused.
static bool parse_shape(const std::string& text, Shape& s) {
  const auto fields = split(text, ':');
  if (fields.empty() || fields.size() == 3 || fields.size() == 4 || fields.size() > 5) return false;
  const auto dims = split(fields[0], 'x');
  if (dims.size() != 3 && dims.size() != 4) return false;
  auto number = [](const std::string& t, int64_t& out) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 12) return false;
    out = std::stoll(t);
    return true;
  };
  int64_t batch = 1;
  if (!number(dims[0], s.m) || !number(dims[1], s.n) || !number(dims[2], s.k)) return false;
  if (dims.size() == 4 && (!number(dims[3], batch) || batch < 1)) return false;
  if (fields.size() == 1 && batch == 1) return true;  // a plain shape: --b-layout decides
  Storage& st = s.storage;
  st.batch = batch;
  s.stored = true;
  if (fields.size() == 1) return true;  // batched, row-major A and B
  const std::string& ab = fields[1];
  if (ab.size() != 2 || (ab[0] != 'r' && ab[0] != 'c') || (ab[1] != 'r' && ab[1] != 'c')) return false;
  st.a_col_major = ab[0] == 'c';
  st.b_col_major = ab[1] == 'c';
  if (fields.size() == 2) return true;
  int64_t lda = 0, ldb = 0, ldd = 0;
  if (!number(fields[2], lda) || !number(fields[3], ldb) || !number(fields[4], ldd)) return false;
  st.a_pad = lda - std::max<int64_t>(st.a_col_major ? s.m : s.k, 1);
  st.b_pad = ldb - std::max<int64_t>(st.b_col_major ? s.k : s.n, 1);
  st.d_pad = ldd - std::max<int64_t>(s.n, 1);
  return st.a_pad >= 0 && st.b_pad >= 0 && st.d_pad >= 0;
}

bool parse_args(int argc, char** argv, Options& o, std::string& err) {
  std::vector<int64_t> sizes;
  bool quick = false, llm = false, formats = false;
  int64_t k_lo = 0, k_hi = 0, k_step = 0, mn = 4096;
  bool mn_given = false;
  auto need = [&](int& i, const char* flag) -> const char* {
    if (i + 1 >= argc) { err = std::string(flag) + " needs a value"; return nullptr; }
    return argv[++i];
  };
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const char* v = nullptr;
      if (a == "--help" || a == "-h") { print_usage(); std::exit(0); }
      else if (a == "--quick") quick = true;
      else if (a == "--llm") llm = true;
      else if (a == "--no-plot") o.plot = false;
      else if (a == "--no-vendor") o.vendor = false;
      else if (a == "--explain") o.explain = true;
      else if (a == "--config") {
        if (!(v = need(i, "--config"))) return false;
        o.forced_config = v;
      } else if (a == "--tune-mode") {
        if (!(v = need(i, "--tune-mode"))) return false;
        const std::string t = v;
        if (t == "cache_only") o.tune_mode = OG_TUNE_CACHE_ONLY;
        else if (t == "on_miss") o.tune_mode = OG_TUNE_ON_MISS;
        else if (t == "off") o.tune_mode = OG_TUNE_OFF;
        else { err = "--tune-mode cache_only|on_miss|off"; return false; }
      } else if (a == "--activation-pass") {
        if (!(v = need(i, "--activation-pass"))) return false;
        o.activation_pass = v;
        if (o.activation_pass != "auto" && o.activation_pass != "loop" && o.activation_pass != "omnigemm" &&
            o.activation_pass != "kernel") {
          err = "--activation-pass auto|loop|kernel|omnigemm";
          return false;
        }
      } else if (a == "--python") {
        if (!(v = need(i, "--python"))) return false;
        o.python = v;
      }
      else if (a == "--backend") {
        if (!(v = need(i, "--backend"))) return false;
        for (const auto& b : split(v, ',')) {
          if (b == "cpu") o.backends.push_back(OG_BACKEND_CPU);
          else if (b == "vulkan") o.backends.push_back(OG_BACKEND_VULKAN);
          else if (b == "cuda") o.backends.push_back(OG_BACKEND_CUDA);
          else if (b == "hip") o.backends.push_back(OG_BACKEND_HIP);
          else { err = "unknown backend '" + b + "' (cpu, vulkan, cuda, hip)"; return false; }
        }
      } else if (a == "--dtype") {
        if (!(v = need(i, "--dtype"))) return false;
        o.dtypes.clear();
        for (const auto& spec : split(v, ',')) {
          auto parts = split(spec, ':');
          const bool tf32 = !parts.empty() && parts[0] == "tf32";
          auto in = parts.empty() ? std::nullopt : tf32 ? std::optional(OG_DTYPE_F32) : parse_dtype(parts[0]);
          auto out = parts.size() > 1 ? parse_dtype(parts[1]) : (in ? std::optional(default_output(*in)) : std::nullopt);
          if (!in || !out || parts.size() > 2) { err = "bad dtype '" + spec + "'"; return false; }
          if (*in >= OG_DTYPE_MXFP8 || *out >= OG_DTYPE_MXFP8) {
            err = "block-scaled dtypes need scale tensors: use --format " + format_names();
            return false;
          }
          DtypeSpec d{*in, *out};
          d.tf32 = tf32;
          o.dtypes.push_back(d);
        }
      } else if (a == "--format") {
        if (!(v = need(i, "--format"))) return false;
        o.dtypes.clear();
        formats = true;
        for (const auto& spec : split(v, ',')) {
          auto parts = split(spec, ':');
          const FormatDef* f = parts.empty() ? nullptr : find_format(parts[0]);
          auto out = parts.size() > 1 ? parse_dtype(parts[1]) : std::optional(OG_DTYPE_F16);
          if (!f || !out || parts.size() > 2 || *out > OG_DTYPE_BF16) {
            err = "bad format '" + spec + "' (" + format_names() + ", optionally ':f32', ':f16' or ':bf16')";
            return false;
          }
          o.dtypes.push_back({f->a, *out, f->name});
        }
      } else if (a == "--sizes") {
        if (!(v = need(i, "--sizes"))) return false;
        for (const auto& s : split(v, ',')) sizes.push_back(std::stoll(s));
      } else if (a == "--shapes") {
        if (!(v = need(i, "--shapes"))) return false;
        for (const auto& s : split(v, ',')) {
          if (!parse_shape(s, o.shapes.emplace_back())) {
            err = "bad shape '" + s + "' (MxNxK[xB][:AB[:LDA:LDB:LDD]], e.g. 4096x40x4096:rr or 291x251x64x4:rc:64:64:256)";
            return false;
          }
        }
        o.sweep = "list";
      } else if (a == "--random") {
        if (!(v = need(i, "--random"))) return false;
        o.random_count = std::stoi(v);
        if (o.random_count <= 0) { err = "--random needs a positive count"; return false; }
      } else if (a == "--random-pick") {
        if (!(v = need(i, "--random-pick"))) return false;
        for (const std::string& t : split(v, ',')) o.random_pick.push_back(std::stoll(t));
      } else if (a == "--random-max-dim") {
        if (!(v = need(i, "--random-max-dim"))) return false;
        o.random_max_dim = std::stoll(v);
        if (o.random_max_dim < 1 || o.random_max_dim > (int64_t(1) << 20)) { err = "--random-max-dim in [1, 2^20]"; return false; }
      } else if (a == "--random-max-flops") {
        if (!(v = need(i, "--random-max-flops"))) return false;
        o.random_max_flops = std::stod(v);
        if (!(o.random_max_flops >= 2)) { err = "--random-max-flops must be at least 2"; return false; }
      } else if (a == "--K_range") {
        if (i + 2 >= argc) { err = "--K_range needs two values"; return false; }
        k_lo = std::stoll(argv[++i]);
        k_hi = std::stoll(argv[++i]);
      } else if (a == "--K_step") {
        if (!(v = need(i, "--K_step"))) return false;
        k_step = std::stoll(v);
      } else if (a == "--MN") {
        if (!(v = need(i, "--MN"))) return false;
        mn = std::stoll(v);
        mn_given = true;
      } else if (a == "--epilogue") {
        if (!(v = need(i, "--epilogue"))) return false;
        o.epilogues.clear();
        for (const auto& name : split(v, ',')) {
          EpilogueChoice e;
          if (!parse_epilogue(name, e)) {
            err = "bad epilogue '" + name + "' (none, relu, leaky_relu, gelu, silu, bias, beta, or [beta_][bias_]act)";
            return false;
          }
          o.epilogues.push_back(e);
        }
        if (o.epilogues.empty()) { err = "--epilogue needs a name"; return false; }
      } else if (a == "--b-layout") {
        if (!(v = need(i, "--b-layout"))) return false;
        o.b_layout = v;
        if (o.b_layout != "auto" && o.b_layout != "row" && o.b_layout != "col") { err = "--b-layout auto|row|col"; return false; }
      } else if (a == "--warmup-ms") {
        if (!(v = need(i, "--warmup-ms"))) return false;
        o.warmup_ms = std::stod(v);
      } else if (a == "--budget-ms") {
        if (!(v = need(i, "--budget-ms"))) return false;
        o.budget_ms = std::stod(v);
        o.budget_given = true;
      } else if (a == "--max-config-seconds") {
        if (!(v = need(i, "--max-config-seconds"))) return false;
        o.max_config_s = std::stod(v);
      } else if (a == "--seed") {
        if (!(v = need(i, "--seed"))) return false;
        o.seed = std::stoull(v);
        o.seed_given = true;
      } else if (a == "--out") {
        if (!(v = need(i, "--out"))) return false;
        o.out_dir = v;
      } else {
        err = "unknown option '" + a + "' (see --help)";
        return false;
      }
    }
  } catch (const std::exception&) {
    err = "bad number in the arguments";
    return false;
  }
  if (o.fused()) {
    if (formats) {
      err = "--format times the plain block-scaled GEMM: leave out --epilogue";
      return false;
    }
    // The plain GEMM of every problem runs first: each fused row is compared with it.
    bool has_plain = false;
    for (const EpilogueChoice& e : o.epilogues) has_plain |= e.plain();
    if (!has_plain) o.epilogues.insert(o.epilogues.begin(), EpilogueChoice{});
  }
  if ((k_step != 0 || mn_given) && k_lo == 0 && k_hi == 0) {
    err = "--K_step and --MN belong to a K sweep: add --K_range A B";
    return false;
  }
  if (o.random_count > 0) {
    if (k_lo > 0 || k_hi > 0 || llm || quick || !sizes.empty() || o.sweep == "list") {
      err = "--random draws its own shapes: leave out --sizes, --shapes, --quick, --llm and --K_range";
      return false;
    }
    if (o.fused()) {
      err = "--random times the plain GEMM: leave out --epilogue";
      return false;
    }
    if (formats) {
      err = "--random draws storage the block-scaled formats do not take: use --format with --shapes or --K_range";
      return false;
    }
    if (o.b_layout != "auto") {
      err = "--random draws B's layout per problem: leave out --b-layout";
      return false;
    }
    if (!o.budget_given) o.budget_ms = 100;
    if (!o.seed_given) {  // the shapes come from the seed too: draw it here, main() prints it
      o.seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
      o.seed_given = true;
    }
    o.sweep = "random";
    o.shapes = random_shapes(o);
    if (!o.random_pick.empty()) {
      std::vector<Shape> kept;
      for (int64_t i : o.random_pick) {
        if (i < 0 || i >= int64_t(o.shapes.size())) {
          err = "--random-pick " + std::to_string(i) + " is not an index of the draw (0.." + std::to_string(o.shapes.size() - 1) + ")";
          return false;
        }
        kept.push_back(o.shapes[size_t(i)]);
      }
      o.shapes = std::move(kept);
    }
    return true;
  }
  if (k_lo > 0 || k_hi > 0) {
    if (k_lo <= 0 || k_hi < k_lo || k_step < 0) { err = "--K_range A B needs 0 < A <= B"; return false; }
    if (k_step == 0) k_step = formats ? 512 : 256;  // the block-scaled tutorial's default step
    if (formats && !mn_given) mn = 8192;
    o.shapes.clear();
    for (int64_t k = k_lo; k <= k_hi; k += k_step) o.shapes.push_back({mn, mn, k});
    o.sweep = "k";
  } else if (llm) {
    o.shapes.clear();
    for (int64_t m : {16, 128, 4096})
      for (auto [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {14336, 4096}, {4096, 14336}}) o.shapes.push_back({m, n, k});
    o.sweep = "llm";
  } else if (!sizes.empty() || quick) {
    if (quick && sizes.empty()) sizes = {256, 512, 768, 1024, 1536, 2048};
    o.shapes.clear();
    for (int64_t s : sizes) o.shapes.push_back({s, s, s});
    o.sweep = "square";
  } else if (o.shapes.empty() && formats) {
    o.shapes.push_back({8192, 8192, 8192});  // the block-scaled tutorial's validation shape
    o.sweep = "list";
  } else if (o.shapes.empty()) {
    for (int i = 2; i <= 32; ++i) o.shapes.push_back({128 * i, 128 * i, 128 * i});
  }
  for (const Shape& s : o.shapes)
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) { err = "sizes must be positive"; return false; }
  return true;
}

}  // namespace omnigemm::bench
