// The Vulkan kernel families, one per GLSL shader: vulkan.portable (gemm_portable.comp),
// vulkan.coopmat (gemm_coopmat.comp, KHR cooperative matrix), vulkan.coopmat2
// (gemm_coopmat2.comp, NV cooperative matrix 2) and vulkan.skinny (gemm_skinny.comp, few rows of
// A against B). Each has one config table
// (families/<name>.inc); tile sizes become specialization constants, so every row maps to a
// pipeline at run time. None has named forms.
#pragma once

#include <span>
#include <vector>

#include "kernel_family.hpp"
#include "vulkan_device.hpp"
#include "vulkan_launch.hpp"

namespace omnigemm::detail::vulkan {

class VulkanBackend;

class VulkanFamily : public PlannedFamily<VulkanLaunch> {
 public:
  explicit VulkanFamily(VulkanBackend& be) : be_(be) {}
  // The launch run() would record (pipeline key, push constants, grid), without recording it:
  // for tests of the selection on modelled devices.
  Status plan_launch(const Problem& p, const Config& c, VulkanLaunch& out) const { return plan(p, c, out); }

 protected:
  Status launch(VulkanLaunch& l, void* stream) override;
  // og_gemm_prepare: makes the launch's pipeline and keeps it for the context's life.
  Status warm(VulkanLaunch& l) override;
  const VulkanDevice& dev() const;
  const DeviceLimits& limits() const;
  // Refuses a config naming a form (no Vulkan family has any).
  static Status no_form(const Config& c);
  // What every shader shares: specialization ids 0..6, the push constants, the workgroup counts
  // (c.warps subgroups of `subgroup` invocations per workgroup).
  void plan_common(const Problem& p, const Config& c, uint32_t subgroup, VulkanLaunch& out) const;
  // Grid, threads and shared memory of `l`, and notes on its tiles (unless !tile_note), batch
  // pieces and split-K (the family adds its own).
  void summarize_common(const VulkanLaunch& l, PlanSummary& out, bool tile_note = true) const;
  // Split-K in `split` slices (> 1): the workspace of f32 partial sums, M and N padded to
  // `pad_m` / `pad_n` (pad_n a multiple of 4), and gemm_splitk_reduce.comp's dispatch.
  void plan_split(const Problem& p, uint32_t split, uint32_t pad_m, uint32_t pad_n, VulkanLaunch& out) const;
  // The workspace plan_split would ask for; refused past kMaxWorkspaceBytes.
  static uint64_t split_workspace_bytes(const Problem& p, uint32_t split, uint32_t pad_m, uint32_t pad_n);
  static constexpr uint64_t kMaxWorkspaceBytes = uint64_t(256) << 20;
  // The 2-D tile families' K loops wait on each K tile's loads, which only more MMA work in flight
  // on the same compute unit hides (a larger tile's K step, other workgroups): their rate scales
  // with the output area in flight per unit (tiles x BLOCK_M x BLOCK_N x batch x K slices over
  // the units) up to kResidentArea, one 128x256 tile. On the H100 (f16, KHR coopmat) 2048^3 on
  // 128 workgroups of 128x256 ran at 180 TFLOP/s against 237 at 8192^3, and 32 x 4096 x 4096 on
  // 64 workgroups of 64x64 at 9.6 TFLOP/s. A cost factor in (0, 1].
  double residency_factor(const Problem& p, const Config& c) const;
  static constexpr double kResidentArea = 128.0 * 256.0;
  // The same, except for tiles of kBusyResidentArea or more whose K slices are long enough
  // (kSteadyK elements or more) to reach the K loop's steady rate, on at least kBusyMinShare of
  // the units: idle units then cost only their share of the GPU (the cost model's occupancy
  // counts them), so the area in flight counts per BUSY unit, and one 128x128 tile fills a unit
  // (H200, coopmat 128x128 w8: 1024^3 on 64 workgroups ran 1.05 TFLOP/s per busy unit against
  // 1.15 at 2048^3). Elsewhere residency_factor: smaller tiles, short slices or a few lone tiles
  // take about a load latency per K step, which more work items in flight overlap
  // (bench/results/h200, "Few tiles, long K").
  double tile_residency(const Problem& p, const Config& c) const;
  static constexpr double kBusyResidentArea = 128.0 * 128.0;
  static constexpr double kSteadyK = 1024;
  static constexpr double kBusyMinShare = 0.5;
  // The cooperative-matrix families' epilogue: each output costs about kEpilogueK of K's MMA work
  // (stored through shared memory four elements at a time, or as a tensor) times `weight` (the
  // family's slower store forms), so problems of a short K are bound by it (bench/results/h200,
  // "Narrow B, 2..4 rows and a K of a few elements"). A factor K / (K + kEpilogueK * weight) on
  // the rate, the same for the configs of a problem that share a store form (split or not): it
  // moves these families against the others.
  static double epilogue_factor(const Problem& p, double weight) {
    return double(p.k) / (double(p.k) + kEpilogueK * weight);
  }
  static constexpr double kEpilogueK = 256;
  // Whether coopmat stores D four elements at a time (its shader's d_vec4): rows contiguous, the
  // row stride, batch stride and offset multiples of 4 elements.
  static bool d_vector_stores(const Problem& p);

