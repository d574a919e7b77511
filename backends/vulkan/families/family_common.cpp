// What the Vulkan families share: the common part of every plan (specialization ids 0..6, push
// constants, workgroup counts), its summary, and the launch through the backend.
#include <algorithm>
#include <cmath>
#include <string>

#include "../vulkan_backend.hpp"
#include "vulkan_families.hpp"

namespace omnigemm::detail::vulkan {

const VulkanDevice& VulkanFamily::dev() const { return be_.vk_device(); }
const DeviceLimits& VulkanFamily::limits() const { return be_.vk_device().info.limits; }

Status VulkanFamily::launch(VulkanLaunch& l, void* stream) { return be_.record(l, stream); }

Status VulkanFamily::warm(VulkanLaunch& l) { return be_.prepare_pipeline(l); }

Status VulkanFamily::no_form(const Config& c) {
  if (c.form.empty()) return {};
  return error(StatusCode::unsupported, "the Vulkan families have no named forms (got \"-" + std::string(c.form.view()) + "\")");
}

void VulkanFamily::plan_common(const Problem& p, const Config& c, uint32_t subgroup, VulkanLaunch& out) const {
  out.problem = &p;
  out.threads = uint32_t(c.warps) * subgroup;
  // The pipeline: tile, threads and the input dtypes (what shapes the main loop); the epilogue's
  // options travel in the push constants.
  const uint32_t common[kCommonSpecIds] = {uint32_t(c.block_m), uint32_t(c.block_n), uint32_t(c.block_k), uint32_t(c.group_m),
                                           out.threads,         uint32_t(p.a.dtype), uint32_t(p.b.dtype)};
  std::copy(common, common + kCommonSpecIds, out.spec.values);
  out.spec.count = kCommonSpecIds;

  const uint32_t tiles_m = uint32_t((p.m + c.block_m - 1) / c.block_m);
  const uint32_t tiles_n = uint32_t((p.n + c.block_n - 1) / c.block_n);
  out.tiles = uint64_t(tiles_m) * tiles_n;
  out.batch = uint64_t(p.batch);
  PushConstants& pc = out.push;
  pc = PushConstants{};
  pc.m = uint32_t(p.m);
  pc.n = uint32_t(p.n);
  pc.k = uint32_t(p.k);
  pc.epilogue = epilogue_word(p);
  // Strides and offsets in elements (check_problem keeps every index within 32 bits; an fp4
  // element's index is twice its byte's, plus its nibble).
  auto strides = [](const Operand& o, uint32_t& sr, uint32_t& sc, uint32_t& bs, uint32_t& off) {
    sr = uint32_t(o.stride_row);
    sc = uint32_t(o.stride_col);
    bs = uint32_t(o.batch_stride);
    off = !o.present ? 0 : dtype_is_fp4(o.dtype) ? uint32_t(o.mem.offset * 2) : uint32_t(o.mem.offset / uint64_t(dtype_bytes(o.dtype)));
  };
  // Scale tensors: offsets in scales of their 8- or 32-bit view.
  auto scales = [](const Operand& o, uint32_t& off, uint32_t& ld, uint32_t& bs) {
    if (!o.present || !o.scale.present()) return;
    off = uint32_t(o.scale.mem.offset / uint64_t(o.scale.bytes));
    ld = uint32_t(o.scale.ld);
    bs = uint32_t(o.scale.batch_stride);
  };
  scales(p.a, pc.as_off, pc.as_ld, pc.as_bs);
  scales(p.b, pc.bs_off, pc.bs_ld, pc.bs_bs);
  strides(p.a, pc.a_sr, pc.a_sc, pc.a_bs, pc.a_off);
  strides(p.b, pc.b_sr, pc.b_sc, pc.b_bs, pc.b_off);
  strides(p.c, pc.c_sr, pc.c_sc, pc.c_bs, pc.c_off);
  strides(p.d, pc.d_sr, pc.d_sc, pc.d_bs, pc.d_off);
  pc.bias_bs = uint32_t(p.bias_batch_stride);
  pc.bias_off = p.bias_mode != OG_BIAS_NONE ? uint32_t(p.bias.offset / uint64_t(dtype_bytes(p.bias_dtype))) : 0;
  // The per-tensor factors of block-scaled operands multiply every product: folded into alpha
  // (within an f32 rounding of the reference's per-element factor).
  pc.alpha = p.alpha * (p.a.scale.present() ? p.a.scale.global : 1.0f) * (p.b.scale.present() ? p.b.scale.global : 1.0f);
  pc.beta = p.beta;
  pc.slope = p.leaky_slope;
}

namespace {

// Work items of config c on p: tiles x batch x K slices.
double work_items(const Problem& p, const Config& c) {
  return std::ceil(double(p.m) / c.block_m) * std::ceil(double(p.n) / c.block_n) * double(p.batch) * c.split_k;
}

}  // namespace

double VulkanFamily::residency_factor(const Problem& p, const Config& c) const {
  const double area = work_items(p, c) * c.block_m * c.block_n;
  return std::min(1.0, area / (kResidentArea * std::max(1, limits().compute_units)));
}

double VulkanFamily::tile_residency(const Problem& p, const Config& c) const {
  const double items = work_items(p, c);
  const double units = std::max(1, limits().compute_units);
  if (double(c.block_m) * c.block_n < kBusyResidentArea || std::ceil(double(p.k) / std::max(1, c.split_k)) < kSteadyK ||
      items < units * kBusyMinShare)
    return residency_factor(p, c);
  const double busy = std::min(items, units);
  return std::min(1.0, items * c.block_m * c.block_n / (kBusyResidentArea * busy));
}

uint64_t VulkanFamily::split_workspace_bytes(const Problem& p, uint32_t split, uint32_t pad_m, uint32_t pad_n) {
  const uint64_t m = (uint64_t(p.m) + pad_m - 1) / pad_m * pad_m, n = (uint64_t(p.n) + pad_n - 1) / pad_n * pad_n;
  return 4 * uint64_t(p.batch) * split * m * n;
}

void VulkanFamily::plan_split(const Problem& p, uint32_t split, uint32_t pad_m, uint32_t pad_n, VulkanLaunch& out) const {
  out.split_bytes = out.workspace_bytes = split_workspace_bytes(p, split, pad_m, pad_n);
  const uint32_t threads = uint32_t(std::min(256, limits().max_threads_per_group));
  // Ids 0..6 as gemm_common.glsl names them: the padding as BLOCK_M / BLOCK_N, THREADS; the
  // dtypes are the epilogue's business (push constants), so one pipeline serves them all.
  const uint32_t values[kCommonSpecIds + 1] = {pad_m, pad_n, 1, 1, threads, 0, 0, split};
  std::copy(values, values + kCommonSpecIds + 1, out.reduce_spec.values);
  out.reduce_spec.count = kCommonSpecIds + 1;
  out.reduce_shader = Shader::splitk_reduce;
  const uint64_t quads = uint64_t(p.m) * ((uint64_t(p.n) + pad_n - 1) / pad_n * pad_n / 4);
  out.reduce_groups = std::max<uint64_t>(1, (quads + threads - 1) / threads);
}

void VulkanFamily::summarize_common(const VulkanLaunch& l, PlanSummary& out, bool tile_note) const {
  out.grid[0] = (long long)l.tiles;
  out.grid[1] = 1;
  out.grid[2] = (long long)l.batch;
  out.cluster = 1;
  out.threads = int(l.threads);
  out.shared_bytes = l.shared_bytes;
  out.workspace_bytes = (long long)l.workspace_bytes;
  out.notes = tile_note ? "one workgroup per " + std::to_string(l.spec.values[0]) + "x" + std::to_string(l.spec.values[1]) +
                              " output tile, grouped by " + std::to_string(l.spec.values[3]) + " rows of tiles"
                        : "";
  const uint64_t max_x = dev().max_groups[0], max_z = dev().max_groups[2];
  if (l.tiles > max_x) {
    out.grid[0] = (long long)max_x;
    out.grid[1] = (long long)((l.tiles + max_x - 1) / max_x);
  }
  const uint64_t pieces = (l.batch + max_z - 1) / max_z;
  auto add = [&](const std::string& note) { out.notes += (out.notes.empty() ? "" : "; ") + note; };
  if (pieces > 1)
    add("recorded as " + std::to_string(pieces) + " dispatches (at most " + std::to_string(max_z) + " batches each)");
  if (l.reduce_groups)
    add("split-K in " + std::to_string(l.reduce_spec.values[kCommonSpecIds]) + " slices: f32 partial sums in " +
        std::to_string(l.split_bytes) + " bytes of workspace, added in slice order by a second dispatch that runs the epilogue");
}

int coopmat_mul_type(const Problem& p) {
  if (p.a.scale.present() || p.b.scale.present()) return -1;
  const bool bf16 = p.a.dtype == OG_DTYPE_BF16 || p.b.dtype == OG_DTYPE_BF16;
  for (og_dtype t : {p.a.dtype, p.b.dtype})
    if (t != OG_DTYPE_FP8_E4M3 && t != OG_DTYPE_FP8_E5M2 && t != (bf16 ? OG_DTYPE_BF16 : OG_DTYPE_F16)) return -1;
  return bf16 ? 1 : 0;
}

Status coopmat_dtype_refusal(const Problem& p) {
  if (p.a.scale.present() || p.b.scale.present())
    return error(StatusCode::unsupported, "block-scaled operands (" + std::string(og_dtype_name(p.a.dtype)) + " x " +
                                              og_dtype_name(p.b.dtype) + ") run on the portable family, dequantised on load");
  return error(StatusCode::unsupported, std::string("inputs must be f16, bf16 or fp8 (one 16-bit type, fp8 converted exactly), not ") +
                                            og_dtype_name(p.a.dtype) + " x " + og_dtype_name(p.b.dtype) +
                                            "; f32 and mixed f16/bf16 inputs run on the portable family");
}

bool VulkanFamily::d_vector_stores(const Problem& p) {
  const Operand& d = p.d;
  const int64_t offset = int64_t(d.mem.offset / uint64_t(dtype_bytes(d.dtype)));
  return d.stride_col == 1 && d.stride_row % 4 == 0 && offset % 4 == 0 && (p.batch == 1 || d.batch_stride % 4 == 0);
}

}  // namespace omnigemm::detail::vulkan
