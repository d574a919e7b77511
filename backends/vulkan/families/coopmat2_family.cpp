// vulkan.coopmat2: gemm_coopmat2.comp, NV cooperative matrix 2 (one workgroup-scope accumulator
// per tile, flexible dimensions, tensor addressing).
#include <algorithm>
#include <cmath>
#include <string>

#include "../vulkan_backend.hpp"
#include "vulkan_families.hpp"

namespace omnigemm::detail::vulkan {

namespace {

constexpr Config kCoopmat2Configs[] = {
#define OG_VK_COOPMAT2(bm, bn, bk, group_m, warps) Config{"coopmat2", bm, bn, bk, group_m, 1, warps, 0, 1, {}},
#include "coopmat2.inc"
#undef OG_VK_COOPMAT2
};

// How the shader reads each operand (its A_LOAD/B_LOAD, A_LD8/B_LD8, D_TENSOR). A tensor load
// needs the native 16-bit dtype (fp8 is converted while gathering), one unit stride with rows at
// least a row apart (the tensor layout's stride rule), and a 16-byte aligned base in every batch
// (coopMatLoadTensorNV's rule); anything else is gathered through shared memory.
struct Loads {
  uint32_t a = 0, b = 0, a_ld8 = 0, b_ld8 = 0, d_tensor = 0;
};

Loads loads_of(const Problem& p) {
  const og_dtype mul = coopmat_mul_type(p) == 1 ? OG_DTYPE_BF16 : OG_DTYPE_F16;
  auto aligned = [&](const Operand& o) {
    return o.mem.offset % 16 == 0 && (p.batch == 1 || o.batch_stride * dtype_bytes(o.dtype) % 16 == 0);
  };
  // 1: rows x cols stored row-major (stride_col 1); 2: stored column-major; 0: gathered.
  auto mode = [&](const Operand& o, uint32_t& ld8) -> uint32_t {
    if (!o.present) return 1;  // K == 0: nothing is read
    if (o.dtype != mul || !aligned(o)) return 0;
    int64_t ld = 0;
    uint32_t m = 0;
    if (o.stride_col == 1 && o.stride_row >= o.cols) m = 1, ld = o.stride_row;
    else if (o.stride_row == 1 && o.stride_col >= o.rows) m = 2, ld = o.stride_col;
    ld8 = m != 0 && ld % 8 == 0;
    return m;
  };
  Loads l;
  l.a = mode(p.a, l.a_ld8);
  l.b = mode(p.b, l.b_ld8);
  l.d_tensor = p.d.dtype == OG_DTYPE_F32 && p.d.stride_col == 1 && p.d.stride_row >= p.n && aligned(p.d);
  return l;
}

// Shared memory the shader declares: the gathered operands' tiles as 16-bit pairs (one word for
// a tensor-loaded operand). The driver reserves its own beside it for the tensor loads.
int64_t shared_bytes(const Config& c, const Loads& l) {
  return 4 * ((l.a == 0 ? int64_t(c.block_m) * c.block_k / 2 : 1) + (l.b == 0 ? int64_t(c.block_k) * c.block_n / 2 : 1));
}

const char* load_text(uint32_t mode) { return mode == 0 ? "gathered" : mode == 1 ? "tensor-loaded (row-major)" : "tensor-loaded (column-major)"; }

}  // namespace

std::span<const Config> Coopmat2Family::configs() const { return kCoopmat2Configs; }

Status Coopmat2Family::can_implement(const Problem& p, const Config& c) const {
  const VulkanDevice& d = dev();
  const Coopmat2Support& cm2 = d.coopmat2;
  if (!cm2.ok)
    return error(StatusCode::unsupported, d.info.name + " has no usable NV cooperative matrix 2 (workgroup scope, flexible dimensions, "
                                          "tensor addressing)" + (cm2.why.empty() ? "" : ": " + cm2.why));
  if (Status s = no_form(c); !s) return s;
  std::string why;
  if (!config_well_formed(c, &why)) return error(StatusCode::unsupported, why);
  const int mul = coopmat_mul_type(p);
  if (mul < 0) return coopmat_dtype_refusal(p);
  if (mul == 1 && !cm2.bf16)
    return error(StatusCode::unsupported, "bf16 inputs need bf16 workgroup-scope cooperative matrices, which " + d.info.name + " lacks" +
                                              (cm2.bf16_why.empty() ? "" : " (" + cm2.bf16_why + ")") + "; supported: f16 and fp8");
  if (c.split_k != 1 || c.stages != 1)
    return error(StatusCode::unsupported, "tile " + c.to_string() + ": split_k 1 and 1 stage only (the driver stages the operands)");
  if (c.waves_per_eu) return error(StatusCode::unsupported, "waves_per_eu is an AMD occupancy hint; Vulkan takes none");
  const uint32_t threads = uint32_t(c.warps * limits().warp_size);
  if (int(threads) > limits().max_threads_per_group || threads > cm2.max_workgroup)
    return error(StatusCode::unsupported, std::to_string(threads) + " threads exceed the device's " + std::to_string(cm2.max_workgroup) +
                                              " for workgroup-scope cooperative matrices");
  // The device lists, per workgroup size, the granularity the tile's M, N and K must be multiples of.
  std::string sizes;
  bool fits = false;
  for (const Coopmat2Support::FlexShape& f : cm2.shapes) {
    if (f.mul != mul) continue;
    if (f.invocations == threads && c.block_m % int(f.m) == 0 && c.block_n % int(f.n) == 0 && c.block_k % int(f.k) == 0) fits = true;
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(f.invocations) + " threads: " + std::to_string(f.m) + "x" + std::to_string(f.n) +
             "x" + std::to_string(f.k);
  }
  const int largest = std::max({c.block_m, c.block_n, c.block_k});
  if (!fits || largest > int(cm2.max_dim) || c.block_n % 2 || c.block_k % 2)
    return error(StatusCode::unsupported, "tile " + c.to_string() + " (" + std::to_string(threads) +
                                              " threads) is not a multiple of a flexible-dimension granularity of " + d.info.name + " (" +
                                              sizes + ") or exceeds its largest dimension " + std::to_string(cm2.max_dim));
  const int64_t shared = shared_bytes(c, loads_of(p));
  const int64_t available = limits().max_shared_bytes - int64_t(cm2.reserved_shared);
  if (shared > available)
    return error(StatusCode::unsupported, std::to_string(shared) + " bytes of shared memory for gathered operands exceed the " +
                                              std::to_string(available) + " bytes left beside the driver's reserved " +
                                              std::to_string(cm2.reserved_shared));
  return {};
}

// Workgroup-scope cooperative matrices, staged by the driver: on the H100 its tiles ran at
// 175-222 TFLOP/s f16 at 8192^3, below the KHR family's best (236), so it ranks second. An
// operand it gathers, or tensor-loads with a leading dimension off 8 elements, costs it about
// two thirds of its rate, whatever K: on the H200 (f16, both operands so) 2047x2049x2051 took
// 433 us (coopmat on aligned copies 212), 4981x13131x11219 18.4 ms (7.1), 12016x4237x7 1243 us
// (coopmat gathering 412), 94 x 12179 x 1 in 11 batches 408 us (cuBLAS 30).
CostHints Coopmat2Family::hints(const Problem& p, const Config& c) const {
  CostHints h;
  h.efficiency = 0.20;
  h.factor = residency_factor(p, c);  // as coopmat's K loop, assumed (no split-K here)
  if (h.factor < 1) h.note = "fewer work items than the compute units need to hide the K loop's load latency";
  const Loads l = loads_of(p);
  if (const int slow = (l.a == 0 || !l.a_ld8) + (l.b == 0 || !l.b_ld8)) {
    h.factor *= std::pow(0.3, slow);
    if (!h.note) h.note = "each operand gathered or off 8-element rows costs about two thirds of the rate";
  }
  // A row-major f32 D is stored as a tensor (epilogue_factor). Its element-wise epilogue (any
  // other D) is slower: per wave of tiles about 100 K-steps' worth of the tile's MMAs whatever K,
  // beside its K-steps, which run whole (a K under BLOCK_K costs a step) (H200, f16: 94 x 12179 x
  // 1 in 11 batches, 4 waves of 256x128 tiles, 408 us; 122 x 16139 x 2 on 128x128 tiles 99 us;
  // 7668 x 35 x 2 on 64x128 tiles 39 us). A factor on the rate, as the model prices Vulkan
  // devices in relative units (no absolute peak).
  if (l.d_tensor) {
    h.factor *= epilogue_factor(p, 1);
  } else {
    constexpr double kEpilogueSteps = 100;
    const double steps = std::ceil(double(std::max<int64_t>(p.k, 1)) / c.block_k);
    h.factor *= double(std::max<int64_t>(p.k, 1)) / ((steps + kEpilogueSteps) * c.block_k);
    if (!h.note) h.note = "its element-wise epilogue costs about 100 K-steps per tile";
  }
  return h;
}

Status Coopmat2Family::plan(const Problem& p, const Config& c, VulkanLaunch& out) const {
  if (Status s = can_implement(p, c); !s) return s;
  plan_common(p, c, uint32_t(limits().warp_size), out);
  const int mul = coopmat_mul_type(p);
  const Loads l = loads_of(p);
  out.shader = mul ? Shader::coopmat2_bf16 : Shader::coopmat2;
  const uint32_t own[6] = {l.a, l.b, l.a_ld8, l.b_ld8, l.d_tensor, uint32_t(mul)};  // ids 7..12
  std::copy(own, own + 6, out.spec.values + kCommonSpecIds);
  out.spec.count = kCommonSpecIds + 6;
  out.shared_bytes = shared_bytes(c, l);
  return {};
}

void Coopmat2Family::summarize(const VulkanLaunch& l, PlanSummary& out) const {
  summarize_common(l, out);
  const uint32_t* v = l.spec.values + kCommonSpecIds;  // the family's own ids
  out.notes += std::string("; one workgroup-scope f32 accumulator per tile, ") + (v[5] ? "bf16" : "f16") + " multiplicands, A " + load_text(v[0]) +
               ", B " + load_text(v[1]) + ", D " + (v[4] ? "stored as a tensor" : "stored element-wise") +
               " (the driver reserves " + std::to_string(dev().coopmat2.reserved_shared) + " more bytes of shared memory)";
}

}  // namespace omnigemm::detail::vulkan
