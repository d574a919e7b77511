#include "bench_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "bench_util.hpp"

namespace omnigemm::bench {

namespace {

size_t bytes_of(og_dtype d, size_t elements) { return elements * size_t(dtype_size(d)); }

// One buffer set of a problem: A, B, D, for block-scaled formats A's and B's scales, and C and
// the bias vector where the epilogue reads them.
struct Buffers {
  og_memory a{}, b{}, d{}, as{}, bs{}, c{}, bias{};
};

// The bias vector as `dtype` (f32 for OmniGEMM; the vendor's own bias type), its values exact in
// every one of them.
std::vector<uint8_t> bias_bytes(const HostProblem& hp, og_dtype dtype) {
  const size_t es = size_t(dtype_size(dtype));
  std::vector<uint8_t> v(hp.bias.size() * es);
  for (size_t i = 0; i < hp.bias.size(); ++i) encode(D(dtype), &v[i * es], hp.bias[i]);
  return v;
}

og_gemm_desc make_desc(const HostProblem& hp, og_dtype a_dt, og_dtype b_dt, og_dtype d_dt, const Buffers& m) {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  if (hp.format) {
    g.a = hp.qa.view(OG_OPERAND_A, m.a, m.as);
    g.b = hp.qb.view(OG_OPERAND_B, m.b, m.bs);
  } else {
    auto view = [](const HostMatrix& x, og_dtype dt, const og_memory& mem) {
      og_matrix v = og_matrix_make(x.rows, x.cols, dt, x.layout == Layout::col_major ? OG_COL_MAJOR : OG_ROW_MAJOR);
      v.ld = x.ld;
      v.batch_stride = x.batches > 1 ? x.batch_stride : 0;
      v.mem = mem;
      return v;
    };
    g.a = view(hp.a, a_dt, m.a);
    g.b = view(hp.b, b_dt, m.b);
  }
  g.d = og_matrix_make(hp.shape.m, hp.shape.n, d_dt, OG_ROW_MAJOR);
  g.d.ld = hp.d_ld;
  g.d.batch_stride = hp.st.batch > 1 ? hp.d_batch_stride : 0;
  g.d.mem = m.d;
  g.batch_count = hp.st.batch;
  if (hp.dt.tf32) g.compute_mode = OG_COMPUTE_TF32;
  g.epilogue.alpha = hp.alpha;
  g.epilogue.activation = hp.epi.act;
  g.epilogue.leaky_slope = hp.slope;
  if (hp.epi.beta) {
    g.c = g.d;
    g.c.mem = m.c;
    g.epilogue.beta = hp.beta;
  }
  if (hp.epi.bias) {
    g.epilogue.bias_mode = OG_BIAS_PER_N;
    g.epilogue.bias_dtype = OG_DTYPE_F32;
    g.epilogue.bias = m.bias;
  }
  if (!hp.forced_config.empty()) g.config = hp.forced_config.c_str();
  return g;
}

// In-place activation D = act(D) as a separate pass through OmniGEMM's own elementwise path
// (a K = 0 GEMM: D = act(1 * C) with C = D), for devices where the bench has no kernel of its own.
og_gemm_desc make_activation_desc(const HostProblem& hp, og_dtype d_dt, const og_memory& d) {
  og_gemm_desc g;
  og_gemm_desc_init(&g);
  g.a = og_matrix_make(hp.shape.m, 0, d_dt, OG_ROW_MAJOR);
  g.b = og_matrix_make(0, hp.shape.n, d_dt, OG_ROW_MAJOR);
  g.c = og_matrix_make(hp.shape.m, hp.shape.n, d_dt, OG_ROW_MAJOR);
  g.d = g.c;
  g.c.mem = g.d.mem = d;
  g.epilogue.beta = 1.0f;
  g.epilogue.activation = hp.epi.act;
  g.epilogue.leaky_slope = hp.slope;
  return g;
}

// The separate activation pass on the CPU: a plain single-threaded loop over host memory.
void host_activation_pass(const og_memory& d, og_dtype dt, int64_t elements, og_activation act, float slope) {
  EpilogueSpec spec;
  spec.act = Activation(act);
  spec.slope = slope;
  uint8_t* base = static_cast<uint8_t*>(d.ptr) + d.offset;
  const int64_t es = dtype_size(dt);
  for (int64_t i = 0; i < elements; ++i) {
    uint8_t* p = base + i * es;
    encode(D(dt), p, float(apply_epilogue(spec, decode(D(dt), p), 0.0, 0.0).value));
  }
}

// Allocates and uploads one buffer set: A and B (`a`, `b`), D (d_bytes, not uploaded), for
// block-scaled formats the scales of hp.qa / hp.qb, and C and the bias (`bias`) where hp's
// epilogue reads them.
Status add_set(og_context* ctx, DeviceBuffers& buf, const HostProblem& hp, const std::vector<uint8_t>& a,
               const std::vector<uint8_t>& b, size_t d_bytes, const std::vector<uint8_t>& bias, Buffers& out) {
  Status s;
  if (hp.epi.beta && (s = buf.add(hp.c.bytes.size(), out.c))) s = upload(ctx, out.c, hp.c.bytes.data(), hp.c.bytes.size());
  if (s && hp.epi.bias && (s = buf.add(bias.size(), out.bias))) s = upload(ctx, out.bias, bias.data(), bias.size());
  if (!s) return s;
  if ((s = buf.add(a.size(), out.a)) && (s = buf.add(b.size(), out.b)) && (s = buf.add(d_bytes, out.d)) &&
      (s = upload(ctx, out.a, a.data(), a.size())) && (s = upload(ctx, out.b, b.data(), b.size())) && hp.format) {
    if ((s = buf.add(hp.qa.scales.size(), out.as)) && (s = buf.add(hp.qb.scales.size(), out.bs)) &&
        (s = upload(ctx, out.as, hp.qa.scales.data(), hp.qa.scales.size())))
      s = upload(ctx, out.bs, hp.qb.scales.data(), hp.qb.scales.size());
  }
  return s;
}

size_t scale_bytes(const HostProblem& hp) { return hp.format ? hp.qa.scales.size() + hp.qb.scales.size() : 0; }

// On the CPU the previous library's worker threads may still spin for a while after its last
// call and steal cores from the next measurement: give them time to go to sleep first.
void settle(const BackendState& bs) {
  if (bs.kind == OG_BACKEND_CPU) std::this_thread::sleep_for(std::chrono::milliseconds(150));
}

// What og_gemm would run for `desc`. A context in OG_TUNE_ON_MISS mode first runs og_gemm once
// (when no config is forced), so that its tuning happens here and the answer names the tuned config.
Status explain_call(BackendState& bs, const og_gemm_desc& desc, og_tune_mode mode, og_explanation& out) {
  if (mode == OG_TUNE_ON_MISS && !desc.config)
    if (Status s = Status::from_c(og_gemm(bs.ctx, &desc)); !s) return s;
  return Status::from_c(og_gemm_explain(bs.ctx, &desc, &out));
}

void mark_failed(Row& r, const Status& s, const char* unsupported_word, const std::string& prefix = {}) {
  r.status = s.code == StatusCode::unsupported ? unsupported_word : "error";
  r.check = r.status;
  r.note = prefix + s.message;
}

// OmniGEMM's row; returns its median milliseconds (NaN when it did not run or failed).
double bench_omnigemm(BackendState& bs, HostProblem& hp, const Options& o, Row& r) {
  const Shape& sh = hp.shape;
  const size_t d_elements = size_t(hp.d_elements);
  r.impl = "omnigemm";
  r.label = "OmniGEMM" + (hp.epi.plain() ? std::string() : " (fused " + hp.epi.name() + ")");
  const auto& ab = hp.format ? hp.qa.elements : hp.a_bytes(hp.dt.in);
  const auto& bb = hp.format ? hp.qb.elements : hp.b_bytes(hp.dt.in);
  const size_t d_bytes = bytes_of(hp.dt.out, d_elements);
  DeviceBuffers buf(bs.ctx);
  const std::vector<uint8_t> bias = bias_bytes(hp, OG_DTYPE_F32);
  const size_t c_bytes = hp.epi.beta ? hp.c.bytes.size() : 0;
  const int sets = set_count(bs.dev.l2_bytes, ab.size() + bb.size() + scale_bytes(hp) + d_bytes + c_bytes + bias.size());
  r.sets = sets;
  std::vector<og_gemm_desc> descs;
  Status s;
  for (int i = 0; i < sets && s; ++i) {
    Buffers m;
    if ((s = add_set(bs.ctx, buf, hp, ab, bb, d_bytes, bias, m))) descs.push_back(make_desc(hp, hp.dt.in, hp.dt.in, hp.dt.out, m));
  }
  // Every timed launch runs the explained config, forced: the same kernel og_gemm would pick,
  // without the choice among candidates inside the timed region.
  og_explanation ex{};
  if (s) s = explain_call(bs, descs[0], o.tune_mode, ex);
  if (!s) {
    mark_failed(r, s, "unsupported");
    return NAN;
  }
  const std::string config = ex.config;
  r.config = config;
  if (o.explain) r.explanation = ex.report;
  for (og_gemm_desc& d : descs) d.config = config.c_str();
  s = measure(bs.ctx, bs.dev, [&](int i) { return Status::from_c(og_gemm_async(bs.ctx, &descs[size_t(i)], nullptr)); },
              sets, o, r.t);
  if (s) s = synchronize(bs.ctx);
  if (!s) {
    mark_failed(r, s, "error");
    return NAN;
  }
  // The checked run: once more through og_gemm, on a poisoned output.
  const auto poison = poison_bytes(hp.dt.out, d_elements);
  std::vector<uint8_t> out(d_bytes);
  s = upload(bs.ctx, descs[0].d.mem, poison.data(), poison.size());
  if (s) s = Status::from_c(og_gemm(bs.ctx, &descs[0]));
  if (s) s = download(bs.ctx, out.data(), descs[0].d.mem, out.size());
  if (!s) {
    mark_failed(r, s, "error", "checked run: ");
    return NAN;
  }
#ifdef OMNIGEMM_DEVELOPER
  corrupt_for_self_test(hp, out, hp.dt.out);
#endif
  const Check c = check_output(hp, out, hp.dt.out);
  r.check = c.text();
  r.rel_error = c.rel_error;
  r.tol = c.tol;
  r.status = c.ok ? "ok" : "FAIL";
  r.tflops = flops(sh, hp.st) / (r.t.median * 1e-3) / 1e12;
  return r.t.median;
}

// The vendor's row (its own fused epilogue where it has one, else a separate activation pass
// after its GEMM); returns its median milliseconds (NaN when it did not run or failed).
double bench_vendor(BackendState& bs, HostProblem& hp, const Options& o, Row& v) {
  const Shape& sh = hp.shape;
  const size_t mn = size_t(hp.d_elements);  // D's storage (elements), padding included
  v.impl = "vendor";
  if (!o.vendor) {
    v.status = "skipped";
    v.check = "-";
    v.note = "--no-vendor";
    return NAN;
  }
  if (!bs.vendor) {
    v.status = "n/a";
    v.check = "-";
    v.note = bs.vendor_why;
    return NAN;
  }
  VendorProblem vp{sh.m, sh.n, sh.k, hp.dt.in, hp.dt.in, hp.dt.out, hp.st.b_col_major};
  vp.a_col_major = hp.st.a_col_major;
  vp.tf32 = hp.dt.tf32;
  vp.lda = hp.a.ld, vp.ldb = hp.b.ld, vp.ldd = hp.d_ld;
  vp.batch = hp.st.batch;
  vp.stride_a = hp.a.batches > 1 ? hp.a.batch_stride : 0;
  vp.stride_b = hp.b.batches > 1 ? hp.b.batch_stride : 0;
  vp.stride_d = hp.st.batch > 1 ? hp.d_batch_stride : 0;
  vp.alpha = hp.alpha;
  vp.beta = hp.epi.beta ? hp.beta : 0.0f;
  vp.bias = hp.epi.bias;
  vp.act = hp.epi.act;
  if (hp.format) {  // the vendor's own block-scaled GEMM on the same operands
    vp.a = hp.format->a;
    vp.b = hp.format->b;
    vp.a_scale = hp.format->a_mode;
    vp.b_scale = hp.format->b_mode;
  }
  const VendorPlan plan = bs.vendor->plan(vp);
  if (!plan.supported) {
    v.status = "n/a";
    v.check = "-";
    v.note = plan.why;
    return NAN;
  }
  VendorProblem run_p = vp;
  run_p.a = plan.a;
  run_p.b = plan.b;
  run_p.d = plan.d;
  v.label = plan.label;
  const auto& ab = hp.format ? hp.qa.elements : hp.a_bytes(plan.a);
  const auto& bb = hp.format ? hp.qb.elements : hp.b_bytes(plan.b);
  const size_t d_bytes = bytes_of(plan.d, mn);
  if (vp.beta != 0.0f && plan.d != hp.dt.out) {
    mark_failed(v, invalid("the vendor's D is not C's dtype"), "n/a");
    return NAN;
  }
  const std::vector<uint8_t> bias = bias_bytes(hp, plan.bias);
  const size_t c_bytes = hp.epi.beta ? hp.c.bytes.size() : 0;
  DeviceBuffers buf(bs.ctx);
  const int sets = set_count(bs.dev.l2_bytes, ab.size() + bb.size() + scale_bytes(hp) + d_bytes + c_bytes + bias.size());
  v.sets = sets;
  Status s;
  // How the separate activation pass runs, where the vendor's call does not apply the
  // activation: a host loop (CPU), a device kernel (CUDA), or OmniGEMM's own K = 0 elementwise
  // call (anywhere).
  const bool separate = hp.epi.act != OG_ACT_NONE && !plan.act_fused;
  const bool epilogue_call = vp.needs_epilogue_call() || plan.act_fused;
  const std::string act_name = EpilogueChoice{false, false, hp.epi.act}.name();
  std::string pass = o.activation_pass;
  std::string pass_note;
  if (separate && pass == "auto") {
    pass = bs.kind == OG_BACKEND_CPU ? "loop" : "omnigemm";
    if (bs.kind != OG_BACKEND_CPU) {
      if (!bs.act) pass_note = bs.act_why;
      else if (Status ps = bs.act->prepare(); !ps) pass_note = ps.message;
      else pass = "kernel";
    }
  }
  if (separate && pass == "loop" && bs.kind != OG_BACKEND_CPU) s = invalid("--activation-pass loop is CPU only");
  if (separate && pass == "kernel" && !(bs.act && bs.act->prepare()))
    s = invalid("no device activation kernel: " + (bs.act ? bs.act->prepare().message : bs.act_why));
  if (separate && s)
    v.label += pass == "loop"     ? " + separate " + act_name + " loop"
               : pass == "kernel" ? " + " + bs.act->label(hp.epi.act)
                                  : " + separate " + act_name + " pass (OmniGEMM K=0 elementwise)";
  if (!pass_note.empty()) v.note = "activation kernel unavailable (" + pass_note + "), used OmniGEMM's K=0 pass";
  struct Set {
    Buffers m;
    og_gemm_desc act;
  };
  std::vector<Set> vs;
  std::string act_config;  // the K = 0 pass's explained config, forced on every set's call
  for (int i = 0; i < sets && s; ++i) {
    Set st{};
    if ((s = add_set(bs.ctx, buf, hp, ab, bb, d_bytes, bias, st.m))) {
      if (separate && pass == "omnigemm") {
        st.act = make_activation_desc(hp, plan.d, st.m.d);
        if (i == 0) {
          og_explanation ex{};
          if ((s = explain_call(bs, st.act, o.tune_mode, ex))) act_config = ex.config;
        }
      }
      vs.push_back(st);
    }
  }
  for (Set& st : vs)
    if (!act_config.empty()) st.act.config = act_config.c_str();
  auto launch = [&](int i) -> Status {
    Set& st = vs[size_t(i)];
    Status r = run_p.scaled()  ? bs.vendor->run_scaled(run_p, st.m.a, st.m.b, st.m.d, st.m.as, st.m.bs)
               : epilogue_call ? bs.vendor->run_epilogue(run_p, st.m.a, st.m.b, st.m.d, st.m.c, st.m.bias)
                               : bs.vendor->run(run_p, st.m.a, st.m.b, st.m.d);
    if (!r || !separate) return r;
    if (pass == "loop") {
      host_activation_pass(st.m.d, plan.d, int64_t(mn), hp.epi.act, hp.slope);
      return {};
    }
    if (pass == "kernel") return bs.act->activate(st.m.d, plan.d, int64_t(mn), hp.epi.act, hp.slope);
    return Status::from_c(og_gemm_async(bs.ctx, &st.act, nullptr));
  };
  settle(bs);
  if (s) s = measure(bs.ctx, bs.dev, launch, sets, o, v.t);
  if (s) s = synchronize(bs.ctx);
  if (s) {
    const auto poison = poison_bytes(plan.d, mn);
    std::vector<uint8_t> out(d_bytes);
    s = upload(bs.ctx, vs[0].m.d, poison.data(), poison.size());
    if (s) s = launch(0);
    if (s) s = synchronize(bs.ctx);
    if (s) s = download(bs.ctx, out.data(), vs[0].m.d, out.size());
    if (s) {
      const Check c = check_output(hp, out, plan.d);
      v.check = c.text();
      v.rel_error = c.rel_error;
      v.tol = c.tol;
      v.status = c.ok ? "ok" : "FAIL";
      v.tflops = flops(sh, hp.st) / (v.t.median * 1e-3) / 1e12;
      return v.t.median;
    }
  }
  mark_failed(v, s, "n/a");
  return NAN;
}

}  // namespace

void bench_one(BackendState& bs, HostProblem& hp, const Options& o, const Row& base, std::vector<Row>& rows) {
  settle(bs);
  Row r = base;
  const double omni_ms = bench_omnigemm(bs, hp, o, r);
  Row v = base;
  Row plain_row;  // block-scaled formats: the vendor's plain fp8 row, after the format's own
  double vendor_ms = NAN;
  if (hp.format) {
    // Block-scaled formats: the vendor's plain fp8 GEMM (e4m3, no block scales) on a plain fp8
    // problem of the same shape, checked against its own reference, and, where the vendor has
    // the format itself (cuBLASLt's 128-blockwise fp8), that on the same operands; the ratio is
    // taken against the latter when it ran, else against plain fp8.
    Row plain = base;
    plain.dt = {OG_DTYPE_FP8_E4M3, hp.dt.out};
    plain.layout = "rc";
    if (o.vendor && bs.vendor && !hp.plain) {
      hp.plain = std::make_unique<HostProblem>();
      HostProblem& pp = *hp.plain;
      pp.shape = hp.shape;
      pp.dt = plain.dt;
      pp.st.b_col_major = true;
      if (Status s = make_host_problem(pp, uint64_t(hp.shape.k) * 7919 + 17); !s) hp.plain.reset();
    }
    const double plain_ms = hp.plain ? bench_vendor(bs, *hp.plain, o, plain) : bench_vendor(bs, hp, o, plain);
    plain.label = plain.label.empty() ? std::string("plain fp8 baseline") : plain.label + " (plain fp8 baseline)";
    plain_row = plain;
    vendor_ms = plain_ms;
    if (std::string(hp.format->name) == "fp8_block128") {
      const double block_ms = bench_vendor(bs, hp, o, v);
      if (std::isfinite(block_ms)) vendor_ms = block_ms;
    } else {
      v.status = "skipped";
    }
  } else {
    vendor_ms = bench_vendor(bs, hp, o, v);
  }
  if (std::isfinite(omni_ms) && std::isfinite(vendor_ms)) r.ratio = vendor_ms / omni_ms;
  const double slowest = std::max(std::isfinite(omni_ms) ? omni_ms : 0.0, std::isfinite(vendor_ms) ? vendor_ms : 0.0);
  // The estimate keeps the best rate seen: a launch-bound tiny problem's rate must not make the
  // next large one look hours long (random sweeps alternate them).
  if (slowest > 0) bs.rate_gflops = std::max(bs.rate_gflops, flops(hp.shape, hp.st) / (slowest * 1e-3) / 1e9);
  bs.largest_gflop = std::max(bs.largest_gflop, flops(hp.shape, hp.st) / 1e9);
  rows.push_back(r);
  if (v.status != "skipped") rows.push_back(v);
  if (!plain_row.impl.empty() && plain_row.status != "skipped") rows.push_back(plain_row);
}

}  // namespace omnigemm::bench
