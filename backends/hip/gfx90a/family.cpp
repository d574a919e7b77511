// hip.gfx90a_mfma: the MFMA kernel (gemm_mfma.hip.h) as a kernel family. Its table is
// families/gfx90a_mfma.inc; plan.cpp turns a (problem, config) into a row, a kernel variant and
// its arguments, and the kernels are found in the loaded code objects by the names symbols.h
// derives from the same rows, so the table is also the launch dispatch.
#include <algorithm>
#include <vector>

#include "../families.hpp"
#include "plan.hpp"

namespace omnigemm::detail {

namespace {

const char* mode_name(int mode) { return mode == hip::kVecK ? "vec_k" : mode == hip::kVecMn ? "vec_mn" : "gather"; }

class Gfx90aMfmaFamily final : public PlannedFamily<gfx90a::Plan> {
 public:
  // Looks up every kernel of every row once (a device without the runtime, as in the host
  // model, plans but launches nothing).
  explicit Gfx90aMfmaFamily(HipDevice& device) : dev_(device) {
    for (const gfx90a::Row& r : gfx90a::rows())
      for (int bf16 = 0; bf16 < 2; ++bf16)
        for (int gather = 0; gather < 2; ++gather) {
          hipFunction_t f = nullptr;
          if (dev_.api && lookup_.ok()) lookup_ = dev_.function(bf16 != 0, r.symbols[bf16][gather], f);
          functions_.push_back(f);
        }
    if (!dev_.api) lookup_ = error(StatusCode::backend_unavailable, "hip: no AMD device (a modelled device launches nothing)");
  }
  const char* name() const override { return "gfx90a_mfma"; }
  std::span<const Config> configs() const override { return gfx90a::configs(); }
  Status can_implement(const Problem& p, const Config& c) const override {
    return gfx90a::plan(p, c, dev_.info.limits, nullptr);
  }
  // Main loops of MFMA kernels like this one reach about two thirds of the MI200's 16-bit peak
  // (hipBLASLt about 0.8); the gathering loader moves one element per load instruction.
  CostHints hints(const Problem& p, const Config& c) const override {
    CostHints h;
    gfx90a::Plan l;
    h.efficiency = gfx90a::plan(p, c, dev_.info.limits, &l) && l.gather ? 0.35 : 0.65;
    return h;
  }

 protected:
  Status plan(const Problem& p, const Config& c, gfx90a::Plan& l) const override {
    return gfx90a::plan(p, c, dev_.info.limits, &l);
  }
  Status launch(gfx90a::Plan& l, void* stream) override {
    if (!lookup_) return lookup_;
    if (Status s = dev_.select(); !s) return s;
    hipFunction_t fn = functions_[size_t(l.row * 4 + l.args.bf16 * 2 + (l.gather ? 1 : 0))];
    for (int b0 = 0; b0 < l.batch; b0 += int(dev_.max_grid_z)) {
      l.args.batch_base = b0;
      void* params[] = {&l.args};
      const unsigned z = unsigned(std::min<long long>(dev_.max_grid_z, l.batch - b0));
      OG_HIP_TRY(dev_, dev_.api->ModuleLaunchKernel(fn, unsigned(l.tiles), 1, z, unsigned(l.threads), 1, 1, 0,
                                                    static_cast<hipStream_t>(stream), params, nullptr),
                 l.symbol());
    }
    return {};
  }
  void summarize(const gfx90a::Plan& l, PlanSummary& out) const override {
    out.grid[0] = l.tiles;
    out.grid[2] = std::min<long long>(l.batch, dev_.max_grid_z);
    out.threads = l.threads;
    out.shared_bytes = l.lds_bytes;
    out.notes = std::string(l.args.bf16 ? "bf16" : "f16") + " multiplicands, v_mfma_f32_" + (l.mfma == 32 ? "32x32x8" : "16x16x16") +
                (l.args.bf16 ? "bf16_1k" : "f16") + ", " +
                (l.gather ? std::string("gathering loads (any strides; fp8 converted on load)")
                          : std::string("dwordx4 loads (A ") + mode_name(l.args.a.mode) + ", B " + mode_name(l.args.b.mode) + ")") +
                ", kernel " + l.symbol() +
                (l.batch > dev_.max_grid_z ? ", batches in launches of " + std::to_string(dev_.max_grid_z) : std::string());
  }

 private:
  HipDevice& dev_;
  std::vector<hipFunction_t> functions_;  // [row][bf16][gather]
  Status lookup_;
};

}  // namespace

std::unique_ptr<KernelFamily> make_gfx90a_mfma_family(HipDevice& device) { return std::make_unique<Gfx90aMfmaFamily>(device); }

}  // namespace omnigemm::detail
