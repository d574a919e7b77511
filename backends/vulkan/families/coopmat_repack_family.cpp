// vulkan.coopmat_repack: vulkan.coopmat on zero-padded aligned copies of the operands it would
// gather (vulkan_families.hpp), made by operand_copy.comp in the call's workspace.
#include <algorithm>
#include <memory>
#include <string>

#include "../vulkan_backend.hpp"
#include "vulkan_families.hpp"

namespace omnigemm::detail::vulkan {

namespace {

// The copy's share of the memory bandwidth (a one-pass strided copy, read and write; on the H200
// 14653x8x7890 took 225 us with A's 231 MB copied, about 110 us of them the GEMM), and the time
// one more dispatch and its barrier cost in the command buffer (an estimate; on a device that
// reports no peak rate, which the model then prices in relative units, it weighs little).
constexpr double kCopyBandwidthShare = 0.8;
constexpr double kCopyDispatchUs = 3.0;
// The workspace a call with copies may use: operands of up to 2^28 16-bit elements both copied.
constexpr uint64_t kMaxCopyWorkspaceBytes = uint64_t(1) << 30;

uint64_t round_256(uint64_t bytes) { return (bytes + 255) / 256 * 256; }

// `c` named for the inner family (its rows are coopmat's under this family's name).
Config as_coopmat(Config c) {
  c.family = "coopmat";
  return c;
}

// The copies of `p` and the problem that runs on them.
struct Staging {
  std::shared_ptr<Problem> run;  // p with the copied operands' layouts (their buffers: the workspace)
  uint32_t padded = 0;           // bit 0 A, bit 1 B copied
  VulkanLaunch::OperandCopy copy[2];
  uint64_t copy_bytes[2] = {0, 0};
  double traffic = 0;            // bytes the copies read and write
};

// One operand's copy: lines along its unit stride (K's where it has none), each padded with zeros
// to a multiple of 8 elements; batches copied only where the operand has a batch stride (a
// broadcast operand is copied once).
void stage_operand(const Problem& p, const Operand& src, bool is_b, Operand& run, VulkanLaunch::OperandCopy& copy, uint64_t& bytes,
                   double& traffic) {
  const bool unit_cols = src.stride_col == 1 || (src.stride_row != 1 && !is_b);  // A: K along columns; B: K along rows
  const int64_t line_len = unit_cols ? src.cols : src.rows, lines = unit_cols ? src.rows : src.cols;
  const int64_t ld = (line_len + 7) / 8 * 8;
  const int64_t batches = p.batch > 1 && src.batch_stride != 0 ? p.batch : 1;
  run.stride_row = unit_cols ? ld : 1;
  run.stride_col = unit_cols ? 1 : ld;
  run.batch_stride = batches > 1 ? lines * ld : 0;
  run.mem = og_memory{};
  run.mem.kind = OG_MEMORY_VULKAN;
  CopyPushConstants& c = copy.push;
  c.operand = is_b ? 1u : 0u;
  c.lines = uint32_t(lines);
  c.line_len = uint32_t(line_len);
  c.src_off = uint32_t(src.mem.offset / 2);
  c.src_line = uint32_t(unit_cols ? src.stride_row : src.stride_col);
  c.src_elem = uint32_t(unit_cols ? src.stride_col : src.stride_row);
  c.src_batch = uint32_t(batches > 1 ? src.batch_stride : 0);
  c.dst_line = uint32_t(ld / 8);
  c.dst_batch = uint32_t(batches > 1 ? lines * ld / 8 : 0);
  copy.present = true;
  copy.batch = uint64_t(batches);
  copy.groups = (uint64_t(lines) * uint64_t(ld / 8) + VulkanLaunch::kCopyThreads - 1) / VulkanLaunch::kCopyThreads;
  bytes = round_256(uint64_t(batches * lines * ld) * 2);
  traffic += 2.0 * double(batches) * double(lines) * double(line_len + ld);
}

// Refused where coopmat takes no such inputs or reads every operand as it is.
Status stage(const Problem& p, Staging& st) {
  const int mul = coopmat_mul_type(p);
  if (mul < 0) return coopmat_dtype_refusal(p);
  const og_dtype native = mul ? OG_DTYPE_BF16 : OG_DTYPE_F16;
  const uint32_t copied = coopmat_gathered(p, 0);
  const bool a = copied & 1u, b = copied & 2u;
  if (!copied)
    return error(StatusCode::unsupported, "no " + std::string(og_dtype_name(native)) +
                                              " operand needs a copy (each is read as aligned vectors, or is fp8, converted on load): "
                                              "vulkan.coopmat runs it as it is");
  if (p.k < 1) return error(StatusCode::unsupported, "K == 0: there is no operand to copy");
  st.run = std::make_shared<Problem>(p);
  if (a) stage_operand(p, p.a, false, st.run->a, st.copy[0], st.copy_bytes[0], st.traffic);
  if (b) stage_operand(p, p.b, true, st.run->b, st.copy[1], st.copy_bytes[1], st.traffic);
  st.padded = copied;
  return {};
}

}  // namespace

CoopmatRepackFamily::CoopmatRepackFamily(VulkanBackend& be, const CoopmatFamily& inner) : VulkanFamily(be), inner_(inner) {
  for (Config c : inner_.configs()) {
    c.family = "coopmat_repack";
    configs_.push_back(c);
  }
}

Status CoopmatRepackFamily::can_implement(const Problem& p, const Config& c) const {
  VulkanLaunch l;
  return plan(p, c, l);
}

CostHints CoopmatRepackFamily::hints(const Problem& p, const Config& c) const {
  Staging st;
  if (!stage(p, st)) return {};
  CostHints h = inner_.hints_padded(*st.run, as_coopmat(c), st.padded);
  h.extra_bytes += st.traffic / kCopyBandwidthShare;
  h.extra_us += kCopyDispatchUs * (st.copy[0].present + st.copy[1].present);
  return h;
}

Status CoopmatRepackFamily::plan(const Problem& p, const Config& c, VulkanLaunch& out) const {
  const Config inner = as_coopmat(c);
  Staging st;
  // coopmat's own refusals (device, config, dtypes) first: they hold for the copies too.
  if (Status s = inner_.can_implement(p, inner); !s) return s;
  if (Status s = stage(p, st); !s) return s;
  if (Status s = inner_.plan_padded(*st.run, inner, st.padded, out); !s) return s;
  // The workspace: split-K's partial sums, then the copies, each at a multiple of 256 bytes.
  uint64_t at = round_256(out.workspace_bytes);
  for (int i = 0; i < 2; ++i) {
    if (!st.copy[i].present) continue;
    out.copy[i] = st.copy[i];
    out.copy[i].offset = at;
    out.copy[i].push.dst_off = uint32_t(at / 16);
    at += st.copy_bytes[i];
  }
  if (at > kMaxCopyWorkspaceBytes)
    return error(StatusCode::unsupported, "the operand copies would need " + std::to_string(at) + " bytes of workspace, more than the " +
                                              std::to_string(kMaxCopyWorkspaceBytes) + " bound");
  out.workspace_bytes = at;
  out.derived = st.run;
  out.given = &p;
  return {};
}

void CoopmatRepackFamily::summarize(const VulkanLaunch& l, PlanSummary& out) const {
  inner_.summarize(l, out);
  std::string what;
  for (int i = 0; i < 2; ++i) {
    if (!l.copy[i].present) continue;
    const CopyPushConstants& c = l.copy[i].push;
    what += std::string(what.empty() ? "" : " and ") + (i ? "B" : "A") + " (" + std::to_string(c.lines) + " lines of " +
            std::to_string(c.line_len) + " padded to " + std::to_string(c.dst_line * 8) + ")";
  }
  out.notes = what + " copied into the workspace by one dispatch each before the GEMM; " + out.notes;
}

}  // namespace omnigemm::detail::vulkan
