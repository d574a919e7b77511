#include "explain.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "dispatch.hpp"

namespace omnigemm::detail {

namespace {

void copy_text(char* dst, size_t size, const std::string& src) {
  if (src.size() < size) {
    std::memcpy(dst, src.c_str(), src.size() + 1);
    return;
  }
  std::memcpy(dst, src.data(), size - 4);
  std::memcpy(dst + size - 4, "...", 4);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

og_choice_source public_source(ChoiceSource s) {
  switch (s) {
    case ChoiceSource::tune_cache: return OG_CHOICE_TUNE_CACHE;
    case ChoiceSource::forced: return OG_CHOICE_FORCED;
    case ChoiceSource::tuned: return OG_CHOICE_TUNED;
    case ChoiceSource::heuristic: break;
  }
  return OG_CHOICE_COST_MODEL;
}

// An input's dtype, with its block scales' mode where it has them ("fp8_e4m3 (VEC128_F32 scales)").
std::string input_name(const Operand& o) {
  std::string s = og_dtype_name(o.dtype);
  if (o.scale.present()) s += std::string(" (") + og_scale_mode_name(o.scale.mode) + " scales)";
  return s;
}

std::string describe_cost(const CostTerms& t) {
  const std::string head = t.absolute ? "predicted " + fixed(t.ms * 1000, 2) + " us at " + fixed(t.rate_tflops, 1) + " TFLOP/s"
                                      : "predicted " + fixed(t.ms * 1000, 2) + " (relative units: the device reports no peak rate)";
  return head + " (waves " + fixed(t.waves, 0) +
         ", occupancy " + fixed(t.occupancy, 2) + ", useful " + fixed(t.useful, 2) + ", split " + fixed(t.split, 2) +
         ", intensity " + fixed(t.intensity, 2) + ", memory " + fixed(t.memory_ms * 1000, 2) + " us" + (t.latency_ms > 0 ? ", latency floor " + fixed(t.latency_ms * 1000, 2) + " us" : "") +
         (t.extra_ms > 0 ? ", besides the main loop " + fixed(t.extra_ms * 1000, 2) + " us" : "") +
         ")";
}

}  // namespace

Status explain(Backend& be, Tuner& tuner, const Problem& p, og_explanation& out) {
  const std::string backend = og_backend_name(be.kind());
  out.backend = be.kind();
  std::string r = "backend " + backend + " on " + be.device().name + " (" + be.device().driver + ")\n";
  r += "problem M=" + std::to_string(p.m) + " N=" + std::to_string(p.n) + " K=" + std::to_string(p.k) +
       " batch=" + std::to_string(p.batch) + ", " + input_name(p.a) + " x " + input_name(p.b) + " -> " +
       og_dtype_name(p.d.dtype) +
       (p.compute_mode == OG_COMPUTE_TF32 ? ", compute TF32 (opted in: inputs may be rounded to TF32)" : "") + "\n";
  if (p.empty()) {
    r += "nothing runs: the problem is empty (M, N or batch is 0)\n";
    copy_text(out.report, sizeof out.report, r);
    return {};
  }
  Config cfg;
  ChoiceSource source = ChoiceSource::heuristic;
  Status s = tuner.choose(be, p, cfg, &source, /*allow_tuning=*/false);
  if (!s) return s;
  KernelFamily* family = nullptr;
  if (!(s = resolve_family(be, p, cfg, family))) return s;
  PlanSummary plan;
  if (!(s = family->describe(p, cfg, plan))) return s;
  // A caller's workspace too small for the plan: og_gemm refuses it, so explain does too.
  if (p.has_workspace() && p.workspace_bytes < uint64_t(plan.workspace_bytes))
    return error(StatusCode::invalid_argument, "workspace: " + std::to_string(p.workspace_bytes) +
                                                   " bytes given but this call needs " +
                                                   std::to_string(plan.workspace_bytes) + " (og_gemm_workspace_size)");

  const std::vector<Candidate> ranked = rank_candidates(be, p);
  out.source = public_source(source);
  copy_text(out.family, sizeof out.family, backend + "." + family->name());
  copy_text(out.config, sizeof out.config, cfg.to_string());
  for (int i = 0; i < 3; ++i) out.grid[i] = plan.grid[i];
  out.cluster = plan.cluster;
  out.threads = plan.threads;
  out.shared_bytes = plan.shared_bytes;
  out.workspace_bytes = plan.workspace_bytes;
  out.workspace_source = plan.workspace_bytes == 0 ? OG_WORKSPACE_NONE
                         : p.has_workspace()       ? OG_WORKSPACE_CALLER
                                                   : OG_WORKSPACE_ENGINE;
  const CostTerms chosen = predict(p, cfg, family->hints(p, cfg), be.device().limits);
  out.predicted_ms = chosen.ms;

  r += "runs " + backend + "." + family->name() + " " + cfg.to_string() + "\n";
  r += "chosen by: " + std::string(choice_source_name(source));
  if (source == ChoiceSource::heuristic && tuner.mode() == OG_TUNE_ON_MISS) r += " (OG_TUNE_ON_MISS: og_gemm times the candidates on its first call)";
  r += "\ncost model: " + describe_cost(chosen) + "\n";
  const CostHints hints = family->hints(p, cfg);
  if (hints.note) r += "family hint: " + std::string(hints.note) + "\n";
  r += "launch: grid " + std::to_string(plan.grid[0]) + "x" + std::to_string(plan.grid[1]) + "x" + std::to_string(plan.grid[2]) +
       ", " + std::to_string(plan.threads) + " threads, cluster " + std::to_string(plan.cluster) + ", " +
       std::to_string(plan.shared_bytes) + " B shared, " + std::to_string(plan.workspace_bytes) + " B workspace";
  if (!plan.notes.empty()) r += "; " + plan.notes;
  r += "\nworkspace: ";
  if (plan.workspace_bytes == 0) r += "none needed";
  else if (p.has_workspace())
    r += std::to_string(plan.workspace_bytes) + " B from the caller's workspace (" + std::to_string(p.workspace_bytes) +
         " B given)";
  else
    r += std::to_string(plan.workspace_bytes) +
         " B allocated by the engine on first need and kept per stream (pass og_gemm_desc.workspace, sized by "
         "og_gemm_workspace_size, to avoid the allocation)";
  r += "\nrunners-up:\n";
  int listed = 0;
  for (const Candidate& c : ranked) {
    if (c.config == cfg) continue;
    if (++listed > 4) break;
    r += "  " + c.config.to_string() + ": " + (c.cost.absolute ? describe_cost(c.cost) : "predicted " + fixed(c.cost.ms * 1000, 2)) + "\n";
  }
  if (listed == 0) r += "  none\n";
  r += "other families:\n";
  if (be.families().size() == 1) r += "  none\n";
  for (const KernelFamily* f : be.families()) {
    if (f == family) continue;
    int offered = 0;
    for (const Candidate& c : ranked) offered += c.family == f;
    if (offered) {
      r += "  " + std::string(f->name()) + ": " + std::to_string(offered) + " config(s) can run it, predicted slower\n";
      continue;
    }
    // The first refusal of the family's table says why (the rules repeat across its rows).
    std::string why = "no configs";
    for (const Config& c : f->configs()) {
      Status cs = f->can_implement(p, c);
      if (!cs) { why = cs.message; break; }
      const CostHints h = f->hints(p, c);
      if (!(h.factor > 0)) { why = std::string("not offered: ") + (h.note ? h.note : "by the family's hints"); break; }
    }
    r += "  " + std::string(f->name()) + ": " + why + "\n";
  }
  copy_text(out.report, sizeof out.report, r);
  return {};
}

}  // namespace omnigemm::detail