  VulkanBackend& be_;
};

class PortableFamily final : public VulkanFamily {
 public:
  using VulkanFamily::VulkanFamily;
  const char* name() const override { return "portable"; }
  std::span<const Config> configs() const override;
  Status can_implement(const Problem& p, const Config& c) const override;
  CostHints hints(const Problem& p, const Config& c) const override;

 protected:
  Status plan(const Problem& p, const Config& c, VulkanLaunch& out) const override;
  void summarize(const VulkanLaunch& l, PlanSummary& out) const override;
};

class CoopmatFamily final : public VulkanFamily {
 public:
  using VulkanFamily::VulkanFamily;
  const char* name() const override { return "coopmat"; }
  std::span<const Config> configs() const override;
  Status can_implement(const Problem& p, const Config& c) const override;
  CostHints hints(const Problem& p, const Config& c) const override;
  // hints() and plan() where the operands in `padded` (bit 0 A, bit 1 B) are operand_copy.comp's
  // copies, their lines zero-padded to whole vectors (vulkan.coopmat_repack).
  CostHints hints_padded(const Problem& p, const Config& c, uint32_t padded) const;
  Status plan_padded(const Problem& p, const Config& c, uint32_t padded, VulkanLaunch& out) const;
  void summarize(const VulkanLaunch& l, PlanSummary& out) const override;

 protected:
  Status plan(const Problem& p, const Config& c, VulkanLaunch& out) const override;
};

// vulkan.coopmat_repack: vulkan.coopmat on copies of the 16-bit operands it cannot read as whole
// aligned vectors (an unaligned base, leading dimension or batch stride, a ragged extent along
// the contiguous dimension, no unit stride). operand_copy.comp writes each such operand into the
// workspace as lines of whole zero-padded 16-byte vectors, one dispatch per operand before the
// GEMM; the GEMM then reads them at the aligned rate. Its configs are coopmat's rows under this
// family's name; the cost model ranks them against coopmat's gathers with the copies' bytes and
// dispatches added.
class CoopmatRepackFamily final : public VulkanFamily {
 public:
  CoopmatRepackFamily(VulkanBackend& be, const CoopmatFamily& inner);
  const char* name() const override { return "coopmat_repack"; }
  std::span<const Config> configs() const override { return configs_; }
  Status can_implement(const Problem& p, const Config& c) const override;
  CostHints hints(const Problem& p, const Config& c) const override;

 protected:
  Status plan(const Problem& p, const Config& c, VulkanLaunch& out) const override;
  void summarize(const VulkanLaunch& l, PlanSummary& out) const override;

 private:
  const CoopmatFamily& inner_;
  std::vector<Config> configs_;
};

class Coopmat2Family final : public VulkanFamily {
 public:
  using VulkanFamily::VulkanFamily;
  const char* name() const override { return "coopmat2"; }
  std::span<const Config> configs() const override;
  Status can_implement(const Problem& p, const Config& c) const override;
  CostHints hints(const Problem& p, const Config& c) const override;

 protected:
  Status plan(const Problem& p, const Config& c, VulkanLaunch& out) const override;
  void summarize(const VulkanLaunch& l, PlanSummary& out) const override;
};

class SkinnyFamily final : public VulkanFamily {
 public:
  using VulkanFamily::VulkanFamily;
  const char* name() const override { return "skinny"; }
  std::span<const Config> configs() const override;
  Status can_implement(const Problem& p, const Config& c) const override;
  CostHints hints(const Problem& p, const Config& c) const override;

 protected:
  Status plan(const Problem& p, const Config& c, VulkanLaunch& out) const override;
  void summarize(const VulkanLaunch& l, PlanSummary& out) const override;
};

// The cooperative-matrix shaders' multiplicand type for `p`: 0 f16, 1 bf16 (fp8 converts exactly
// into either), -1 when the inputs are f32 or mix f16 with bf16 (the portable family only).
int coopmat_mul_type(const Problem& p);
// The refusal for inputs no cooperative-matrix shader takes.
Status coopmat_dtype_refusal(const Problem& p);
// An operand gemm_coopmat.comp reads with one aligned 16-byte load per 8 elements (where its base
// allows): unit stride along its contiguous dimension, whose extent (unless `padded`, the copy's
// zero padding reaching the next vector), the outer stride and the batch stride are multiples of
// 8 elements. `k_rows`: K runs along the operand's rows (B); `other` is its extent besides K.
bool coopmat_vector_aligned(const Operand& o, bool k_rows, int64_t k, int64_t other, bool padded);
// The operands of `p` in the multiplicand dtype that gemm_coopmat.comp reads without whole aligned
// vectors (bit 0 A, bit 1 B), those in `padded` counted as copies: what coopmat gathers and
// coopmat_repack copies. 0 for inputs no cooperative-matrix shader takes.
uint32_t coopmat_gathered(const Problem& p, uint32_t padded);

}  // namespace omnigemm::detail::vulkan
